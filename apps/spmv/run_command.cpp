// `spmv run FILE`: y = A x with each requested algorithm, timed against cuSPARSE ALG1/ALG2 in the same run
// and checked against the double-accumulating reference, Eigen and cuSPARSE. The header, table, report and
// check are shared with the distributed form (run_distributed.cpp).
#include "run_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "file_guard.hpp"
#include "gpukit/device_buffer.hpp"
#include "reduce/device.hpp"
#include "report.hpp"
#include "sparse/io.hpp"
#include "sparse/reference.hpp"
#include "sparse/spmv.hpp"
#if defined(GPUKIT_DISTRIBUTED)
#include "dist/communicator.hpp"
#endif

namespace spmv_app {
namespace {

using I = std::int32_t;

std::string fmt(double v, int prec = 3, bool sci = false) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : "n/a";
  std::ostringstream o;
  if (sci) o << std::scientific;
  else o << std::fixed;
  o << std::setprecision(prec) << v;
  return o.str();
}

/// The matrix, x, the oracles' y and the per-row bounds: what every algorithm is checked against.
template <class V>
struct problem {
  sparse::host_csr<V, I> a;
  std::string x_origin;
  std::vector<V> x, poison, y_ref, y_eigen;
  std::vector<double> bound;
  double bytes = 0, flops = 0;
};

template <class V>
problem<V> load_problem(const std::string& path, const sparse::read_options& ro) {
  problem<V> p;
  p.a = sparse::read_matrix<V, I>(path, ro);
  p.a.validate();
  p.x = input_x<V>(path, p.a.cols(), ro, p.x_origin);
  p.poison.assign(static_cast<std::size_t>(p.a.rows()), V(NAN));  // beta == 0: never read
  p.y_ref = p.y_eigen = p.poison;
  sparse::reference::spmv_reference(p.a, V(1), p.x.data(), V(0), p.y_ref.data());
  sparse::reference::spmv_eigen(p.a, V(1), p.x.data(), V(0), p.y_eigen.data());
  p.bound = sparse::reference::row_error_bounds(p.a, V(1), p.x.data(), V(0), p.poison.data());
  p.bytes = minimum_bytes<V, I>(p.a.rows(), p.a.cols(), p.a.nnz(), false);
  p.flops = 2.0 * static_cast<double>(p.a.nnz());
  return p;
}

template <class V>
run_rows run_cpu(const problem<V>& p, const run_options& opt, std::vector<V>& y) {
  y = p.poison;
  row_result r;
  r.name = "eigen_cpu";
  r.detail = "sparse::reference::spmv (plain double-accumulation loop)";
  r.us = median_cpu_us([&] { sparse::reference::spmv(p.a, V(1), p.x.data(), V(0), y.data()); }, opt.repeats);
  r.vs_ref = compare_rows(y, p.y_ref, p.bound);
  r.vs_eigen = compare_rows(y, p.y_eigen, p.bound);
  return {{r}, std::nullopt, std::nullopt};
}

// cuSPARSE ALG1 and ALG2 (rows of their own); ALG2's y, deterministic, becomes the third oracle.
template <class V>
std::vector<V> run_cusparse(const problem<V>& p, const sparse::device_csr<V, I>& d, gpukit::device_buffer<V>& dx,
                            gpukit::device_buffer<V>& dy, int repeats, run_rows& out) {
  std::vector<V> y_peer;
  for (auto alg : {sparse::cusparse_algorithm::alg1, sparse::cusparse_algorithm::alg2}) {
    dy.fill_bytes(0xFF);
    sparse::cusparse_spmv<V, I> peer(d.view(), alg, dx.data(), dy.data(), V(1), V(0));
    row_result r;
    r.name = sparse::to_string(alg);
    r.detail = alg == sparse::cusparse_algorithm::alg1 ? "CUSPARSE_SPMV_CSR_ALG1" : "CUSPARSE_SPMV_CSR_ALG2";
    r.us = median_gpu_us([&] { peer.run(V(1), V(0)); }, 3, repeats);
    const auto y = dy.download();
    r.vs_ref = compare_rows(y, p.y_ref, p.bound);
    r.vs_eigen = compare_rows(y, p.y_eigen, p.bound);
    (alg == sparse::cusparse_algorithm::alg1 ? out.alg1_us : out.alg2_us) = r.us;
    if (alg == sparse::cusparse_algorithm::alg2) y_peer = y;
    out.rows.push_back(r);
  }
  return y_peer;
}

template <class V>
run_rows run_gpu(const problem<V>& p, const run_options& opt, std::ostream& out, std::vector<V>& y_out) {
  run_rows res;
  const sparse::device_csr<V, I> d(p.a);
  gpukit::device_buffer<V> dx(p.x), dy(p.a.rows());
  std::vector<V> y_peer;
  if (p.a.rows() > 0 && p.a.cols() > 0 && p.a.nnz() > 0) y_peer = run_cusparse(p, d, dx, dy, opt.repeats, res);
  else out << "cuSPARSE   not run (a matrix without rows, columns or entries)\n";
  std::vector<sparse::spmv_algorithm> algs;
  if (opt.algorithm == "all") {
    algs = sparse::concrete_spmv_algorithms();
    algs.push_back(sparse::spmv_algorithm::automatic);
  } else {
    algs.push_back(sparse::parse_spmv_algorithm(opt.algorithm));
  }
  for (auto alg : algs) {
    std::string why;
    const auto maybe = plan_if_applicable(d, alg, why);
    if (!maybe) {  // skipped under "all", an error when asked for
      if (opt.algorithm != "all") throw gpukit::bad_input(opt.path + ": " + why);
      out << std::left << std::setw(11) << sparse::to_string(alg) << "not run: " << why << "\n";
      continue;
    }
    dy.fill_bytes(0xFF);  // poison: beta == 0 must write every row
    row_result r;
    r.name = sparse::to_string(alg);
    r.detail = maybe->describe();
    r.us = median_gpu_us([&] { sparse::spmv(*maybe, V(1), dx.data(), V(0), dy.data()); }, 3, opt.repeats);
    const auto y = dy.download();
    y_out = y;  // --output: the last algorithm's y (automatic under "all")
    r.vs_ref = compare_rows(y, p.y_ref, p.bound);
    r.vs_eigen = compare_rows(y, p.y_eigen, p.bound);
    if (!y_peer.empty()) {
      r.vs_cusparse = compare_rows(y, y_peer, p.bound);
      r.have_cusparse = true;
    }
    res.rows.push_back(r);
  }
  return res;
}

template <class V>
int run_typed(const run_options& opt, reduce::backend be) {
  std::ostream& out = gpukit::output_stream(opt.quiet);
  sparse::read_options ro;
  ro.allow_nonfinite = opt.allow_nonfinite;
  const problem<V> p = load_problem<V>(opt.path, ro);
  const run_summary m{p.a.rows(), p.a.cols(), p.a.nnz(), p.x_origin, p.bytes,
                      stencil_bytes<V, I>(p.a.rows(), p.a.cols(), p.a.nnz(), longest_row(p.a), false), p.flops, 1};
  print_header(opt, m, out);
  run_rows res;
  std::vector<V> y;
  if (be == reduce::backend::cpu) {
    out << "device     cpu: the reference backend (sparse::reference::spmv, double accumulation); GPU algorithms and cuSPARSE are not run\n";
    res = run_cpu(p, opt, y);
  } else {
    out << "device     cuda: " << reduce::cuda_device_description() << "\n";
    res = run_gpu(p, opt, out, y);
  }
  if (!opt.output.empty()) write_y(opt.output, y);
  return finish_run(opt, be, m, res, out);
}

}  // namespace

