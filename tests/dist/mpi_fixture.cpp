// MPI for the lifetime of a distributed test binary (a Boost.Test global fixture, so that the shared
// test main stays MPI-free), and the few CUDA runtime calls the tests make.
#include <mpi.h>

#include <cuda_runtime.h>

#include <boost/test/unit_test.hpp>

#include "dist_test_support.hpp"

int test::dist_support::device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

namespace {
struct mpi_lifetime {
  mpi_lifetime() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  ~mpi_lifetime() { MPI_Finalize(); }
};
BOOST_TEST_GLOBAL_FIXTURE(mpi_lifetime);
}  // namespace
