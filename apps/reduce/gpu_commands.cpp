// `reduce ladder` and `reduce bench`, the reporting half: the measurements (ladder_command.cu,
// bench_command.cu) become the printed tables, the targets' PASS/MISS and the JSON reports
// (apps/README.md, "JSON reports"; bench/plot.py draws them).
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "app.hpp"
#include "file_guard.hpp"
#include "bench_report.hpp"
#include "commands.hpp"
#include "cub_peers.hpp"
#include "gpu_results.hpp"
#include "report.hpp"

namespace reduce_app {
namespace {

namespace rep = report;

// ---- reduce ladder ------------------------------------------------------------------------------

void print_ladder_table(const ladder_table& t, std::ostream& out) {
  out << "\n" << t.type << " sum, n = " << rep::size_label(t.n) << " (" << t.n << " elements of 4 bytes, "
      << rep::format("%.1f", static_cast<double>(t.n) * 4 / 1e6) << " MB)\n";
  out << rep::format("%-24s %12s %10s %8s %8s %8s\n", "kernel", "time (us)", "GB/s", "step", "cumul.", "% ceil");
  for (const ladder_row& r : t.rows)
    out << rep::format("%-24s %12.2f %10.1f %7.2fx %7.1fx %7.1f%%%s\n", r.kernel.c_str(), r.time_us, r.gbps, r.step,
                       r.cumulative, r.pct_ceiling,
                       r.scaled ? ("  * timed on " + rep::size_label(r.n_timed) + ", scaled").c_str() : "");
}

nlohmann::json ladder_json(const ladder_data& d, bool quick) {
  nlohmann::json j = gpukit::report::make("reduce", "ladder");
  j["inputs"] = {{"quick", quick},
                 {"cub", cub_peers::version()},
                 {"block_threads", 256},
                 {"timing", "CUDA events around one call, warm-up first, median; same input buffer reused; serial "
                            "and atomic_global timed on a prefix and scaled to n (scaled: true)"}};
  const ladder_ceilings& c = d.ceilings;
  j["results"]["ceilings"] = {{"copy_read_plus_write_bytes", c.copy_bytes}, {"copy_time_us", c.copy_us},
                              {"copy_gb_per_s", c.copy_gbps},               {"cub_sum_float_n_count", c.cub_n},
                              {"cub_sum_float_time_us", c.cub_us},          {"cub_sum_float_read_gb_per_s", c.cub_read_gbps}};
  nlohmann::json rows = nlohmann::json::array();
  for (const ladder_table& t : d.tables)
    for (const ladder_row& r : t.rows)
      rows.push_back({{"type", t.type},
                      {"n", t.n},
                      {"kernel", r.kernel},
                      {"description", r.description},
                      {"timed_elements_count", r.n_timed},
                      {"scaled", r.scaled},
                      {"deterministic_float", r.deterministic},
                      {"time_us", r.time_us},
                      {"timed_median_us", r.t.median_us},
                      {"timed_min_us", r.t.min_us},
                      {"runs_count", r.t.runs},
                      {"gb_per_s", r.gbps},
                      {"step_speedup_ratio", r.step},
                      {"cumulative_speedup_ratio", r.cumulative},
                      {"read_ceiling_percent", r.pct_ceiling}});
  j["results"]["rows"] = std::move(rows);
  return j;
}

// ---- reduce bench -------------------------------------------------------------------------------

struct target {
  std::string name, value;
  bool pass = false;
};

const bench_row* find_row(const std::vector<bench_row>& rows, const std::string& op, std::int64_t n) {
  for (const auto& r : rows)
    if (r.op == op && r.n == n) return &r;
  return nullptr;
}

// sum vs CUB, plain same-buffer timings (as the ANCHORS figures): at every N, and in the 2^14..2^20 band.
void sum_ratio_targets(const bench_data& d, std::vector<target>& t) {
  double worst_all = 0, worst_mid = 0;
  std::int64_t worst_all_n = 0, worst_mid_n = 0;
  for (const auto& r : d.rows) {
    if (r.op != "sum") continue;
    const double q = r.ratio();
    if (q > worst_all) worst_all = q, worst_all_n = r.n;
    if (r.n >= (1 << 14) && r.n <= (1 << 20) && q > worst_mid) worst_mid = q, worst_mid_n = r.n;
  }
  t.push_back({"sum <= 1.0x CUB time at every N", rep::format("worst %.3fx at ", worst_all) + rep::size_label(worst_all_n),
               worst_all > 0 && worst_all <= 1.0});
  std::string mid = worst_mid > 0 ? rep::format("worst %.3fx at ", worst_mid) + rep::size_label(worst_mid_n) : "not measured";
  for (const auto& f : d.floors)  // what the loads and block trees alone cost there (floor_probe.hpp)
    if (f.n == worst_mid_n) mid += rep::format(" (floor probe %.3fx)", f.ratio());
  t.push_back({"sum <= 0.65x CUB time for 2^14..2^20", mid, worst_mid > 0 && worst_mid <= 0.65});
  if (const auto* r = find_row(d.rows, "sum", std::int64_t{1} << 22))
    t.push_back({"sum <= 0.8x CUB time at 2^22", rep::format("%.3fx", r->ratio()), r->ratio() <= 0.8});
}

// Bandwidth at 2^28 (sum, and the reproducible and compensated sums against it); the segmented speedups.
void throughput_targets(const bench_data& d, std::vector<target>& t) {
  if (const auto* s28 = find_row(d.rows, "sum", std::int64_t{1} << 28)) {
    const bool h100 = d.gpu.find("H100") != std::string::npos;
    const double gbps = gpukit::gb_per_s(s28->bytes, *s28->ours.plain_same_us);
    const double need = h100 ? 3100 : 4450;
    t.push_back({rep::format("sum >= %.2f TB/s at 2^28 (%s)", need / 1000, h100 ? "H100" : "H200"),
                 rep::format("%.2f TB/s", gbps / 1000), gbps >= need});
    for (const auto& [op, need_frac] : {std::pair<std::string, double>{"reproducible_sum", 0.90}, {"compensated_sum", 0.95}}) {
      if (const auto* r = find_row(d.rows, op, std::int64_t{1} << 28)) {
        const double frac = *s28->ours.plain_same_us / *r->ours.plain_same_us;
        t.push_back({op + rep::format(" >= %.0f%% of sum throughput at 2^28", 100 * need_frac),
                     rep::format("%.1f%%", 100 * frac), frac >= need_frac});
      }
    }
  }
  for (const auto& [op, need] : {std::pair<std::string, double>{"segmented_1M_tiny", 3.0}, {"segmented_1000x100k", 1.0}}) {
    for (const auto& r : d.segmented)
      if (r.op == op) {
        const double speedup = *r.cub.plain_same_us / *r.ours.plain_same_us;
        t.push_back({op + rep::format(" >= %.0fx faster than CUB", need), rep::format("%.2fx", speedup), speedup >= need});
      }
  }
}

std::vector<target> check_targets(const bench_data& d) {
  std::vector<target> t;
  sum_ratio_targets(d, t);
  throughput_targets(d, t);
  return t;
}

// One record per operation and size (or segmented case): ours and CUB's timings side by side.
nlohmann::json bench_row_json(const bench_row& r, double copy_gbps) {
  nlohmann::json j = {{"op", r.op}, {"peer", r.peer_name}, {"n", r.n}, {"traffic_bytes", r.bytes}};
  if (r.segments > 0) j["segments"] = r.segments;
  for (const auto& [impl, m] : {std::pair<std::string, const bench_measured*>{"ours", &r.ours}, {"cub", &r.cub}}) {
    j[impl + "_plain_us"] = *m->plain_same_us;
    j[impl + "_gb_per_s"] = gpukit::gb_per_s(r.bytes, *m->plain_same_us);
    if (m->plain_rotating_us) {
      j[impl + "_rotating_us"] = *m->plain_rotating_us;
      j[impl + "_rotating_gb_per_s"] = gpukit::gb_per_s(r.bytes, *m->plain_rotating_us);
    }
    if (m->graph_us) j[impl + "_graph_us"] = *m->graph_us;
  }
  if (r.ours.rotating_slices > 0) j["rotating_slices_count"] = r.ours.rotating_slices;
  j["ours_copy_ceiling_percent"] = 100.0 * gpukit::gb_per_s(r.bytes, *r.ours.plain_same_us) / copy_gbps;
  j["ours_over_cub_plain_ratio"] = r.ratio();
  if (r.ours.graph_us && r.cub.graph_us) j["ours_over_cub_graph_ratio"] = *r.ours.graph_us / *r.cub.graph_us;
  return j;
}

nlohmann::json bench_json(const bench_data& d, bool quick, const std::vector<target>& targets) {
  nlohmann::json j = gpukit::report::make("reduce", "bench");
  j["inputs"] = {
      {"quick", quick},
      {"type", "float"},
      {"cub", cub_peers::version()},
      {"timing", "plain: CUDA events around one call, warm-up first, median, ours and CUB's samples alternated; graph: "
                 "one CUDA Graph of 100 calls, time per call, median (sizes <= 2^24); workspace and CUB temporary "
                 "storage allocated before timing"},
      {"buffers", "*_plain_us reuse one input buffer for every call (as the ANCHORS figures: data up to ~L2 size "
                  "stays in L2); *_rotating_us cycle through disjoint slices of a 2^30-element pool (more than 4x L2 "
                  "between two visits, so reads come from DRAM), measured where the input fits in L2; *_graph_us "
                  "use the same buffer"},
      {"floor_probe", "reduce::sum's medium grid, launch path, traversal and block tree at that size, each block "
                      "storing its partial, no cross-block step (not a sum; the partials are checked to add up to the "
                      "sum); plain timing alternated with CUB's sum"}};
  nlohmann::json& res = j["results"];
  res["copy_read_plus_write_gb_per_s"] = d.copy_gbps;
  res["copy_1gib_time_us"] = d.copy_us;
  res["l2_bytes"] = d.l2_bytes;
  res["sizes"] = nlohmann::json::array();
  for (const auto& r : d.rows) res["sizes"].push_back(bench_row_json(r, d.copy_gbps));
  res["segmented"] = nlohmann::json::array();
  for (const auto& r : d.segmented) res["segmented"].push_back(bench_row_json(r, d.copy_gbps));
  res["floor_probe"] = nlohmann::json::array();
  for (const auto& f : d.floors)
    res["floor_probe"].push_back({{"n", f.n}, {"grid_blocks_count", f.grid}, {"probe_plain_us", f.probe_us},
                                  {"cub_plain_us", f.cub_us}, {"probe_over_cub_plain_ratio", f.ratio()}});
  res["targets"] = nlohmann::json::array();
  for (const auto& t : targets) res["targets"].push_back({{"target", t.name}, {"value", t.value}, {"pass", t.pass}});
  return j;
}

std::string us_text(const std::optional<double>& v) { return v ? rep::format("%.2f", *v) : std::string("-"); }

void print_bench_table(const bench_data& d, std::ostream& out) {
  out << "\n" << rep::format("%-20s %6s %11s %11s %7s %9s %9s %9s %9s %8s\n", "op", "N", "ours us", "CUB us", "ratio",
                             "ours GB/s", "CUB GB/s", "ours grph", "CUB grph", "% ceil");
  for (const std::vector<bench_row>* rows : {&d.rows, &d.segmented})
    for (const auto& r : *rows) {
      const double g = gpukit::gb_per_s(r.bytes, *r.ours.plain_same_us);
      out << rep::format("%-20s %6s %11.2f %11.2f %6.3fx %9.0f %9.0f %9s %9s %7.1f%%\n", r.op.c_str(),
                         r.segments > 0 ? "-" : rep::size_label(r.n).c_str(), *r.ours.plain_same_us,
                         *r.cub.plain_same_us, r.ratio(), g, gpukit::gb_per_s(r.bytes, *r.cub.plain_same_us),
                         us_text(r.ours.graph_us).c_str(), us_text(r.cub.graph_us).c_str(), 100 * g / d.copy_gbps);
    }
  out << "ratio = ours / CUB time (plain, same buffer: as ANCHORS); grph = CUDA Graph of 100 calls, us per call; "
         "% ceil = our GB/s over the device-to-device copy's (read + write) GB/s. DRAM-honest rotating-buffer "
         "figures are in the JSON report.\n";
}

void print_targets_and_floor(const bench_data& d, const std::vector<target>& targets, std::ostream& out) {
  out << "\ntargets:\n";
  for (const auto& t : targets)
    out << "  " << (t.pass ? "PASS " : "MISS ") << rep::format("%-52s", t.name.c_str()) << " " << t.value << "\n";
  out << "\nfloor probe: reduce::sum's medium grid at that size, its loads and block trees only (no cross-block "
         "step, so not a sum); plain, alternated with CUB:\n";
  for (const auto& f : d.floors) {
    const bench_row* r = find_row(d.rows, "sum", f.n);
    out << rep::format("  %s: %d blocks, %.2f us vs CUB %.2f us = %.3fx", rep::size_label(f.n).c_str(), f.grid,
                       f.probe_us, f.cub_us, f.ratio())
        << (r ? rep::format("  (reduce::sum %.3fx in its own row)", r->ratio()) : std::string()) << "\n";
  }
}

}  // namespace

int ladder_command(const gpu_bench_options& opt) {
  gpukit::check_output_paths({}, {opt.json});
  std::ostream& out = gpukit::output_stream(opt.quiet);
  const ladder_data d = measure_ladder(opt.quick, out);
  for (const ladder_table& t : d.tables) print_ladder_table(t, out);
  out << "\nGB/s = input bytes / median time (CUDA events around one call, warm-up first, median of "
      << (opt.quick ? 10 : 30) << " calls; 3-5 for the slow rungs). % ceil = GB/s / the CUB 2^28 read figure; "
      << "2^22 int32 (16 MB) sits in L2, so it can exceed 100 %. Atomic rungs: float results are not "
      << "deterministic. Block size 256 for every rung.\n";
  if (!opt.json.empty()) gpukit::report::write(opt.json, ladder_json(d, opt.quick));
  return gpukit::exit_ok;
}

int bench_command(const gpu_bench_options& opt) {
  gpukit::check_output_paths({}, {opt.json});
  std::ostream& out = gpukit::output_stream(opt.quiet);
  const bench_data d = measure_bench(opt.quick, out);
  const std::vector<target> targets = check_targets(d);
  if (!opt.json.empty()) gpukit::report::write(opt.json, bench_json(d, opt.quick, targets));
  print_bench_table(d, out);
  print_targets_and_floor(d, targets, out);
  return gpukit::exit_ok;
}

}  // namespace reduce_app
