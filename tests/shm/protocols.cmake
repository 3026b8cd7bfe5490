include_guard(GLOBAL)  # included once, whoever includes it first
# The dynamic rendezvous protocols and the send modes (issue 15). Included at the end of
# tests/CMakeLists.txt (after comm_test's definitions: ${run} is the launcher).
#  - protocol_test (tests/shm/protocol_test.cpp): seed 002's Table II under COOP_COLL and HYBRID,
#    synchronous and buffered sends, COOP_LOAD's counters back at zero after every round (with
#    truncated receives among the transfers), COOP_CHUNKED's chunks from two senders at once and
#    COOP_HCA's second engine; 2, 3 and 4 ranks, and with CMA forced.
#  - comm_test's random campaign (random layouts on both sides, every byte against the reference
#    interpreter) under each dynamic protocol and mechanism, chunks small enough that every
#    rendezvous is cut into several; and rank 1 killed in the middle of a transfer under
#    COOP_LOAD and HYBRID.
add_executable(protocol_test ${CMAKE_CURRENT_LIST_DIR}/protocol_test.cpp)
target_link_libraries(protocol_test ddt_testlib)
set(proto_tests "")
foreach(np 2 3 4)
  add_test(NAME protocol_test_np${np} COMMAND ${run} -n ${np} $<TARGET_FILE:protocol_test>)
  list(APPEND proto_tests protocol_test_np${np})
endforeach()
add_test(NAME protocol_test_cma_np2 COMMAND ${run} -n 2 $<TARGET_FILE:protocol_test>)
set_tests_properties(protocol_test_cma_np2 PROPERTIES ENVIRONMENT DDTKIT_MECH=cma)
list(APPEND proto_tests protocol_test_cma_np2)

foreach(combo coll:auto:4:1 coll:cma:2:0 load:auto:4:1 load:heap:2:1 load:cma:4:0 chunked:heap:2:1 chunked:cma:4:0
        chunked:auto:4:1 hca:heap:2:1 hca:cma:2:0 hybrid:heap:4:1 hybrid:cma:4:0)
  string(REPLACE ":" ";" c ${combo})
  list(GET c 0 proto)
  list(GET c 1 mech)
  list(GET c 2 np)
  list(GET c 3 heap)
  set(name comm_${proto}_${mech}_np${np})
  add_test(NAME ${name} COMMAND ${run} -n ${np} ${prog} --mode random --seed 3${np} --heap ${heap})
  # 64 KiB chunks from every rendezvous on: each copy is cut into several.
  set_tests_properties(${name} PROPERTIES ENVIRONMENT
                       "DDTKIT_PROTOCOL=${proto};DDTKIT_MECH=${mech};DDTKIT_CHUNK_MIN=0;DDTKIT_CHUNK_BYTES=65536")
  list(APPEND proto_tests ${name})
endforeach()
# COOP_HCA with its engine spinning between tasks (engine.cpp: the choice where cores are to
# spare, which this 2-core machine never makes by itself): the same campaign, the other handover.
add_test(NAME comm_hca_spin_np2 COMMAND ${run} -n 2 ${prog} --mode random --seed 52 --heap 1)
set_tests_properties(comm_hca_spin_np2 PROPERTIES ENVIRONMENT
                     "DDTKIT_PROTOCOL=hca;DDTKIT_ENGINE_SPIN=1;DDTKIT_CHUNK_MIN=0;DDTKIT_CHUNK_BYTES=65536")
list(APPEND proto_tests comm_hca_spin_np2)
foreach(proto load hybrid)
  foreach(role receiver sender)
    add_test(NAME comm_killpeer_${proto}_kill_${role} COMMAND sh ${sh} $<TARGET_FILE:ddtkit_cli> ${prog} kill ${proto} ${role})
    list(APPEND proto_tests comm_killpeer_${proto}_kill_${role})
  endforeach()
endforeach()
set_tests_properties(${proto_tests} PROPERTIES TIMEOUT 300)
