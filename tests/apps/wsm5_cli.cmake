# CLI contract of the wsm5 app (see tests/apps/CMakeLists.txt for gpukit_cli_test). Runs that time the GPU
# variants are for a GPU machine (bench/wsm5.sh); here `run` goes through the CPU reference (--device cpu
# or --variant cpu), and --device gpu runs with CUDA_VISIBLE_DEVICES=-1 so that it exits 3 on any machine.
set(WSM5 $<TARGET_FILE:wsm5_app>)
set(NO_GPU ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES=-1)
set(GOLDEN ${DATA}/wsm5/golden_columns.h5)
# An HDF5 name that is no HDF5 file.
set(WSM5_NOT_H5 ${CMAKE_CURRENT_BINARY_DIR}/wsm5_not_hdf5.h5)
file(WRITE ${WSM5_NOT_H5} "not an HDF5 file\n")

gpukit_cli_test(NAME wsm5_help EXPECT 0 STDERR_LINES 0 COMMAND ${WSM5} --help)
foreach(sub run convert generate)
  gpukit_cli_test(NAME wsm5_${sub}_help EXPECT 0 STDERR_LINES 0 COMMAND ${WSM5} ${sub} --help)
endforeach()
gpukit_cli_test(NAME wsm5_version EXPECT 0 STDERR_LINES 0 COMMAND ${WSM5} --version)
gpukit_cli_test(NAME wsm5_no_subcommand EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5})
gpukit_cli_test(NAME wsm5_unknown_subcommand EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} simulate)

# run
gpukit_cli_test(NAME wsm5_run_cpu EXPECT 0 STDERR_LINES 0 JSON r.json
                COMMAND ${WSM5} run ${GOLDEN} --device cpu --steps 1 --json r.json)
gpukit_cli_test(NAME wsm5_run_cpu_check_output EXPECT 0 STDERR_LINES 0 JSON r.json
                COMMAND ${WSM5} run ${GOLDEN} --variant cpu --check --steps 2 --output out.h5 --json r.json --quiet)
gpukit_cli_test(NAME wsm5_run_auto EXPECT 0 JSON r.json COMMAND ${WSM5} run ${GOLDEN} --steps 1 --repeats 3 --json r.json)
gpukit_cli_test(NAME wsm5_run_unknown_flag EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} run ${GOLDEN} --bogus)
gpukit_cli_test(NAME wsm5_run_missing_value EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} run ${GOLDEN} --steps)
gpukit_cli_test(NAME wsm5_run_missing_input EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} run --steps 1)
gpukit_cli_test(NAME wsm5_run_steps_overflow EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} run ${GOLDEN} --steps 4294967297)
gpukit_cli_test(NAME wsm5_run_steps_zero EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} run ${GOLDEN} --steps 0)
gpukit_cli_test(NAME wsm5_run_steps_not_int EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} run ${GOLDEN} --steps 1e3)
gpukit_cli_test(NAME wsm5_run_repeats_negative EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} run ${GOLDEN} --repeats -4)
gpukit_cli_test(NAME wsm5_run_bad_variant EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} run ${GOLDEN} --variant fastest)
gpukit_cli_test(NAME wsm5_run_bad_device EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} run ${GOLDEN} --device tpu)
gpukit_cli_test(NAME wsm5_run_named_variant_on_cpu EXPECT 2 STDERR_LINES 1 JSON r.json
                COMMAND ${WSM5} run ${GOLDEN} --variant warp_per_column --device cpu --json r.json)
gpukit_cli_test(NAME wsm5_run_output_is_input EXPECT 2 STDERR_LINES 1
                COMMAND ${WSM5} run ${GOLDEN} --device cpu --output ${GOLDEN})
gpukit_cli_test(NAME wsm5_run_nonexistent EXPECT 2 STDERR_LINES 1 JSON r.json
                COMMAND ${WSM5} run no_such_domain.h5 --device cpu --output out.h5 --json r.json)
gpukit_cli_test(NAME wsm5_run_nonexistent_no_output EXPECT 2 STDERR_LINES 1 JSON out.h5
                COMMAND ${WSM5} run no_such_domain.h5 --device cpu --output out.h5 --json r.json)
gpukit_cli_test(NAME wsm5_run_not_hdf5 EXPECT 2 STDERR_LINES 1 JSON r.json
                COMMAND ${WSM5} run ${WSM5_NOT_H5} --device cpu --json r.json)
