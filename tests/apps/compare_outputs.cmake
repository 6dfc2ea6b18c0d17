# cmake -P runner of a comparison between two runs of an app (spmv_cli.cmake): FIRST and SECOND (commands,
# list separators escaped as in gpukit_cli_test) each run in their own folder under WORKDIR and must exit 0;
# then the file OUTPUT each wrote is compared byte for byte: equal when SAME is 1, different when SAME is 0
# (the control showing that the comparison can fail).
file(REMOVE_RECURSE ${WORKDIR})
foreach(run FIRST SECOND)
  file(MAKE_DIRECTORY ${WORKDIR}/${run})
  string(REPLACE "\\;" ";" cmd "${${run}}")
  execute_process(COMMAND ${cmd} WORKING_DIRECTORY ${WORKDIR}/${run} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message("${run}: exit ${rc}\n--- stdout\n${out}--- stderr\n${err}---")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${run} exited ${rc}")
  endif()
  if(NOT EXISTS ${WORKDIR}/${run}/${OUTPUT})
    message(FATAL_ERROR "${run} wrote no ${OUTPUT}")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORKDIR}/FIRST/${OUTPUT} ${WORKDIR}/SECOND/${OUTPUT}
                RESULT_VARIABLE differ)
if(SAME AND differ)
  message(FATAL_ERROR "${OUTPUT} differs between the two runs")
elseif(NOT SAME AND NOT differ)
  message(FATAL_ERROR "${OUTPUT} is the same in both runs, expected different files")
endif()
