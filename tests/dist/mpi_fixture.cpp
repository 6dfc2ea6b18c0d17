// MPI for the lifetime of a distributed test binary (a Boost.Test global fixture, so that the shared
// test main stays MPI-free).
#include <mpi.h>

#include <boost/test/unit_test.hpp>

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
