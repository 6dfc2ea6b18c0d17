// `spmv bench --corpus PATH... [--corpus-generated] [--quick] [--list] [--json FILE]`: every matrix of the
// corpus (corpus.hpp) timed by bench_one (bench_command.cpp: every algorithm, automatic and cuSPARSE
// ALG1/ALG2 in the same run, results checked) and the two corpus targets: automatic never slower than
// ALG1, and within 10 % of the fastest of our algorithms, on every matrix. Every file is read before any
// GPU work, so a bad matrix stops the command (exit 2, naming the file) before anything is timed or written.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app.hpp"
#include "bench_common.hpp"
#include "commands.hpp"
#include "corpus.hpp"
#include "gpukit/error.hpp"
#include "reduce/device.hpp"
#include "report.hpp"
#include "sparse/spmv.hpp"

namespace spmv_app {
namespace {

using matrix = sparse::host_csr<float, std::int32_t>;

constexpr double best_margin = 1.10;  // automatic within 10 % of our best algorithm
constexpr std::int64_t keep_entries = std::int64_t{64} << 20;  // files read once when they total at most this

/// A corpus entry and, for a file, the matrix read when it was checked (kept while the files are small).
struct corpus_item {
  corpus_entry entry;
  std::int64_t rows = 0, cols = 0, nnz = 0;  // files: as read; generated: rows and cols asked, nnz expected
  std::optional<matrix> kept;
};

/// One corpus matrix's comparison figures, from its timings.
struct corpus_figures {
  std::string best;  // fastest of our concrete algorithms
  double best_us = 0, auto_us = 0, alg1_us = 0;
  bool valid = true;  // every timing within its bound
  double over_alg1() const { return auto_us / alg1_us; }
  double over_best() const { return auto_us / best_us; }
  bool not_slower_than_alg1() const { return auto_us <= alg1_us; }
  bool near_best() const { return auto_us <= best_margin * best_us; }
};

corpus_figures figures(const class_result& c) {
  corpus_figures f;
  f.auto_us = c.get("automatic").us;
  f.alg1_us = c.get("cusparse_alg1").us;
  f.best_us = INFINITY;
  for (auto alg : sparse::concrete_spmv_algorithms())
    if (const timing* t = c.find(sparse::to_string(alg)); t && t->us < f.best_us) {
      f.best_us = t->us;
      f.best = t->name;
    }
  for (const auto& t : c.t) f.valid &= t.within_bound;
  return f;
}

/// The corpus, every file read (bad_input naming a file that is refused) before anything is timed.
std::vector<corpus_item> check_corpus(const bench_options& opt, std::vector<std::string>& skipped) {
  std::vector<corpus_item> items;
  if (!opt.corpus.empty())
    for (auto& e : corpus_files(opt.corpus, skipped)) items.push_back({std::move(e), 0, 0, 0, std::nullopt});
  if (opt.corpus_generated)
    for (auto& e : generated_corpus()) items.push_back({std::move(e), 0, 0, 0, std::nullopt});
  std::int64_t kept = 0;
  for (auto& it : items) {
    if (it.entry.generated()) {
      const auto& p = it.entry.params;
      const bool lap2 = p.kind == sparse::matrix_class::laplace_2d, lap3 = p.kind == sparse::matrix_class::laplace_3d;
      it.rows = lap2 ? p.n * p.n : lap3 ? p.n * p.n * p.n : p.rows;
      it.cols = lap2 || lap3 ? it.rows : (p.cols ? p.cols : p.rows);
      it.nnz = expected_entries(p);
      continue;
    }
    matrix a = load(it.entry);
    it.rows = a.rows();
    it.cols = a.cols();
    it.nnz = a.nnz();
    if ((kept += a.nnz()) <= keep_entries) it.kept = std::move(a);
  }
  return items;
}

void print_list(const std::vector<corpus_item>& items, const std::vector<std::string>& skipped, std::ostream& out) {
  out << "corpus: " << items.size() << " matrices (generated: rows x cols, expected entries)\n";
  for (const auto& it : items) {
    out << "  " << std::left << std::setw(24) << it.entry.name << std::right << std::setw(10) << it.rows << " x "
        << std::left << std::setw(10) << it.cols << std::right << std::setw(12) << it.nnz << "  "
        << (it.entry.generated() ? generate_command_line(it.entry.params) : it.entry.path) << "\n";
  }
  for (const auto& s : skipped) out << "  skipped (not .mtx, .h5 or .hdf5): " << s << "\n";
}

void print_table(const std::vector<class_result>& results, std::ostream& out) {
  out << "\nmedian us; best = fastest of our algorithms; ratios are automatic's time over ALG1's and over best's\n"
      << std::left << std::setw(24) << "matrix" << std::right << std::setw(10) << "rows" << std::setw(10) << "cols"
      << std::setw(11) << "nnz" << "  " << std::left << std::setw(14) << "chosen" << std::setw(14) << "best"
      << std::right << std::setw(10) << "best us" << std::setw(10) << "auto us" << std::setw(10) << "ALG1 us"
      << std::setw(10) << "auto/ALG1" << std::setw(10) << "auto/best" << "  check\n";
  for (const auto& c : results) {
    const corpus_figures f = figures(c);
    out << std::left << std::setw(24) << c.name << std::right << std::setw(10) << c.rows << std::setw(10) << c.cols
        << std::setw(11) << c.nnz << "  " << std::left << std::setw(14) << c.automatic_choice << std::setw(14) << f.best
        << std::right << std::setw(10) << fixed(f.best_us, 1) << std::setw(10) << fixed(f.auto_us, 1) << std::setw(10)
        << fixed(f.alg1_us, 1) << std::setw(9) << fixed(f.over_alg1(), 2) << (f.not_slower_than_alg1() ? " " : "!")
        << std::setw(9) << fixed(f.over_best(), 2) << (f.near_best() ? " " : "!") << "  " << (f.valid ? "ok" : "FAIL")
        << "\n";
  }
}

/// The worst matrix by `ratio` and how many fail `ok`.
template <class Ratio, class Ok>
std::pair<const class_result*, int> worst(const std::vector<class_result>& results, Ratio ratio, Ok ok) {
  const class_result* w = nullptr;
  int misses = 0;
  for (const auto& c : results) {
    const corpus_figures f = figures(c);
    if (!w || ratio(f) > ratio(figures(*w))) w = &c;
    misses += !ok(f);
  }
  return {w, misses};
}

struct corpus_summary {
  int alg1_misses = 0, best_misses = 0;
  double worst_over_alg1 = 0, worst_over_best = 0;
  std::string worst_alg1_matrix, worst_best_matrix;
  bool all_valid = true;
};

corpus_summary summarize(const std::vector<class_result>& results) {
  corpus_summary s;
  const auto [wa, ma] = worst(results, [](const corpus_figures& f) { return f.over_alg1(); },
                              [](const corpus_figures& f) { return f.not_slower_than_alg1(); });
  const auto [wb, mb] = worst(results, [](const corpus_figures& f) { return f.over_best(); },
                              [](const corpus_figures& f) { return f.near_best(); });
  s.alg1_misses = ma;
  s.best_misses = mb;
  s.worst_over_alg1 = figures(*wa).over_alg1();
  s.worst_over_best = figures(*wb).over_best();
  s.worst_alg1_matrix = wa->name;
  s.worst_best_matrix = wb->name;
  for (const auto& c : results) s.all_valid &= figures(c).valid;
  return s;
}

void print_targets(const std::vector<class_result>& results, const corpus_summary& s, std::ostream& out) {
  const std::size_t n = results.size();
  out << "\ntargets (" << n << " matrices):\n"
      << "  " << (s.alg1_misses ? "MISS" : "PASS") << "  automatic never slower than cuSPARSE ALG1: slower on "
      << s.alg1_misses << " of " << n << " (worst " << s.worst_alg1_matrix << ": auto/ALG1 " << fixed(s.worst_over_alg1, 2)
      << ")\n"
      << "  " << (s.best_misses ? "MISS" : "PASS") << "  automatic within 10% of our best algorithm: beyond it on "
      << s.best_misses << " of " << n << " (worst " << s.worst_best_matrix << ": auto/best " << fixed(s.worst_over_best, 2)
      << ")\n"
      << "  " << (s.all_valid ? "ok  " : "FAIL") << "  every result within its derived per-row bound of the reference\n";
  for (const auto& c : results) {
    const corpus_figures f = figures(c);
    if (f.not_slower_than_alg1() && f.near_best()) continue;
    out << "  automatic loses on " << c.name << ": chose " << c.automatic_choice << ", auto/ALG1 "
        << fixed(f.over_alg1(), 2) << ", auto/best " << fixed(f.over_best(), 2) << " (best " << f.best << ")\n";
  }
}

nlohmann::json corpus_report(const bench_options& opt, const std::vector<corpus_item>& items,
                             const std::vector<class_result>& results, const corpus_summary& s, bench_calls calls,
                             double elapsed_s) {
  nlohmann::json j = gpukit::report::make("spmv", "bench");
  j["inputs"] = {{"corpus", opt.corpus},
                 {"corpus_generated", opt.corpus_generated},
                 {"quick", opt.quick},
                 {"value_type", "float"},
                 {"index_type", "int32"},
                 {"timing", "CUDA events around each call, warm-up first, every algorithm's calls interleaved, median; y = A x (alpha 1, beta 0)"}};
  nlohmann::json& res = j["results"];
  res = {{"warmup_calls_count", calls.warmup}, {"repeats", calls.reps}, {"elapsed_s", elapsed_s}};
  add_matrices_json(res, results);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const corpus_figures f = figures(results[i]);
    const corpus_entry& e = items[i].entry;
    nlohmann::json& m = res["matrices"][i];
    m["source"] = e.generated() ? generate_command_line(e.params) : e.path;
    m["generated"] = e.generated();
    m["best_algorithm"] = f.best;
    m["best_time_us"] = f.best_us;
    m["automatic_time_us"] = f.auto_us;
    m["alg1_time_us"] = f.alg1_us;
    m["automatic_over_alg1_time_ratio"] = f.over_alg1();
    m["automatic_over_best_time_ratio"] = f.over_best();
    m["not_slower_than_alg1"] = f.not_slower_than_alg1();
    m["within_10_percent_of_best"] = f.near_best();
    m["all_within_bound"] = f.valid;
  }
  res["targets"] = {{"automatic_not_slower_than_alg1_everywhere", s.alg1_misses == 0},
                    {"automatic_within_10_percent_of_best_everywhere", s.best_misses == 0},
                    {"slower_than_alg1_count", s.alg1_misses},
                    {"beyond_10_percent_of_best_count", s.best_misses},
                    {"worst_automatic_over_alg1_time_ratio", s.worst_over_alg1},
                    {"worst_automatic_over_best_time_ratio", s.worst_over_best},
                    {"all_within_bound", s.all_valid}};
  return j;
}

}  // namespace

