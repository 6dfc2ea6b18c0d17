# `reduce ladder` and `reduce bench` (included by apps/reduce/CMakeLists.txt). CUB is confined to
# cub_peers.cu; the commands themselves only time calls.
target_sources(reduce_app PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/ladder_command.cu
  ${CMAKE_CURRENT_LIST_DIR}/bench_command.cu
  ${CMAKE_CURRENT_LIST_DIR}/cub_peers.cu
  ${CMAKE_CURRENT_LIST_DIR}/floor_probe.cu
)
target_link_libraries(reduce_app PRIVATE CUDA::cudart)
target_compile_definitions(reduce_app PRIVATE REDUCE_APP_HAVE_LADDER_BENCH)
