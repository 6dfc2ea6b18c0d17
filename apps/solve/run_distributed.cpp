// `mpirun -np N solve run FILE` (N > 1): the same command on solve::distributed (CPU path). Each rank reads
// only its rows (dist::read_matrix: a Matrix Market file is converted once by rank 0 into a temporary HDF5
// file). Rank 0 alone prints and writes the report and history (the result is the same on every rank); a
// failure on any rank is agreed and reported once, by rank 0 (gpukit::run_on_mpi_world).
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "dist/communicator.hpp"
#include "dist/csr.hpp"
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

template <class V>
int run_distributed_typed(const dist::communicator& comm, const run_options& opt) {
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
    so.reproducible = opt.reproducible;
  });
  std::vector<V> x_local;
  const solve::result r = solve::distributed::solve(comm, a, b_local, x_local, so);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (comm.rank() != 0) return r.converged ? gpukit::exit_ok : gpukit::exit_check_failed;

  std::ostream& out = gpukit::output_stream(opt.quiet);
  out << "matrix     " << opt.matrix << ": " << a.global_rows() << " rows, " << opt.precision << "\n"
      << "rhs        " << opt.rhs << "\n"
      << "device     cpu (solve::distributed), " << comm.size() << " MPI ranks, rows partitioned by nonzeros\n"
      << "method     " << opt.method << (opt.reproducible ? " (reproducible)" : "") << ", tol " << sci(opt.tol)
      << ", max " << opt.max_iterations << " iterations\n"
      << "result     " << r.summary() << "\n"
      << "time       " << std::fixed << std::setprecision(3) << seconds * 1e3 << " ms\n";
  write_outputs(opt, r, a.global_rows(), -1, seconds, comm.size());
  if (!r.converged) throw gpukit::check_failed(opt.matrix + ": " + r.summary());
  if (opt.check) check_true_residual(opt, r, r.rhs_norm);
  return gpukit::exit_ok;
}

}  // namespace

int run_distributed_command(const run_options& opt) {
  if (opt.device == "gpu" || opt.device == "cuda")
    throw gpukit::bad_input("--device gpu: a distributed solve runs the CPU path (solve::distributed); "
                            "use --device cpu or auto under mpirun");
  return gpukit::run_on_mpi_world("solve", [&](const dist::communicator& comm) {
    return opt.precision == "float" ? run_distributed_typed<float>(comm, opt) : run_distributed_typed<double>(comm, opt);
  });
}

}  // namespace solve_app