double median_cpu_us(const std::function<void()>& f, int reps) {
  f();  // warm-up (first touch, thread pool start)
  std::vector<double> us;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

void print_header(const run_options& opt, const run_summary& m, std::ostream& out) {
  out << "file       " << opt.path << "\n"
      << "matrix     " << m.rows << " x " << m.cols << ", " << m.nnz << " entries, " << opt.precision
      << " values, int32 indices\n"
      << "x          " << m.x_origin << "; y = A x (alpha 1, beta 0)\n"
      << "min bytes  " << fmt(m.bytes / 1e6, 3) << " MB per call (values + col_idx + row_ptr + x + y)\n";
}

namespace {

// Errors are max |y - oracle| over the rows; "worst/bound" is the largest ratio of an error to its row's
// derived bound 2 gamma_{k+2} S_i over all oracles (<= 1 passes --check).
void print_table(const run_rows& res, double bytes, double flops, std::ostream& out) {
  out << "\n"
      << std::left << std::setw(14) << "algorithm" << std::right << std::setw(11) << "median us" << std::setw(10)
      << "GB/s" << std::setw(10) << "GFLOP/s" << std::setw(11) << "err ref" << std::setw(11) << "err Eigen"
      << std::setw(11) << "err cuSP" << std::setw(12) << "worst/bound" << std::setw(9) << "vs ALG1" << std::setw(9)
      << "vs ALG2" << "  plan\n";
  for (const auto& r : res.rows) {
    const double worst = r.worst();
    const double gbs = gpukit::gb_per_s(bytes, r.us), gflops = gpukit::gb_per_s(flops, r.us);
    out << std::left << std::setw(14) << r.name << std::right << std::setw(11) << fmt(r.us, 1) << std::setw(10)
        << fmt(gbs, 0) << std::setw(10) << fmt(gflops, 1) << std::setw(11) << fmt(r.vs_ref.max_abs, 2, true)
        << std::setw(11) << fmt(r.vs_eigen.max_abs, 2, true) << std::setw(11)
        << (r.have_cusparse ? fmt(r.vs_cusparse.max_abs, 2, true) : std::string("-")) << std::setw(12) << fmt(worst, 3)
        << std::setw(9) << (res.alg1_us ? fmt(*res.alg1_us / r.us, 2) + "x" : "-") << std::setw(9)
        << (res.alg2_us ? fmt(*res.alg2_us / r.us, 2) + "x" : "-") << "  " << r.detail
        << (worst <= 1.0 ? "" : "  [OUT OF BOUND]") << "\n";
  }
}

/// A ratio for the report: finite, or left out (a NaN against a number gives an infinite ratio).
void put_ratio(nlohmann::json& j, const char* key, double v) {
  if (std::isfinite(v)) j[key] = v;
}

nlohmann::json run_report(const run_options& opt, reduce::backend be, const run_summary& p, const run_rows& res,
                          bool all_ok) {
  nlohmann::json j = gpukit::report::make("spmv", "run");
  j["device"]["backend"] = reduce::to_string(be);  // the backend used, not only the one present
  j["inputs"] = {{"matrix", opt.path}, {"algorithm", opt.algorithm}, {"precision", opt.precision},
                 {"index", "int32"},   {"repeats", opt.repeats},     {"device", opt.device},
                 {"x", p.x_origin},    {"y", "A x (alpha 1, beta 0)"}};
  nlohmann::json& r = j["results"];
  r = {{"rows", p.rows},   {"cols", p.cols},        {"nnz", p.nnz}, {"min_traffic_bytes", p.bytes},
       {"stencil_traffic_bytes", p.stencil_bytes}, {"within_bound", all_ok}};
  if (p.ranks > 1) r["mpi_rank_count"] = p.ranks;
  r["algorithms"] = nlohmann::json::array();
  for (const auto& row : res.rows) {
    nlohmann::json a = {{"algorithm", row.name}, {"plan", row.detail}, {"time_us", row.us},
                        {"gb_per_s", gpukit::gb_per_s(p.bytes, row.us)}, {"gflop_per_s", gpukit::gb_per_s(p.flops, row.us)},
                        {"within_bound", row.worst() <= 1.0}};
    put_ratio(a, "error_over_bound_ratio", row.worst());
    put_ratio(a, "reference_error_over_bound_ratio", row.vs_ref.max_ratio);
    put_ratio(a, "eigen_error_over_bound_ratio", row.vs_eigen.max_ratio);
    if (row.have_cusparse) put_ratio(a, "cusparse_error_over_bound_ratio", row.vs_cusparse.max_ratio);
    if (res.alg1_us) put_ratio(a, "alg1_speedup_ratio", *res.alg1_us / row.us);
    if (res.alg2_us) put_ratio(a, "alg2_speedup_ratio", *res.alg2_us / row.us);
    r["algorithms"].push_back(std::move(a));
  }
  return j;
}

}  // namespace

int finish_run(const run_options& opt, reduce::backend be, const run_summary& m, const run_rows& res, std::ostream& out) {
  print_table(res, m.bytes, m.flops, out);
  // stencil does not read col_idx: its GB/s above count the CSR minimum, more than it moves.
  const double own = m.stencil_bytes;
  for (const auto& r : res.rows)
    if (r.detail.rfind("stencil", 0) == 0 && r.us > 0)
      out << "note       " << r.name << " runs stencil, which reads no col_idx: it moves " << fmt(own / 1e6, 3)
          << " MB per call, " << fmt(gpukit::gb_per_s(own, r.us), 0) << " GB/s of its own bytes\n";
  const bool all_ok = std::all_of(res.rows.begin(), res.rows.end(), [](const row_result& r) { return r.worst() <= 1.0; });
  if (!opt.json.empty()) gpukit::report::write(opt.json, run_report(opt, be, m, res, all_ok));
  if (!opt.check) return gpukit::exit_ok;
  out << "\ncheck      "
      << (all_ok ? "every result within its derived per-row bound [ok]" : "a result is OUT of its derived bound [FAILED]")
      << "\n";
  if (!all_ok) throw gpukit::check_failed(opt.path + ": a result is outside its derived per-row error bound");
  return gpukit::exit_ok;
}

void check_run_paths(const run_options& opt) {
  sparse::format_of(opt.path);  // a bad extension is an error before any device work
  { std::ifstream probe(opt.path); if (!probe) throw gpukit::bad_input(opt.path + ": cannot open file"); }
  gpukit::check_output_paths({opt.path}, {opt.json, opt.output});
}

int run_command(const run_options& opt) {
#if defined(GPUKIT_DISTRIBUTED)
  // Under mpirun with several ranks: the distributed path (run_distributed.cpp); one rank runs as always.
  if (dist::launched_world_size() > 1) return run_distributed_command(opt);
#endif
  check_run_paths(opt);
  const reduce::backend be = gpukit::select_backend_announced("spmv", opt.device);
  return opt.precision == "float" ? run_typed<float>(opt, be) : run_typed<double>(opt, be);
}

}  // namespace spmv_app
