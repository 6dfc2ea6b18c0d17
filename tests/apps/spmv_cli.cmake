# CLI contract of the spmv app (see tests/apps/CMakeLists.txt for gpukit_cli_test). `spmv bench` and
# --device gpu run with CUDA_VISIBLE_DEVICES=-1 (no device visible) so that they exit 3 on any machine.
set(SPMV $<TARGET_FILE:spmv_app>)
set(NO_GPU ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES=-1)
set(BUS ${DATA}/sparse/494_bus.mtx)
# Matrix Market with a row index 0 (indices are 1-based).
set(BAD_MTX ${CMAKE_CURRENT_BINARY_DIR}/spmv_index0.mtx)
file(WRITE ${BAD_MTX} "%%MatrixMarket matrix coordinate real general\n2 2 2\n0 1 1.0\n2 2 2.0\n")

gpukit_cli_test(NAME spmv_help EXPECT 0 STDERR_LINES 0 COMMAND ${SPMV} --help)
foreach(sub convert generate run bench)
  gpukit_cli_test(NAME spmv_${sub}_help EXPECT 0 STDERR_LINES 0 COMMAND ${SPMV} ${sub} --help)
endforeach()
gpukit_cli_test(NAME spmv_version EXPECT 0 STDERR_LINES 0 COMMAND ${SPMV} --version)
gpukit_cli_test(NAME spmv_no_subcommand EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV})

# run
gpukit_cli_test(NAME spmv_run_cpu EXPECT 0 STDERR_LINES 0 JSON r.json
                COMMAND ${SPMV} run ${BUS} --device cpu --repeats 5 --json r.json)
gpukit_cli_test(NAME spmv_run_h5_all_check EXPECT 0 STDERR_LINES 0 JSON r.json
                COMMAND ${SPMV} run ${DATA}/sparse/west0479.h5 --algorithm all --check --device cpu --json r.json)
gpukit_cli_test(NAME spmv_run_auto_double EXPECT 0 JSON r.json
                COMMAND ${SPMV} run ${DATA}/sparse/laplace2d_16.mtx --precision double --check --json r.json)
gpukit_cli_test(NAME spmv_run_unknown_flag EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} run ${BUS} --bogus)
gpukit_cli_test(NAME spmv_run_missing_value EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} run ${BUS} --repeats)
gpukit_cli_test(NAME spmv_run_repeats_zero EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} run ${BUS} --repeats 0)
gpukit_cli_test(NAME spmv_run_repeats_not_int EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} run ${BUS} --repeats 1e3)
gpukit_cli_test(NAME spmv_run_bad_algorithm EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} run ${BUS} --algorithm fastest)
gpukit_cli_test(NAME spmv_run_index0 EXPECT 2 STDERR_LINES 1 JSON r.json
                COMMAND ${SPMV} run ${BAD_MTX} --device cpu --json r.json)
gpukit_cli_test(NAME spmv_run_nonexistent EXPECT 2 STDERR_LINES 1 JSON r.json
                COMMAND ${SPMV} run no_such_matrix.mtx --device cpu --json r.json)
gpukit_cli_test(NAME spmv_run_bad_extension EXPECT 2 STDERR_LINES 1 JSON r.json
                COMMAND ${SPMV} run ${DATA}/reduce/values.txt --device cpu --json r.json)
gpukit_cli_test(NAME spmv_run_gpu_without_gpu EXPECT 3 STDERR_LINES 1 JSON r.json
                COMMAND ${NO_GPU} ${SPMV} run ${BUS} --device gpu --json r.json)

# convert and generate (host only)
gpukit_cli_test(NAME spmv_convert EXPECT 0 STDERR_LINES 0 COMMAND ${SPMV} convert ${BUS} bus.h5 --precision float)
gpukit_cli_test(NAME spmv_convert_output_option EXPECT 0 STDERR_LINES 0
                COMMAND ${SPMV} convert ${BUS} --output bus.mtx --index 64 --quiet)
gpukit_cli_test(NAME spmv_convert_index0 EXPECT 2 STDERR_LINES 1 JSON out.h5 COMMAND ${SPMV} convert ${BAD_MTX} out.h5)
gpukit_cli_test(NAME spmv_convert_same_file EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} convert ${BUS} ${BUS})
gpukit_cli_test(NAME spmv_convert_bad_index EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} convert ${BUS} x.h5 --index 16)
gpukit_cli_test(NAME spmv_convert_missing_out EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} convert ${BUS})
gpukit_cli_test(NAME spmv_generate EXPECT 0 STDERR_LINES 0 COMMAND ${SPMV} generate laplace2d lap.mtx --n 8)
gpukit_cli_test(NAME spmv_generate_random EXPECT 0 STDERR_LINES 0
                COMMAND ${SPMV} generate random --output rnd.h5 --rows 300 --cols 200 --k 5 --seed 3)
