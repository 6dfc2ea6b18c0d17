// SpMV y = alpha * A * x + beta * y on the GPU (named algorithms, a reusable plan), its CPU twin, and a
// thin cuSPARSE wrapper used as the peer in tests and benchmarks. No CUDA syntax: a plain C++ program
// can include this header and link sparse::sparse.
//
// Conventions for every entry point:
//  * Value is float or double, Index std::int32_t or std::int64_t (the same index type for row_ptr and
//    col_idx, as in csr_view). Counts are 64-bit.
//  * beta == 0 means y is only written, never read (it may hold NaN poison or be uninitialised).
//  * Determinism: every algorithm sums each row in a fixed order that depends only on the matrix
//    structure and the plan (never on timing; merge's arrival counter only decides which block performs
//    the fixed-order sum of a split row's parts), so two calls with the same plan and inputs give
//    bitwise the same y on one GPU model. Different algorithms round differently (different orders).
//  * Error bound (any algorithm): |y_i - exact| <= gamma_{k_i+2}(Value) * S_i, with k_i the row length,
//    S_i = |alpha| sum_j |a_ij| |x_j| + |beta| |y_i| and gamma_k = k u / (1 - k u), u = eps(Value)/2: a
//    k-term dot product summed in any order (sequential, warp tree, block tree, split row) has error
//    <= gamma_k sum |a_ij x_j| (Higham, Accuracy and Stability, 3.1), and alpha * s + beta * y adds at
//    most two more roundings. A NaN in x or A reaches exactly the rows that touch it.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reduce/device.hpp"
#include "reduce/reduce.hpp"
#include "gpukit/device_buffer.hpp"
#include "sparse/csr.hpp"
#include "sparse/csr_view.hpp"
#include "sparse/reference.hpp"

