// A failure on one rank alone, in the middle of a distributed solve and outside any agreement (a CUDA
// error, a lost device): the failing rank's progress callback throws at iteration 10 while the other ranks
// go on into the next sum over ranks, where they would wait for it forever. gpukit::run_on_mpi_world must
// end the job: the failing rank's one error line, then MPI_Abort, a non-zero exit from mpiexec and no rank
// left waiting (the CTest timeout and scripts/dist-check's `timeout` are the hang check).
//   mpiexec -n P rank_fault cpu|gpu [FAILING_RANK]      (default rank P - 1)
// cpu: the CPU path (halo exchange and sums with MPI). gpu: the distributed GPU solver, its sums through
// NCCL or MPI with host staging, the other ranks blocked in a device all-reduce.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dist/csr.hpp"
#include "gpukit/device_buffer.hpp"
#include "mpi_app.hpp"
#include "solve/distributed.hpp"
#include "solve/problems.hpp"

int main(int argc, char** argv) {
  const std::string device = argc > 1 ? argv[1] : "cpu";
  if (device != "cpu" && device != "gpu") return 2;
  return gpukit::run_on_mpi_world("rank_fault", [&](dist::communicator& comm) {
    const int failing = argc > 2 ? std::atoi(argv[2]) : comm.size() - 1;
    // 64^2 unknowns: CG needs ~200 iterations at this tolerance, so iteration 10 is mid-solve on every rank.
    const auto a = solve::problems::poisson_2d<double, std::int32_t>(64);
    const auto d = dist::distribute(comm, a);
    const std::vector<double> b_local(static_cast<std::size_t>(d.local_rows()), 1.0);
    solve::options opt;
    opt.rtol = 1e-12;
    opt.max_iterations = 100000;
    opt.check_every = 1;
    opt.progress = [&](int iterations, double) {
      if (comm.rank() == failing && iterations >= 10)
        throw std::runtime_error("injected failure at iteration " + std::to_string(iterations) +
                                 " (as a CUDA error on this rank alone)");
    };
    if (device == "gpu") {
      comm.enable_device();
      gpukit::device_buffer<double> db(b_local), dx(d.local_rows());
      (void)solve::distributed::solve(comm, d, db.data(), dx.data(), opt);
    } else {
      std::vector<double> x_local;
      (void)solve::distributed::solve(comm, d, b_local, x_local, opt);
    }
    return 0;  // not reached on any rank: the failing rank aborts the job
  });
}
