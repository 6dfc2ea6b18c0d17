// `spmv run FILE`: y = A x with each requested algorithm, timed against cuSPARSE ALG1/ALG2 in the same run
// and checked against the double-accumulating reference, Eigen and cuSPARSE.
#include "run_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"
#include "run_main.hpp"
#include "json_writer.hpp"
#include "reduce/device.hpp"
#include "gpukit/device_buffer.hpp"
#include "sparse/io.hpp"
#include "sparse/reference.hpp"
#include "sparse/spmv.hpp"

namespace spmv_app {
namespace {

struct options {
  std::string path;
  std::string algorithm = "automatic";  // a name or "all"
  bool check = false;
  int repeat = 50;
  std::string precision = "float";
  reduce::backend backend = reduce::backend::cpu;
  std::string json;
};

struct row_result {
  std::string name;        // algorithm (or peer) name
  std::string detail;      // plan description
  double us = 0;           // median time
  error_summary vs_ref, vs_eigen, vs_cusparse;
  bool have_cusparse = false;
};

/// x: the file's /matrix/x when an HDF5 file carries one of the right length, else fixed pseudo-random
/// values in [-1, 1) (the same on every machine).
template <class V>
std::vector<V> input_x(const std::string& path, std::int64_t cols, std::string& origin) {
  if (sparse::format_of(path) == sparse::file_format::hdf5) {
    if (auto x = sparse::read_hdf5_vector<V>(path, "/matrix/x")) {
      if (static_cast<std::int64_t>(x->size()) != cols)
        throw std::runtime_error(path + ": /matrix/x has " + std::to_string(x->size()) + " entries, the matrix " +
                                 std::to_string(cols) + " columns");
      origin = "the file's /matrix/x";
      return *x;
    }
  }
  origin = "pseudo-random in [-1, 1), seed 2026";
  return pseudo_random_vector<V>(cols, 2026);
}

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

std::string fmt(double v, int prec = 3, bool sci = false) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : "n/a";
  std::ostringstream o;
  if (sci) o << std::scientific;
  else o << std::fixed;
  o << std::setprecision(prec) << v;
  return o.str();
}

template <class V>
int run_typed(const options& opt) {
  using I = std::int32_t;
  const auto a = sparse::read_matrix<V, I>(opt.path);
  a.validate();
  std::string x_origin;
  const std::vector<V> x = input_x<V>(opt.path, a.cols(), x_origin);
  const V alpha = V(1), beta = V(0);
  const std::vector<V> poison(static_cast<std::size_t>(a.rows()), V(NAN));  // beta == 0: never read

  std::vector<V> y_ref = poison, y_eigen = poison;
  sparse::reference::spmv_reference(a, alpha, x.data(), beta, y_ref.data());
  sparse::reference::spmv_eigen(a, alpha, x.data(), beta, y_eigen.data());
  const std::vector<double> bound = sparse::reference::row_error_bounds(a, alpha, x.data(), beta, poison.data());
  const double bytes = minimum_bytes<V, I>(a.rows(), a.cols(), a.nnz(), beta != V(0));
  const double flops = 2.0 * static_cast<double>(a.nnz());

  std::cout << "file       " << opt.path << "\n"
            << "matrix     " << a.rows() << " x " << a.cols() << ", " << a.nnz() << " entries, " << opt.precision
            << " values, int32 indices\n"
            << "x          " << x_origin << "; y = A x (alpha 1, beta 0)\n"
            << "min bytes  " << fmt(bytes / 1e6, 3) << " MB per call (values + col_idx + row_ptr + x + y)\n";

  std::vector<row_result> rows;
  std::optional<double> alg1_us, alg2_us;
  if (opt.backend == reduce::backend::cpu) {
    std::cout << "device     cpu: the Eigen backend (sparse::reference::spmv); GPU algorithms and cuSPARSE are "
                 "not run\n";
    std::vector<V> y = poison;
    row_result r;
    r.name = "eigen_cpu";
    r.detail = "sparse::reference::spmv (Eigen)";
    r.us = median_cpu_us([&] { sparse::reference::spmv(a, alpha, x.data(), beta, y.data()); }, opt.repeat);
    r.vs_ref = compare_rows(y, y_ref, bound);
    r.vs_eigen = compare_rows(y, y_eigen, bound);
    rows.push_back(r);
  } else {
    std::cout << "device     cuda: " << reduce::cuda_device_description() << "\n";
    const sparse::device_csr<V, I> d(a);
    gpukit::device_buffer<V> dx(x), dy(a.rows());
    const int warmup = 3;
    std::vector<V> y_peer;
    if (a.rows() > 0 && a.cols() > 0 && a.nnz() > 0) {
      for (auto alg : {sparse::cusparse_algorithm::alg1, sparse::cusparse_algorithm::alg2}) {
        dy.fill_bytes(0xFF);
        sparse::cusparse_spmv<V, I> peer(d.view(), alg, dx.data(), dy.data(), alpha, beta);
        row_result r;
        r.name = sparse::to_string(alg);
        r.detail = alg == sparse::cusparse_algorithm::alg1 ? "CUSPARSE_SPMV_CSR_ALG1" : "CUSPARSE_SPMV_CSR_ALG2";
        r.us = median_gpu_us([&] { peer.run(alpha, beta); }, warmup, opt.repeat);
        const auto y = dy.download();
        r.vs_ref = compare_rows(y, y_ref, bound);
        r.vs_eigen = compare_rows(y, y_eigen, bound);
        (alg == sparse::cusparse_algorithm::alg1 ? alg1_us : alg2_us) = r.us;
        if (alg == sparse::cusparse_algorithm::alg2) y_peer = y;  // the deterministic one is the oracle
        rows.push_back(r);
      }
    } else {
      std::cout << "cuSPARSE   not run (a matrix without rows, columns or entries)\n";
    }
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
        if (opt.algorithm != "all") throw std::runtime_error(opt.path + ": " + why);
        std::cout << std::left << std::setw(11) << sparse::to_string(alg) << "not run: " << why << "\n";
        continue;
      }
      const sparse::spmv_plan<V, I>& plan = *maybe;
      dy.fill_bytes(0xFF);  // poison: beta == 0 must write every row
      row_result r;
      r.name = sparse::to_string(alg);
      r.detail = plan.describe();
      r.us = median_gpu_us([&] { sparse::spmv(plan, alpha, dx.data(), beta, dy.data()); }, warmup, opt.repeat);
      const auto y = dy.download();
      r.vs_ref = compare_rows(y, y_ref, bound);
      r.vs_eigen = compare_rows(y, y_eigen, bound);
      if (!y_peer.empty()) {
        r.vs_cusparse = compare_rows(y, y_peer, bound);
        r.have_cusparse = true;
      }
      rows.push_back(r);
    }
  }

  // Table. Errors are max |y - oracle| over the rows; "worst/bound" is the largest ratio of an error to
  // its row's derived bound 2 gamma_{k+2} S_i over all oracles (<= 1 passes --check).
  std::cout << "\n"
            << std::left << std::setw(14) << "algorithm" << std::right << std::setw(11) << "median us" << std::setw(10)
            << "GB/s" << std::setw(10) << "GFLOP/s" << std::setw(11) << "err ref" << std::setw(11) << "err Eigen"
            << std::setw(11) << "err cuSP" << std::setw(12) << "worst/bound" << std::setw(9) << "vs ALG1"
            << std::setw(9) << "vs ALG2" << "  plan\n";
  bool all_ok = true;
  gpukit::json_writer j;
  j.begin_object();
  j.field("file", opt.path).field("rows", static_cast<long long>(a.rows())).field("cols", static_cast<long long>(a.cols()));
  j.field("nnz", static_cast<long long>(a.nnz())).field("precision", opt.precision).field("index", "int32");
  j.field("device", opt.backend == reduce::backend::cuda ? reduce::cuda_device_description() : std::string("cpu (Eigen)"));
  j.field("min_bytes", bytes).field("repeat", opt.repeat);
  j.begin_array("results");
  for (const auto& r : rows) {
    const double worst = std::max({r.vs_ref.max_ratio, r.vs_eigen.max_ratio, r.have_cusparse ? r.vs_cusparse.max_ratio : 0.0});
    all_ok &= worst <= 1.0;
    const double gbs = r.us > 0 ? bytes / (r.us * 1e3) : 0, gflops = r.us > 0 ? flops / (r.us * 1e3) : 0;
    const double vs1 = alg1_us ? *alg1_us / r.us : NAN, vs2 = alg2_us ? *alg2_us / r.us : NAN;
    std::cout << std::left << std::setw(14) << r.name << std::right << std::setw(11) << fmt(r.us, 1) << std::setw(10)
              << fmt(gbs, 0) << std::setw(10) << fmt(gflops, 1) << std::setw(11) << fmt(r.vs_ref.max_abs, 2, true)
              << std::setw(11) << fmt(r.vs_eigen.max_abs, 2, true) << std::setw(11)
              << (r.have_cusparse ? fmt(r.vs_cusparse.max_abs, 2, true) : std::string("-")) << std::setw(12)
              << fmt(worst, 3) << std::setw(9) << (alg1_us ? fmt(vs1, 2) + "x" : "-") << std::setw(9)
              << (alg2_us ? fmt(vs2, 2) + "x" : "-") << "  " << r.detail << (worst <= 1.0 ? "" : "  [OUT OF BOUND]")
              << "\n";
    j.begin_object();
    j.field("algorithm", r.name).field("plan", r.detail).field("median_us", r.us).field("gb_per_s", gbs);
    j.field("gflop_per_s", gflops).field("max_err_reference", r.vs_ref.max_abs).field("max_err_eigen", r.vs_eigen.max_abs);
    if (r.have_cusparse) j.field("max_err_cusparse", r.vs_cusparse.max_abs);
    j.field("worst_error_over_bound", worst).field("within_bound", worst <= 1.0);
    if (alg1_us) j.field("speedup_vs_alg1", vs1);
    if (alg2_us) j.field("speedup_vs_alg2", vs2);
    j.end_object();
  }
  j.end_array();
  // stencil does not read col_idx: its GB/s above count the CSR minimum, more than it moves.
  const double own = stencil_bytes<V, I>(a.rows(), a.cols(), a.nnz(), beta != V(0));
  for (const auto& r : rows)
    if (r.detail.rfind("stencil", 0) == 0 && r.us > 0)
      std::cout << "note       " << r.name << " runs stencil, which reads no col_idx: it moves " << fmt(own / 1e6, 3)
                << " MB per call, " << fmt(own / (r.us * 1e3), 0) << " GB/s of its own bytes\n";
  j.field("stencil_bytes", own);
  j.field("within_bound", all_ok);
  j.end_object();
  if (!opt.json.empty()) j.commit(opt.json);
  if (opt.check) {
    std::cout << "\ncheck      " << (all_ok ? "every result within its derived per-row bound [ok]"
                                            : "a result is OUT of its derived bound [FAILED]")
              << "\n";
    return all_ok ? 0 : 1;
  }
  return 0;
}

}  // namespace

