// `mpirun -np N solve run FILE` (N > 1): the same command on solve::distributed, on the CPU path (--device
// cpu or auto) or on the GPUs (--device gpu: one rank per GPU, dist::select_local_device; the sums and halo
// over NCCL, or staged through the host when ranks share a GPU, which rank 0 says on stderr). Each rank
// reads only its rows (dist::read_matrix: a Matrix Market file is converted once by rank 0 into a temporary
// HDF5 file). Rank 0 alone prints and writes the report and history (the result is the same on every
// rank); a failure on any rank is agreed and reported once, by rank 0 (gpukit::run_on_mpi_world).
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "dist/communicator.hpp"
#include "dist/csr.hpp"
#include "gpukit/device_buffer.hpp"
#include "mpi_app.hpp"
#include "report.hpp"
#include "solve/distributed.hpp"

namespace solve_app {
namespace {

std::string sci(double v) {
  std::ostringstream o;
  o << std::scientific << std::setprecision(3) << v;
  return o.str();
}

bool wants_gpu(const run_options& opt) { return opt.device == "gpu" || opt.device == "cuda"; }

/// The GPU path: this rank's GPU, the device transport (rank 0 says when it is host staging), b and x on
/// the device. Returns where it ran, for the report.
template <class V, class I>
std::string solve_on_gpus(dist::communicator& comm, const dist::distributed_csr<V, I>& a, const std::vector<V>& b_local,
                          const solve::options& so, solve::result& r) {
  gpukit::all_or_none(comm, [&] { (void)dist::select_local_device(comm); });
  comm.enable_device();
  if (comm.rank() == 0 && comm.transport() != dist::device_transport::nccl)
    std::cerr << "solve: note: " << comm.transport_reason() << ": sums and halo staged through the host (MPI)\n";
  std::unique_ptr<gpukit::device_buffer<V>> db, dx;
  gpukit::all_or_none(comm, [&] {
    db = std::make_unique<gpukit::device_buffer<V>>(b_local);
    dx = std::make_unique<gpukit::device_buffer<V>>(a.local_rows());
  });
  r = solve::distributed::solve(comm, a, db->data(), dx->data(), so);
  return std::string("gpu (solve::distributed on device data), ") + std::to_string(comm.size()) + " MPI ranks over " +
         dist::to_string(comm.transport());
}

template <class V>
int run_distributed_typed(dist::communicator& comm, const run_options& opt) {
  using I = std::int32_t;
  const auto t0 = std::chrono::steady_clock::now();
  auto a = dist::read_matrix<V, I>(comm, opt.matrix);
  std::vector<V> b_local;
  solve::options so;
  dist::all_or_none(comm, [&] {
    const std::vector<V> b = make_rhs<V>(opt.rhs, a.global_rows());
    b_local.assign(b.begin() + a.first_row(), b.begin() + a.first_row() + a.local_rows());
    so.method = solve::parse_krylov_method(opt.method);
    so.rtol = opt.tol;
    so.atol = opt.atol;
    so.max_iterations = opt.max_iterations;
    so.check_every = opt.check_every;
    so.reproducible = opt.reproducible;
  });
  solve::result r;
  std::string where;
  if (wants_gpu(opt)) {
    where = solve_on_gpus(comm, a, b_local, so, r);
  } else {
    std::vector<V> x_local;
    r = solve::distributed::solve(comm, a, b_local, x_local, so);
    where = "cpu (solve::distributed), " + std::to_string(comm.size()) + " MPI ranks";
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (comm.rank() != 0) return r.converged ? gpukit::exit_ok : gpukit::exit_check_failed;

  std::ostream& out = gpukit::output_stream(opt.quiet);
  out << "matrix     " << opt.matrix << ": " << a.global_rows() << " rows, " << opt.precision << "\n"
      << "rhs        " << opt.rhs << "\n"
      << "device     " << where << ", rows partitioned by nonzeros\n"
      << "method     " << opt.method << (opt.reproducible ? " (reproducible)" : "") << ", tol " << sci(opt.tol)
      << ", max " << opt.max_iterations << " iterations\n"
      << "result     " << r.summary() << "\n"
      << time_line(seconds, r);
  write_outputs(opt, r, a.global_rows(), -1, seconds, comm.size());
  if (!r.converged) throw gpukit::check_failed(opt.matrix + ": " + r.summary());
  if (opt.check) check_true_residual(opt, r, r.rhs_norm);
  return gpukit::exit_ok;
}

}  // namespace

int run_distributed_command(const run_options& opt) {
  return gpukit::run_on_mpi_world("solve", [&](dist::communicator& comm) {
    return opt.precision == "float" ? run_distributed_typed<float>(comm, opt) : run_distributed_typed<double>(comm, opt);
  });
}

}  // namespace solve_app
