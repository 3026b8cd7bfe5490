# The runtime's collectives (issue 15, src/shm/collectives.cpp): tests/shm/coll_test.cpp under
# `ddtkit run` (${run}, set in tests/CMakeLists.txt before this file is included) with 2, 3 and
# 4 ranks: bcast, scatter, gather and alltoall with derived types on both sides, every root, from
# 0 bytes through eager to 4 MiB rendezvous blocks; reduce (sum, max, min; int32, int64, float,
# double) below and above 64 KiB; argument errors; a wildcard user receive posted before a
# collective. Every byte against the reference interpreter. The default protocol (HYBRID), each
# static one and COOP_COLL forced (DDTKIT_PROTOCOL), and buffers from the mapped heap, so the
# collectives are right whatever moves their messages. A hang fails by TIMEOUT.
add_executable(coll_test ${CMAKE_CURRENT_LIST_DIR}/coll_test.cpp)
target_link_libraries(coll_test ddt_testlib)
set(coll_tests "")
foreach(np 2 3 4)
  add_test(NAME coll_test_np${np} COMMAND ${run} -n ${np} $<TARGET_FILE:coll_test> --seed ${np})
  list(APPEND coll_tests coll_test_np${np})
endforeach()
foreach(combo rget:3 rput:4 coop:2 coll:4)
  string(REPLACE ":" ";" c ${combo})
  list(GET c 0 proto)
  list(GET c 1 np)
  add_test(NAME coll_test_${proto}_np${np} COMMAND ${run} -n ${np} $<TARGET_FILE:coll_test> --seed 1${np})
  set_tests_properties(coll_test_${proto}_np${np} PROPERTIES ENVIRONMENT DDTKIT_PROTOCOL=${proto})
  list(APPEND coll_tests coll_test_${proto}_np${np})
endforeach()
add_test(NAME coll_test_heap_np3 COMMAND ${run} -n 3 $<TARGET_FILE:coll_test> --seed 23 --heap 1)
list(APPEND coll_tests coll_test_heap_np3)
set_tests_properties(${coll_tests} PROPERTIES TIMEOUT 120)
# The collectives' benchmark (bench/coll_bench.cpp) once at its smoke size, so that it cannot
# rot between make bench runs: it checks one call of every configuration, and measures nothing here.
add_test(NAME coll_bench_smoke_np3
         COMMAND ${run} -n 3 $<TARGET_FILE:ddt_coll_bench> --smoke --out ${CMAKE_CURRENT_BINARY_DIR}/coll-smoke)
set_tests_properties(coll_bench_smoke_np3 PROPERTIES TIMEOUT 120)
