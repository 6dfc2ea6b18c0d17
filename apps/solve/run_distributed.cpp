// `mpirun -np N solve run FILE` (N > 1): the same command on solve::distributed (CPU path). Each rank reads
// only its rows of an HDF5 matrix; a Matrix Market file is converted once by rank 0 into a temporary HDF5
// file that every rank then reads its rows of. Rank 0 alone prints and writes the report and history
// (the result is the same on every rank); a failure on any rank is agreed (dist::rank_failure) and
// reported once, by rank 0, every rank exiting with the same code.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "dist/communicator.hpp"
#include "dist/csr.hpp"
#include "gpukit/atomic_file.hpp"
#include "report.hpp"
#include "solve/distributed.hpp"
#include "sparse/hdf5_io.hpp"
#include "sparse/io.hpp"

namespace solve_app {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The matrix's HDF5 path for every rank: the file itself, or rank 0's one-time conversion of a Matrix
/// Market file into the temporary directory (removed by the caller).
std::string hdf5_source(const dist::communicator& comm, const run_options& opt, bool& temporary) {
  temporary = !ends_with(opt.matrix, ".h5");
  if (!temporary) return opt.matrix;
  std::string path;
  dist::all_or_none(comm, [&] {
    if (comm.rank() != 0) return;
    const auto a = sparse::read_matrix<double, std::int64_t>(opt.matrix);
    path = (std::filesystem::temp_directory_path() /
            ("gpukit_solve_" + std::to_string(::getpid()) + "_" + std::filesystem::path(opt.matrix).stem().string() + ".h5"))
               .string();
    sparse::write_hdf5(path, a);
  });
  int length = static_cast<int>(path.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm.mpi());
  path.resize(static_cast<std::size_t>(length));
  MPI_Bcast(path.data(), length, MPI_CHAR, 0, comm.mpi());
  return path;
}

std::string sci(double v) {
  std::ostringstream o;
  o << std::scientific << std::setprecision(3) << v;
  return o.str();
}

template <class V>
int run_distributed_typed(const dist::communicator& comm, const run_options& opt) {
  using I = std::int32_t;
  const auto t0 = std::chrono::steady_clock::now();
  bool temporary = false;
  const std::string source = hdf5_source(comm, opt, temporary);
  struct remove_temporary {
    const dist::communicator& comm;
    const std::string& path;
    bool on;
    ~remove_temporary() {
      if (on && comm.rank() == 0) std::remove(path.c_str());
    }
  } cleanup{comm, source, temporary};
  auto a = dist::read_hdf5<V, I>(comm, source);
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
  int code = gpukit::exit_ok;
  std::string message;
  bool failed = false, bad = false;
  {
    int argc = 0;
    char** argv = nullptr;
    const dist::environment env(argc, argv);
    const dist::communicator comm(MPI_COMM_WORLD);
    try {
      code = opt.precision == "float" ? run_distributed_typed<float>(comm, opt) : run_distributed_typed<double>(comm, opt);
    } catch (const dist::rank_failure& e) {
      failed = true;
      bad = e.bad_input;
      if (comm.rank() == 0) message = e.what();  // the libraries name the file
      code = bad ? gpukit::exit_bad_input : gpukit::exit_runtime_error;
      if (comm.rank() != 0) failed = false;  // said once, by rank 0
    } catch (const gpukit::check_failed&) {
      throw;  // rank 0 only: the result is the same on every rank, the others returned exit_check_failed
    } catch (const std::exception& e) {
      // A failure on this rank alone, outside any agreement: the others may wait in a collective, so the
      // whole job is stopped (MPI_Abort) after this rank's one line; no rank hangs.
      std::cerr << "solve: error: rank " << comm.rank() << ": " << e.what() << std::endl;
      MPI_Abort(MPI_COMM_WORLD, gpukit::exit_runtime_error);
    }
  }
  if (failed) {
    if (bad) throw gpukit::bad_input(message);
    std::cerr << "solve: error: " << message << std::endl;  // a runtime failure: exit 3, as run_app would
  }
  return code;
}

}  // namespace solve_app
