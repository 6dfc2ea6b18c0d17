// What a solver multiplies by: any square linear operator y = A x on the device (Ginkgo's LinOp, Eigen's
// matrix-free solvers). Two are provided: a CSR matrix through a sparse::spmv_plan, and a user callback.
// No CUDA syntax.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "reduce/device.hpp"
#include "sparse/csr.hpp"
#include "sparse/spmv.hpp"

namespace solve {

using reduce::stream_t;

/// y = A x for device vectors, stream-ordered (no host synchronization, no allocation: a solver calls it
/// once or twice per iteration). rows() == cols() is checked by the solver.
template <class Value>
class linear_operator {
public:
  virtual ~linear_operator() = default;
  virtual std::int64_t rows() const = 0;
  virtual std::int64_t cols() const = 0;
  /// y = A x; d_x has cols() entries, d_y rows() (device memory, not overlapping), enqueued on `stream`.
  virtual void apply(const Value* d_x, Value* d_y, stream_t stream) const = 0;
  /// Entries around d_x that apply() and apply_with_dots() need and may overwrite (sparse::x_halo: an
  /// operator over ranks receives its ghosts there, so x is not copied). When not empty, every d_x given
  /// to them has that room: the solver allocates its vectors so, and copies a caller's vector (the solution
  /// x) into one of its own before applying the operator to it. Default: none.
  virtual sparse::x_halo input_room() const { return {}; }
  /// Whether diagonal() is available (Jacobi preconditioning needs it).
  virtual bool has_diagonal() const { return false; }
  /// Writes the rows() diagonal entries to d_diag (device memory) on `stream`. The default throws
  /// std::invalid_argument (an operator without a known diagonal cannot be Jacobi-preconditioned).
  virtual void diagonal(Value* d_diag, stream_t stream) const;
  /// Whether apply_with_dots() takes its three sums in the product's own pass (an SpMV epilogue): cg then
  /// runs one pass over p, q and r fewer per iteration. Default false (cg runs its own dots pass). Over
  /// ranks (spans_ranks()) the sums are this rank's, which the solver sums over the ranks, and only `fast`
  /// is asked for (the reproducible mode sums exact states over ranks, not rounded sums).
  virtual bool fuses_dots() const { return false; }
  /// y = A x and, in the same pass, d_sums[0] = x.y, d_sums[1] = y.w, d_sums[2] = y.y (3 doubles, device
  /// memory; each product formed in double), summed as `how` says (sparse::dots_summation: fast, or exact
  /// for the reproducible mode, which needs reduce::reproducible_sum's bits of the products rounded to
  /// Value). Called only when fuses_dots(), which promises both; the default throws std::logic_error.
  virtual void apply_with_dots(const Value* d_x, Value* d_y, const Value* d_w, double* d_sums,
                               sparse::dots_summation how, stream_t stream) const;

  // ---- operators whose rows are spread over several processes (solve::distributed's device_operator) ----
  // The solver then sums its dots over the ranks: each fused pass's last block writes its K local totals
  // to device memory, the operator sums them over the ranks on the stream, and a one-thread kernel runs the
  // step's scalar update. rows() and cols() are then this rank's rows (possibly 0). A local operator (the
  // default: false) never sees these calls, and the solver runs its single-GPU kernels.

  /// True when rows() is this rank's share of a larger operator.
  virtual bool spans_ranks() const { return false; }
  /// Starts the in-place sum over ranks of d_sums[0..count) (device memory, doubles: dot partials), after
  /// the work already on `stream`. The default throws std::logic_error (a local operator has no ranks).
  virtual void start_rank_sum(double* d_sums, int count, stream_t stream) const;
  /// The same for exact accumulator states (reduce::exact_accumulator words, an exact integer sum).
  virtual void start_rank_sum_exact(std::int64_t* d_words, int count, stream_t stream) const;
  /// Work enqueued on `stream` after this call sees the sum started last. Between start and finish the
  /// solver may enqueue apply() (pipecg: the next SpMV while the dots travel); one sum in flight at a time.
  virtual void finish_rank_sum(stream_t stream) const;
  /// The sum over ranks with nothing to overlap (cg, pcg, bicgstab): start and finish in one call. The
  /// default calls the two; an operator may do it in stream order without a side stream.
  virtual void rank_sum(double* d_sums, int count, stream_t stream) const;
  virtual void rank_sum_exact(std::int64_t* d_words, int count, stream_t stream) const;
};

/// A CSR matrix on the device through libsparse: the SpMV plan is built once here (host analysis of the
/// structure, see sparse::spmv_plan) and every apply() is one sparse::spmv (apply_with_dots: one
/// sparse::spmv_dots). The matrix must outlive the
/// operator and stay unchanged. Throws std::invalid_argument when a value is NaN or Inf (counted on the device
/// at construction), so that a solve never starts on such a matrix.
///
/// Example:
///   sparse::device_csr<double, std::int32_t> d(host);
///   solve::csr_operator<double, std::int32_t> a(d);
///   solve::solver<double> cg(a, {});  auto res = cg.solve(d_b, d_x, n);
template <class Value, class Index>
class csr_operator final : public linear_operator<Value> {
public:
  explicit csr_operator(const sparse::device_csr<Value, Index>& a,
                        sparse::spmv_algorithm algorithm = sparse::spmv_algorithm::automatic);
  std::int64_t rows() const override { return plan_.matrix().rows; }
  std::int64_t cols() const override { return plan_.matrix().cols; }
  void apply(const Value* d_x, Value* d_y, stream_t stream) const override;
  bool has_diagonal() const override { return true; }
  /// The sum of the stored entries (i, i) of each row (0 where none is stored).
  void diagonal(Value* d_diag, stream_t stream) const override;
  /// True where the plan's SpMV takes the dots in its epilogue (sparse::spmv_plan::dots_fused: `stencil`).
  bool fuses_dots() const override { return plan_.dots_fused(); }
  /// sparse::spmv_dots.
  void apply_with_dots(const Value* d_x, Value* d_y, const Value* d_w, double* d_sums, sparse::dots_summation how,
                       stream_t stream) const override;
  const sparse::spmv_plan<Value, Index>& plan() const noexcept { return plan_; }
  std::int64_t nnz() const noexcept { return plan_.matrix().nnz; }

private:
  sparse::spmv_plan<Value, Index> plan_;
};

/// A user's y = A x: `apply(d_x, d_y, stream)` must enqueue its work on `stream` (or finish it before
/// returning) and must not keep the pointers. `diagonal`, when given (host memory, rows entries), enables
/// Jacobi preconditioning.
///
/// Example:
///   solve::callback_operator<float> a(n, [&](const float* x, float* y, solve::stream_t s) { my_stencil(x, y, s); });
template <class Value>
class callback_operator final : public linear_operator<Value> {
public:
  using function = std::function<void(const Value* d_x, Value* d_y, stream_t stream)>;
  callback_operator(std::int64_t n, function apply, std::vector<Value> diagonal = {});
  std::int64_t rows() const override { return n_; }
  std::int64_t cols() const override { return n_; }
  void apply(const Value* d_x, Value* d_y, stream_t stream) const override { apply_(d_x, d_y, stream); }
  bool has_diagonal() const override { return !diagonal_.empty(); }
  void diagonal(Value* d_diag, stream_t stream) const override;

private:
  std::int64_t n_;
  function apply_;
  std::vector<Value> diagonal_;
};

}  // namespace solve
