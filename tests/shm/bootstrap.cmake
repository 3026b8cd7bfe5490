# The intra-node runtime started from under mpiexec (issue 10): tests/shm/bootstrap_test.cpp,
# compiled against each MPI of this build (DDT_MPIS; none in a build without MPI prefixes, such
# as the ASan one) and run by that MPI's own mpiexec with 2 and 4 ranks. It starts the runtime
# with ddt_comm_init_mpi (include/ddtkit_mpi_bootstrap.h), checks ranks, bytes and the heap path,
# and ddt_comm_init_bootstrap's argument and failure checks. A hang fails by TIMEOUT.
# Included at the end of tests/CMakeLists.txt.
set(boot_env_mpich "")
set(boot_env_ompi "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1"
    "PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe")
if(DDT_SANITIZE)  # the MPI libraries are not instrumented and keep memory to their exit
  list(APPEND boot_env_mpich "ASAN_OPTIONS=detect_leaks=0")
  list(APPEND boot_env_ompi "ASAN_OPTIONS=detect_leaks=0")
endif()

foreach(mpi IN LISTS DDT_MPIS)
  ddt_mpi_executable(bootstrap_test_${mpi} ${mpi} ${CMAKE_CURRENT_LIST_DIR}/bootstrap_test.cpp)
  target_link_libraries(bootstrap_test_${mpi} ddtkit)
  foreach(np 2 4)
    set(name comm_bootstrap_${mpi}_np${np})
    # Passes on exit status 0 and rank 0's closing line both (an mpiexec that started nothing
    # exits 0 too).
    add_test(NAME ${name}
             COMMAND sh -c "out=$(\"$@\" 2>&1); rc=$?; echo \"$out\"; test $rc -eq 0 && echo \"$out\" | grep -q \"bootstrap_test: ok, ${np} processes\""
                     sh ${DDT_LAUNCH_${mpi}} ${DDT_PREFIX_${mpi}}/bin/mpiexec -n ${np} $<TARGET_FILE:bootstrap_test_${mpi}>)
    set_tests_properties(${name} PROPERTIES TIMEOUT 120 ENVIRONMENT "${boot_env_${mpi}}")
  endforeach()
endforeach()
