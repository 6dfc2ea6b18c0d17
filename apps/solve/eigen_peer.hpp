// Eigen's ConjugateGradient on all CPU threads: the CPU peer of `solve bench` (Eigen stays out of .cu files).
#pragma once
#include <cstdint>
#include <vector>

#include "sparse/csr.hpp"

namespace solve_app {

struct eigen_cg_timing {
  int threads = 0;                 // Eigen::nbThreads() during the solves
  double per_iteration_us = 0;     // a solve of `timed_iterations` (tolerance 0) / timed_iterations, median
  bool solved = false;             // the solve to the tolerance ran (below: its figures)
  double time_to_solution_ms = 0;  // one solve to ||r|| <= rtol ||b|| from x = 0 (after the timed solves)
  int iterations = 0;              // of that solve
  bool stopped_on_tol = false;     // Eigen's info() == Success
  std::vector<float> x;            // its solution
};

/// Eigen::ConjugateGradient<SparseMatrix<float, RowMajor>, Lower | Upper, IdentityPreconditioner> (plain CG,
/// as our cg; with Lower | Upper and row-major storage Eigen runs the SpMV on all OpenMP threads, its
/// vector updates and dots on one), timed with steady_clock. Per iteration: median of `repeats` solves of
/// `timed_iterations` after one warm-up. The solve to the tolerance runs once, and only when
/// expected_iterations x the per-iteration time stays under `budget_s` (a CPU CG of thousands of
/// iterations on 4M rows takes minutes; such rows say "skipped" instead of a number).
eigen_cg_timing time_eigen_cg(const sparse::host_csr<float, std::int32_t>& a, const std::vector<float>& b, double rtol,
                              int max_iterations, int timed_iterations, int repeats, int expected_iterations,
                              double budget_s);

}  // namespace solve_app
