// `solve run FILE`: one solve on the chosen device, its result on stdout, optionally a JSON report, the
// residual history as CSV and its curve as PNG (--plot, through bench/plot.py). Exit 0 converged; 1 not converged or breakdown (the outputs are written first);
// 2 bad input naming the file (nothing written); 3 CUDA error.
#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "app.hpp"
#include "file_guard.hpp"
#include "gpukit/quote.hpp"
#include "gpukit/atomic_file.hpp"
#include "commands.hpp"
#include "plot.hpp"
#include "gpukit/cuda_timer.hpp"
#include "gpukit/device_buffer.hpp"
#include "report.hpp"
#include "solve/solve.hpp"
#include "sparse/io.hpp"
#if defined(GPUKIT_DISTRIBUTED)
#include "dist/communicator.hpp"
#endif

namespace solve_app {

/// The right-hand side: ones, fixed pseudo-random values in [-1, 1) (splitmix-seeded mt19937_64, raw bits
/// mapped by hand, the same on every machine), or numbers read from a file.
template <class V>
std::vector<V> make_rhs(const std::string& spec, std::int64_t rows) {
  std::vector<V> b(static_cast<std::size_t>(rows));
  if (spec == "ones") {
    for (auto& v : b) v = V(1);
    return b;
  }
  if (spec == "random") {
    std::mt19937_64 g(2026);
    for (auto& v : b) v = static_cast<V>(static_cast<double>(g() >> 11) * 0x1.0p-52 - 1.0);
    return b;
  }
  std::ifstream in(spec);
  if (!in) throw gpukit::bad_input(spec + ": cannot open the right-hand side file");
  std::vector<V> values;
  std::string line;
  std::int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      std::size_t used = 0;
      double v = 0;
      try {
        v = std::stod(w, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != w.size())
        throw gpukit::bad_input(spec + ":" + std::to_string(line_no) + ": " + gpukit::quote_token(w) + " is not a number");
      if (!std::isfinite(v) || !std::isfinite(static_cast<V>(v)))
        throw gpukit::bad_input(spec + ":" + std::to_string(line_no) + ": " + gpukit::quote_token(w) +
                                (std::isfinite(v) ? " overflows float" : " is not finite"));
      values.push_back(static_cast<V>(v));
    }
  }
  if (static_cast<std::int64_t>(values.size()) != rows)
    throw gpukit::bad_input(spec + ": size mismatch: the right-hand side has " + std::to_string(values.size()) +
                            " values, the matrix " + std::to_string(rows) + " rows");
  return values;
}

template std::vector<float> make_rhs<float>(const std::string&, std::int64_t);
template std::vector<double> make_rhs<double>(const std::string&, std::int64_t);

namespace {
std::string sci(double v) {
  std::ostringstream o;
  o << std::scientific << std::setprecision(3) << v;
  return o.str();
}
}  // namespace

/// --check: the true relative residual ||b - A x|| / ||b||, recomputed after the solve, must meet the
/// tolerance asked for, max(tol, atol / ||b||); the recurrence's residual, which decides convergence, can
/// sit below it while rounding leaves the true one above (float on ill-conditioned systems).
void check_true_residual(const run_options& opt, const solve::result& r, double b_norm) {
  const double bound = std::max(opt.tol, b_norm > 0 ? opt.atol / b_norm : opt.atol);
  if (!(r.true_relative_residual <= bound))
    throw gpukit::check_failed(opt.matrix + ": --check: true relative residual " + sci(r.true_relative_residual) +
                               " exceeds the tolerance " + sci(bound) + " after " + std::to_string(r.iterations) +
                               " iterations");
}

double per_iteration_us(const solve::result& r) {
  return r.iterations > 0 ? r.iteration_seconds * 1e6 / r.iterations : 0.0;
}

std::string time_line(double seconds, const solve::result& r) {
  std::ostringstream o;
  o << "time       " << std::fixed << std::setprecision(3) << seconds * 1e3 << " ms (iterations "
    << r.iteration_seconds * 1e3 << " ms, " << per_iteration_us(r) << " us each)\n";
  return o.str();
}

