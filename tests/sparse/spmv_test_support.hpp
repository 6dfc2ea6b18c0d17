// Shared by the SpMV tests: the test matrices, the oracle (a plain serial loop accumulating in double),
// the per-row error bound with its derivation, and the checkers, which return a verdict instead of
// asserting so that a test can show each of them rejecting a wrong answer.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <boost/mpl/list.hpp>

#include "sparse/csr.hpp"
#include "sparse/spmv.hpp"
#include "spmv_stencil_plan.hpp"   // white-box (libsparse/src/cuda): which matrices stencil takes
#include "spmv_windowed_plan.hpp"  // and windowed
#include "spmv_column_blocks_plan.hpp"  // and column_blocks
#include "gpukit/cuda_launch.hpp"
#include "test_support.hpp"

namespace spmv_test {

/// The value and index types of the SpMV test templates: every pairing of float/double with int32/int64.
template <class V, class I>
struct combo {
  using value = V;
  using index = I;
};
using combos = boost::mpl::list<combo<float, std::int32_t>, combo<double, std::int64_t>, combo<float, std::int64_t>,
                                combo<double, std::int32_t>>;

using base_csr = sparse::host_csr<double, std::int64_t>;

struct named_matrix {
  std::string name;
  base_csr a;
};

/// A matrix with the given row lengths: row i gets lengths[i] distinct sorted columns (evenly spaced with
/// a random offset inside each stride), values uniform in [-1, 1).
base_csr from_lengths(std::int64_t cols, const std::vector<std::int64_t>& lengths, std::uint64_t stream);

/// Row i holds columns i + o for each offset o that lands in [0, cols): a banded matrix whose edge rows
/// lose entries (a few column-offset patterns, so the stencil algorithm applies), values in [-1, 1).
base_csr banded(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& offsets, std::uint64_t stream);

/// The bundled real matrices, each generated class at small size, and the hostile shapes (built once).
const std::vector<named_matrix>& matrices();
/// The matrix of that name among matrices(); fails the test case when there is none.
const named_matrix& matrix(const std::string& name);

/// The longest row of a host matrix.
template <class V, class I>
std::int64_t longest_row(const sparse::host_csr<V, I>& a) {
  std::int64_t longest = 0;
  for (std::int64_t i = 0; i < a.rows(); ++i) longest = std::max<std::int64_t>(longest, a.row_ptr()[i + 1] - a.row_ptr()[i]);
  return longest;
}

/// The stencil table of a host matrix, col_idx fetched in pieces of `chunk` entries.
template <class V, class I>
sparse::detail::stencil_table host_stencil_table(const sparse::host_csr<V, I>& a, std::int64_t chunk = std::int64_t{1} << 20) {
  const I* cols = a.col_idx().data();
  return sparse::detail::build_stencil_table<I>(
      a.rows(), a.row_ptr().data(),
      [cols](std::int64_t first, std::int64_t count, I* dst) {
        // An empty matrix's col_idx().data() may be null: memcpy from null is undefined even for 0 bytes.
        if (count > 0) std::memcpy(dst, cols + first, static_cast<std::size_t>(count) * sizeof(I));
      },
      chunk);
}

/// Whether the windowed algorithm takes the matrix: columns that fit 22 bits, rows that fit 64 slots.
template <class V, class I>
bool windowed_applies(const sparse::host_csr<V, I>& a) {
  namespace d = sparse::detail;
  return a.cols() <= d::windowed_max_cols &&
         longest_row(a) <= std::int64_t{d::windowed_slot_entries} * d::windowed_max_row_slots;
}

/// Whether column_blocks takes the matrix on this device (one range of columns per SM): ranges of at most
/// 65,536 columns whose x fits a block's shared memory, at most 1 GiB of row starts and partials.
template <class V, class I>
bool column_blocks_applies(const sparse::host_csr<V, I>& a) {
  const int blocks = gpukit::sm_count();
  const std::int64_t width = (a.cols() + blocks - 1) / blocks;
  return width <= sparse::detail::column_blocks_max_width &&
         width * static_cast<std::int64_t>(sizeof(V)) <= gpukit::shared_bytes_per_block_optin() &&
         static_cast<double>(blocks) * static_cast<double>(a.rows() + 1) * (4.0 + sizeof(V)) <=
             sparse::detail::column_blocks_max_workspace_bytes;
}

/// Whether `alg` applies to `a` (stencil, windowed and column_blocks refuse some matrices; every other
/// algorithm takes all). column_blocks asks the device (GPU cases only).
template <class V, class I>
bool applies(sparse::spmv_algorithm alg, const sparse::host_csr<V, I>& a) {
  if (alg == sparse::spmv_algorithm::stencil) return host_stencil_table(a).usable();
  if (alg == sparse::spmv_algorithm::windowed) return windowed_applies(a);
  if (alg == sparse::spmv_algorithm::column_blocks) return column_blocks_applies(a);
  return true;
}

struct scenario {
  double alpha, beta;
};
// y = A x; y = -1.5 A x + 0.75 y; alpha = 0 (y = 2 y: A x must not leak in); alpha = beta = 0 (y = 0).
inline const scenario scenarios[] = {{1.0, 0.0}, {-1.5, 0.75}, {0.0, 2.0}, {0.0, 0.0}};

/// The input y of a scenario: with beta == 0 it is poison (NaN bytes), which a path that reads it would
/// carry into its result.
template <class V>
std::vector<V> input_y(std::int64_t rows, double beta, std::uint64_t stream) {
  if (beta == 0) return std::vector<V>(static_cast<std::size_t>(rows), test::poison_value<V>());
  return test::random_vector<V>(rows, V(-1), V(1), stream);
}

/// The oracle every SpMV result is compared with: serial, each row accumulated in double in storage
/// order, y_i = alpha * acc + beta * y_i evaluated in double and rounded once to V; beta == 0 never reads
/// y. Written here, apart from the library, so that no path is compared with itself.
template <class V, class I>
std::vector<V> plain_loop(const sparse::host_csr<V, I>& a, V alpha, const std::vector<V>& x, V beta,
                          const std::vector<V>& y0) {
  std::vector<V> y(static_cast<std::size_t>(a.rows()));
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double acc = 0;
    for (auto p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p)
      acc += static_cast<double>(a.values()[p]) * static_cast<double>(x[static_cast<std::size_t>(a.col_idx()[p])]);
    const double scaled = static_cast<double>(alpha) * acc;
    y[static_cast<std::size_t>(i)] = static_cast<V>(
        beta == V(0) ? scaled : scaled + static_cast<double>(beta) * static_cast<double>(y0[static_cast<std::size_t>(i)]));
  }
  return y;
}

