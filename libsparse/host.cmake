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

# HDF5 (C API only). FindHDF5 defines the imported target hdf5::hdf5 since CMake 3.19 (so with 3.25 here
# and 4.x on the GPU machines); the variables are the fallback for an HDF5 found some other way.
if(NOT HDF5_FOUND)
  message(FATAL_ERROR "libsparse needs HDF5 (C library and headers): apt install libhdf5-dev, "
                      "or pass -DHDF5_ROOT=...")
endif()
if(TARGET hdf5::hdf5)
  target_link_libraries(sparse PRIVATE hdf5::hdf5)
else()
  target_include_directories(sparse SYSTEM PRIVATE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
  target_compile_definitions(sparse PRIVATE ${HDF5_C_DEFINITIONS} ${HDF5_DEFINITIONS})
  target_link_libraries(sparse PRIVATE ${HDF5_C_LIBRARIES} ${HDF5_LIBRARIES})
endif()

# Eigen: only src/reference/spmv_eigen.cpp includes it (never a public header nor a .cu file).
if(NOT TARGET Eigen3::Eigen)
  message(FATAL_ERROR "libsparse needs Eigen 3.3 or newer: apt install libeigen3-dev, or pass -DEigen3_DIR=...")
endif()
# BUILD_INTERFACE: the installed export must not ask consumers for Eigen (compile-only, header-only).
target_link_libraries(sparse PRIVATE $<BUILD_INTERFACE:Eigen3::Eigen> ${GPUKIT_OPENMP})
