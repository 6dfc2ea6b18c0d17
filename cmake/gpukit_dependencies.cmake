# Dependencies, found the standard way. scripts/install-deps installs the Debian/Ubuntu packages.
find_package(CUDAToolkit 12.0 REQUIRED)        # cudart, cusparse, CUB/Thrust headers
find_package(OpenMP COMPONENTS CXX)            # CPU backends; optional (serial without it)
find_package(Eigen3 3.3 NO_MODULE)             # CPU SpMV backend and test oracle (libsparse)
find_package(HDF5 COMPONENTS C)                # HDF5 input/output (libsparse, libwsm5)

# Boost.Test, header-only form: the GPU machines carry Boost headers without compiled libraries.
if(GPUKIT_BUILD_TESTS)
  find_path(BOOST_TEST_INCLUDE_DIR boost/test/included/unit_test.hpp
            HINTS ${BOOST_ROOT} $ENV{BOOST_ROOT} PATH_SUFFIXES include)
  if(NOT BOOST_TEST_INCLUDE_DIR)
    message(FATAL_ERROR "Boost.Test headers not found (boost/test/included/unit_test.hpp): "
                        "run scripts/install-deps or pass -DBOOST_ROOT=...")
  endif()
  add_library(gpukit_boost_test INTERFACE)
  target_include_directories(gpukit_boost_test SYSTEM INTERFACE ${BOOST_TEST_INCLUDE_DIR})
endif()

if(OpenMP_CXX_FOUND)
  set(GPUKIT_OPENMP OpenMP::OpenMP_CXX)
else()
  message(WARNING "OpenMP not found: CPU backends run single-threaded")
  set(GPUKIT_OPENMP "")
endif()

# gpukit_link_hdf5(<target> <what>): links the HDF5 C library PRIVATE. FindHDF5 defines the imported
# target hdf5::hdf5 since CMake 3.19 (3.25 here, 4.x on the GPU machines); the variables are the fallback
# for an HDF5 found some other way. <what> names the component in the error when HDF5 is missing.
function(gpukit_link_hdf5 target what)
  if(NOT HDF5_FOUND)
    message(FATAL_ERROR "${what} needs HDF5 (C library and headers): apt install libhdf5-dev, "
                        "or pass -DHDF5_ROOT=...")
  endif()
  if(TARGET hdf5::hdf5)
    target_link_libraries(${target} PRIVATE hdf5::hdf5)
  else()
    target_include_directories(${target} SYSTEM PRIVATE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
    target_compile_definitions(${target} PRIVATE ${HDF5_C_DEFINITIONS} ${HDF5_DEFINITIONS})
    target_link_libraries(${target} PRIVATE ${HDF5_C_LIBRARIES} ${HDF5_LIBRARIES})
  endif()
endfunction()

# The distributed layer (libdist, libsolve's distributed solvers): MPI for processes and host collectives,
# NCCL for GPU collectives when present (without it the GPU path stages through the host over MPI).
find_package(MPI COMPONENTS CXX)
option(GPUKIT_DISTRIBUTED "Build the distributed layer (libdist: MPI, and NCCL when found)" ${MPI_CXX_FOUND})
if(GPUKIT_DISTRIBUTED)
  if(NOT MPI_CXX_FOUND)
    message(FATAL_ERROR "GPUKIT_DISTRIBUTED needs MPI (C++ bindings of the C API): apt install libopenmpi-dev, "
                        "or pass -DGPUKIT_DISTRIBUTED=OFF")
  endif()
  find_package(NCCL)
  if(NOT NCCL_FOUND)
    message(STATUS "NCCL not found: libdist's GPU collectives use MPI with host staging")
  endif()
endif()