/// Where a result accumulates its rows: in the value type V (every GPU kernel, cuSPARSE, Eigen), or in
/// double and then rounded once to V (the oracle, the library's CPU path).
enum class accumulation { value, wide };

// The bound of |y_i(first) - y_i(second)| for row i of length k. Higham, Accuracy and Stability of
// Numerical Algorithms (2nd ed.), 3.1: an expression in which no term passes through more than n
// roundings of unit roundoff u has error <= gamma_n = n u / (1 - n u) times the sum of the magnitudes of
// its terms. Here the terms are alpha a_ij x_j and beta y_i, so with
//   S_i = |alpha| sum_j |a_ij| |x_j| + |beta| |y_i|   (the beta term only when beta != 0; y the input y)
// a product a_ij x_j passes through 1 rounding, at most k - 1 additions whatever the order of the sum
// (one thread in storage order, a warp or block tree, chunk partials, slots: any binary tree of k leaves
// is at most k - 1 deep), then alpha * s and + beta y_i: k + 2 roundings. So
//   accumulation::value (precision V):  |y_i - exact| <= gamma_{k+2}(V) S_i
//   accumulation::wide (double, then rounded once to V):  <= gamma_{k+2}(double) S_i + u(V) |y_i|, and
//     |y_i| <= (1 + gamma_{k+2}(double)) S_i; the u(V) term is absent when V is double (no rounding).
// The bound of the difference is the sum of the two. It is evaluated in double: S_i is a sum of k + 2
// non-negative terms (relative error <= gamma_{k+2}(double) < 1e-9 for every k here), and the compared
// difference is one more double rounding, so the bound is raised by a factor 1 + 1e-6 to keep a result
// that meets the exact bound from failing on the bound's own rounding.
template <class V>
double relative_error(accumulation acc, std::int64_t k) {
  const double kk = static_cast<double>(k) + 2.0;
  if (acc == accumulation::value) return test::gamma<V>(kk);
  const double rounding = sizeof(V) < sizeof(double) ? std::numeric_limits<V>::epsilon() / 2.0 : 0.0;
  return test::gamma<double>(kk) + rounding * (1.0 + test::gamma<double>(kk));
}

