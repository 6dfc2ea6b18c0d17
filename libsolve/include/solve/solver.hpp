// Krylov solvers on the GPU: a solver object built once for an operator (workspace, Jacobi diagonal,
// scalars on the device) and applied to many right-hand sides, stream-ordered. No CUDA syntax.
//
// What one iteration costs (n rows; "pass" = one read or write of an n-vector; SpMV = one operator apply):
//   cg       SpMV + 2 kernels: p.q, q.r, q.q in one pass (3 passes: alpha and beta both known before r
//            changes); r -= a q, x += a p, p = r + b p with r.r in one pass (7). 12 with the SpMV's 2.
//   pcg      as cg with z = D^-1 r recomputed where it is used (D^-1 read in both passes): 14
//   bicgstab 2 SpMV + 5 kernels: p update (4), r_hat.v (2), s = r - a v (3), t.s and t.t in one pass (2),
//            x, r update with r.r and r_hat.r fused (7)
//   pipecg   SpMV + 1 kernel: the six vector updates with r.r and w.r fused (13 passes); every
//            options::residual_check_every iterations a gap check (SpMV + 1 kernel); a refresh or restart
//            (krylov_method::pipecg) adds 2 to 4 SpMV + 2 kernels, enqueued by the host at the status
//            check after the device raised it (the iterations in between are no-ops, launched again)
// Every scalar (alpha, beta, rho, omega, residual norms) lives in device memory and is computed by the last
// block of the kernel whose reduction produces it; nothing reaches the host inside the loop except the
// status word, once every options::check_every iterations.
//
// Accuracy: dots accumulate in double (float solves too: products of floats are exact in double), per
// thread in index order, then a block tree (reduce::block::block_reduce), then the per-block partials in block
// order: error <= gamma_double(k) sum |x_i y_i| with k = ceil(n / threads) + log2(block) + ceil(grid / block)
// + log2(block). With options::reproducible the dots are the exact sums of the products rounded to Value,
// rounded once (reduce::reproducible_sum's bits): error <= u_Value (sum |x_i y_i| + |dot|), bitwise
// independent of the launch shape.
//
// Over an operator whose rows span several ranks (linear_operator::spans_ranks(), e.g.
// solve::distributed::device_operator) each pass's sums are summed over the ranks by the operator before
// its scalar update (a one-thread kernel): same methods, results on every rank; options::graph is refused.
//
// Determinism: the default mode is bitwise deterministic run to run on one GPU model for a fixed launch shape
// (fixed grid, fixed combination order, no atomics on values). The reproducible mode is bitwise independent of
// the launch shape and the GPU, given a deterministic operator (every sparse::spmv_algorithm is, per plan).
#pragma once
#include <cstdint>
#include <memory>

#include "gpukit/device_buffer.hpp"
#include "solve/linear_operator.hpp"
#include "solve/types.hpp"

namespace solve {

/// A Krylov solver for one operator and one set of options. Construction checks the operator (square,
/// not empty; for pcg, a diagonal without zeros or NaN/Inf, naming the first bad row) and throws
/// std::invalid_argument otherwise, and allocates everything the solves need; solve() then allocates nothing.
/// The operator must outlive the solver. One solve at a time per solver (the workspace is shared).
///
/// Example:
///   solve::options opt;  opt.method = solve::krylov_method::pcg;  opt.rtol = 1e-10;
///   solve::solver<double> s(a, opt);
///   for (auto& b : rhs) { solve::result r = s.solve(b.data(), x.data(), n, stream); ... }
template <class Value>
class solver {
public:
  solver(const linear_operator<Value>& a, const options& opt);
  solver(solver&&) noexcept;
  solver& operator=(solver&&) noexcept;
  solver(const solver&) = delete;
  solver& operator=(const solver&) = delete;
  ~solver();

  /// Solves A x = b from x0 = 0 on `stream`. d_b, d_x: device memory of n entries; n must equal the operator's
  /// size (std::invalid_argument otherwise, as for NaN or Inf in b, found on the device at the first status
  /// check). Waits for a status copy every check_every iterations (pipecg: synchronizes `stream`) and
  /// synchronizes at the end (to return the result); with options::graph only at the start and the end (the
  /// loop is one graph launch).
  /// Deterministic as described in the header comment.
  result solve(const Value* d_b, Value* d_x, std::int64_t n, stream_t stream = nullptr);
  /// As solve(), starting from the x0 that d_x holds on entry.
  result solve_with_guess(const Value* d_b, Value* d_x, std::int64_t n, stream_t stream = nullptr);
  /// Convenience overloads on device buffers (their sizes are checked).
  result solve(const gpukit::device_buffer<Value>& b, gpukit::device_buffer<Value>& x, stream_t stream = nullptr) {
    check_sizes(b.size(), x.size());
    return solve(b.data(), x.data(), b.size(), stream);
  }

  const options& settings() const noexcept;
  /// Device bytes this solver holds (vectors, partials, history, the reproducible mode's accumulator).
  std::size_t workspace_bytes() const noexcept;

  struct impl;

private:
  void check_sizes(std::int64_t b, std::int64_t x) const;
  std::unique_ptr<impl> impl_;
};

extern template class solver<float>;
extern template class solver<double>;

}  // namespace solve
