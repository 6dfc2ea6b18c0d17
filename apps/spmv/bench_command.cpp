// `spmv bench [--quick] [--explore] [--classes a,b] [--json FILE]`: the ANCHORS matrix classes generated
// in-process (float values, int32 indices), every algorithm and cuSPARSE ALG1/ALG2 timed in the same run,
// the copy ceiling measured beside them; a table with the target checks and the JSON report (bench/plot.py
// draws it). --explore also times the vector kernel at every forced width (vector_w2 .. vector_w32,
// listed after the main table and in the report); --classes keeps only the named classes (targets are
// then checked on those alone). --corpus / --corpus-generated time a corpus instead (corpus_command.cpp),
// through bench_one below.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "app.hpp"
#include "bench_common.hpp"
#include "commands.hpp"
#include "gpukit/cuda_timer.hpp"
#include "gpukit/device_buffer.hpp"
#include "reduce/device.hpp"
#include "report.hpp"
#include "run_command.hpp"
#include "sparse/generate.hpp"
#include "sparse/reference.hpp"
#include "sparse/spmv.hpp"

namespace spmv_app {

using V = float;
using I = std::int32_t;

std::string fixed(double v, int p) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(p) << v;
  return o.str();
}

namespace {

/// One timed call of bench_one: a peer, one of our plans, automatic, or a forced vector width.
struct candidate {
  std::string name, plan;
  std::function<void()> run;
  bool automatic = false;
};

/// Samples per candidate after one probe call each: the asked count, raised to 200 for calls under 50 us
/// (launch-bound: 6-12 us calls whose medians of 25 moved by up to 0.6 us between runs), and lowered where
/// the calls would take over 0.5 s together (a naive kernel on a pathological matrix: scalar on
/// arrow_w4_1m's 1M-entry rows takes ~0.37 s a call), at least 5 (their median still drops a clock ramp).
std::vector<int> runs_for(gpukit::cuda_timer& timer, const std::vector<candidate>& cands, bench_calls calls) {
  constexpr double budget_us = 0.5e6;
  std::vector<int> runs;
  for (const auto& c : cands) {
    const double probe_us = timer.time(c.run, {0, 1}).median_us;
    int n = probe_us < 50 ? std::max(calls.reps, 200) : calls.reps;
    if (probe_us * (calls.warmup + n) > budget_us) n = std::max(5, static_cast<int>(budget_us / probe_us));
    runs.push_back(n);
  }
  return runs;
}

}  // namespace

