# libsparse host side: containers, Matrix Market / HDF5 I/O, generators, the CPU SpMV (reference + Eigen).
target_sources(sparse PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/src/csr.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/matrix_market.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/hdf5_io.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/io.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/generate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/reference/spmv_reference.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/reference/spmv_eigen.cpp
)

# HDF5, C API only (cmake/gpukit_dependencies.cmake).
gpukit_link_hdf5(sparse libsparse)

# Eigen: only src/reference/spmv_eigen.cpp includes it (never a public header nor a .cu file).
if(NOT TARGET Eigen3::Eigen)
  message(FATAL_ERROR "libsparse needs Eigen 3.3 or newer: apt install libeigen3-dev, or pass -DEigen3_DIR=...")
endif()
# BUILD_INTERFACE: the installed export must not ask consumers for Eigen (compile-only, header-only).
target_link_libraries(sparse PRIVATE $<BUILD_INTERFACE:Eigen3::Eigen> ${GPUKIT_OPENMP})
