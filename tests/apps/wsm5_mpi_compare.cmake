# cmake -P runner of one distributed `wsm5 run` comparison (tests/apps/wsm5_cli.cmake): the one-process run
# and the NP-rank run of the same input and options, each in its own folder. The NP-rank run must exit 0,
# print its text once (one "input" line), leave exactly its report and output file (nothing per rank, no
# partial file), and its output must hold the one-process output's bits in every field and be the same file,
# byte for byte (wsm5::write_hdf5 writes no object timestamps).
#   -DWSM5=app -DMPIEXEC=... -DNP=n -DIN=domain.h5 -DSAME=wsm5_same_fields -DCHECKER=report_check -DWORKDIR=dir
#   [-DVARIANT=cpu|thread_per_column|warp_per_column|automatic]
# IN=generated: a generated 6 x 5 x 20 domain (split by rows up to 5 ranks) instead of a file.
# VARIANT other than cpu (the default): both runs use that GPU variant with --device gpu and --check, and the
# output is the GPU state; when the one-process run finds no GPU (exit 3, "no CUDA device") the script prints
# "SKIPPED: no CUDA device" (the test's SKIP_REGULAR_EXPRESSION) and stops.
file(REMOVE_RECURSE ${WORKDIR})
file(MAKE_DIRECTORY ${WORKDIR}/one ${WORKDIR}/many)
if(IN STREQUAL "generated")
  set(IN ${WORKDIR}/in.h5)
  execute_process(COMMAND ${WSM5} generate --nx 6 --ny 5 --nz 20 --seed 5 --quiet ${IN} RESULT_VARIABLE grc)
  if(NOT grc EQUAL 0)
    message(FATAL_ERROR "wsm5 generate exited ${grc}")
  endif()
endif()
if(NOT DEFINED VARIANT)
  set(VARIANT cpu)
endif()
set(args run ${IN} --variant ${VARIANT} --steps 3 --output out.h5 --json r.json)
if(NOT VARIANT STREQUAL "cpu")
  list(APPEND args --device gpu --check --repeats 3)
endif()
execute_process(COMMAND ${WSM5} ${args} WORKING_DIRECTORY ${WORKDIR}/one RESULT_VARIABLE rc1 OUTPUT_QUIET
                ERROR_VARIABLE err1)
if(NOT VARIANT STREQUAL "cpu" AND rc1 EQUAL 3 AND err1 MATCHES "no CUDA device")
  message("wsm5_mpi_compare: SKIPPED: no CUDA device (${err1})")
  return()
endif()
if(NOT rc1 EQUAL 0)
  message(FATAL_ERROR "the one-process run exited ${rc1}")
endif()
execute_process(COMMAND ${MPIEXEC} -np ${NP} ${WSM5} ${args} WORKING_DIRECTORY ${WORKDIR}/many RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("exit ${rc}\n--- stdout\n${out}--- stderr\n${err}---")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the ${NP}-rank run exited ${rc}")
endif()
string(REGEX MATCHALL "(^|\n)input     " inputs "${out}")
list(LENGTH inputs n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "the ${NP}-rank run printed its text ${n} times")
endif()
if(NOT out MATCHES "mpi       ${NP} ranks")
  message(FATAL_ERROR "the ${NP}-rank run does not say it ran on ${NP} ranks")
endif()
file(GLOB written RELATIVE ${WORKDIR}/many ${WORKDIR}/many/*)
list(SORT written)
if(NOT written STREQUAL "out.h5;r.json")
  message(FATAL_ERROR "the ${NP}-rank run left ${written}, expected out.h5;r.json")
endif()
execute_process(COMMAND ${CHECKER} ${WORKDIR}/many/r.json RESULT_VARIABLE crc)
if(NOT crc EQUAL 0)
  message(FATAL_ERROR "r.json does not conform to the report schema")
endif()
execute_process(COMMAND ${SAME} ${WORKDIR}/one/out.h5 ${WORKDIR}/many/out.h5 RESULT_VARIABLE src)
if(NOT src EQUAL 0)
  message(FATAL_ERROR "the ${NP}-rank output differs from the one-process output")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORKDIR}/one/out.h5 ${WORKDIR}/many/out.h5
                RESULT_VARIABLE brc)
if(NOT brc EQUAL 0)
  message(FATAL_ERROR "the ${NP}-rank output file is not byte-identical to the one-process output file")
endif()