class_result bench_one(const sparse::host_csr<V, I>& a, const std::string& matrix_name, bool anchor, bench_calls calls,
                       bool explore) {
  class_result c;
  c.name = matrix_name;
  c.anchor = anchor;
  c.rows = a.rows();
  c.cols = a.cols();
  c.nnz = a.nnz();
  c.bytes = minimum_bytes<V, I>(a.rows(), a.cols(), a.nnz(), false);
  c.stencil_bytes = stencil_bytes<V, I>(a.rows(), a.cols(), a.nnz(), longest_row(a), false);
  const std::vector<V> x = pseudo_random_vector<V>(a.cols(), 7);
  const std::vector<V> poison(static_cast<std::size_t>(a.rows()), V(NAN));
  std::vector<V> y_ref = poison;
  sparse::reference::spmv_reference(a, V(1), x.data(), V(0), y_ref.data());
  const auto bound = sparse::reference::row_error_bounds(a, V(1), x.data(), V(0), poison.data());

  const sparse::device_csr<V, I> d(a);
  gpukit::device_buffer<V> dx(x), dy(a.rows());
  // Every candidate built first (analysis and uploads untimed), then timed in alternation (time_interleaved).
  std::deque<sparse::cusparse_spmv<V, I>> peers;
  std::deque<sparse::spmv_plan<V, I>> plans;
  std::vector<candidate> cands;
  for (auto alg : {sparse::cusparse_algorithm::alg1, sparse::cusparse_algorithm::alg2}) {
    auto& peer = peers.emplace_back(d.view(), alg, dx.data(), dy.data());
    cands.push_back({sparse::to_string(alg),
                     alg == sparse::cusparse_algorithm::alg1 ? "CUSPARSE_SPMV_CSR_ALG1" : "CUSPARSE_SPMV_CSR_ALG2",
                     [&peer] { peer.run(V(1), V(0)); }});
  }
  auto add_plan = [&](std::string name, sparse::spmv_plan<V, I>&& p, bool automatic) {
    const auto& plan = plans.emplace_back(std::move(p));
    cands.push_back({std::move(name), plan.describe(),
                     [&plan, &dx, &dy] { sparse::spmv(plan, V(1), dx.data(), V(0), dy.data()); }, automatic});
  };
  auto algs = sparse::concrete_spmv_algorithms();
  algs.push_back(sparse::spmv_algorithm::automatic);
  for (auto alg : algs) {
    std::string& why = alg == sparse::spmv_algorithm::windowed        ? c.windowed_why_not
                       : alg == sparse::spmv_algorithm::column_blocks ? c.column_blocks_why_not
                                                                      : c.stencil_why_not;
    auto maybe = plan_if_applicable(d, alg, why);
    if (maybe) add_plan(sparse::to_string(alg), std::move(*maybe), alg == sparse::spmv_algorithm::automatic);
  }
  if (explore)
    for (int w : {2, 4, 8, 16, 32})
      add_plan("vector_w" + std::to_string(w), sparse::spmv_plan<V, I>(d, sparse::spmv_algorithm::vector, w), false);

  gpukit::cuda_timer timer(nullptr);
  const std::vector<int> runs = runs_for(timer, cands, calls);
  const std::vector<gpukit::timing> times = timer.time_interleaved(
      [&] {
        std::vector<std::function<void()>> w;
        for (const auto& k : cands) w.push_back(k.run);
        return w;
      }(),
      runs, calls.warmup);
  // Each candidate's result checked from a call of its own into a poisoned y.
  for (std::size_t i = 0; i < cands.size(); ++i) {
    dy.fill_bytes(0xFF);
    cands[i].run();
    const auto y = dy.download();
    const auto e = compare_rows(y, y_ref, bound);
    const double us = times[i].median_us;
    c.t.push_back({cands[i].name, cands[i].plan, us, c.bytes / (us * 1e3), e.max_ratio <= 1.0, e.max_ratio});
    if (cands[i].automatic) {
      const auto& plan = plans[i - peers.size()];
      c.automatic_plan = plan.describe();
      c.automatic_choice = sparse::to_string(plan.algorithm());
      c.csr_choice = sparse::to_string(sparse::choose_algorithm(plan.stats()));
    }
  }
  return c;
}

void add_matrices_json(nlohmann::json& res, const std::vector<class_result>& results) {
  res["matrices"] = nlohmann::json::array();
  res["timings"] = nlohmann::json::array();
  for (const auto& c : results) {
    nlohmann::json m = {{"matrix", c.name},
                        {"anchor", c.anchor},
                        {"rows", c.rows},
                        {"cols", c.cols},
                        {"nnz", c.nnz},
                        {"min_traffic_bytes", c.bytes},
                        {"stencil_traffic_bytes", c.stencil_bytes},
                        {"automatic_plan", c.automatic_plan},
                        {"automatic_choice", c.automatic_choice},
                        {"automatic_csr_choice", c.csr_choice},
                        {"automatic_vs_alg1_speedup_ratio", alg1_speedup(c)},
                        {"automatic_vs_alg2_speedup_ratio", alg2_speedup(c)}};
    if (!c.stencil_why_not.empty()) m["stencil_not_applicable"] = c.stencil_why_not;
    if (!c.windowed_why_not.empty()) m["windowed_not_applicable"] = c.windowed_why_not;
    if (!c.column_blocks_why_not.empty()) m["column_blocks_not_applicable"] = c.column_blocks_why_not;
    res["matrices"].push_back(std::move(m));
    for (const auto& t : c.t) {
      nlohmann::json r = {{"matrix", c.name}, {"algorithm", t.name}, {"plan", t.plan},
                          {"time_us", t.us},  {"gb_per_s", t.gbs},  {"within_bound", t.within_bound}};
      if (std::isfinite(t.worst_ratio)) r["error_over_bound_ratio"] = t.worst_ratio;
      res["timings"].push_back(std::move(r));
    }
  }
}