namespace sparse {

using reduce::stream_t;

/// The GPU SpMV algorithms. `automatic` asks choose_algorithm() (at plan time, once), then takes
/// `stencil` instead of `scalar` where the matrix qualifies for it, `column_blocks` instead of `vector`
/// or `block_per_row` where column_blocks_pays(), else `windowed` where windowed_pays(), and `adaptive` instead of `scalar` where x is larger than
/// a third of L2 and a sample of the columns lies mostly far from the diagonal (scattered_columns_take_adaptive()).
/// An automatic stencil plan of a launch-bound matrix (at most 16,384 rows and 2^18 entries) runs spmv()
/// through scalar's kernel (the same bits, one table staging fewer) and spmv_dots() through the stencil
/// kernel, which fuses the sums; describe() then says "spmv through scalar's kernel".
/// An automatic `adaptive` plan of at least 2^22 entries whose x is larger than half the L2 but fits in it
/// (10M float columns on an H100 or H200) keeps a copy of the matrix cut into two column panels and runs
/// one adaptive pass per panel, the second adding to y: each pass gathers from half of x, which L2 then
/// keeps (src/cuda/spmv_choice.cpp, automatic_column_panels; describe() says "2 column panels"). A row's
/// sum is then its two panels' partial sums added, deterministic but in another order than scalar's.
///
/// `stencil` is the one algorithm that does not read col_idx: for a matrix whose rows repeat at most 256
/// column-offset patterns (structured-grid stencils; rows of at most 32 entries; patterns + offsets
/// + 1 <= 1024, the table a block keeps in shared memory), the plan stores one byte per row naming the
/// row's pattern, and a thread per row reads row_ptr, that byte and the values (4 + 1 + 4k bytes per float
/// row instead of scalar's 4 + 8k). Where rows hold at most 8 entries the byte and the row's start (its
/// offset from a base per 32 rows) share 2 bytes and row_ptr is not read: 2 + 4k bytes a row. Its sums are
/// bitwise those of `scalar` (same order, same arithmetic). Asking for it on a matrix that does not
/// qualify throws std::invalid_argument naming the reason.
///
/// `windowed` is the other algorithm with its own format, for rows of random columns whose x sits in L2
/// (random16 and random1000 on an H200, where every CSR kernel is bound by one L2 sector per gather).
/// The plan copies the matrix into warp-sized ranges of rows whose entries are ordered by 16 KB windows
/// of x, so the warps of an SM gather from the same few windows and L1 serves the repeats. A row of L
/// entries is summed in ceil(L / 32) slots of interleaved entries, each in column order, then the slots
/// in order: a fixed order, and for rows of at most 32 entries exactly scalar's (bitwise `scalar`'s
/// result). The copy costs 8 bytes per float entry (the column and the slot packed in 32 bits, the
/// value) plus a few per cent of padding, built on the host at plan time. It needs at most 2^22 columns
/// and rows of at most 2,048 entries (std::invalid_argument otherwise).
///
/// `column_blocks` is for few long rows over a large x (random1000: 20,000 rows of 1,000 random columns
/// out of 2M), where summing row by row is bound by the L2's rate of random gathers. The plan cuts the
/// columns into one range per SM and copies the matrix range by range (each range a CSR of all the rows:
/// 32-bit row starts, 16-bit column offsets, the values); a block per range copies its slice of x to
/// shared memory and sums each row's entries of the range from there into a partial, and a second kernel
/// adds each row's partials in range order (a fixed order, not scalar's). Automatic takes it in place of
/// `vector` or `block_per_row` where column_blocks_pays(). It needs ranges of at most 65,536 columns whose
/// slice of x fits a block's shared memory (float: about 7.6M columns on 132 SMs) and at most 1 GiB of row
/// starts and partials (std::invalid_argument otherwise).
enum class spmv_algorithm {
  automatic,
  scalar,
  shared_cached,
  warp_per_row,
  vector,
  adaptive,
  block_per_row,
  merge,
  warp_stream,
  stencil,
  windowed,
  column_blocks
};

/// "automatic", "scalar", "shared_cached", "warp_per_row", "vector", "adaptive", "block_per_row", "merge",
/// "warp_stream", "stencil", "windowed", "column_blocks".
const char* to_string(spmv_algorithm a);
/// Inverse of to_string ("auto" is accepted for automatic); std::invalid_argument listing the names otherwise.
spmv_algorithm parse_spmv_algorithm(std::string_view name);
/// Every concrete algorithm (all but automatic), in enum order: what tests and benchmarks iterate over
/// (`stencil`, `windowed` and `column_blocks` only apply to some matrices: their plans throw
/// std::invalid_argument on the others).
std::vector<spmv_algorithm> concrete_spmv_algorithms();

/// Row-length statistics of a matrix, computed once on the host (O(rows)) at plan time.
struct row_stats {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  std::int64_t min_length = 0;
  std::int64_t max_length = 0;
  double mean_length = 0;       ///< nnz / rows (0 for no rows)
  double stddev_length = 0;     ///< population standard deviation of the row lengths
  std::int64_t empty_rows = 0;
  std::int64_t rows_over_32 = 0;    ///< rows longer than a warp
  std::int64_t rows_over_4096 = 0;  ///< rows that want a whole block or more
  std::int64_t nnz_in_rows_over_32 = 0;  ///< entries held by rows longer than a warp
};

/// Rows of at most this many entries take the stencil kernel's unrolled form, which keeps each row's start
/// packed beside its pattern byte: 2 bytes a row and an 8-byte base per 32 rows, where the loop form
/// (rows of more entries) reads the pattern byte and row_ptr[row] (1 + sizeof(Index) bytes).
inline constexpr std::int64_t stencil_packed_max_row = 8;

/// The matrix bytes one stencil SpMV reads (no col_idx): the values, and per row its pattern byte and
/// row_ptr[row], or its packed start where no row holds more than stencil_packed_max_row entries.
/// (The pattern table, at most 4 KB per block, comes from L2.)
template <class Value, class Index>
double stencil_matrix_bytes(std::int64_t rows, std::int64_t nnz, std::int64_t longest_row) {
  const double starts = longest_row <= stencil_packed_max_row
                            ? 2.0 * static_cast<double>(rows) + 8.0 * static_cast<double>((rows + 31) / 32)
                            : static_cast<double>(rows) * (sizeof(Index) + 1);
  return static_cast<double>(nnz) * sizeof(Value) + starts;
}

/// Statistics of the row lengths given by `row_ptr[0..rows]` (host memory).
template <class Index>
row_stats compute_row_stats(std::int64_t rows, std::int64_t cols, const Index* row_ptr);

/// The heuristic behind spmv_algorithm::automatic: every threshold of the CSR choice lives here (see the
/// comment above its definition in src/cuda/spmv_choice.cpp for the variants and where each wins).
spmv_algorithm choose_algorithm(const row_stats& s);
/// Lanes per row (2, 4, 8, 16 or 32) of the `vector` algorithm for these statistics.
int choose_vector_width(const row_stats& s);
/// Whether `automatic` replaces a `vector` or `block_per_row` choice by `windowed` for a matrix with these statistics,
/// values of `value_bytes` bytes, on a GPU with `sm_count` SMs (the rule is at its definition).
bool windowed_pays(const row_stats& s, std::size_t value_bytes, int sm_count);
/// Whether `automatic` replaces a `vector` or `block_per_row` choice by `column_blocks` for a matrix with these
/// statistics, values of `value_bytes` bytes, on a GPU with `sm_count` SMs (the rule is at its definition).
bool column_blocks_pays(const row_stats& s, std::size_t value_bytes, int sm_count);
/// Whether `automatic` samples the columns of a matrix whose CSR choice is `csr_choice` (and which stencil
/// refused) to tell scattered columns from local ones, and whether the fraction `far` of sampled entries
/// farther than far_column_distance columns from the row's diagonal position makes it take `adaptive`.
bool samples_column_spread(const row_stats& s, spmv_algorithm csr_choice, std::size_t value_bytes);
bool scattered_columns_take_adaptive(double far);
/// The distance (in columns) beyond which an entry counts as far from its row's diagonal position.
inline constexpr std::int64_t far_column_distance = std::int64_t{1} << 16;

/// Entries of x around the rows' own that a plan's matrix reads: a matrix of rows x (before + rows + after)
/// whose column c multiplies x[c - before], for a d_x that points at the rows' own entries with `before`
/// readable entries ahead of it and `after` past its `rows`. A distributed rank's matrix numbers its
/// columns so (the ghosts owned by lower ranks before its own entries, those of higher ranks after), and
/// its vectors keep that room: the ghosts are received in place, nothing is copied. spmv_dots's x.y then
/// pairs y_i with the row's own x_i. Default: none (a plain matrix).
struct x_halo {
  std::int64_t before = 0;
  std::int64_t after = 0;
};

namespace detail {
template <class Value, class Index>
struct spmv_plan_state;  // the state of the plan's algorithm (one type per algorithm); defined in src/cuda
}

/// Everything one matrix needs for repeated SpMV: the device view, row statistics, the algorithm
/// chosen once, and (for `adaptive`) the row bins / tile list and the partials workspace of split rows,
/// (for `stencil`) the row patterns, (for `windowed`) its ordered copy of the matrix, and (square
/// matrices) spmv_dots's per-block partials and counter (3 doubles per block, at most 16 blocks per SM).
/// Built once
/// (host-side analysis of row_ptr, and for `stencil` or an automatic plan of short uniform rows of
/// col_idx, for `windowed` of col_idx and the values, plus a few uploads, untimed); spmv() then does no
/// allocation and no analysis. Move-only. The matrix must outlive the plan and stay unchanged (its
/// values as well as its structure: a `windowed` plan multiplies by the values it copied).
///
/// Example:
///   sparse::device_csr<float, std::int32_t> d(host);
///   sparse::spmv_plan<float, std::int32_t> plan(d);              // automatic choice
///   sparse::spmv(plan, 1.0f, d_x, 0.0f, d_y);                    // y = A x
template <class Value, class Index>
class spmv_plan {
public:
  /// Plan for a device matrix (reads its row_ptr back once to analyse it; for `stencil`, and for an
  /// automatic plan whose CSR choice is `scalar` or `vector` on rows of at most 12 entries on average,
  /// also its col_idx, in 1M-entry pieces, stopping at the first piece that rules the stencil out; for
  /// `windowed`, and for an automatic plan where
  /// windowed_pays(), col_idx and the values, whole). `vector_width` (2, 4, 8, 16
  /// or 32) forces the lanes per row of the vector algorithm (tests and benchmarks); 0 lets
  /// choose_vector_width() pick. Other values throw std::invalid_argument.
  explicit spmv_plan(const device_csr<Value, Index>& a, spmv_algorithm algorithm = spmv_algorithm::automatic,
                     int vector_width = 0);
  /// Plan for a view of device memory whose row_ptr is also given in host memory (`host_row_ptr`,
  /// rows + 1 entries): no read-back of row_ptr (col_idx as above). Throws std::invalid_argument if
  /// shapes disagree.
  spmv_plan(const csr_view<Value, Index>& device_view, const Index* host_row_ptr,
            spmv_algorithm algorithm = spmv_algorithm::automatic, int vector_width = 0);
  /// Plan for a matrix whose columns reach around the rows' own entries of x (see x_halo): a.cols() must be
  /// halo.before + a.rows() + halo.after (std::invalid_argument otherwise). spmv() and spmv_dots() then take
  /// d_x at the rows' own entries. Every algorithm applies; `stencil` stores its column offsets relative to
  /// the row's own entry, so they are those of the undistributed matrix.
  spmv_plan(const device_csr<Value, Index>& a, x_halo halo, spmv_algorithm algorithm = spmv_algorithm::automatic);
  spmv_plan(spmv_plan&&) noexcept;
  spmv_plan& operator=(spmv_plan&&) noexcept;
  spmv_plan(const spmv_plan&) = delete;
  spmv_plan& operator=(const spmv_plan&) = delete;
  ~spmv_plan();

