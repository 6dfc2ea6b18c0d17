# test_spmv: every SpMV algorithm against the reference, Eigen and cuSPARSE (included by CMakeLists.txt).
gpukit_add_test(test_spmv SOURCES test_spmv.cpp LIBS sparse::sparse)
# White-box check of the adaptive partition (a host-only header of the CUDA part).
target_include_directories(test_spmv PRIVATE ${PROJECT_SOURCE_DIR}/libsparse/src/cuda)
