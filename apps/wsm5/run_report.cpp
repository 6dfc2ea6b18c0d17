// `wsm5 run`: text lines and JSON report (run_report.hpp).
#include "run_report.hpp"

#include <iomanip>
#include <string>
#include <utility>

#include "app_errors.hpp"
#include "report.hpp"

namespace wsm5_app {
namespace {

void print_diag(std::ostream& os, const wsm5::diagnostics& g) {
  os << "rain " << std::setprecision(6) << g.rain_total << " mm, snow " << g.snow_total << " mm (domain sums of the"
     << " last call), max sub-steps " << g.max_substeps << ", max |budget residual| " << std::scientific
     << std::setprecision(2) << g.max_budget_residual << std::defaultfloat << " kg m-2";
}

// Water per unit area: 1 kg m-2 of water is 1 mm of depth, WRF's precipitation unit; the report's keys
// say _mm for both.
nlohmann::json diag_json(const wsm5::diagnostics& g) {
  return {{"rain_total_mm", g.rain_total},
          {"snow_total_mm", g.snow_total},
          {"max_substeps_count", g.max_substeps},
          {"max_budget_residual_mm", static_cast<double>(g.max_budget_residual)}};
}

/// The unit suffix of a field's differences: K for theta, kg/kg for mixing ratios, mm for precipitation,
/// a ratio for sr (the snow fraction of the surface precipitation).
const char* unit_of_field(const std::string& name) {
  if (name == "th") return "_k";
  if (name == "sr") return "_ratio";
  if (name == "rain" || name == "snow" || name == "rainncv" || name == "snowncv") return "_mm";
  return "_kg_per_kg";
}

}  // namespace

variant_figures figures_of(const variant_run& r, const gpu_ceilings& c, const cpu_run& cpu, std::int64_t cells) {
  const double t = r.time_s;
  variant_figures f;
  f.cells_per_s = static_cast<double>(cells) / t;
  f.gb_per_s = static_cast<double>(c.min_bytes) / t / 1e9;
  f.gflop_per_s = c.flops_per_cell * static_cast<double>(cells) / t / 1e9;
  f.of_memory_floor = c.memory_floor_s / t;
  f.percent_of_memory_floor = 100.0 * c.memory_floor_s / t;
  f.of_arithmetic_floor = c.arithmetic_floor_s / t;
  f.percent_of_arithmetic_floor = 100.0 * c.arithmetic_floor_s / t;
  f.vs_cpu_one_thread = cpu.one_thread_s / t;
  f.vs_cpu_all_threads = cpu.all_threads_s / t;
  return f;
}

// ---- text ------------------------------------------------------------------------------------------

void print_input(std::ostream& os, const std::string& path, const wsm5::domain& d0) {
  os << std::defaultfloat << std::setprecision(6) << "input     " << path << ": " << d0.nx << " x " << d0.ny
     << " columns x " << d0.nz << " levels (" << d0.cells() << " cells), dt = " << d0.dt << " s\n";
}

void print_cpu(std::ostream& os, const cpu_run& cpu) {
  const std::int64_t ny = cpu.state.ny;
  os << std::defaultfloat << "cpu       reference, " << cpu.threads << " threads: " << std::setprecision(4)
     << cpu.all_threads_s * 1e3 << " ms per call (median of " << cpu.calls << "); one thread: " << cpu.one_thread_s * 1e3
     << " ms per call"
     << (cpu.rows_timed < ny ? " (timed on " + std::to_string(cpu.rows_timed) + " of " + std::to_string(ny) + " rows, scaled)" : "")
     << "\n          ";
  print_diag(os, cpu.diag);
  os << "\n";
  os << "          water budget after " << cpu.calls << " calls: max |residual| " << std::scientific
     << std::setprecision(2) << cpu.budget.max_abs_residual << " <= " << cpu.budget.bound << std::defaultfloat
     << (cpu.budget.ok ? "  [ok]" : "  [FAILED]");
  if (cpu.budget.nonfinite_columns > 0)
    os << " (" << cpu.budget.nonfinite_columns << " columns with a non-finite residual, first " << cpu.budget.worst_column << ")";
  os << "\n";
}

void print_ceilings(std::ostream& os, const gpu_ceilings& c) {
  os << "device    " << c.device << "\n";
  os << std::defaultfloat << "ceilings  device-to-device copy " << std::setprecision(4) << c.copy_bytes_per_s / 1e9
     << " GB/s -> memory floor " << c.memory_floor_s * 1e3 << " ms per call (" << c.min_bytes / 1e6 << " MB); FP32 peak "
     << c.peak_flops / 1e12 << " TFLOP/s -> arithmetic floor " << c.arithmetic_floor_s * 1e3 << " ms (at ~"
     << c.flops_per_cell << " flop/cell)\n";
  os << "host link pinned cudaMemcpy 200 MB: host->device " << c.link.h2d_GBps << " GB/s, device->host "
     << c.link.d2h_GBps << " GB/s, both at once " << c.both_GBps << " GB/s total; one call moves "
     << c.per_call.up / 1e6 << " MB up, " << c.per_call.down / 1e6 << " MB down -> transfer floor "
     << c.transfer_floor_s * 1e3 << " ms (those bytes copied both ways at once, measured; "
     << c.transfer_floor_rates_s * 1e3 << " ms from the rates, " << c.transfer_floor_serial_s * 1e3
     << " ms one direction after the other)\n";
}

void print_variant(std::ostream& os, const variant_run& r, const variant_figures& f, const cpu_run& cpu, int repeats,
                   int chunks) {
  os << std::defaultfloat << std::setprecision(4) << wsm5::to_string(r.v) << ": " << r.time_s * 1e3
     << " ms per call (median of calls 4-" << 3 + repeats << ": first " << r.samples.front() * 1e3 << ", last "
     << r.samples.back() * 1e3 << "), " << r.with_transfers_s * 1e3 << " ms with transfers (" << chunks
     << " chunks, one pinned allocation" << (r.transfers_v == wsm5::variant::automatic ? ", automatic per chunk" : "")
     << "); " << f.cells_per_s / 1e9 << " Gcells/s, " << f.gb_per_s << " GB/s ("
     << f.percent_of_memory_floor << " % of the memory floor), ~" << f.gflop_per_s << " GFLOP/s ("
     << f.percent_of_arithmetic_floor << " % of FP32 peak); speed-up " << f.vs_cpu_one_thread
     << "x over one CPU thread, " << f.vs_cpu_all_threads << "x over " << cpu.threads << " threads\n          ";
  print_diag(os, r.diag);
  os << "\n";
}

void print_check(std::ostream& os, const variant_check& c, const variant_run& r, int calls) {
  os << "          check vs CPU reference after " << calls << " calls:";
  for (const auto& e : c.errors) os << " " << e.name << " " << std::scientific << std::setprecision(1) << e.max_abs;
  os << std::defaultfloat << (c.fields_ok ? "  [ok]" : "  [FAILED]");
  if (!c.fields.summary.empty()) os << " (" << c.fields.summary << ")";
  os << "; budget " << std::scientific
     << std::setprecision(2) << static_cast<double>(r.diag.max_budget_residual) << " <= " << c.budget_bound
     << std::defaultfloat << (c.budget_ok ? "  [ok]" : "  [FAILED]") << "\n";
}

int write_results(const run_context& x, const wsm5::domain& out_state, bool gpu_output, nlohmann::json& report,
                  const char* note, std::string& failure) {
  const run_options& opt = x.opt;
  if (!opt.output.empty()) {
    wsm5::write_hdf5(out_state, opt.output, true);
    x.out << "output    " << opt.output << " (" << (gpu_output ? "first GPU variant" : "CPU reference") << " after "
          << (gpu_output ? opt.steps : x.cpu.calls) << " calls" << note << ")\n";
  }
  const bool ok = x.failures.empty();
  x.results["ok"] = ok;
  if (!opt.json.empty()) gpukit::report::write(opt.json, report);
  if (!opt.check) return gpukit::exit_ok;
  x.out << "check     " << (ok ? "ok" : "FAILED") << "\n";
  if (ok) return gpukit::exit_ok;
  std::string what;
  for (const auto& f : x.failures) what += (what.empty() ? "" : "; ") + f;
  failure = opt.in + ": check failed: " + what;
  return gpukit::exit_check_failed;
}

void report_automatic(const run_context& x, wsm5::variant chosen, const wsm5::gpu_capacity& cap) {
  // The threshold's factors as choose_variant takes them (wsm5.hpp: 3/2 for columns deeper than automatic_deep_levels).
  const std::string deep =
      x.d0.nz > wsm5::automatic_deep_levels ? " x 3/2 (nz > " + std::to_string(wsm5::automatic_deep_levels) + ")" : "";
  x.out << "variant   automatic -> " << wsm5::to_string(chosen) << " (" << x.d0.columns() << " columns; "
        << "thread_per_column from 32 x " << cap.sms << " SMs x " << cap.max_warps_per_sm << " warps / 8" << deep
        << " = " << wsm5::automatic_threshold_columns(x.d0.nz, cap) << ")\n";
  x.results["automatic_choice"] = wsm5::to_string(chosen);
}

void report_variant(const run_context& x, const variant_run& r, const gpu_ceilings& c, double max_water) {
  const variant_figures f = figures_of(r, c, x.cpu, x.d0.cells());
  print_variant(x.out, r, f, x.cpu, x.opt.repeats, x.opt.chunks);
  nlohmann::json v = variant_json(r, f, x.opt.chunks);
  if (x.opt.check) {
    const variant_check k = check_variant(r, x.cpu, max_water);
    print_check(x.out, k, r, x.cpu.calls);
    v["check"] = check_json(k, r, x.cpu.calls);
    if (!k.fields_ok) x.failures.push_back(std::string(wsm5::to_string(r.v)) + " differs from the CPU reference");
    if (!k.budget_ok) x.failures.push_back(std::string(wsm5::to_string(r.v)) + "'s water budget");
  }
  x.results["variants"].push_back(std::move(v));
}

// ---- JSON ------------------------------------------------------------------------------------------

nlohmann::json make_run_report(const run_options& opt, int cpu_steps, const wsm5::domain& d0, bool gpu) {
  nlohmann::json j = gpukit::report::make("wsm5", "run");
  j["device"]["backend"] = gpu ? "cuda" : "cpu";  // the backend used, not only the one present
  j["inputs"] = {{"file", opt.in},         {"nx", d0.nx},         {"ny", d0.ny},
                 {"nz", d0.nz},            {"dt_s", d0.dt},       {"steps", opt.steps},
                 {"cpu_steps", cpu_steps}, {"variant", opt.variant}, {"device", opt.device},
                 {"check", opt.check},     {"repeats", opt.repeats}, {"chunks", opt.chunks},
                 {"warmup_calls", 3}};
  j["results"] = {{"cells_count", d0.cells()}, {"variants", nlohmann::json::array()}};
  return j;
}

nlohmann::json cpu_json(const cpu_run& cpu, std::int64_t cells) {
  return {{"threads_count", cpu.threads},
          {"calls", cpu.calls},
          {"all_threads_ms", cpu.all_threads_s * 1e3},
          {"one_thread_ms", cpu.one_thread_s * 1e3},
          {"one_thread_rows_count", cpu.rows_timed},
          {"cells_per_s", static_cast<double>(cells) / cpu.all_threads_s},
          {"budget", {{"max_residual_mm", cpu.budget.max_abs_residual}, {"bound_mm", cpu.budget.bound}, {"ok", cpu.budget.ok}}},
          {"diagnostics", diag_json(cpu.diag)}};
}

nlohmann::json ceilings_json(const gpu_ceilings& c) {
  return {{"name", c.device},
          {"min_traffic_bytes", c.min_bytes},
          {"copy_gb_per_s", c.copy_bytes_per_s / 1e9},
          {"memory_floor_ms", c.memory_floor_s * 1e3},
          {"fp32_peak_tflop_per_s", c.peak_flops / 1e12},
          {"estimated_flop_per_cell_count", c.flops_per_cell},
          {"arithmetic_floor_ms", c.arithmetic_floor_s * 1e3},
          {"h2d_gb_per_s", c.link.h2d_GBps},
          {"d2h_gb_per_s", c.link.d2h_GBps},
          {"bidirectional_gb_per_s", c.both_GBps},
          {"up_per_call_bytes", c.per_call.up},
          {"down_per_call_bytes", c.per_call.down},
          {"transfer_floor_ms", c.transfer_floor_s * 1e3},
          {"transfer_floor_rates_ms", c.transfer_floor_rates_s * 1e3},
          {"transfer_floor_serial_ms", c.transfer_floor_serial_s * 1e3}};
}

nlohmann::json variant_json(const variant_run& r, const variant_figures& f, int chunks) {
  return {{"variant", wsm5::to_string(r.v)},
          {"time_ms", r.time_s * 1e3},
          {"time_with_transfers_ms", r.with_transfers_s * 1e3},
          {"with_transfers_variant", wsm5::to_string(r.transfers_v)},
          {"first_timed_call_ms", r.samples.front() * 1e3},
          {"last_timed_call_ms", r.samples.back() * 1e3},
          {"timed_calls_count", r.samples.size()},
          {"chunks_count", chunks},
          {"cells_per_s", f.cells_per_s},
          {"bandwidth_gb_per_s", f.gb_per_s},
          {"fraction_of_memory_floor_ratio", f.of_memory_floor},
          {"estimated_gflop_per_s", f.gflop_per_s},
          {"fraction_of_arithmetic_floor_ratio", f.of_arithmetic_floor},
          {"speedup_vs_cpu_one_thread_ratio", f.vs_cpu_one_thread},
          {"speedup_vs_cpu_all_threads_ratio", f.vs_cpu_all_threads},
          {"diagnostics", diag_json(r.diag)}};
}

nlohmann::json check_json(const variant_check& c, const variant_run& r, int calls) {
  nlohmann::json fields = nlohmann::json::array();
  for (const auto& e : c.errors)
    fields.push_back({{"field", e.name},
                      {std::string("max_abs") + unit_of_field(e.name), e.max_abs},
                      {"max_rel_ratio", e.max_rel}});
  return {{"calls", calls},
          {"fields", fields},
          {"fields_ok", c.fields_ok},
          {"columns_beyond_bounds_count", c.fields.columns_beyond},
          {"outlier_columns_allowed_count", c.fields.outliers_allowed},
          {"fields_note", c.fields.summary},
          {"budget_residual_mm", static_cast<double>(r.diag.max_budget_residual)},
          {"budget_bound_mm", c.budget_bound},
          {"budget_ok", c.budget_ok},
          {"ok", c.ok()}};
}

}  // namespace wsm5_app