gpukit_cli_test(NAME wsm5_run_gpu_without_gpu EXPECT 3 STDERR_LINES 1 JSON r.json
                COMMAND ${NO_GPU} ${WSM5} run ${GOLDEN} --device gpu --json r.json)
gpukit_cli_test(NAME wsm5_run_named_variant_without_gpu EXPECT 3 STDERR_LINES 1 JSON r.json
                COMMAND ${NO_GPU} ${WSM5} run ${GOLDEN} --variant thread_per_column --json r.json)

# convert and generate (host only)
gpukit_cli_test(NAME wsm5_convert EXPECT 0 STDERR_LINES 0
                COMMAND ${WSM5} convert ${DATA}/wsm5/columns.txt cols.h5 --golden ${DATA}/wsm5/wrf_v31_1step.txt)
gpukit_cli_test(NAME wsm5_convert_output_option EXPECT 0 STDERR_LINES 0
                COMMAND ${WSM5} convert ${DATA}/wsm5/columns.txt --output cols.h5 --quiet)
gpukit_cli_test(NAME wsm5_convert_nonexistent EXPECT 2 STDERR_LINES 1 JSON cols.h5
                COMMAND ${WSM5} convert no_such_columns.txt cols.h5)
gpukit_cli_test(NAME wsm5_convert_missing_out EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} convert ${DATA}/wsm5/columns.txt)
gpukit_cli_test(NAME wsm5_generate EXPECT 0 STDERR_LINES 0
                COMMAND ${WSM5} generate --nx 8 --ny 4 --nz 35 --seed 3 --dt 60 small.h5)
gpukit_cli_test(NAME wsm5_generate_output_option EXPECT 0 STDERR_LINES 0
                COMMAND ${WSM5} generate --output small.h5 --nx 4 --ny 2 --quiet)
gpukit_cli_test(NAME wsm5_generate_dt_inf EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} generate x.h5 --dt inf)
gpukit_cli_test(NAME wsm5_generate_dt_nan EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} generate x.h5 --dt nan)
gpukit_cli_test(NAME wsm5_generate_dt_zero EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} generate x.h5 --dt 0)
gpukit_cli_test(NAME wsm5_generate_dt_too_long EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} generate x.h5 --dt 3601)
gpukit_cli_test(NAME wsm5_generate_nx_zero EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} generate x.h5 --nx 0)
gpukit_cli_test(NAME wsm5_generate_nz_one EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} generate x.h5 --nz 1)
gpukit_cli_test(NAME wsm5_generate_too_many_cells EXPECT 2 STDERR_LINES 1 JSON x.h5
                COMMAND ${WSM5} generate x.h5 --nx 100000 --ny 100000 --nz 1000)
gpukit_cli_test(NAME wsm5_generate_negative_seed EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} generate x.h5 --seed -1)
gpukit_cli_test(NAME wsm5_generate_missing_value EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} generate x.h5 --nx)
gpukit_cli_test(NAME wsm5_generate_missing_out EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} generate --nx 4)

# Physically impossible inputs: tests/data/bad/wsm5_physical/MANIFEST.tsv, run by the bad-input corpus
# (bad_inputs.cmake).
gpukit_cli_test(NAME wsm5_bench_without_gpu EXPECT 3 STDERR_LINES 1 JSON b.json
                COMMAND ${NO_GPU} ${WSM5} bench --crossover --json b.json)
gpukit_cli_test(NAME wsm5_bench_needs_crossover EXPECT 2 STDERR_LINES 1 COMMAND ${WSM5} bench)
gpukit_cli_test(NAME wsm5_run_variant_automatic_cpu EXPECT 0 STDERR_LINES 0 JSON r.json
                COMMAND ${WSM5} run ${GOLDEN} --variant automatic --device cpu --check --json r.json --quiet)