namespace {

/// Device-to-device cudaMemcpy of 1 GiB, median of 10: bytes read + written per second (the ceiling).
double copy_ceiling_gbs() {
  return gpukit::measure_copy_ceiling(std::size_t{1} << 30, nullptr, {2, 10}).gb_per_s();
}

// The algorithms of the main table, in its column order.
const std::vector<std::string> table_names = {"scalar",   "shared_cached", "warp_per_row", "vector",   "adaptive",
                                              "block_per_row", "merge",   "warp_stream",  "stencil",  "windowed",
                                              "column_blocks", "automatic", "cusparse_alg1", "cusparse_alg2"};

// The geometric-mean targets over the six classes: ANCHORS' 1.25x, and the 1.45x that real inputs ask of
// an automatic choice that also holds on the corpus (`spmv bench --corpus`).
constexpr double geomean_anchor_target = 1.25;
constexpr double geomean_stretch_target = 1.45;

/// The target figures over the anchor classes (and the validity of every timing).
struct summary {
  double geomean = 0;      // ALG1 / automatic
  double csr_geomean = 0;  // the same with automatic held to the CSR kernels (its choice before stencil/windowed)
  bool all_faster = true, laplace_ok = true, all_valid = true;
  double laplace_target = 0;
};

summary summarize(const std::vector<class_result>& results, double laplace_target) {
  summary s;
  s.laplace_target = laplace_target;
  double log_sum = 0, csr_log_sum = 0;
  int anchors = 0;
  for (const auto& c : results) {
    for (const auto& t : c.t) s.all_valid &= t.within_bound;
    if (c.name == "laplace2d" || c.name == "laplace3d") s.laplace_ok &= c.get("automatic").gbs >= laplace_target;
    if (!c.anchor) continue;
    log_sum += std::log(alg1_speedup(c));
    csr_log_sum += std::log(c.get("cusparse_alg1").us / c.get(c.csr_choice).us);
    ++anchors;
    s.all_faster &= alg1_speedup(c) > 1.0;
  }
  s.geomean = anchors ? std::exp(log_sum / anchors) : 0;
  s.csr_geomean = anchors ? std::exp(csr_log_sum / anchors) : 0;
  return s;
}

void print_main_table(const std::vector<class_result>& results, std::ostream& out) {
  out << "\nmedian us (GB/s of minimum bytes)\n" << std::left << std::setw(12) << "class";
  for (const auto& n : table_names) out << std::right << std::setw(15) << n;
  out << std::setw(9) << "auto/A1" << std::setw(9) << "auto/A2" << "\n";
  for (const auto& c : results) {
    out << std::left << std::setw(12) << c.name;
    for (const auto& n : table_names) {
      const timing* t = c.find(n);  // stencil, windowed or column_blocks on a matrix it does not apply to: n/a
      out << std::right << std::setw(15)
          << (t ? fixed(t->us, 1) + " (" + fixed(t->gbs, 0) + ")" + (t->within_bound ? "" : "!") : "n/a");
    }
    out << std::setw(8) << fixed(alg1_speedup(c), 2) << "x" << std::setw(8) << fixed(alg2_speedup(c), 2) << "x\n";
  }
}

void print_notes(const std::vector<class_result>& results, bool explore, std::ostream& out) {
  out << "\nstencil reads no col_idx (a pattern byte per row instead; with rows of <= " << sparse::stencil_packed_max_row
      << " entries, and the row's start, in 2 bytes), so its GB/s above count more bytes than it moves:\n";
  for (const auto& c : results) {
    out << "  " << std::left << std::setw(12) << c.name;
    if (const timing* t = c.find("stencil"))
      out << "moves " << fixed(c.stencil_bytes / 1e6, 1) << " MB per call (CSR minimum " << fixed(c.bytes / 1e6, 1)
          << " MB): " << fixed(c.stencil_bytes / (t->us * 1e3), 0) << " GB/s of its own bytes\n";
    else
      out << "not run: " << c.stencil_why_not << "\n";
  }
  out << "\nwindowed reads its own copy of the entries (a 32-bit word and the value each, padding below):\n";
  for (const auto& c : results) {
    out << "  " << std::left << std::setw(12) << c.name;
    if (const timing* t = c.find("windowed")) out << t->plan << "\n";
    else out << "not run: " << c.windowed_why_not << "\n";
  }
  out << "\ncolumn_blocks reads its own copy of the entries (a 16-bit column and the value each, 32-bit row starts per "
         "block) and writes a partial per block and row:\n";
  for (const auto& c : results) {
    out << "  " << std::left << std::setw(12) << c.name;
    if (const timing* t = c.find("column_blocks")) out << t->plan << "\n";
    else out << "not run: " << c.column_blocks_why_not << "\n";
  }
  if (explore) {
    out << "\nexplore: vector at every forced width, median us (GB/s)\n";
    for (const auto& c : results) {
      out << std::left << std::setw(12) << c.name;
      for (const auto& t : c.t)
        if (t.name.rfind("vector_w", 0) == 0)
          out << std::right << std::setw(22) << (t.name + " " + fixed(t.us, 1) + (t.within_bound ? "" : "!"));
      out << "\n";
    }
  }
  out << "\nautomatic chose:\n";
  for (const auto& c : results) out << "  " << std::left << std::setw(12) << c.name << c.automatic_plan << "\n";
}

void print_targets(const std::vector<class_result>& results, const summary& s, bool h200, std::ostream& out) {
  out << "\ntargets (" << (h200 ? "H200" : "not an H200: Laplacian target = 80 % of the copy ceiling") << "):\n";
  for (const auto& c : results)
    if (c.anchor)
      out << "  " << (alg1_speedup(c) > 1.0 ? "PASS" : "MISS") << "  automatic faster than ALG1 on " << c.name << ": "
          << fixed(alg1_speedup(c), 2) << "x\n";
  for (double target : {geomean_anchor_target, geomean_stretch_target})
    out << "  " << (s.geomean >= target ? "PASS" : "MISS") << "  geometric mean of ALG1 / automatic >= "
        << fixed(target, 2) << ": " << fixed(s.geomean, 3) << "x\n";
  out << "        (automatic held to the CSR kernels, no stencil or windowed: " << fixed(s.csr_geomean, 3) << "x)\n";
  for (const auto& c : results) {
    if (c.name != "laplace2d" && c.name != "laplace3d") continue;
    const double gbs = c.get("automatic").gbs;
    out << "  " << (gbs >= s.laplace_target ? "PASS" : "MISS") << "  " << c.name << " automatic " << fixed(gbs, 0)
        << " GB/s >= " << fixed(s.laplace_target, 0) << " GB/s";
    if (c.automatic_plan.rfind("stencil", 0) == 0)
      out << " (stencil: " << fixed(c.stencil_bytes / (c.get("automatic").us * 1e3), 0)
          << " GB/s of the bytes it moves; best CSR kernel, " << c.csr_choice << ": " << fixed(c.get(c.csr_choice).gbs, 0)
          << " GB/s)";
    out << "\n";
  }
  out << "  " << (s.all_valid ? "ok  " : "FAIL") << "  every result within its derived per-row bound of the reference\n";
}

nlohmann::json bench_report(const bench_options& opt, const std::vector<class_result>& results, const summary& s,
                            double ceiling, int warmup, int reps) {
  nlohmann::json j = gpukit::report::make("spmv", "bench");
  j["inputs"] = {{"quick", opt.quick},
                 {"explore", opt.explore},
                 {"classes", opt.classes},
                 {"value_type", "float"},
                 {"index_type", "int32"},
                 {"timing", "CUDA events around each call, warm-up first, every algorithm's calls interleaved, median; y = A x (alpha 1, beta 0)"}};
  nlohmann::json& res = j["results"];
  res = {{"warmup_calls_count", warmup},
         {"repeats", reps},
         {"copy_ceiling_gb_per_s", ceiling},
         {"laplace_target_gb_per_s", s.laplace_target}};
  add_matrices_json(res, results);
  res["targets"] = {{"automatic_faster_than_alg1_everywhere", s.all_faster},
                    {"geomean_vs_alg1_speedup_ratio", s.geomean},
                    {"geomean_vs_alg1_csr_kernels_only_speedup_ratio", s.csr_geomean},
                    {"geomean_target_met", s.geomean >= geomean_anchor_target},
                    {"geomean_stretch_target_ratio", geomean_stretch_target},
                    {"geomean_stretch_target_met", s.geomean >= geomean_stretch_target},
                    {"laplace_bandwidth_target_met", s.laplace_ok},
                    {"all_within_bound", s.all_valid}};
  return j;
}

// The six ANCHORS classes at their sizes, plus denserow (no anchor: the split path under load); --classes
// keeps the named ones (checked when parsed).
std::vector<sparse::benchmark_matrix> select_classes(const std::vector<std::string>& only) {
  auto set = sparse::benchmark_matrices(false);
  if (only.empty()) return set;
  set.erase(std::remove_if(set.begin(), set.end(),
                           [&](const sparse::benchmark_matrix& m) {
                             return std::find(only.begin(), only.end(), m.name) == only.end();
                           }),
            set.end());
  return set;
}

}  // namespace

