# CLI contract of the solve app (see tests/apps/CMakeLists.txt for gpukit_cli_test). Cases that must fail
# before a device is chosen count their stderr lines with any --device; the others pass --device cpu where
# the line count matters (without a GPU, auto adds the fallback note).
set(SOLVE_BAD ${CMAKE_CURRENT_BINARY_DIR}/solve_inputs)
file(MAKE_DIRECTORY ${SOLVE_BAD})
# diag(1, -1, 2, -3) with b = ones: cg breaks down at once, p.Ap = 1 - 1 + 2 - 3 = -1 <= 0 (indefinite).
file(WRITE ${SOLVE_BAD}/indefinite.mtx "%%MatrixMarket matrix coordinate real general\n4 4 4\n1 1 1\n2 2 -1\n3 3 2\n4 4 -3\n")
file(WRITE ${SOLVE_BAD}/nan.mtx "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 nan\n2 2 1\n")
file(WRITE ${SOLVE_BAD}/rhs3.txt "1 2 3\n")

set(SOLVE $<TARGET_FILE:solve_app>)
gpukit_cli_test(NAME solve_help EXPECT 0 COMMAND ${SOLVE} --help)
gpukit_cli_test(NAME solve_run_help EXPECT 0 COMMAND ${SOLVE} run --help)
gpukit_cli_test(NAME solve_version EXPECT 0 COMMAND ${SOLVE} --version)
gpukit_cli_test(NAME solve_run_pcg_494_bus EXPECT 0 JSON r.json
                COMMAND ${SOLVE} run ${DATA}/sparse/494_bus.mtx --method pcg --tol 1e-10 --json r.json --history h.csv)
gpukit_cli_test(NAME solve_run_pcg_bcsstk13 EXPECT 0 JSON r.json
                COMMAND ${SOLVE} run ${DATA}/sparse/bcsstk13.mtx --method pcg --tol 1e-8 --max-iterations 5000
                        --rhs random --json r.json)
gpukit_cli_test(NAME solve_run_plot EXPECT 0 PNG curve.png
                COMMAND ${SOLVE} run ${DATA}/sparse/494_bus.mtx --method pcg --tol 1e-10 --plot curve.png)
gpukit_cli_test(NAME solve_run_graph EXPECT 0 JSON r.json
                COMMAND ${SOLVE} run ${DATA}/sparse/494_bus.mtx --method pcg --tol 1e-10 --graph --json r.json)
gpukit_cli_test(NAME solve_run_graph_pipecg_refused EXPECT 2 STDERR_LINES 1
                COMMAND ${SOLVE} run ${DATA}/sparse/494_bus.mtx --method pipecg --graph)
gpukit_cli_test(NAME solve_run_float_cg EXPECT 0 JSON r.json
                COMMAND ${SOLVE} run ${DATA}/sparse/laplace2d_16.mtx --precision float --tol 1e-5 --json r.json)
foreach(m cg bicgstab pipecg)
  gpukit_cli_test(NAME solve_run_${m}_reproducible EXPECT 0 JSON r.json
                  COMMAND ${SOLVE} run ${DATA}/sparse/laplace2d_16.mtx --method ${m} --reproducible --json r.json)
endforeach()
gpukit_cli_test(NAME solve_run_not_converged EXPECT 1 STDERR_LINES 1 JSON r.json
                COMMAND ${SOLVE} run ${DATA}/sparse/494_bus.mtx --max-iterations 5 --device cpu --json r.json)
gpukit_cli_test(NAME solve_run_breakdown EXPECT 1 STDERR_LINES 1 JSON r.json
                COMMAND ${SOLVE} run ${SOLVE_BAD}/indefinite.mtx --device cpu --json r.json)
gpukit_cli_test(NAME solve_run_non_square EXPECT 2 STDERR_LINES 1 JSON r.json
                COMMAND ${SOLVE} run ${DATA}/sparse/lp_afiro.mtx --json r.json)
gpukit_cli_test(NAME solve_run_nan_matrix EXPECT 2 STDERR_LINES 1 JSON r.json
                COMMAND ${SOLVE} run ${SOLVE_BAD}/nan.mtx --json r.json)
gpukit_cli_test(NAME solve_run_rhs_size_mismatch EXPECT 2 STDERR_LINES 1 JSON r.json
                COMMAND ${SOLVE} run ${DATA}/sparse/494_bus.mtx --rhs ${SOLVE_BAD}/rhs3.txt --json r.json)
gpukit_cli_test(NAME solve_run_zero_diagonal_pcg EXPECT 2 STDERR_LINES 1 JSON r.json
                COMMAND ${SOLVE} run ${DATA}/sparse/west0479.mtx --method pcg --json r.json)
gpukit_cli_test(NAME solve_run_missing_file EXPECT 2 STDERR_LINES 1
                COMMAND ${SOLVE} run no_such_matrix.mtx)
gpukit_cli_test(NAME solve_run_bad_method EXPECT 2 STDERR_LINES 1
                COMMAND ${SOLVE} run ${DATA}/sparse/494_bus.mtx --method gmres)