gpukit_cli_test(NAME spmv_generate_needs_n EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} generate laplace3d lap.mtx)
gpukit_cli_test(NAME spmv_generate_k_zero EXPECT 2 STDERR_LINES 1
                COMMAND ${SPMV} generate random x.mtx --rows 10 --k 0)
gpukit_cli_test(NAME spmv_generate_negative_rows EXPECT 2 STDERR_LINES 1
                COMMAND ${SPMV} generate powerlaw x.mtx --rows -5)
gpukit_cli_test(NAME spmv_generate_negative_seed EXPECT 2 STDERR_LINES 1
                COMMAND ${SPMV} generate powerlaw x.mtx --rows 5 --seed -1)
gpukit_cli_test(NAME spmv_generate_bad_class EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} generate tridiagonal x.mtx --n 4)
foreach(class banded blockdiag arrow)
  gpukit_cli_test(NAME spmv_generate_${class} EXPECT 0 STDERR_LINES 0
                  COMMAND ${SPMV} generate ${class} ${class}.h5 --rows 5000 --cols 3000 --k 4)
  gpukit_cli_test(NAME spmv_generate_${class}_needs_k EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} generate ${class} x.mtx --rows 10)
endforeach()
gpukit_cli_test(NAME spmv_generate_missing_value EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} generate laplace2d x.mtx --n)

# bench: GPU only
gpukit_cli_test(NAME spmv_bench_without_gpu EXPECT 3 STDERR_LINES 1 JSON r.json
                COMMAND ${NO_GPU} ${SPMV} bench --quick --json r.json)
gpukit_cli_test(NAME spmv_bench_unknown_flag EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} bench --out dir)
gpukit_cli_test(NAME spmv_bench_bad_class EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} bench --classes laplace2d,banded)
gpukit_cli_test(NAME spmv_bench_missing_value EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} bench --json)

# bench --corpus: the corpus is read and checked before the GPU is asked for, so a bad matrix is exit 2
# (one line naming it, no report) on any machine, and --list needs no GPU.
set(CORPUS_BAD ${CMAKE_CURRENT_BINARY_DIR}/spmv_corpus_bad)
set(CORPUS_JUNK ${CMAKE_CURRENT_BINARY_DIR}/spmv_corpus_junk)
file(REMOVE_RECURSE ${CORPUS_BAD} ${CORPUS_JUNK})
file(COPY ${BUS} ${DATA}/sparse/west0479.h5 DESTINATION ${CORPUS_BAD})
file(COPY ${BAD_MTX} DESTINATION ${CORPUS_BAD})
file(COPY ${BUS} ${DATA}/sparse/west0479.h5 DESTINATION ${CORPUS_JUNK})
file(WRITE ${CORPUS_JUNK}/notes.txt "not a matrix\n")
file(MAKE_DIRECTORY ${CORPUS_JUNK}/sub)
gpukit_cli_test(NAME spmv_bench_help_lists_corpus EXPECT 0 STDERR_LINES 0 OUTPUT_MATCH "--corpus DIR.FILE" "--corpus-generated"
                COMMAND ${SPMV} bench --help)
gpukit_cli_test(NAME spmv_bench_corpus_without_gpu EXPECT 3 STDERR_LINES 1 JSON r.json OUTPUT_MATCH "needs a CUDA device"
                COMMAND ${NO_GPU} ${SPMV} bench --corpus ${DATA}/sparse --corpus-generated --quick --json r.json)
gpukit_cli_test(NAME spmv_bench_corpus_bad_matrix EXPECT 2 STDERR_LINES 1 JSON r.json OUTPUT_MATCH "spmv_index0.mtx"
                COMMAND ${NO_GPU} ${SPMV} bench --corpus ${CORPUS_BAD} --json r.json)
gpukit_cli_test(NAME spmv_bench_corpus_list EXPECT 0 STDERR_LINES 0
                OUTPUT_MATCH "corpus: 3 matrices" "spmv_corpus_junk/494_bus.mtx +494 x 494 +1666" "west0479.h5 +479 x 479 +1910"
                             "data/sparse/494_bus.mtx +494 x 494 +1666" "skipped [^\n]*notes.txt" "skipped [^\n]*sub"
                COMMAND ${NO_GPU} ${SPMV} bench --corpus ${CORPUS_JUNK} --corpus ${BUS} --list)
gpukit_cli_test(NAME spmv_bench_corpus_generated_list EXPECT 0 STDERR_LINES 0
                OUTPUT_MATCH "corpus: 25 matrices" "rect_1k_x_1m +1000 x 1000000" "spmv generate arrow --rows 1000000 --k 4"
                             "denserow_2k +2000 x 2000 +9996"
                COMMAND ${SPMV} bench --corpus-generated --list)
gpukit_cli_test(NAME spmv_bench_corpus_missing EXPECT 2 STDERR_LINES 1 OUTPUT_MATCH "no_such_dir"
                COMMAND ${NO_GPU} ${SPMV} bench --corpus no_such_dir)