  /// The algorithm that runs (never automatic: automatic is resolved at construction).
  spmv_algorithm algorithm() const noexcept { return algorithm_; }
  /// What the caller asked for (automatic or a forced algorithm).
  spmv_algorithm requested() const noexcept { return requested_; }
  /// Lanes per row of the vector algorithm when algorithm() == vector; 0 for the other algorithms.
  int vector_width() const noexcept;
  /// Whether spmv_dots runs as ONE kernel (the `stencil` algorithm, whose kernel takes the sums in its
  /// epilogue); false: spmv() followed by one separate dots pass (every other algorithm).
  bool dots_fused() const noexcept { return algorithm_ == spmv_algorithm::stencil; }
  const row_stats& stats() const noexcept { return stats_; }
  /// The room around x the matrix reads (x_halo; none for a plain matrix).
  const x_halo& halo() const noexcept { return halo_; }
  const csr_view<Value, Index>& matrix() const noexcept { return view_; }
  const detail::spmv_plan_state<Value, Index>& state() const noexcept { return *state_; }
  /// One line, e.g. "vector (16 lanes per row)",
  /// "stencil (9 row patterns, 33 offsets, 8 loads in flight, packed row starts)" or
  /// "adaptive (tiles: 2503 stream [18740 runs], 2252 warp [18016 rows], 122 block, 10 split rows in 50 chunks)".
  std::string describe() const;

private:
  void build(const Index* host_row_ptr, int vector_width);
  bool take_stencil(const Index* host_row_ptr);
  bool take_windowed(const Index* host_row_ptr);
  bool take_column_blocks(const Index* host_row_ptr);
  void take_adaptive_for_scattered_columns(const Index* host_row_ptr);
  bool take_column_panels(const Index* host_row_ptr);
  csr_view<Value, Index> view_{};
  row_stats stats_{};
  spmv_algorithm requested_ = spmv_algorithm::automatic;
  spmv_algorithm algorithm_ = spmv_algorithm::scalar;
  x_halo halo_{};
  std::unique_ptr<detail::spmv_plan_state<Value, Index>> state_;
};

/// y = alpha * A * x + beta * y on the GPU with the plan's algorithm, stream-ordered (no host sync, no
/// allocation). d_x has cols entries (a plan with an x_halo: d_x at the rows' own entries, x_halo's room
/// around them), d_y rows entries (device memory; they must not overlap). merge, adaptive and
/// column_blocks plans keep per-call scratch (split rows' partials, the ranges' partials), so two calls of
/// one plan must not run at the same time (use one stream, or order the streams).
/// Deterministic (run to run on one GPU model); error bound as in the header comment.
///
/// Example:
///   sparse::spmv_plan<double, std::int64_t> plan(d, sparse::spmv_algorithm::adaptive);
///   sparse::spmv(plan, 2.0, d_x, 1.0, d_y, stream);   // y = 2 A x + y
template <class Value, class Index>
void spmv(const spmv_plan<Value, Index>& plan, Value alpha, const Value* d_x, Value beta, Value* d_y,
          stream_t stream = nullptr);

/// How spmv_dots sums its three sets of terms.
enum class dots_summation {
  /// Each product formed in double and summed in double (a per-thread chain, a block tree, the last block
  /// adding the per-block partials in a fixed order): deterministic run to run on one GPU model.
  fast,
  /// Each product formed in double, ROUNDED TO Value, and the rounded terms summed EXACTLY (libreduce's
  /// exact sums, reduce/cuda/exact_reduce.cuh): d_sums[j] is reduce::reproducible_sum of those n rounded
  /// terms (converted to double), the same bits on every GPU, grid and plan algorithm, and those of
  /// reference::spmv_dots(..., exact). libsolve's reproducible mode.
  exact,
};

/// Whether spmv_dots writes its three sums or adds them to what d_sums holds (the sums of a matrix whose rows
/// are split into several plans: the first plan's call writes, the others' add, in stream order; `fast`
/// sums only).
enum class dots_store { overwrite, accumulate };

/// y = A x (alpha 1, beta 0), and in the same pass over the rows three sums of the y it stores:
/// d_sums[0] = x.y, d_sums[1] = y.w, d_sums[2] = y.y (d_sums: 3 doubles, device memory), summed as `how`
/// says (`store`: written, or added to d_sums' values). Square matrices only (x and y both have rows
/// entries, around which a plan with an x_halo reads its room); d_w has rows entries; d_y must not overlap
/// d_x or d_w (d_x == d_w is fine). Stream-ordered, no allocation, no host sync. Like spmv(), two calls of
/// one plan must not run at the same time (the sums' scratch is the plan's).
/// One kernel where plan.dots_fused() (stencil: the sums in its epilogue, no second read of x and y);
/// otherwise spmv() and then one dots pass over x, y, w. Either way y is bitwise spmv(plan, 1, d_x, 0, d_y)'s.
/// Error of each `fast` sum of n = rows terms t_i: |sum - exact| <= gamma_n(double) sum_i |t_i| (one rounding of
/// the product, exact for float values, and at most n - 1 additions in any order; Higham 4.2), with
/// gamma_n = n u / (1 - n u), u = 2^-53. `exact`: the exact sum of the rounded terms, rounded once to Value
/// (so within u(Value) sum |t_i| of the products' sum, plus one rounding). Throws std::invalid_argument,
/// before any CUDA call, for a non-square matrix, a null d_sums, a null d_x, d_y or d_w when rows > 0, or
/// dots_store::accumulate with exact sums. rows == 0: d_sums gets three zeros (cudaMemsetAsync; accumulate:
/// unchanged) and nothing else runs.
///
/// Example (a CG step: q = A p, then p.q, q.r and q.q):
///   sparse::spmv_plan<double, std::int32_t> plan(d);          // once, before the loop
///   sparse::spmv_dots(plan, d_p, d_q, d_r, d_sums, stream);   // d_sums = {p.q, q.r, q.q}
///   sparse::spmv_dots(plan, d_p, d_q, d_r, d_sums, stream, sparse::dots_summation::exact);  // reproducible
template <class Value, class Index>
void spmv_dots(const spmv_plan<Value, Index>& plan, const Value* d_x, Value* d_y, const Value* d_w, double* d_sums,
               stream_t stream = nullptr, dots_summation how = dots_summation::fast,
               dots_store store = dots_store::overwrite);

namespace reference {
/// The CPU twin of sparse::spmv (same arguments, host memory): the plain loop of spmv_reference, each
/// row accumulated in double in column order and rounded once to Value. Deterministic; within the error
/// bound above (tighter: gamma_{k+2}(double) S_i + u(Value) |y_i|). The Eigen backend is spmv_eigen.
///
/// Example:
///   std::vector<float> y(a.rows());
///   sparse::reference::spmv(a, 1.0f, x.data(), 0.0f, y.data());
template <class Value, class Index>
void spmv(const host_csr<Value, Index>& a, Value alpha, const Value* x, Value beta, Value* y) {
  spmv_reference(a.view(), alpha, x, beta, y);
}

/// The CPU twin of sparse::spmv_dots (same arguments, host memory): y from reference::spmv (alpha 1,
/// beta 0), then sums[0] = x.y, sums[1] = y.w, sums[2] = y.y of that y, each product formed in double.
/// fast: added in a plain double loop in row order; deterministic, each sum within gamma_n(double) sum |t_i|
/// of exact (n = rows, as above). exact: each product rounded to Value and the rounded terms summed by
/// reduce::reference::reproducible_sum: bitwise sparse::spmv_dots(..., exact)'s. Throws
/// std::invalid_argument for a non-square matrix.
///
/// Example:
///   double sums[3];
///   sparse::reference::spmv_dots(a, p.data(), q.data(), r.data(), sums);   // q = A p; p.q, q.r, q.q
template <class Value, class Index>
void spmv_dots(const host_csr<Value, Index>& a, const Value* x, Value* y, const Value* w, double* sums,
               dots_summation how = dots_summation::fast) {
  if (a.rows() != a.cols()) throw std::invalid_argument("reference::spmv_dots: square matrices only");
  spmv(a, Value(1), x, Value(0), y);
  const std::int64_t n = a.rows();
  if (how == dots_summation::exact) {
    std::vector<Value> t(static_cast<std::size_t>(n));
    const auto sum = [&](auto term) {
      for (std::int64_t i = 0; i < n; ++i) t[static_cast<std::size_t>(i)] = static_cast<Value>(term(i));
      return static_cast<double>(reduce::reference::reproducible_sum(t.data(), n));
    };
    sums[0] = sum([&](std::int64_t i) { return static_cast<double>(x[i]) * y[i]; });
    sums[1] = sum([&](std::int64_t i) { return static_cast<double>(y[i]) * w[i]; });
    sums[2] = sum([&](std::int64_t i) { return static_cast<double>(y[i]) * y[i]; });
    return;
  }
  double xy = 0, yw = 0, yy = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double xi = x[i], yi = y[i], wi = w[i];
    xy += xi * yi;
    yw += yi * wi;
    yy += yi * yi;
  }
  sums[0] = xy, sums[1] = yw, sums[2] = yy;
}
}  // namespace reference