# Under mpiexec (GPUKIT_DISTRIBUTED): `wsm5 run` splits the columns over 2 and 3 ranks (the golden columns:
# one row, split by columns; a generated 6 x 5 domain: split by rows); the output holds the one-process
# run's bits in every field and the same bytes, the text and report are written once, by rank 0
# (wsm5_mpi_compare.cmake). A missing or unreadable file, or a GPU variant asked for with --device cpu,
# exits 2 on every rank with ONE error line (mpiexec adds its own banner) and no rank hangs (the test's
# timeout); a GPU variant without a GPU exits 3 the same way, and --variant automatic --device auto falls
# back to the CPU reference with one note. The GPU cases (label gpu; skipped without a CUDA device) compare
# each GPU variant under 2 ranks (sharing one GPU, or one GPU each) with the one-process run of the same
# variant, bit for bit.
if(GPUKIT_DISTRIBUTED)
  add_executable(wsm5_same_fields wsm5_same_fields.cpp)
  target_link_libraries(wsm5_same_fields PRIVATE wsm5::wsm5)
  gpukit_warnings(wsm5_same_fields)
  set(MPI_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
              OMPI_MCA_mpi_yield_when_idle=1)
  # wsm5_mpi_compare(NAME NP INPUT VARIANT LABELS): one comparison (INPUT golden or generated).
  function(wsm5_mpi_compare name np input variant labels)
    set(in ${input})
    if(input STREQUAL golden)
      set(in ${GOLDEN})
    endif()
    add_test(NAME cli_${name}
             COMMAND ${CMAKE_COMMAND} -DWSM5=${WSM5} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=${np} -DIN=${in}
                     -DVARIANT=${variant} -DSAME=$<TARGET_FILE:wsm5_same_fields> -DCHECKER=$<TARGET_FILE:report_check>
                     -DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}/${name}
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/wsm5_mpi_compare.cmake)
    set_tests_properties(cli_${name} PROPERTIES ENVIRONMENT "${MPI_ENV}" TIMEOUT 300 LABELS "${labels}"
                         SKIP_REGULAR_EXPRESSION "SKIPPED: no CUDA device")
  endfunction()
  foreach(np 2 3)
    foreach(input golden generated)
      wsm5_mpi_compare(wsm5_mpi${np}_same_as_one_process_${input} ${np} ${input} cpu "cpu;mpi")
    endforeach()
    gpukit_cli_test(NAME wsm5_mpi${np}_run_check EXPECT 0 JSON r.json ENVIRONMENT ${MPI_ENV}
                    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${WSM5} run ${GOLDEN} --device cpu
                            --check --steps 2 --json r.json)
    gpukit_cli_test(NAME wsm5_mpi${np}_missing_file EXPECT 2 ERROR_LINES 1 JSON r.json ENVIRONMENT ${MPI_ENV}
                    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${WSM5} run no_such_domain.h5
                            --variant cpu --output out.h5 --json r.json)
  endforeach()
  foreach(variant thread_per_column warp_per_column automatic)
    foreach(input golden generated)
      wsm5_mpi_compare(wsm5_mpi2_gpu_${variant}_same_as_one_process_${input} 2 ${input} ${variant} "gpu;mpi")
    endforeach()
  endforeach()
  gpukit_cli_test(NAME wsm5_mpi2_not_hdf5 EXPECT 2 ERROR_LINES 1 JSON r.json ENVIRONMENT ${MPI_ENV}
                  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${WSM5} run ${WSM5_NOT_H5} --variant cpu
                          --json r.json)
  gpukit_cli_test(NAME wsm5_mpi2_gpu_variant_on_cpu EXPECT 2 ERROR_LINES 1 JSON r.json ENVIRONMENT ${MPI_ENV}
                  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${WSM5} run ${GOLDEN}
                          --variant thread_per_column --device cpu --json r.json)
  gpukit_cli_test(NAME wsm5_mpi2_gpu_variant_without_gpu EXPECT 3 ERROR_LINES 1 JSON r.json
                  ENVIRONMENT ${MPI_ENV} CUDA_VISIBLE_DEVICES=-1
                  OUTPUT_MATCH "needs a GPU on every rank"
                  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${WSM5} run ${GOLDEN}
                          --variant thread_per_column --json r.json)
  gpukit_cli_test(NAME wsm5_mpi2_device_gpu_without_gpu EXPECT 3 ERROR_LINES 1 JSON r.json
                  ENVIRONMENT ${MPI_ENV} CUDA_VISIBLE_DEVICES=-1
                  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${WSM5} run ${GOLDEN} --device gpu --json r.json)
  gpukit_cli_test(NAME wsm5_mpi2_automatic_falls_back_without_gpu EXPECT 0 JSON r.json
                  ENVIRONMENT ${MPI_ENV} CUDA_VISIBLE_DEVICES=-1
                  OUTPUT_MATCH "running the CPU reference on every rank" "the CPU reference on each rank, the state"
                  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${WSM5} run ${GOLDEN} --check --json r.json)
endif()
