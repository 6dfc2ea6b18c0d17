// The text lines and the JSON report of `wsm5 run` (run_report.cpp) for what measure.hpp measures. The
// text is what the app has always printed (the figures the benchmarks quote); the JSON follows
// apps/README.md ("JSON reports": units in the key names).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "measure.hpp"
#include "wsm5/wsm5.hpp"

namespace wsm5_app {

/// Figures of one variant derived from its times, the ceilings and the CPU reference.
/// (Fractions and percentages are computed apart so that the text keeps its exact rounding.)
struct variant_figures {
  double cells_per_s = 0, gb_per_s = 0, gflop_per_s = 0;              ///< GFLOP/s at the estimated flop/cell
  double of_memory_floor = 0, of_arithmetic_floor = 0;               ///< floor / time (1: at the ceiling)
  double percent_of_memory_floor = 0, percent_of_arithmetic_floor = 0;
  double vs_cpu_one_thread = 0, vs_cpu_all_threads = 0;              ///< speed-ups
};
variant_figures figures_of(const variant_run& r, const gpu_ceilings& c, const cpu_run& cpu, std::int64_t cells);

// ---- text ------------------------------------------------------------------------------------------
void print_input(std::ostream& os, const std::string& path, const wsm5::domain& d0);
void print_cpu(std::ostream& os, const cpu_run& cpu);
void print_ceilings(std::ostream& os, const gpu_ceilings& c);
void print_variant(std::ostream& os, const variant_run& r, const variant_figures& f, const cpu_run& cpu, int repeats,
                   int chunks);
void print_check(std::ostream& os, const variant_check& c, const variant_run& r, int calls);

// ---- a GPU variant's lines and report entry (the one-process run and rank 0 under mpirun) ----------
/// The GPU variants --variant asks for ("all": both, "cpu": none; automatic unresolved); checks the
/// options that need no input (a named variant with --device cpu is bad input). run_command.cpp.
std::vector<wsm5::variant> requested_variants(const run_options& opt);

/// What the parts of a run share.
struct run_context {
  const run_options& opt;
  const wsm5::domain& d0;
  const cpu_run& cpu;
  std::ostream& out;
  nlohmann::json& results;            // the report's "results"
  std::vector<std::string>& failures;  // failed checks, in words
};
/// --output, --json and the check's verdict line, in that order: `out_state` is the first GPU variant's
/// state after --steps calls when `gpu_output`, else the CPU reference's; `note` ends the output line
/// (", gathered" under mpirun). Returns exit_ok, or exit_check_failed with `failure` saying what failed
/// (the caller throws gpukit::check_failed once the files are written).
int write_results(const run_context& x, const wsm5::domain& out_state, bool gpu_output, nlohmann::json& report,
                  const char* note, std::string& failure);
/// "variant   automatic -> CHOSEN (...)" and results.automatic_choice.
void report_automatic(const run_context& x, wsm5::variant chosen, const wsm5::gpu_capacity& cap);
/// One GPU variant's lines and report entry; with --check its check against the CPU reference (a failure
/// goes to x.failures). `max_water`: max_column_water(d0) when checking.
void report_variant(const run_context& x, const variant_run& r, const gpu_ceilings& c, double max_water);

// ---- JSON ------------------------------------------------------------------------------------------
/// gpukit::report::make("wsm5", "run") with the inputs (file, shape, options) and results {cells_count,
/// cpu, variants: []}; `gpu` says which backend ran (device.backend).
nlohmann::json make_run_report(const run_options& opt, int cpu_steps, const wsm5::domain& d0, bool gpu);
nlohmann::json cpu_json(const cpu_run& cpu, std::int64_t cells);
nlohmann::json ceilings_json(const gpu_ceilings& c);
nlohmann::json variant_json(const variant_run& r, const variant_figures& f, int chunks);
nlohmann::json check_json(const variant_check& c, const variant_run& r, int calls);

}  // namespace wsm5_app
