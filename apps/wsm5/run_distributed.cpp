// `mpirun -np N wsm5 run IN.h5` (N > 1): the domain's columns split over the ranks (wsm5::distributed).
// Rank 0 reads and validates the whole domain and scatters it (MPI_Scatterv): the reader's checks name the
// first bad value of the whole domain, and a domain is small beside the time of its calls (CONUS 12 km:
// 190 MB for 10 3D fields, one pass). Each rank steps its part with the CPU reference (the check's
// reference and the CPU timing, as on one process) and then with each GPU variant asked for
// (run_distributed_gpu.cpp); the totals are combined with the reproducible distributed sum and MPI maxima;
// rank 0 gathers the states (MPI_Gatherv), computes the water budget, checks, prints, and writes --output
// and --json once, atomically. A failure on any rank is agreed (dist::rank_failure) and reported once, by
// rank 0, every rank exiting with the same code.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "dist/communicator.hpp"
#include "file_guard.hpp"
#include "measure.hpp"
#include "mpi_app.hpp"
#include "report.hpp"
#include "run_distributed.hpp"
#include "run_report.hpp"
#include "wsm5/distributed.hpp"

namespace wsm5_app {

void agreed(const dist::communicator& comm, bool input, const std::function<void()>& f) {
  std::string error;
  bool bad = input;
  try {
    f();
  } catch (const std::bad_alloc&) {
    error = "out of host memory";
    bad = false;
  } catch (const std::invalid_argument& e) {  // e.g. gpu_domain refusing nz > 256: bad input, as run_app says
    error = e.what();
    bad = true;
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "failed";
  }
  dist::agree(comm, error, bad);
}

std::optional<wsm5::nonfinite_value> in_whole(std::optional<wsm5::nonfinite_value> v,
                                              const wsm5::distributed::split& s, int r) {
  if (v) {
    const auto w = wsm5::distributed::whole_column(s, r, v->i, v->j);
    v->i = w.i;
    v->j = w.j;
  }
  return v;
}

namespace {

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

part_run step_part(const dist::communicator& comm, wsm5::domain& part, const wsm5::distributed::split& s, int calls) {
  part_run r;
  if (comm.rank() == 0) r.one_thread_s = one_thread_seconds(part, s.nx * s.ny);
  std::vector<double> t;
  for (int c = 0; c < calls; ++c) {
    const auto t0 = clock_type::now();
    const wsm5::diagnostics local = wsm5::reference::step(part, 0);
    t.push_back(seconds_since(t0));
    agreed(comm, false, [&] {
      stop_on_nonfinite(in_whole(wsm5::find_nonfinite(part), s, comm.rank()), c + 1, calls, "cpu");
    });
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

/// The "mpi" line: the split and what each rank ran.
std::string mpi_text(const wsm5::distributed::split& s, bool gpu, int gpus) {
  if (!gpu) return split_text(s) + "; the CPU reference on each rank, the state gathered on rank 0";
  return split_text(s) + " on " + std::to_string(gpus) +
         " GPU(s); the CPU reference and the GPU variants on each rank, the states gathered on rank 0";
}

/// Rank 0's CPU figures: the ranks' combined diagnostics and slowest median, the gathered state's budget.
void fill_cpu(cpu_run& cpu, const part_run& pr, const wsm5::distributed::split& s, const wsm5::domain& d0) {
  cpu.diag = pr.diag;
  cpu.threads = pr.threads;
  cpu.all_threads_s = pr.slowest_s;
  cpu.one_thread_s = pr.one_thread_s;
  cpu.rows_timed = s.by_rows ? s.first[1] : 1;
  cpu.budget = wsm5::water_budget(d0, cpu.state, cpu.calls);
}

/// The GPU lines and report entries, as one process prints them (run_command.cpp).
void report_gpu(const run_context& x, const gpu_ranks_run& g) {
  print_ceilings(x.out, g.ceilings);
  x.results["gpu"] = ceilings_json(g.ceilings);
  const double max_water = x.opt.check ? max_column_water(x.d0) : 0.0;
  for (std::size_t i = 0; i < g.runs.size(); ++i) {
    if (g.automatic[i]) report_automatic(x, g.runs[i].v, g.capacity);
    report_variant(x, g.runs[i], g.ceilings, max_water);
  }
}

/// Rank 0: the text, --output and --json; the check's exit code.
int report_on_rank0(const run_options& opt, const wsm5::domain& d0, const wsm5::distributed::split& s,
                    const gpu_ranks_run* g, int gpus, const cpu_run& cpu, std::string& failure) {
  std::ostream& out = gpukit::output_stream(opt.quiet);
  print_input(out, opt.in, d0);
  out << "mpi       " << mpi_text(s, g != nullptr, gpus) << "\n";
  print_cpu(out, cpu);
  nlohmann::json report = make_run_report(opt, cpu.calls, d0, g != nullptr);
  report["results"]["cpu"] = cpu_json(cpu, d0.cells());
  report["results"]["mpi_rank_count"] = s.parts();
  report["results"]["mpi_split"] = s.by_rows ? "rows" : "columns";
  std::vector<std::string> failures;
  if (!cpu.budget.ok) failures.push_back("the CPU reference's water budget");
  const run_context x{opt, d0, cpu, out, report["results"], failures};
  if (g != nullptr) {
    report["results"]["mpi_gpu_count"] = gpus;
    report_gpu(x, *g);
  }
  return write_results(x, g != nullptr ? g->final_state : cpu.state, g != nullptr, report, ", gathered", failure);
}

/// Rank 0 reads the domain (every rank checks the options first): bad input on any rank is exit 2.
wsm5::domain read_on_rank0(const dist::communicator& comm, const run_options& opt,
                           std::vector<wsm5::variant>& variants) {
  wsm5::domain d0;
  agreed(comm, true, [&] {
    variants = requested_variants(opt);
    if (comm.rank() != 0) return;
    gpukit::check_output_paths({opt.in}, {opt.output, opt.json});
    d0 = wsm5::read_hdf5(opt.in);
    (void)wsm5::distributed::split_columns(d0.nx, d0.ny, d0.nz, comm.size());  // refuses what MPI counts cannot hold
  });
  return d0;
}

/// The run on every rank; returns the same exit code everywhere (rank 0 throws check_failed instead of
/// returning exit_check_failed, so that run_app prints the one line).
int run_on_ranks(const dist::communicator& comm, const run_options& opt) {
  std::vector<wsm5::variant> variants;
  const wsm5::domain d0 = read_on_rank0(comm, opt, variants);  // rank 0 only
  int gpus = 0;
  const bool gpu = choose_gpu_on_ranks(comm, opt, !variants.empty(), gpus);
  wsm5::distributed::split s;
  const wsm5::domain part = wsm5::distributed::scatter(comm, d0, s);
  cpu_run cpu;
  cpu.calls = opt.cpu_steps > 0 ? std::min(opt.cpu_steps, opt.steps) : opt.steps;
  wsm5::domain cpu_part = part;  // the GPU variants start from `part` too
  const part_run pr = step_part(comm, cpu_part, s, cpu.calls);
  if (comm.rank() == 0) cpu.state = d0;
  wsm5::distributed::gather(comm, cpu_part, s, cpu.state);
  std::optional<gpu_ranks_run> g;
  if (gpu) g = run_gpu_on_ranks(comm, opt, d0, part, s, variants, cpu.calls);
  int code = gpukit::exit_ok;
  std::string failure;
  agreed(comm, true, [&] {
    if (comm.rank() != 0) return;
    fill_cpu(cpu, pr, s, d0);
    code = report_on_rank0(opt, d0, s, g ? &*g : nullptr, gpus, cpu, failure);
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
