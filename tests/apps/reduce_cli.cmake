# CLI contract of the reduce app (see tests/apps/CMakeLists.txt for gpukit_cli_test). The GPU-only
# subcommands run with CUDA_VISIBLE_DEVICES=-1 (no device visible) so that they exit 3 on any machine.
set(REDUCE $<TARGET_FILE:reduce_app>)
set(NO_GPU ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES=-1)
set(VALUES ${DATA}/reduce/values.txt)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/reduce_bad_values.txt "1 2 3\n4 5x 6\n")

gpukit_cli_test(NAME reduce_help EXPECT 0 STDERR_LINES 0 COMMAND ${REDUCE} --help)
foreach(sub sum ladder bench)
  gpukit_cli_test(NAME reduce_${sub}_help EXPECT 0 STDERR_LINES 0 COMMAND ${REDUCE} ${sub} --help)
endforeach()
gpukit_cli_test(NAME reduce_version EXPECT 0 STDERR_LINES 0 COMMAND ${REDUCE} --version)
gpukit_cli_test(NAME reduce_no_subcommand EXPECT 2 STDERR_LINES 1 COMMAND ${REDUCE})
gpukit_cli_test(NAME reduce_unknown_subcommand EXPECT 2 STDERR_LINES 1 COMMAND ${REDUCE} product ${VALUES})

# sum
gpukit_cli_test(NAME reduce_sum_cpu EXPECT 0 STDERR_LINES 0 JSON r.json
                COMMAND ${REDUCE} sum ${VALUES} --device cpu --json r.json)
gpukit_cli_test(NAME reduce_sum_double_quiet EXPECT 0 STDERR_LINES 0 JSON r.json
                COMMAND ${REDUCE} sum ${VALUES} --type double --device cpu --quiet --json r.json)
gpukit_cli_test(NAME reduce_sum_auto EXPECT 0 JSON r.json COMMAND ${REDUCE} sum ${VALUES} --json r.json)
gpukit_cli_test(NAME reduce_sum_unknown_flag EXPECT 2 STDERR_LINES 1 COMMAND ${REDUCE} sum ${VALUES} --bogus)
gpukit_cli_test(NAME reduce_sum_missing_value EXPECT 2 STDERR_LINES 1 COMMAND ${REDUCE} sum ${VALUES} --type)
gpukit_cli_test(NAME reduce_sum_missing_file_arg EXPECT 2 STDERR_LINES 1 COMMAND ${REDUCE} sum --device cpu)
gpukit_cli_test(NAME reduce_sum_bad_type EXPECT 2 STDERR_LINES 1 COMMAND ${REDUCE} sum ${VALUES} --type half)
gpukit_cli_test(NAME reduce_sum_bad_device EXPECT 2 STDERR_LINES 1 COMMAND ${REDUCE} sum ${VALUES} --device tpu)
gpukit_cli_test(NAME reduce_sum_nonexistent EXPECT 2 STDERR_LINES 1 JSON r.json
                COMMAND ${REDUCE} sum no_such_file.txt --device cpu --json r.json)
gpukit_cli_test(NAME reduce_sum_bad_number EXPECT 2 STDERR_LINES 1 JSON r.json
                COMMAND ${REDUCE} sum ${CMAKE_CURRENT_BINARY_DIR}/reduce_bad_values.txt --device cpu --json r.json)
gpukit_cli_test(NAME reduce_sum_not_integers EXPECT 2 STDERR_LINES 1 JSON r.json
                COMMAND ${REDUCE} sum ${VALUES} --type int32 --device cpu --json r.json)
gpukit_cli_test(NAME reduce_sum_gpu_without_gpu EXPECT 3 STDERR_LINES 1 JSON r.json
                COMMAND ${NO_GPU} ${REDUCE} sum ${VALUES} --device gpu --json r.json)

# ladder and bench: GPU only
foreach(sub ladder bench)
  gpukit_cli_test(NAME reduce_${sub}_without_gpu EXPECT 3 STDERR_LINES 1 JSON r.json
                  COMMAND ${NO_GPU} ${REDUCE} ${sub} --quick --json r.json)
  gpukit_cli_test(NAME reduce_${sub}_unknown_flag EXPECT 2 STDERR_LINES 1 COMMAND ${REDUCE} ${sub} --csv x.csv)
  gpukit_cli_test(NAME reduce_${sub}_missing_value EXPECT 2 STDERR_LINES 1 COMMAND ${REDUCE} ${sub} --json)
  gpukit_cli_test(NAME reduce_${sub}_positional EXPECT 2 STDERR_LINES 1 COMMAND ${REDUCE} ${sub} extra)
endforeach()
