# What `cmake --install <build> --prefix P` (and `make install PREFIX=P`) puts under P:
#   include/*.h                          every public header
#   lib/libddtkit.so.X.Y.Z, .so.X, .so   the shared library (SONAME libddtkit.so.X)
#   lib/libddtkit.a                      the static library
#   lib/libddtkit_cuda.a                 the GPU layer (ddtkit::cuda), when built with CUDA
#   lib/cmake/ddtkit/                    find_package(ddtkit): ddtkit::ddtkit (shared),
#                                        ddtkit::ddtkit_static (static, with its link needs)
#   lib/pkgconfig/ddtkit.pc              pkg-config ddtkit (--static adds Libs.private)
#   bin/ddtkit                           the command, when tools/ is built
#   lib/libddtkit-malloc.so              the preloadable allocator, when built
#   lib/ddtkit/<mpi>/libddtkit-mpi.so    the MPI interposers of this build (mpich, ompi)
# lib/ is CMAKE_INSTALL_LIBDIR (GNUInstallDirs: lib on Debian outside /usr). Included from the
# top-level CMakeLists.txt once every target exists.
include(CMakePackageConfigHelpers)

set(ddt_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ddtkit)

# DIRECTORY globs when installing, so a header added to include/ is installed without an edit here.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

install(TARGETS ddtkit ddtkit_shared EXPORT ddtkitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT ddtkitTargets NAMESPACE ddtkit:: DESTINATION ${ddt_cmake_dir})
# The GPU layer in an export set of its own: its link needs name CUDA::cudart_static, which a
# consumer without the CUDA toolkit cannot resolve, so ddtkitConfig.cmake loads it only when the
# toolkit is found.
if(TARGET ddtkit_cuda)
  set_target_properties(ddtkit_cuda PROPERTIES EXPORT_NAME cuda)
  install(TARGETS ddtkit_cuda EXPORT ddtkitCudaTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT ddtkitCudaTargets NAMESPACE ddtkit:: DESTINATION ${ddt_cmake_dir})
endif()
# The package finds itself relative to its own folder (PACKAGE_PREFIX_DIR), so an installed
# prefix can be moved; 0.x keeps one SONAME, hence one major version for the package too.
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ddtkitConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ddtkitConfig.cmake INSTALL_DESTINATION ${ddt_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ddtkitConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ddtkitConfig.cmake ${PROJECT_BINARY_DIR}/ddtkitConfigVersion.cmake
        DESTINATION ${ddt_cmake_dir})

# ddtkit.pc names the prefix given to `cmake --install --prefix`, known only when installing:
# the version and folders are filled in now, the prefix by the install script.
foreach(d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
    set(DDT_PC_${d} "${CMAKE_INSTALL_${d}}")
  else()
    set(DDT_PC_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
  endif()
endforeach()
set(DDT_PC_PREFIX "@DDT_PC_PREFIX@")  # kept for the install-time pass
configure_file(${CMAKE_CURRENT_LIST_DIR}/ddtkit.pc.in ${PROJECT_BINARY_DIR}/ddtkit.pc.in @ONLY)
install(CODE "
  set(DDT_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_BINARY_DIR}/ddtkit.pc.in\" \"${PROJECT_BINARY_DIR}/ddtkit.pc\" @ONLY)
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\" TYPE FILE
       FILES \"${PROJECT_BINARY_DIR}/ddtkit.pc\")")

# The command links the static library; its RUNPATH still names the prefix's lib folder, where a
# later command that loads libddtkit.so (or a plugin next to it) finds it wherever P is.
if(TARGET ddtkit_cli)
  file(RELATIVE_PATH ddt_bin_to_lib ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}
       ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR})
  set_target_properties(ddtkit_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${ddt_bin_to_lib}")
  install(TARGETS ddtkit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# The preloadable allocator over the mapped shared heap (src/shm/preload), beside the
# libddtkit.so.0 it links: RUNPATH $ORIGIN finds that one, wherever P is.
if(TARGET ddtkit_malloc)
  set_target_properties(ddtkit_malloc PROPERTIES INSTALL_RPATH "$ORIGIN")
  install(TARGETS ddtkit_malloc LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

# The interposers, one per MPI ABI, in folders named by the MPI. Each is preloaded into a program
# that uses its MPI, so no RUNPATH is set: libmpi binds by SONAME to the program's own, and a path
# to the build's MPI environment would be wrong on another machine, or load a second MPI. A
# program that loads MPI only later (Python with mpi4py) therefore needs the MPI's lib folder on
# LD_LIBRARY_PATH, as docs/guide.md says. The libmpi NEEDED entry stays: without it the loader
# could not resolve the MPI data the interposer refers to (Open MPI's predefined handles are
# objects in libmpi, GLOB_DAT relocations bound at load, before Python has loaded any MPI), and
# Python's RTLD_LOCAL extension modules need not make their MPI visible to it anyway.
# tests/install/run.sh checks both: no RUNPATH, and mpi4py under the installed interposer.
foreach(mpi IN LISTS DDT_MPIS)
  install(TARGETS ddtkit_mpi_${mpi} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ddtkit/${mpi})
endforeach()