int run_command(int argc, char** argv) {
  gpukit::cli::args args(argc, argv, 2, {"algorithm", "repeat", "precision", "device", "json"}, {"check"});
  if (args.positional().size() != 1) throw gpukit::cli::usage_error("run needs exactly one FILE.h5|FILE.mtx");
  options opt;
  opt.path = args.positional()[0];
  opt.algorithm = args.get("algorithm", "automatic");
  opt.check = args.flag("check");
  const std::int64_t repeat = args.get_int("repeat", 50);
  if (repeat < 1 || repeat > 100000) throw gpukit::cli::usage_error("--repeat must be in 1..100000");
  opt.repeat = static_cast<int>(repeat);
  opt.precision = args.get("precision", "float");
  if (opt.precision != "float" && opt.precision != "double")
    throw gpukit::cli::usage_error("--precision must be float or double, not '" + opt.precision + "'");
  if (opt.algorithm != "all") {
    try {
      sparse::parse_spmv_algorithm(opt.algorithm);
    } catch (const std::invalid_argument& e) {
      throw gpukit::cli::usage_error(e.what());
    }
  }
  reduce::device_choice choice;
  try {
    choice = reduce::parse_device_choice(args.get("device", "auto"));
  } catch (const std::invalid_argument& e) {
    throw gpukit::cli::usage_error(e.what());
  }
  opt.json = args.get("json", "");
  sparse::format_of(opt.path);  // a bad extension is an error before any device work
  { std::ifstream probe(opt.path); if (!probe) throw std::runtime_error(opt.path + ": cannot open file"); }
  opt.backend = gpukit::select_backend_announced("spmv", choice);
  return opt.precision == "float" ? run_typed<float>(opt) : run_typed<double>(opt);
}

}  // namespace spmv_app