gpukit_cli_test(NAME spmv_bench_corpus_not_matrix EXPECT 2 STDERR_LINES 1 COMMAND ${SPMV} bench --corpus ${CORPUS_JUNK}/notes.txt --list)
gpukit_cli_test(NAME spmv_bench_corpus_with_classes EXPECT 2 STDERR_LINES 1
                COMMAND ${SPMV} bench --corpus ${CORPUS_JUNK} --classes laplace2d)
gpukit_cli_test(NAME spmv_bench_list_alone EXPECT 2 STDERR_LINES 1 COMMAND ${NO_GPU} ${SPMV} bench --list)

# Under mpiexec (GPUKIT_DISTRIBUTED): `spmv run` takes the distributed path with 2 and 3 ranks. The report
# and y (--output) are written once, by rank 0; y is byte for byte the one-process y (dist::host_spmv is
# bitwise the reference backend), for a Matrix Market file (converted once by rank 0) and an HDF5 file
# (with its own /matrix/x); the control compares float with double y and must see them differ. A missing
# file or a NaN in the matrix (read by rank 0 from Matrix Market, or by its owner from HDF5) fails on every
# rank with exit 2 and ONE error line (mpiexec adds its own banner), and no rank hangs (the timeout).
if(GPUKIT_DISTRIBUTED)
  set(MPI_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
              OMPI_MCA_mpi_yield_when_idle=1)
  set(SPMV_NAN ${CMAKE_CURRENT_BINARY_DIR}/spmv_nan.mtx)
  file(WRITE ${SPMV_NAN} "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n3 3 nan\n")
  # gpukit_spmv_mpi_compare(name np same one many): y of `spmv run <one>` on one process against y of
  # `mpiexec -n <np> spmv run <many> --check` (argument lists); same 1 expects the same bytes, 0 different ones.
  function(gpukit_spmv_mpi_compare name np same one many)
    set(first ${SPMV} run ${one} --device cpu --repeats 2 --output y.txt)
    set(second ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${SPMV} run ${many} --device cpu --repeats 2 --check
               --output y.txt --json r.json)
    string(REPLACE ";" "\\;" first "${first}")
    string(REPLACE ";" "\\;" second "${second}")
    add_test(NAME cli_${name}
             COMMAND ${CMAKE_COMMAND} -DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}/${name} -DOUTPUT=y.txt -DSAME=${same}
                     "-DFIRST=${first}" "-DSECOND=${second}" -P ${CMAKE_CURRENT_SOURCE_DIR}/compare_outputs.cmake)
    set_tests_properties(cli_${name} PROPERTIES ENVIRONMENT "${MPI_ENV}" TIMEOUT 300 LABELS "cpu;mpi")
  endfunction()
  foreach(np 2 3)
    gpukit_cli_test(NAME spmv_mpi${np}_run EXPECT 0 STDERR_LINES 0 JSON r.json ENVIRONMENT ${MPI_ENV}
                    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${SPMV} run ${BUS} --device cpu
                            --repeats 3 --check --output y.txt --json r.json)
    gpukit_spmv_mpi_compare(spmv_mpi${np}_same_y_mtx ${np} 1 "${BUS}" "${BUS}")
    gpukit_spmv_mpi_compare(spmv_mpi${np}_same_y_h5 ${np} 1 "${DATA}/sparse/west0479.h5;--precision;double"
                            "${DATA}/sparse/west0479.h5;--precision;double")
    gpukit_cli_test(NAME spmv_mpi${np}_missing_file EXPECT 2 ERROR_LINES 1 JSON r.json ENVIRONMENT ${MPI_ENV}
                    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${SPMV} run no_such_matrix.h5
                            --device cpu --output y.txt --json r.json)
  endforeach()
  gpukit_spmv_mpi_compare(spmv_mpi2_different_y_control 2 0 "${BUS}" "${BUS};--precision;double")
  gpukit_cli_test(NAME spmv_mpi2_nan_matrix EXPECT 2 ERROR_LINES 1 JSON r.json ENVIRONMENT ${MPI_ENV}
                  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${SPMV} run ${SPMV_NAN} --device cpu
                          --json r.json)
  gpukit_cli_test(NAME spmv_mpi2_nan_h5 EXPECT 2 ERROR_LINES 1 JSON r.json ENVIRONMENT ${MPI_ENV}
                  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${SPMV} run
                          ${CMAKE_CURRENT_BINARY_DIR}/bad_generated/csr_values_nan.h5 --device cpu --json r.json)
  set_tests_properties(cli_spmv_mpi2_nan_h5 PROPERTIES FIXTURES_REQUIRED bad_hdf5)
  gpukit_cli_test(NAME spmv_mpi2_non_square EXPECT 2 ERROR_LINES 1 JSON r.json ENVIRONMENT ${MPI_ENV}
                  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${SPMV} run ${DATA}/sparse/random_k5_300x200.mtx
                          --device cpu --json r.json)
endif()