int corpus_command(const bench_options& opt) {
  std::ostream& out = gpukit::output_stream(opt.quiet);
  std::vector<std::string> skipped;
  std::vector<corpus_item> items = check_corpus(opt, skipped);
  if (opt.list) {
    print_list(items, skipped, out);
    return gpukit::exit_ok;
  }
  if (!reduce::cuda_device_available())
    throw gpukit::no_cuda_device("spmv bench needs a CUDA device: " + reduce::cuda_unavailable_reason());
  const bench_calls calls = calls_for(opt.quick);
  out << "spmv bench --corpus on " << reduce::cuda_device_description() << ": " << items.size() << " matrices ("
      << calls.reps << " timed calls after " << calls.warmup << " warm-up, median; float values, int32 indices, y = A x)\n";
  for (const auto& s : skipped) out << "  skipped (not .mtx, .h5 or .hdf5): " << s << "\n";
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<class_result> results;
  for (auto& it : items) {
    out << "  " << it.entry.name << " ..." << std::flush;
    const auto t1 = std::chrono::steady_clock::now();
    const matrix a = it.kept ? std::move(*it.kept) : load(it.entry);
    it.kept.reset();
    results.push_back(bench_one(a, it.entry.name, false, calls, false));
    out << " " << a.nnz() << " entries, " << fixed(gpukit::seconds_since(t1), 1) << " s\n";
  }
  const double elapsed = gpukit::seconds_since(t0);
  out << "corpus measured in " << fixed(elapsed, 1) << " s\n";
  const corpus_summary s = summarize(results);
  print_table(results, out);
  print_targets(results, s, out);
  if (!opt.json.empty()) {
    gpukit::report::write(opt.json, corpus_report(opt, items, results, s, calls, elapsed));
    out << "\nwrote " << opt.json << "\n";
  }
  if (!s.all_valid) throw gpukit::check_failed("spmv bench: a result is outside its derived per-row error bound");
  return gpukit::exit_ok;
}

}  // namespace spmv_app