void write_outputs(const run_options& opt, const solve::result& r, std::int64_t rows, std::int64_t nnz, double seconds,
                   int ranks) {
  if (!opt.history.empty()) {
    std::ostringstream csv;
    csv << "iteration,residual_norm,relative_residual\n" << std::setprecision(17);
    for (std::size_t k = 0; k < r.history.size(); ++k)
      csv << k << "," << r.history[k] << "," << (r.rhs_norm > 0 ? r.history[k] / r.rhs_norm : 0.0) << "\n";
    gpukit::write_file_atomically(opt.history, csv.str());
  }
  if (!opt.plot.empty()) {
    // The residual curve through bench/plot.py: one series, iteration on x, ||r|| / ||b|| on a log y axis
    // (plot.py switches to log where the values span two decades; non-finite entries are left out).
    nlohmann::json j = gpukit::report::make("solve", "run");
    j["inputs"] = {{"matrix", opt.matrix}, {"method", opt.method}, {"precision", opt.precision}};
    nlohmann::json curve = nlohmann::json::array();
    for (std::size_t k = 0; k < r.history.size(); ++k) {
      const double rel = r.rhs_norm > 0 ? r.history[k] / r.rhs_norm : r.history[k];
      if (std::isfinite(rel))
        curve.push_back({{"series", opt.method}, {"iteration", k}, {"relative_residual_ratio", rel}});
    }
    j["results"] = {{"history", curve}};
    gpukit::plot_report(j, opt.plot, "_ratio");
  }
  if (opt.json.empty()) return;
  nlohmann::json j = gpukit::report::make("solve", "run");
  j["inputs"] = {{"matrix", opt.matrix}, {"rhs", opt.rhs}, {"method", opt.method}, {"precision", opt.precision},
                 {"tol", opt.tol}, {"atol", opt.atol}, {"max_iterations", opt.max_iterations},
                 {"check_every", opt.check_every}, {"reproducible", opt.reproducible}, {"graph", opt.graph},
                 {"device", opt.device}};
  auto finite_or_zero = [](double v) { return std::isfinite(v) ? v : 0.0; };
  nlohmann::json res = {{"rows", rows},
                        {"converged", r.converged},
                        {"reason", solve::to_string(r.reason)},
                        {"iterations", r.iterations},
                        {"replacement_count", r.replacements},
                        {"final_residual_ratio", finite_or_zero(r.rhs_norm > 0 ? r.residual_norm / r.rhs_norm : 0)},
                        {"true_relative_residual_ratio", finite_or_zero(r.true_relative_residual)},
                        {"time_ms", seconds * 1e3},
                        {"iteration_time_ms", r.iteration_seconds * 1e3},
                        {"l2_window_bytes", r.l2_window_bytes},
                        {"per_iteration_us", per_iteration_us(r)},
                        {"summary", r.summary()}};
  if (nnz >= 0) res["nnz"] = nnz;
  if (ranks > 1) res["mpi_rank_count"] = ranks;
  if (r.reason == solve::stop_reason::breakdown || r.reason == solve::stop_reason::non_finite)
    res["breakdown"] = {{"quantity", r.breakdown.quantity},
                        {"iteration_count", r.breakdown.iteration},
                        {"value_ratio", finite_or_zero(r.breakdown.value)}};
  j["results"] = res;
  gpukit::report::write(opt.json, j);
}

