# spmv run / spmv bench (GPU SpMV against cuSPARSE; the bench's bar chart comes from bench/plot_spmv.py).
target_sources(spmv_app PRIVATE ${CMAKE_CURRENT_LIST_DIR}/run_command.cpp ${CMAKE_CURRENT_LIST_DIR}/bench_command.cpp)
target_compile_definitions(spmv_app PRIVATE SPMV_APP_HAVE_RUN_BENCH
                                            SPMV_PLOT_SCRIPT="${PROJECT_SOURCE_DIR}/bench/plot_spmv.py")
