# cmake -DFUZZER=... -DSEEDS=dir -DDICT=file -DSCRATCH=dir [-DSECONDS=n] -P run_fuzzer.cmake
# Fuzzes for SECONDS (default 20) on a copy of the seeds; any crash, leak, timeout or sanitizer report fails,
# and the offending input is left in SCRATCH.
if(NOT SECONDS)
  set(SECONDS 20)
endif()
file(REMOVE_RECURSE ${SCRATCH})
file(MAKE_DIRECTORY ${SCRATCH})
file(COPY ${SEEDS}/ DESTINATION ${SCRATCH}/corpus)
execute_process(
  COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=5 -dict=${DICT} -print_final_stats=1
          -artifact_prefix=${SCRATCH}/ ${SCRATCH}/corpus
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "fuzzer exited with ${result}; the failing input is in ${SCRATCH}")
endif()
