// `mpirun -np N wsm5 run IN.h5` (N > 1): the CPU reference on each rank's columns (wsm5::distributed).
// Rank 0 reads and validates the whole domain and scatters it (MPI_Scatterv): the reader's checks name the
// first bad value of the whole domain, and a domain is small beside the time of its calls (CONUS 12 km:
// 190 MB for 10 3D fields, one pass). Each rank steps its part; the totals are combined with the
// reproducible distributed sum and MPI maxima; rank 0 gathers the state (MPI_Gatherv), computes the water
// budget, prints, and writes --output and --json once, atomically. A failure on any rank is agreed
// (dist::rank_failure) and reported once, by rank 0, every rank exiting with the same code.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "dist/communicator.hpp"
#include "file_guard.hpp"
#include "measure.hpp"
#include "mpi_app.hpp"
#include "report.hpp"
#include "run_report.hpp"
#include "wsm5/distributed.hpp"

namespace wsm5_app {
namespace {

/// Runs f on this rank, then agrees: every rank returns, or every rank throws the same rank_failure. A
/// failure is bad input when `input` (options, reading, writing the files: exit 2, as on one rank), a
/// runtime failure otherwise or when out of memory (exit 3).
void agreed(const dist::communicator& comm, bool input, const std::function<void()>& f) {
  std::string error;
  bool bad = input;
  try {
    f();
  } catch (const std::bad_alloc&) {
    error = "out of host memory";
    bad = false;
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "failed";
  }
  dist::agree(comm, error, bad);
}

/// The distributed path runs the CPU reference: a GPU asked for by name or by --device is refused.
void check_request(const run_options& opt) {
  const bool gpu_named = opt.variant == "thread_per_column" || opt.variant == "warp_per_column";
  if (gpu_named || opt.device == "gpu" || opt.device == "cuda")
    throw gpukit::bad_input("--variant " + opt.variant + " --device " + opt.device +
                            ": under mpirun wsm5 run runs the CPU reference on each rank's columns; "
                            "use --variant cpu or --device cpu");
}

/// This rank's calls on its part, and the figures the report needs.
struct part_run {
  wsm5::diagnostics diag;  ///< combined over the ranks, of the last call
  double slowest_s = 0;    ///< the slowest rank's median per call
  double one_thread_s = 0; ///< rank 0: one thread on its part, scaled to the whole domain
  int threads = 1;
};

/// One thread timed on rank 0's part (before its calls), scaled by columns to the whole domain.
double one_thread_seconds(wsm5::domain part, std::int64_t all_columns) {
  if (part.columns() == 0) return 0;
  const auto t0 = clock_type::now();
  (void)wsm5::reference::step(part, 1);
  return seconds_since(t0) * static_cast<double>(all_columns) / static_cast<double>(part.columns());
}

/// The first NaN or Inf of rank r's part, named by its column in the whole domain.
std::optional<wsm5::nonfinite_value> nonfinite_in_whole(const wsm5::domain& part, const wsm5::distributed::split& s,
                                                        int r) {
  auto v = wsm5::find_nonfinite(part);
  if (v) {
    const auto w = wsm5::distributed::whole_column(s, r, v->i, v->j);
    v->i = w.i;
    v->j = w.j;
  }
  return v;
}

part_run step_part(const dist::communicator& comm, wsm5::domain& part, const wsm5::distributed::split& s, int calls) {
  part_run r;
  if (comm.rank() == 0) r.one_thread_s = one_thread_seconds(part, s.nx * s.ny);
  std::vector<double> t;
  for (int c = 0; c < calls; ++c) {
    const auto t0 = clock_type::now();
    const wsm5::diagnostics local = wsm5::reference::step(part, 0);
    t.push_back(seconds_since(t0));
    agreed(comm, false, [&] { stop_on_nonfinite(nonfinite_in_whole(part, s, comm.rank()), c + 1, calls, "cpu"); });
    r.diag = wsm5::distributed::combine(comm, part, local);
  }
  const double local_median = median(t);
  MPI_Allreduce(&local_median, &r.slowest_s, 1, MPI_DOUBLE, MPI_MAX, comm.mpi());
  r.threads = cpu_threads();
  return r;
}

/// "N ranks, split by j-rows (A to B columns per rank)".
std::string split_text(const wsm5::distributed::split& s) {
  std::int64_t lo = s.columns(0), hi = s.columns(0);
  for (int r = 1; r < s.parts(); ++r) {
    lo = std::min(lo, s.columns(r));
    hi = std::max(hi, s.columns(r));
  }
  return std::to_string(s.parts()) + " ranks, split by " + (s.by_rows ? "j-rows" : "columns") + " (" +
         std::to_string(lo) + " to " + std::to_string(hi) + " columns per rank)";
}

/// Rank 0: the budget of the gathered state, the text, --output and --json; the check's exit code
/// (`failure` says what failed).
int report_on_rank0(const run_options& opt, const wsm5::domain& d0, const wsm5::distributed::split& s,
                    const part_run& pr, cpu_run& cpu, std::string& failure) {
  cpu.diag = pr.diag;
  cpu.threads = pr.threads;
  cpu.all_threads_s = pr.slowest_s;
  cpu.one_thread_s = pr.one_thread_s;
  cpu.rows_timed = s.by_rows ? s.first[1] : 1;
  cpu.budget = wsm5::water_budget(d0, cpu.state, cpu.calls);
  std::ostream& out = gpukit::output_stream(opt.quiet);
  print_input(out, opt.in, d0);
  out << "mpi       " << split_text(s) << "; the CPU reference on each rank, the state gathered on rank 0\n";
  print_cpu(out, cpu);
  nlohmann::json report = make_run_report(opt, cpu.calls, d0, false);
  report["results"]["cpu"] = cpu_json(cpu, d0.cells());
  report["results"]["mpi_rank_count"] = s.parts();
  report["results"]["mpi_split"] = s.by_rows ? "rows" : "columns";
  report["results"]["ok"] = cpu.budget.ok;
  if (!opt.output.empty()) {
    wsm5::write_hdf5(cpu.state, opt.output, true);
    out << "output    " << opt.output << " (CPU reference after " << cpu.calls << " calls, gathered)\n";
  }
  if (!opt.json.empty()) gpukit::report::write(opt.json, report);
  if (!opt.check) return gpukit::exit_ok;
  out << "check     " << (cpu.budget.ok ? "ok" : "FAILED") << "\n";
  if (!cpu.budget.ok) failure = opt.in + ": check failed: the CPU reference's water budget";
  return cpu.budget.ok ? gpukit::exit_ok : gpukit::exit_check_failed;
}

/// The run on every rank; returns the same exit code everywhere (rank 0 throws check_failed instead of
/// returning exit_check_failed, so that run_app prints the one line).
int run_on_ranks(const dist::communicator& comm, const run_options& opt) {
  cpu_run cpu;
  cpu.calls = opt.cpu_steps > 0 ? std::min(opt.cpu_steps, opt.steps) : opt.steps;
  wsm5::domain d0;  // rank 0 only
  agreed(comm, true, [&] {
    check_request(opt);
    if (comm.rank() != 0) return;
    gpukit::check_output_paths({opt.in}, {opt.output, opt.json});
    d0 = wsm5::read_hdf5(opt.in);
    (void)wsm5::distributed::split_columns(d0.nx, d0.ny, d0.nz, comm.size());  // refuses what MPI counts cannot hold
  });
  wsm5::distributed::split s;
  wsm5::domain part = wsm5::distributed::scatter(comm, d0, s);
  const part_run pr = step_part(comm, part, s, cpu.calls);
  if (comm.rank() == 0) cpu.state = d0;
  wsm5::distributed::gather(comm, part, s, cpu.state);
  int code = gpukit::exit_ok;
  std::string failure;
  agreed(comm, true, [&] {
    if (comm.rank() == 0) code = report_on_rank0(opt, d0, s, pr, cpu, failure);
  });
  MPI_Bcast(&code, 1, MPI_INT, 0, comm.mpi());
  if (code == gpukit::exit_check_failed && comm.rank() == 0) throw gpukit::check_failed(failure);
  return code;
}

}  // namespace

int run_distributed_command(const run_options& opt) {
  return gpukit::run_on_mpi_world("wsm5", [&](dist::communicator& comm) { return run_on_ranks(comm, opt); });
}

}  // namespace wsm5_app
