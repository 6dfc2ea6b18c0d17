# libsparse GPU SpMV: the plan (host analysis), the kernels' dispatch, and the cuSPARSE peer.
target_sources(sparse PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/spmv_plan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spmv.cu
  ${CMAKE_CURRENT_LIST_DIR}/cusparse_spmv.cpp
)
target_link_libraries(sparse PUBLIC CUDA::cusparse)