/// cuSPARSE's CSR SpMV algorithms (CUSPARSE_SPMV_CSR_ALG1: fast, not bitwise reproducible;
/// CUSPARSE_SPMV_CSR_ALG2: deterministic).
enum class cusparse_algorithm { alg1, alg2 };
const char* to_string(cusparse_algorithm a);

/// The peer: cusparseSpMV on a device CSR matrix, with descriptors, the external buffer and
/// cusparseSpMV_preprocess done once at construction for the given x and y (so run() times only the
/// product). Errors throw gpukit::cuda_error with the cuSPARSE status name and text.
/// Matrices with rows == 0 or cols == 0 are rejected (std::invalid_argument): cuSPARSE has no use for them.
///
/// Example:
///   sparse::cusparse_spmv<float, std::int32_t> peer(d.view(), sparse::cusparse_algorithm::alg1, d_x, d_y);
///   peer.run(1.0f, 0.0f, stream);
template <class Value, class Index>
class cusparse_spmv {
public:
  cusparse_spmv(const csr_view<Value, Index>& device_view, cusparse_algorithm algorithm, const Value* d_x,
                Value* d_y, Value alpha = Value(1), Value beta = Value(0), stream_t stream = nullptr);
  cusparse_spmv(const cusparse_spmv&) = delete;
  cusparse_spmv& operator=(const cusparse_spmv&) = delete;
  ~cusparse_spmv();
  /// y = alpha A x + beta y with the x and y given at construction, on `stream`.
  void run(Value alpha, Value beta, stream_t stream = nullptr);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace sparse
