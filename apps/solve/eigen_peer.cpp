#include "eigen_peer.hpp"

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>

#include <algorithm>
#include <chrono>
#include <functional>

namespace solve_app {
namespace {

using matrix = Eigen::SparseMatrix<float, Eigen::RowMajor, std::int32_t>;
using cg = Eigen::ConjugateGradient<matrix, Eigen::Lower | Eigen::Upper, Eigen::IdentityPreconditioner>;

/// A copy into Eigen's own storage (Map of a host_csr would need non-const pointers).
matrix to_eigen(const sparse::host_csr<float, std::int32_t>& a) {
  std::vector<Eigen::Triplet<float, std::int32_t>> t;
  t.reserve(static_cast<std::size_t>(a.nnz()));
  for (std::int64_t i = 0; i < a.rows(); ++i)
    for (std::int64_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      t.emplace_back(static_cast<std::int32_t>(i), a.col_idx()[k], a.values()[k]);
  matrix m(a.rows(), a.cols());
  m.setFromTriplets(t.begin(), t.end());
  return m;
}

/// Median wall time in ms of `repeats` calls of f after one warm-up.
double median_ms(const std::function<void()>& f, int repeats) {
  f();
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

eigen_cg_timing time_eigen_cg(const sparse::host_csr<float, std::int32_t>& a, const std::vector<float>& b, double rtol,
                              int max_iterations, int timed_iterations, int repeats, int expected_iterations,
                              double budget_s) {
  const matrix m = to_eigen(a);
  const Eigen::Map<const Eigen::VectorXf> rhs(b.data(), static_cast<Eigen::Index>(b.size()));
  eigen_cg_timing t;
  t.threads = Eigen::nbThreads();
  Eigen::VectorXf x(m.rows());
  cg fixed(m);  // tolerance 0: exactly timed_iterations iterations (Eigen stops only on the count then)
  fixed.setTolerance(0.0f);
  fixed.setMaxIterations(timed_iterations);
  t.per_iteration_us = median_ms([&] { x = fixed.solve(rhs); }, repeats) * 1e3 / timed_iterations;
  if (t.per_iteration_us * 1e-6 * expected_iterations > budget_s) return t;
  cg to_tol(m);
  to_tol.setTolerance(static_cast<float>(rtol));
  to_tol.setMaxIterations(max_iterations);
  const auto t0 = std::chrono::steady_clock::now();
  x = to_tol.solve(rhs);
  t.time_to_solution_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  t.solved = true;
  t.iterations = static_cast<int>(to_tol.iterations());
  t.stopped_on_tol = to_tol.info() == Eigen::Success;
  t.x.assign(x.data(), x.data() + x.size());
  return t;
}

}  // namespace solve_app
