// spmv_dots (y = A x and x.y, y.w, y.y in the same pass): on every algorithm that applies, y bitwise the
// same plan's spmv(1, x, 0, y), the three sums within their derived bound of plain double loops over that
// y (and the bound shown to reject a dropped term and a zeroed sum), bitwise run to run, which plans
// fuse, the refusals; and the CPU twin (sparse::reference::spmv_dots) against an independent loop. The exact
// summation (dots_summation::exact), GPU and CPU twin: bitwise reduce::reference::reproducible_sum of the
// products rounded to Value, on inputs of one magnitude and on inputs spread over 2^60.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpukit/device_buffer.hpp"
#include "sparse/csr.hpp"
#include "sparse/generate.hpp"
#include "sparse/spmv.hpp"
#include "spmv_test_support.hpp"
#include "test_support.hpp"

using std::int32_t;
using std::int64_t;
using namespace spmv_test;

namespace {

using sums3 = std::array<double, 3>;

/// The oracle: x.y, y.w, y.y over rows [0, rows) as plain double loops in row order, and for each the
/// sum of its terms' magnitudes (what the bound scales).
struct dot_sums {
  sums3 sum{}, magnitude{};
};
template <class V>
dot_sums plain_sums(const std::vector<V>& x, const std::vector<V>& y, const std::vector<V>& w, int64_t rows) {
  dot_sums s;
  for (int64_t i = 0; i < rows; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const sums3 t = {double(x[k]) * double(y[k]), double(y[k]) * double(w[k]), double(y[k]) * double(y[k])};
    for (int j = 0; j < 3; ++j) s.sum[j] += t[j], s.magnitude[j] += std::fabs(t[j]);
  }
  return s;
}

// The bound of |computed - oracle| for a sum of n terms t_i = a_i b_i (a, b Value inputs; the y is the
// one spmv_dots stored, so y's own error does not enter). Higham, Accuracy and Stability (2nd ed.), 4.2:
// a sum evaluated by ANY binary tree whose leaves pass through at most d additions has error <=
// gamma_d sum |t_i|. spmv_dots's tree: a per-thread chain in row order, block_reduce's 8-level tree over
// 256 threads, the last block's chain over the partials and the same tree; every leaf's path is long,
// but an addition only rounds when both sides hold terms, and each such addition on a path at least adds
// one term, so at most n - 1 of them round. With the product's own rounding (none for float: 24 + 24
// significand bits fit double's 53; none either where the GPU fuses it into a multiply-add) that is
// <= n roundings: |gpu - exact| <= gamma_n(double) sum |t_i|. The oracle (sequential) meets the same
// bound, so |gpu - oracle| <= 2 gamma_n(double) sum |t_i|. The sum of magnitudes is itself a double sum of
// n non-negative terms (relative error <= gamma_n < 1e-9 here), so the bound is raised by 1 + 1e-6 to keep
// a result that meets the exact bound from failing on the bound's own rounding. k = n is generous (the
// longest chain is ~n / (grid x 256) + 2 log2(256) + grid / 256), but honest and still tight: for 50k
// rows of |t| ~ 1 it is ~1e-6, where a dropped term moves a sum by ~|t_last| ~ 0.1-1.
sums3 sum_bounds(const dot_sums& oracle, int64_t n) {
  sums3 b{};
  for (int j = 0; j < 3; ++j) b[j] = 2.0 * test::gamma<double>(static_cast<double>(n)) * oracle.magnitude[j] * (1.0 + 1e-6);
  return b;
}

/// Each of the three sums within its bound of `want` (NaN never passes).
verdict compare_sums(const sums3& got, const sums3& want, const sums3& bound) {
  static const char* names[3] = {"x.y", "y.w", "y.y"};
  verdict v;
  for (int j = 0; j < 3; ++j)
    if (!(std::fabs(got[j] - want[j]) <= bound[j])) {
      std::ostringstream o;
      o << names[j] << ": got " << got[j] << " vs " << want[j] << ", bound " << bound[j];
      v.fail(o.str());
    }
  return v;
}

/// How many wrong answers the bound was shown to reject, of how many it could see.
struct rejections {
  int visible = 0;   ///< wrong answers that differ from the oracle by more than twice the bound
  int rejected = 0;  ///< of those, rejected by compare_sums (must be all)
  int checked = 0;   ///< sums checked
};

/// A check that cannot fail is a defect: the oracle with the last row's term dropped, and a zeroed sum,
/// against `got`. A wrong answer farther than 2 bound from the oracle is farther than bound from `got`
/// (which is within bound of the oracle), so each such one must be rejected.
template <class V>
void show_bound_rejects(const sums3& got, const std::vector<V>& x, const std::vector<V>& y, const std::vector<V>& w,
                        int64_t n, rejections& r) {
  const dot_sums oracle = plain_sums(x, y, w, n);
  const sums3 bound = sum_bounds(oracle, n);
  const dot_sums dropped = plain_sums(x, y, w, n - 1);
  for (const sums3& wrong : {dropped.sum, sums3{}}) {
    int visible = 0;
    for (int j = 0; j < 3; ++j) visible += std::fabs(wrong[j] - oracle.sum[j]) > 2.0 * bound[j];
    const int rejected = compare_sums(got, wrong, bound).bad;
    BOOST_TEST(rejected >= visible, rejected << " of " << visible << " wrong sums rejected");
    r.visible += visible, r.rejected += std::min(rejected, visible), r.checked += 3;
  }
}

/// dots_summation::exact's answer, computed here: each product formed in double and rounded to V, the
/// rounded terms summed by reduce::reference::reproducible_sum (an exact sum rounded once; test_reduce
/// checks it against its own twin).
template <class V>
sums3 exact_sums(const std::vector<V>& x, const std::vector<V>& y, const std::vector<V>& w) {
  const std::size_t n = x.size();
  std::vector<V> t(n);
  sums3 s{};
  for (int j = 0; j < 3; ++j) {
    for (std::size_t i = 0; i < n; ++i) {
      const double a = j == 0 ? double(x[i]) : double(y[i]);
      const double b = j == 0 ? double(y[i]) : (j == 1 ? double(w[i]) : double(y[i]));
      t[i] = static_cast<V>(a * b);
    }
    const auto rounded = reduce::reference::reproducible_sum(t.data(), static_cast<int64_t>(n));
    s[static_cast<std::size_t>(j)] = static_cast<double>(rounded);
  }
  return s;
}

/// x with entry i scaled by 2^k, k = (7919 i mod 61) - 30: products spread over ~2^120, so the exact
/// windows re-centre and send terms to the block's limbs (the paths uniform inputs never take).
template <class V>
std::vector<V> spread(std::vector<V> x) {
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::ldexp(x[i], static_cast<int>((i * 7919) % 61) - 30);
  return x;
}

std::vector<double> as_vector(const sums3& s) { return {s.begin(), s.end()}; }

/// One spmv_dots call with y and the sums poisoned first (a forgotten row or sum stays NaN).
template <class V>
struct dots_result {
  std::vector<V> y;
  sums3 sums{};
};
template <class V, class I>
dots_result<V> gpu_dots(const sparse::spmv_plan<V, I>& plan, const gpukit::device_buffer<V>& dx,
                        const gpukit::device_buffer<V>& dw,
                        sparse::dots_summation how = sparse::dots_summation::fast) {
  gpukit::device_buffer<V> dy(plan.matrix().rows);
  gpukit::device_buffer<double> dsums(3);
  dy.fill_bytes(test::poison_byte);
  dsums.fill_bytes(test::poison_byte);
  sparse::spmv_dots(plan, dx.data(), dy.data(), dw.data(), dsums.data(), nullptr, how);
  dots_result<V> r{dy.download(), {}};
  const auto s = dsums.download();
  for (int j = 0; j < 3; ++j) r.sums[j] = s[static_cast<std::size_t>(j)];
  return r;
}

template <class V, class I>
std::vector<V> gpu_spmv(const sparse::spmv_plan<V, I>& plan, const gpukit::device_buffer<V>& dx) {
  gpukit::device_buffer<V> dy(plan.matrix().rows);
  dy.fill_bytes(test::poison_byte);
  sparse::spmv(plan, V(1), dx.data(), V(0), dy.data());
  return dy.download();
}

/// The square test matrices: 3D 7-point and 2D 5-point Laplacians (stencil's domain), banded 7-point
/// patterns with random values (stencil at row counts no grid gives: around a warp, 2^12 + 1), random
/// nonsymmetric ones; 1 row to ~50k (and 343,000: more rows than a wave of 256-thread blocks covers, so
/// the grid-stride loops turn and the last block adds over 256 partials; not in reduced runs).
std::vector<named_matrix> dots_matrices() {
  std::vector<named_matrix> m;
  for (int64_t n : {1, 3, 10, 16, 37})
    m.push_back({"laplace3d_" + std::to_string(n), sparse::generate_laplace_3d<double, int64_t>(n)});
  if (!test::reduced_sizes()) m.push_back({"laplace3d_70", sparse::generate_laplace_3d<double, int64_t>(70)});
  for (int64_t n : {1, 6, 33, 64, 225})
    m.push_back({"laplace2d_" + std::to_string(n), sparse::generate_laplace_2d<double, int64_t>(n)});
  for (int64_t rows : {31, 33, 4097, 50001})
    m.push_back({"banded7_" + std::to_string(rows), banded(rows, rows, {-400, -20, -1, 0, 1, 20, 400}, 60 + rows)});
  for (int64_t rows : {1, 31, 33, 1000, 4097, 50001})
    m.push_back({"random_" + std::to_string(rows),
                 sparse::generate_random_k<double, int64_t>(rows, rows, std::min<int64_t>(5, rows), 70 + rows)});
  if (test::reduced_sizes())
    m.erase(std::remove_if(m.begin(), m.end(), [](const named_matrix& x) { return x.a.rows() > 17000; }), m.end());
  return m;
}

std::vector<sparse::spmv_algorithm> algorithms_under_test() {
  auto v = sparse::concrete_spmv_algorithms();
  v.push_back(sparse::spmv_algorithm::automatic);
  return v;
}

struct tally {
  int fused = 0, unfused = 0;
  rejections r;
};

/// One matrix through one plan: y bitwise spmv's, the sums within bound of the oracle over that y, a
/// second call bitwise the first (the ticket reset, the fixed order), and the bound rejecting wrong sums.
template <class V, class I>
void check_plan(const std::string& name, const sparse::host_csr<V, I>& a, const sparse::spmv_plan<V, I>& plan,
                std::uint64_t stream, tally& t) {
  const std::string what = name + " " + plan.describe();
  BOOST_TEST(plan.dots_fused() == (plan.algorithm() == sparse::spmv_algorithm::stencil), what);
  ++(plan.dots_fused() ? t.fused : t.unfused);
  const int64_t n = a.rows();
  const auto x = test::random_vector<V>(n, V(-1), V(1), stream);
  const auto w = test::random_vector<V>(n, V(-1), V(1), stream + 1);
  const gpukit::device_buffer<V> dx(x), dw(w);
  const auto first = gpu_dots(plan, dx, dw);
  const auto y_bits = compare_bits(first.y, gpu_spmv(plan, dx));
  BOOST_TEST(y_bits.bad == 0, what << ": y differs from spmv(1, x, 0, y) of the same plan: " << y_bits.first);
  const dot_sums oracle = plain_sums(x, first.y, w, n);
  const auto v = compare_sums(first.sums, oracle.sum, sum_bounds(oracle, n));
  BOOST_TEST(v.bad == 0, what << ": " << v.first);
  const auto second = gpu_dots(plan, dx, dw);
  BOOST_TEST(compare_bits(second.y, first.y).bad == 0, what << ": y differs run to run");
  BOOST_TEST(compare_bits(std::vector<double>(second.sums.begin(), second.sums.end()),
                          std::vector<double>(first.sums.begin(), first.sums.end()))
                     .bad == 0,
             what << ": the sums differ run to run");
  show_bound_rejects(first.sums, x, first.y, w, n, t.r);
  // exact: y still spmv's; the sums bitwise those computed here, twice (the accumulator left zero).
  for (bool spread_x : {false, true}) {
    const auto xe = spread_x ? spread(x) : x;
    const gpukit::device_buffer<V> dxe(xe);
    const std::string how = what + (spread_x ? ", exact, spread x" : ", exact");
    for (int call = 0; call < 2; ++call) {
      const auto e = gpu_dots(plan, dxe, dw, sparse::dots_summation::exact);
      BOOST_TEST(compare_bits(e.y, gpu_spmv(plan, dxe)).bad == 0, how << ": y differs from spmv's");
      const auto bits = compare_bits(as_vector(e.sums), as_vector(exact_sums(xe, e.y, w)));
      BOOST_TEST(bits.bad == 0, how << ", call " << call << ": not reproducible_sum's bits: " << bits.first);
    }
  }
}

/// Every matrix through every algorithm that applies to it (and automatic).
template <class V, class I>
tally check_every_plan() {
  tally t;
  std::uint64_t stream = 9000;
  for (const auto& nm : dots_matrices()) {
    const auto a = nm.a.cast<V, I>();
    const sparse::device_csr<V, I> d(a);
    for (auto alg : algorithms_under_test()) {
      if (!applies(alg, a)) continue;
      const sparse::spmv_plan<V, I> plan(d, alg);
      // The 7-point Laplacian is stencil's matrix: the automatic plan fuses the sums.
      if (alg == sparse::spmv_algorithm::automatic && nm.name.rfind("laplace3d", 0) == 0)
        BOOST_TEST(plan.dots_fused(), nm.name << ": automatic took " << plan.describe());
      check_plan(nm.name, a, plan, stream += 2, t);
    }
  }
  return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(spmv_dots)

GPU_TEST_CASE_TEMPLATE(every_algorithm_matches_spmv_and_the_plain_sums, C, combos) {
  const tally t = check_every_plan<typename C::value, typename C::index>();
  // Forced stencil on every Laplacian and banded matrix (14-15), automatic on the Laplacians (10-11).
  BOOST_TEST(t.fused >= 20, "stencil plans run: " << t.fused);
  BOOST_TEST(t.unfused >= 100, "unfused plans run: " << t.unfused);
  // Nearly every wrong answer is visible (a zero last term, or a sum within 2 bounds of 0, hides one).
  BOOST_TEST(t.r.rejected == t.r.visible);
  BOOST_TEST(t.r.visible * 10 >= t.r.checked * 9, t.r.visible << " of " << t.r.checked << " wrong sums visible");
}

// rows == 0: three zeros, nothing else (no pointers needed but d_sums).
GPU_TEST_CASE(empty_matrix_gives_zero_sums) {
  const sparse::device_csr<float, int32_t> d(sparse::host_csr<float, int32_t>{});
  for (auto alg : {sparse::spmv_algorithm::automatic, sparse::spmv_algorithm::scalar, sparse::spmv_algorithm::merge}) {
    const sparse::spmv_plan<float, int32_t> plan(d, alg);
    gpukit::device_buffer<double> dsums(3);
    dsums.fill_bytes(test::poison_byte);
    sparse::spmv_dots<float, int32_t>(plan, nullptr, nullptr, nullptr, dsums.data());
    BOOST_TEST((dsums.download() == std::vector<double>(3, 0.0)), plan.describe());
  }
}

// Refused before any CUDA call: a non-square matrix (x and y would differ in length) and null pointers.
GPU_TEST_CASE(non_square_matrix_and_null_pointers_are_rejected) {
  const sparse::device_csr<double, int32_t> wide(sparse::generate_random_k<double, int32_t>(50, 60, 3, 91));
  const sparse::spmv_plan<double, int32_t> plan(wide);
  gpukit::device_buffer<double> dx(60), dy(50), dw(50), dsums(3);
  BOOST_CHECK_THROW(sparse::spmv_dots(plan, dx.data(), dy.data(), dw.data(), dsums.data()), std::invalid_argument);
  const sparse::device_csr<double, int32_t> tall(sparse::generate_random_k<double, int32_t>(60, 50, 3, 92));
  BOOST_CHECK_THROW(sparse::spmv_dots(sparse::spmv_plan<double, int32_t>(tall), dx.data(), dx.data(), dx.data(),
                                      dsums.data()),
                    std::invalid_argument);
  const sparse::device_csr<double, int32_t> square(sparse::generate_laplace_2d<double, int32_t>(7));  // 49 rows
  const sparse::spmv_plan<double, int32_t> sq(square);
  BOOST_CHECK_THROW(sparse::spmv_dots(sq, dx.data(), dy.data(), dw.data(), nullptr), std::invalid_argument);
  const auto dots = [](auto&&... args) { sparse::spmv_dots<double, int32_t>(args...); };
  for (auto how : {sparse::dots_summation::fast, sparse::dots_summation::exact}) {
    BOOST_CHECK_THROW(dots(sq, nullptr, dy.data(), dw.data(), dsums.data(), nullptr, how), std::invalid_argument);
    BOOST_CHECK_THROW(dots(sq, dx.data(), nullptr, dw.data(), dsums.data(), nullptr, how), std::invalid_argument);
    BOOST_CHECK_THROW(dots(sq, dx.data(), dy.data(), nullptr, dsums.data(), nullptr, how), std::invalid_argument);
  }
  // Adding exact sums would round them twice: refused.
  BOOST_CHECK_THROW(dots(sq, dx.data(), dy.data(), dw.data(), dsums.data(), nullptr, sparse::dots_summation::exact,
                         sparse::dots_store::accumulate),
                    std::invalid_argument);
}

namespace {

/// Rows [lo, hi) of a square matrix with the columns of a distributed rank: numbered from the lowest column
/// they read (c - lo + before), so the matrix is (hi - lo) x (before + rows + after) around an x_halo.
template <class V, class I>
sparse::host_csr<V, I> rows_around_halo(const sparse::host_csr<V, I>& g, int64_t lo, int64_t hi, sparse::x_halo& halo) {
  int64_t cmin = lo, cmax = hi - 1;
  for (auto e = g.row_ptr()[static_cast<std::size_t>(lo)]; e < g.row_ptr()[static_cast<std::size_t>(hi)]; ++e) {
    cmin = std::min<int64_t>(cmin, g.col_idx()[static_cast<std::size_t>(e)]);
    cmax = std::max<int64_t>(cmax, g.col_idx()[static_cast<std::size_t>(e)]);
  }
  halo = {lo - cmin, cmax - hi + 1};
  std::vector<I> rp{0}, ci;
  std::vector<V> v;
  for (int64_t i = lo; i < hi; ++i) {
    for (auto e = g.row_ptr()[static_cast<std::size_t>(i)]; e < g.row_ptr()[static_cast<std::size_t>(i) + 1]; ++e) {
      ci.push_back(static_cast<I>(g.col_idx()[static_cast<std::size_t>(e)] - cmin));
      v.push_back(g.values()[static_cast<std::size_t>(e)]);
    }
    rp.push_back(static_cast<I>(ci.size()));
  }
  return sparse::host_csr<V, I>(hi - lo, cmax - cmin + 1, std::move(rp), std::move(ci), std::move(v));
}

}  // namespace

// A plan with an x_halo (a distributed rank's rows, its ghosts stored around its own entries of x): y
// bitwise a plain plan's of the same rectangular matrix with x from the room's start, for every algorithm
// that applies; spmv_dots' x.y pairing y_i with the row's own x_i (the bound rejects the pairing from the
// room's start), and dots_store::accumulate adding to the sums (twice the sums, bitwise: doubling is exact).
GPU_TEST_CASE_TEMPLATE(halo_plans_read_around_the_rows_own_entries, C, combos) {
  using V = typename C::value;
  using I = typename C::index;
  int stencils = 0, plans = 0;
  std::uint64_t stream = 9700;
  const std::vector<named_matrix> globals = {
      {"laplace3d_21", sparse::generate_laplace_3d<double, int64_t>(21)},
      {"banded7_5003", banded(5003, 5003, {-400, -20, -1, 0, 1, 20, 400}, 77)}};
  for (const auto& nm : globals) {
    const auto g = nm.a.cast<V, I>();
    const int64_t n = g.rows();
    for (const auto& [lo, hi] : {std::pair<int64_t, int64_t>{0, n / 3}, {n / 3, n / 3 + 997}, {n - 1500, n}}) {
      sparse::x_halo halo;
      const auto m = rows_around_halo(g, lo, hi, halo);
      const sparse::device_csr<V, I> d(m);
      const int64_t rows = m.rows(), width = m.cols();
      const auto x = test::random_vector<V>(width, V(-1), V(1), stream += 3);
      const auto w = test::random_vector<V>(rows, V(-1), V(1), stream + 1);
      const gpukit::device_buffer<V> dx(x), dw(w);
      for (auto alg : algorithms_under_test()) {
        if (!applies(alg, m)) continue;
        const sparse::spmv_plan<V, I> plain(d, alg);
        const sparse::spmv_plan<V, I> around(d, halo, alg);
        const std::string what = nm.name + " rows " + std::to_string(lo) + ".." + std::to_string(hi) + " " +
                                 around.describe() + " (plain: " + plain.describe() + ")";
        ++plans;
        stencils += around.algorithm() == sparse::spmv_algorithm::stencil;
        gpukit::device_buffer<V> dy(rows);
        dy.fill_bytes(test::poison_byte);
        sparse::spmv(around, V(1), dx.data() + halo.before, V(0), dy.data());
        const auto want = gpu_spmv(plain, dx);
        BOOST_TEST(compare_bits(dy.download(), want).bad == 0, what << ": y differs from the plain plan's");
        gpukit::device_buffer<double> dsums(3);
        dsums.fill_bytes(test::poison_byte);
        dy.fill_bytes(test::poison_byte);
        sparse::spmv_dots(around, dx.data() + halo.before, dy.data(), dw.data(), dsums.data());
        const auto y = dy.download();
        BOOST_TEST(compare_bits(y, want).bad == 0, what << ": spmv_dots' y differs from the plain plan's");
        const std::vector<V> own(x.begin() + halo.before, x.begin() + halo.before + rows);
        const dot_sums oracle = plain_sums(own, y, w, rows);
        const sums3 bound = sum_bounds(oracle, rows);
        const auto once = dsums.download();
        const sums3 got{once[0], once[1], once[2]};
        const auto v = compare_sums(got, oracle.sum, bound);
        BOOST_TEST(v.bad == 0, what << ": " << v.first);
        if (halo.before > 0) {  // x.y against x from the room's start: far outside the bound
          const dot_sums shifted = plain_sums(x, y, w, rows);
          BOOST_TEST(!(std::fabs(shifted.sum[0] - got[0]) <= bound[0]), what << ": the bound accepts x from the room's start");
        }
        sparse::spmv_dots(around, dx.data() + halo.before, dy.data(), dw.data(), dsums.data(), nullptr,
                          sparse::dots_summation::fast, sparse::dots_store::accumulate);
        const auto twice = dsums.download();
        for (int j = 0; j < 3; ++j)
          BOOST_TEST(twice[static_cast<std::size_t>(j)] == 2 * once[static_cast<std::size_t>(j)], what << ": sum " << j << " not accumulated");
      }
      // The width must be before + rows + after.
      BOOST_CHECK_THROW((sparse::spmv_plan<V, I>(d, sparse::x_halo{halo.before + 1, halo.after})), std::invalid_argument);
    }
  }
  BOOST_TEST(stencils >= 6, "stencil halo plans run: " << stencils);
  BOOST_TEST(plans >= 40, "halo plans run: " << plans);
}

// The CPU twin: y within the SpMV bound of the plain loop (both accumulate each row in double and round
// once), the sums within the derived bound of the test's own loops over that y, the bound rejecting
// wrong sums, and a non-square matrix refused.
CPU_TEST_CASE_TEMPLATE(reference_matches_an_independent_loop, C, combos) {
  using V = typename C::value;
  using I = typename C::index;
  rejections r;
  std::uint64_t stream = 9500;
  for (const auto& nm : dots_matrices()) {
    const auto a = nm.a.cast<V, I>();
    const int64_t n = a.rows();
    const auto x = test::random_vector<V>(n, V(-1), V(1), ++stream);
    const auto w = test::random_vector<V>(n, V(-1), V(1), ++stream);
    std::vector<V> y(static_cast<std::size_t>(n), test::poison_value<V>());
    sums3 sums{};
    sparse::reference::spmv_dots(a, x.data(), y.data(), w.data(), sums.data());
    const std::vector<V> none(static_cast<std::size_t>(n));
    const auto rows = compare_rows(y, plain_loop(a, V(1), x, V(0), none),
                                   row_bounds(a, V(1), x, V(0), none, accumulation::wide, accumulation::wide), "the plain loop");
    BOOST_TEST(rows.bad == 0, nm.name << ": " << rows.bad << " rows off; first: " << rows.first);
    const dot_sums oracle = plain_sums(x, y, w, n);
    const auto v = compare_sums(sums, oracle.sum, sum_bounds(oracle, n));
    BOOST_TEST(v.bad == 0, nm.name << ": " << v.first);
    show_bound_rejects(sums, x, y, w, n, r);
    for (bool spread_x : {false, true}) {  // exact: bitwise the sums computed here
      const auto xe = spread_x ? spread(x) : x;
      std::vector<V> ye(static_cast<std::size_t>(n), test::poison_value<V>());
      sums3 exact{};
      sparse::reference::spmv_dots(a, xe.data(), ye.data(), w.data(), exact.data(), sparse::dots_summation::exact);
      const auto bits = compare_bits(as_vector(exact), as_vector(exact_sums(xe, ye, w)));
      BOOST_TEST(bits.bad == 0, nm.name << (spread_x ? ", spread x" : "") << ": exact sums: " << bits.first);
      if (spread_x) continue;
      // The bitwise check tells a wrong answer apart: the sums without the last row differ (x uniform in
      // [-1, 1): the last y.y term, nonzero, is about 1/n of a sum of n terms of one magnitude, far above
      // one ulp of Value).
      const auto m = static_cast<std::ptrdiff_t>(n - 1);
      const auto head = [m](const std::vector<V>& all) { return std::vector<V>(all.begin(), all.begin() + m); };
      const auto dropped = compare_bits(as_vector(exact), as_vector(exact_sums(head(xe), head(ye), head(w))));
      BOOST_TEST(dropped.bad > 0, nm.name << ": the sums without the last row went unseen");
    }
  }
  BOOST_TEST(r.rejected == r.visible);
  BOOST_TEST(r.visible * 10 >= r.checked * 9, r.visible << " of " << r.checked << " wrong sums visible");
  const auto wide = sparse::generate_random_k<V, I>(5, 6, 2, 93);
  std::vector<V> x(6, V(1)), y(5), w(6, V(1));
  double sums[3];
  BOOST_CHECK_THROW(sparse::reference::spmv_dots(wide, x.data(), y.data(), w.data(), sums), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