int bench_command(const bench_options& opt) {
  if (!opt.corpus.empty() || opt.corpus_generated) return corpus_command(opt);  // corpus_command.cpp
  if (opt.list) throw gpukit::bad_input("spmv bench: --list needs --corpus or --corpus-generated");
  if (!reduce::cuda_device_available())
    throw gpukit::no_cuda_device("spmv bench needs a CUDA device: " + reduce::cuda_unavailable_reason());
  std::ostream& out = gpukit::output_stream(opt.quiet);
  const bench_calls calls = calls_for(opt.quick);
  const int warmup = calls.warmup, reps = calls.reps;
  const std::string gpu = reduce::cuda_device_description();
  out << "spmv bench on " << gpu << (opt.quick ? " (quick: full sizes, " : " (") << reps << " timed calls after "
      << warmup << " warm-up, median; float values, int32 indices, y = A x)\n";
  const double ceiling = copy_ceiling_gbs();
  const bool h200 = gpu.find("H200") != std::string::npos;
  // The Laplacian target: 3.6 TB/s on an H200 (~85 % of its 4.26 TB/s copy ceiling); elsewhere 80 % of the
  // copy ceiling measured here.
  const double laplace_target = h200 ? 3600.0 : 0.8 * ceiling;
  out << "copy ceiling (1 GiB device-to-device cudaMemcpy, read + write): " << fixed(ceiling, 0) << " GB/s\n\n";

  std::vector<class_result> results;
  for (const auto& m : select_classes(opt.classes)) {
    out << "  " << m.name << " ..." << std::flush;
    results.push_back(bench_one(sparse::generate<V, I>(m.params), m.name, m.name != "denserow", calls, opt.explore));
    out << " " << results.back().nnz << " entries\n";
  }
  const summary s = summarize(results, laplace_target);
  print_main_table(results, out);
  print_notes(results, opt.explore, out);
  print_targets(results, s, h200, out);
  if (!opt.json.empty()) {
    gpukit::report::write(opt.json, bench_report(opt, results, s, ceiling, warmup, reps));
    out << "\nwrote " << opt.json << "\n";
  }
  if (!s.all_valid) throw gpukit::check_failed("spmv bench: a result is outside its derived per-row error bound");
  return gpukit::exit_ok;
}

}  // namespace spmv_app
