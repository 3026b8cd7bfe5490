# DESIGN.md's layering, as a test: data flows one way and each layer includes only the layers
# above it. Run as  cmake -DSRC=<project>/src -P check_layers.cmake ; fails (FATAL_ERROR) on the
# first file that includes a header from a layer below its own, and names every such include.
#
cmake_minimum_required(VERSION 3.20)  # script mode: the project's policies (IN_LIST, SUBLIST)

# Layers in DESIGN.md's order (top first). util/ is not a layer: anything may use it.
set(order layout type plan cpu cuda spin shm mpi)
# The layers checked here, each against every layer listed after it.
set(checked layout type plan cpu cuda spin shm)

if(NOT SRC OR NOT IS_DIRECTORY "${SRC}")
  message(FATAL_ERROR "check_layers: pass -DSRC=<source folder>, got '${SRC}'")
endif()

set(bad "")
foreach(layer IN LISTS checked)
  list(FIND order ${layer} at)
  math(EXPR first "${at} + 1")
  list(SUBLIST order ${first} -1 below)
  file(GLOB_RECURSE files "${SRC}/${layer}/*.h" "${SRC}/${layer}/*.hpp" "${SRC}/${layer}/*.c"
       "${SRC}/${layer}/*.cpp" "${SRC}/${layer}/*.cu" "${SRC}/${layer}/*.cuh")
  if(layer STREQUAL "layout" OR layer STREQUAL "type")
    if(NOT files)  # these two always exist: an empty glob means the check looks in the wrong place
      message(FATAL_ERROR "check_layers: no sources under ${SRC}/${layer}")
    endif()
  endif()
  foreach(f IN LISTS files)
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]*)[\">].*$" "\\1" inc "${line}")
      # "../cpu/x.hpp" and "src/cpu/x.hpp" name the same layer as "cpu/x.hpp".
      string(REGEX REPLACE "^(\\.\\./|\\./)+" "" inc "${inc}")
      string(REGEX REPLACE "^src/" "" inc "${inc}")
      string(REGEX MATCH "^[^/]+/" top "${inc}")
      string(REGEX REPLACE "/$" "" top "${top}")
      if(top AND top IN_LIST below)
        file(RELATIVE_PATH rel "${SRC}" "${f}")
        list(APPEND bad "${rel} (layer ${layer}) includes ${inc} (layer ${top}, below it)")
      endif()
    endforeach()
  endforeach()
endforeach()

if(bad)
  list(JOIN bad "\n  " text)
  message(FATAL_ERROR "includes against the direction of the layers (DESIGN.md, Layers):\n  ${text}")
endif()
list(JOIN checked ", " names)
message(STATUS "check_layers: ${names} include only the layers above them")