template <class V, class I>
std::vector<double> row_bounds(const sparse::host_csr<V, I>& a, V alpha, const std::vector<V>& x, V beta,
                               const std::vector<V>& y0, accumulation first, accumulation second) {
  std::vector<double> bound(static_cast<std::size_t>(a.rows()));
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double s = 0;
    for (auto p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p)
      s += std::fabs(static_cast<double>(a.values()[p])) * std::fabs(static_cast<double>(x[static_cast<std::size_t>(a.col_idx()[p])]));
    s *= std::fabs(static_cast<double>(alpha));
    if (beta != V(0)) s += std::fabs(static_cast<double>(beta) * static_cast<double>(y0[static_cast<std::size_t>(i)]));
    const std::int64_t k = a.row_ptr()[i + 1] - a.row_ptr()[i];
    const double rel = relative_error<V>(first, k) + relative_error<V>(second, k);
    bound[static_cast<std::size_t>(i)] = std::isfinite(s) ? rel * s * (1.0 + 1e-6) : std::numeric_limits<double>::infinity();
  }
  return bound;
}

/// What a checker found: how many rows (or elements) are wrong, and the first of them in words.
struct verdict {
  std::int64_t bad = 0;
  std::string first;
  void fail(const std::string& what) {
    if (bad++ == 0) first = what;
  }
};

/// Row by row: |got_i - expected_i| <= bound_i; where the bound is not finite (NaN or Inf among the
/// row's inputs), the same class instead (both NaN, or the same infinity). A length mismatch is a
/// failure of its own (a dropped or extra row).
template <class V>
verdict compare_rows(const std::vector<V>& got, const std::vector<V>& expected, const std::vector<double>& bound,
                     const std::string& expected_name) {
  verdict v;
  if (got.size() != expected.size() || bound.size() != expected.size())
    v.fail(std::to_string(got.size()) + " rows against " + std::to_string(expected.size()) + " of " + expected_name);
  for (std::size_t i = 0; i < std::min(got.size(), expected.size()); ++i) {
    const double g = got[i], e = expected[i];
    const bool ok = std::isfinite(bound[i]) ? std::fabs(g - e) <= bound[i]  // NaN fails here
                                            : (std::isnan(g) && std::isnan(e)) || g == e;
    if (!ok) {
      std::ostringstream o;
      o << "row " << i << ": got " << g << " vs " << expected_name << " " << e << ", bound " << bound[i];
      v.fail(o.str());
    }
  }
  return v;
}

/// NaN exactly in the rows marked: a NaN in x must reach the rows that touch it, and only those.
template <class V>
verdict compare_nan_rows(const std::vector<V>& y, const std::vector<bool>& nan_expected) {
  verdict v;
  if (y.size() != nan_expected.size()) v.fail(std::to_string(y.size()) + " rows, " + std::to_string(nan_expected.size()) + " expected");
  for (std::size_t i = 0; i < std::min(y.size(), nan_expected.size()); ++i)
    if (std::isnan(y[i]) != nan_expected[i])
      v.fail("row " + std::to_string(i) + (nan_expected[i] ? " should be NaN" : " should not be NaN"));
  return v;
}

/// Bitwise equality (algorithms that promise scalar's bits, and run-to-run determinism).
template <class V>
verdict compare_bits(const std::vector<V>& got, const std::vector<V>& expected) {
  verdict v;
  if (got.size() != expected.size()) v.fail(std::to_string(got.size()) + " elements against " + std::to_string(expected.size()));
  for (std::size_t i = 0; i < std::min(got.size(), expected.size()); ++i)
    if (std::memcmp(&got[i], &expected[i], sizeof(V)) != 0) v.fail("element " + std::to_string(i) + " differs bitwise");
  return v;
}

}  // namespace spmv_test