namespace {

template <class V>
int run_typed(const run_options& opt) {
  using I = std::int32_t;
  sparse::host_csr<V, I> a;
  std::vector<V> b;
  solve::options so;
  if (opt.graph && opt.method == "pipecg")
    throw gpukit::bad_input("solve run: --graph runs cg, pcg and bicgstab (pipecg's recomputations are decided on "
                            "the host)");
  try {
    a = sparse::read_matrix<V, I>(opt.matrix);
    b = make_rhs<V>(opt.rhs, a.rows());
    so.method = solve::parse_krylov_method(opt.method);
    so.rtol = opt.tol;
    so.atol = opt.atol;
    so.max_iterations = opt.max_iterations;
    so.check_every = opt.check_every;
    so.reproducible = opt.reproducible;
    so.graph = opt.graph;
    solve::reference::check_matrix(a, so.method == solve::krylov_method::pcg);
    for (std::size_t i = 0; i < b.size(); ++i)
      if (!std::isfinite(static_cast<double>(b[i])))
        throw std::invalid_argument("the right-hand side holds NaN or Inf (entry " + std::to_string(i) + ")");
  } catch (const gpukit::bad_input&) {
    throw;
  } catch (const std::exception& e) {
    throw gpukit::bad_input(opt.matrix + ": " + e.what());
  }

  // Bad input is reported above, before the device is chosen, so that its one line is the only one.
  const reduce::backend backend = gpukit::select_backend_announced("solve", opt.device);
  double b_norm = 0;
  for (const V v : b) b_norm += static_cast<double>(v) * v;
  b_norm = std::sqrt(b_norm);

  // A progress line on stderr for long solves (after 2 s), rewritten in place, ended before the result.
  const auto t0 = std::chrono::steady_clock::now();
  bool progress_shown = false;
  so.progress = [&](int it, double rnorm) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < 2.0 || opt.quiet) return;
    std::cerr << "\rsolve: iteration " << it << ", ||r||/||b|| " << sci(b_norm > 0 ? rnorm / b_norm : rnorm)
              << ", " << std::fixed << std::setprecision(1) << s << " s   " << std::flush;
    progress_shown = true;
  };

  std::vector<V> x;
  solve::result r;
  std::string where;
  if (backend == reduce::backend::cpu) {
    where = "cpu (solve::reference)";
    r = solve::reference::solve(a, b, x, so);
  } else {
    where = "cuda: " + reduce::cuda_device_description();
    const sparse::device_csr<V, I> d(a);
    const solve::csr_operator<V, I> op(d);
    solve::solver<V> s(op, so);
    gpukit::device_buffer<V> db(b), dx(a.rows());
    // A stream of its own: the legacy default stream takes no L2 window (solve::options::p_in_l2).
    gpukit::owned_stream stream;
    r = s.solve(db.data(), dx.data(), a.rows(), stream.get());
    x = dx.download();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (progress_shown) std::cerr << "\n";

  std::ostream& out = gpukit::output_stream(opt.quiet);
  out << "matrix     " << opt.matrix << ": " << a.rows() << " x " << a.cols() << ", " << a.nnz() << " entries, "
      << opt.precision << "\n"
      << "rhs        " << opt.rhs << "\n"
      << "device     " << where << "\n"
      << "method     " << opt.method << (opt.reproducible ? " (reproducible)" : "") << (opt.graph ? " (graph)" : "") << ", tol " << sci(opt.tol)
      << ", max " << opt.max_iterations << " iterations\n"
      << "result     " << r.summary() << "\n"
      << time_line(seconds, r);

  write_outputs(opt, r, a.rows(), a.nnz(), seconds, 1);
  if (!r.converged) throw gpukit::check_failed(opt.matrix + ": " + r.summary());
  if (opt.check) check_true_residual(opt, r, b_norm);
  return gpukit::exit_ok;
}

}  // namespace

int run_command(const run_options& opt) {
  const bool rhs_file = opt.rhs != "ones" && opt.rhs != "random";
  gpukit::check_output_paths({opt.matrix, rhs_file ? opt.rhs : std::string()}, {opt.json, opt.history, opt.plot});
#if !defined(GPUKIT_DISTRIBUTED)
  if (opt.plan.only) throw gpukit::bad_input("--plan-only needs a build with GPUKIT_DISTRIBUTED (MPI)");
#else
  if (opt.plan.only) return plan_command(opt);
  // Under mpirun with several ranks: the distributed path (run_distributed.cpp); one rank runs as always.
  if (dist::launched_world_size() > 1) return run_distributed_command(opt);
#endif
  return opt.precision == "float" ? run_typed<float>(opt) : run_typed<double>(opt);
}

}  // namespace solve_app