gpukit_cli_test(NAME solve_bench_help EXPECT 0 COMMAND ${SOLVE} bench --help)
# --check also asks the recomputed true residual: met in double (494_bus, pcg: 1.0e-9 <= 1e-8), and
# rejected where the recurrence reached the tolerance but rounding left the true residual far above it
# (float, tol 1e-10: 5.9e-2 on the CPU path): exit 1, one line.
gpukit_cli_test(NAME solve_run_check_true_residual_met EXPECT 0
                COMMAND ${SOLVE} run ${DATA}/sparse/494_bus.mtx --method pcg --check --device cpu)
gpukit_cli_test(NAME solve_run_check_true_residual_rejected EXPECT 1 STDERR_LINES 1
                COMMAND ${SOLVE} run ${DATA}/sparse/494_bus.mtx --method pcg --check --device cpu --precision float
                        --tol 1e-10 --max-iterations 2000)

# Under mpiexec (GPUKIT_DISTRIBUTED): `solve run` takes the distributed path with 2 and 3 ranks; the report is
# written once, by rank 0; a missing file fails on every rank with exit 2 and ONE error line (mpiexec adds
# its own banner), and no rank hangs (the test's timeout).
if(GPUKIT_DISTRIBUTED)
  set(MPI_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
              OMPI_MCA_mpi_yield_when_idle=1)
  foreach(np 2 3)
    gpukit_cli_test(NAME solve_mpi${np}_run_reproducible EXPECT 0 JSON r.json ENVIRONMENT ${MPI_ENV}
                    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${SOLVE} run
                            ${DATA}/sparse/laplace2d_16.mtx --method pipecg --reproducible --check --json r.json)
    gpukit_cli_test(NAME solve_mpi${np}_missing_file EXPECT 2 ERROR_LINES 1 JSON r.json ENVIRONMENT ${MPI_ENV}
                    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${SOLVE} run
                            ${SOLVE_BAD}/missing.h5 --json r.json)
  endforeach()
  # The scaling model: one process, a table and a schema-conforming report; a non-square matrix is refused.
  gpukit_cli_test(NAME solve_plan_only EXPECT 0 JSON p.json
                  COMMAND ${SOLVE} run ${DATA}/sparse/laplace2d_16.mtx --plan-only --max-gpus 64 --method pipecg
                          --precision float --json p.json)
  gpukit_cli_test(NAME solve_plan_only_non_square EXPECT 2 STDERR_LINES 1 JSON p.json
                  COMMAND ${SOLVE} run ${DATA}/sparse/random_k5_300x200.mtx --plan-only --json p.json)
  gpukit_cli_test(NAME solve_plan_only_bicgstab EXPECT 2 STDERR_LINES 1 JSON p.json
                  COMMAND ${SOLVE} run ${DATA}/sparse/laplace2d_16.mtx --plan-only --method bicgstab --json p.json)
  gpukit_cli_test(NAME solve_mpi2_nan_matrix EXPECT 2 ERROR_LINES 1 JSON r.json ENVIRONMENT ${MPI_ENV}
                  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${SOLVE} run ${SOLVE_BAD}/nan.mtx --json r.json)
  # A rank that fails alone mid-solve (tests/apps/rank_fault.cpp: its progress callback throws at iteration
  # 10 while the others wait in the next sum over ranks): that rank's one error line, MPI_Abort, exit 3 from
  # mpiexec, and no rank left waiting (the 60 s timeout; the whole run takes about a second). The GPU form
  # runs in scripts/dist-check.
  add_executable(rank_fault ${CMAKE_CURRENT_SOURCE_DIR}/rank_fault.cpp)
  target_link_libraries(rank_fault PRIVATE solve::dist gpukit_app_mpi)
  gpukit_warnings(rank_fault)
  foreach(fault "2;1" "3;0")
    list(GET fault 0 np)
    list(GET fault 1 rank)
    gpukit_cli_test(NAME rank_fault_mpi${np}_rank${rank}_cpu EXPECT 3 ERROR_LINES 1 ENVIRONMENT ${MPI_ENV}
                    OUTPUT_MATCH "rank_fault: error: rank ${rank}: injected failure at iteration 10"
                    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} $<TARGET_FILE:rank_fault> cpu ${rank})
    set_tests_properties(cli_rank_fault_mpi${np}_rank${rank}_cpu PROPERTIES TIMEOUT 60)
  endforeach()
  # --device gpu under mpiexec takes the distributed GPU path; with no GPU visible every rank fails alike
  # (exit 3, one error line, no report). The GPU runs themselves are scripts/dist-check's (SKIP without a
  # GPU there, never a pass).
  gpukit_cli_test(NAME solve_mpi2_device_gpu_without_gpu EXPECT 3 ERROR_LINES 1 JSON r.json
                  ENVIRONMENT ${MPI_ENV} CUDA_VISIBLE_DEVICES=-1
                  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${SOLVE} run ${DATA}/sparse/laplace2d_16.mtx
                          --device gpu --json r.json)
endif()
