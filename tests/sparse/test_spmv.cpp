// SpMV results. Every GPU algorithm (and the automatic choice) and the CPU path (sparse::reference::spmv)
// against the oracle, a plain serial loop accumulating in double (spmv_test_support.hpp), and the GPU
// ones also against cuSPARSE, on the bundled real matrices, each generated class at small size and the
// hostile shapes; the oracle against Eigen once; NaN propagation; run-to-run determinism; and each
// checker rejecting a wrong answer. Every bound is the derived one of row_bounds (spmv_test_support.hpp).

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpukit/cuda_launch.hpp"
#include "gpukit/device_buffer.hpp"
#include "sparse/csr.hpp"
#include "sparse/generate.hpp"
#include "sparse/reference.hpp"
#include "sparse/spmv.hpp"
#include "spmv_test_support.hpp"
#include "test_support.hpp"

using std::int32_t;
using std::int64_t;
using namespace spmv_test;

namespace {

/// `got` (accumulated as `got_acc` says) against the oracle and, if given, cuSPARSE.
template <class V, class I>
void check_rows(const std::string& what, const sparse::host_csr<V, I>& a, V alpha, const std::vector<V>& x, V beta,
                const std::vector<V>& y0, const std::vector<V>& got, accumulation got_acc,
                const std::vector<V>* cusparse_y = nullptr) {
  const auto oracle = plain_loop(a, alpha, x, beta, y0);
  const auto v = compare_rows(got, oracle, row_bounds(a, alpha, x, beta, y0, got_acc, accumulation::wide), "the plain loop");
  BOOST_TEST(v.bad == 0, what << ": " << v.bad << " rows off the plain loop; first: " << v.first);
  if (!cusparse_y) return;
  const auto p = compare_rows(got, *cusparse_y, row_bounds(a, alpha, x, beta, y0, got_acc, accumulation::value), "cuSPARSE");
  BOOST_TEST(p.bad == 0, what << ": " << p.bad << " rows off cuSPARSE; first: " << p.first);
}

/// One GPU run of `plan` on (x, y0): uploads, poisons y when beta == 0, runs, downloads.
template <class V, class I>
std::vector<V> gpu_run(const sparse::spmv_plan<V, I>& plan, V alpha, const std::vector<V>& x, V beta,
                       const std::vector<V>& y0) {
  gpukit::device_buffer<V> dx(x), dy(static_cast<std::int64_t>(y0.size()));
  if (beta == V(0)) dy.fill_bytes(test::poison_byte);
  else dy.upload(y0);
  sparse::spmv(plan, alpha, dx.data(), beta, dy.data());
  return dy.download();
}

template <class V, class I>
std::optional<std::vector<V>> cusparse_run(const sparse::device_csr<V, I>& d, V alpha, const std::vector<V>& x, V beta,
                                           const std::vector<V>& y0) {
  // cuSPARSE takes no empty shapes (see spmv.hpp); with no entries at all there is nothing to compare
  // beyond what the oracle already checks (y = beta y), and cuSPARSE's handling of null col/value
  // arrays is not documented, so those are skipped too.
  if (d.rows() == 0 || d.cols() == 0 || d.nnz() == 0) return std::nullopt;
  gpukit::device_buffer<V> dx(x), dy(static_cast<std::int64_t>(y0.size()));
  if (beta == V(0)) dy.fill_bytes(test::poison_byte);
  else dy.upload(y0);
  sparse::cusparse_spmv<V, I> peer(d.view(), sparse::cusparse_algorithm::alg1, dx.data(), dy.data(), alpha, beta);
  peer.run(alpha, beta);
  return dy.download();
}

std::vector<sparse::spmv_algorithm> algorithms_under_test() {
  auto v = sparse::concrete_spmv_algorithms();
  v.push_back(sparse::spmv_algorithm::automatic);
  return v;
}

struct check_result {
  std::set<int> widths;  ///< the vector widths the plans chose (every width 2..32 must run)
  int matrices_run = 0;  ///< matrices the algorithm ran on (stencil and windowed apply to some only)
};

/// stencil, and windowed where every row is one slot (<= 32 entries), sum each row exactly as scalar does.
template <class V, class I>
bool promises_scalar_bits(const sparse::spmv_plan<V, I>& plan, const sparse::host_csr<V, I>& a) {
  return plan.algorithm() == sparse::spmv_algorithm::stencil ||
         (plan.algorithm() == sparse::spmv_algorithm::windowed && longest_row(a) <= sparse::detail::windowed_slot_entries);
}

/// One matrix through one GPU algorithm, every scenario on one plan (so the split rows' scratch must be
/// back to its start after each call): against the oracle and cuSPARSE, and bitwise scalar's where
/// the algorithm promises it.
template <class V, class I>
void check_gpu_matrix(const std::string& name, const sparse::host_csr<V, I>& a, sparse::spmv_algorithm alg,
                      std::uint64_t& stream, check_result& result) {
  const sparse::device_csr<V, I> d(a);
  if (!applies(alg, a)) {
    BOOST_CHECK_THROW((sparse::spmv_plan<V, I>(d, alg)), std::invalid_argument);
    return;
  }
  ++result.matrices_run;
  const sparse::spmv_plan<V, I> plan(d, alg);
  if (plan.algorithm() == sparse::spmv_algorithm::vector) result.widths.insert(plan.vector_width());
  const std::vector<V> x = test::random_vector<V>(a.cols(), V(-1), V(1), ++stream);
  for (const scenario& s : scenarios) {
    const V alpha = static_cast<V>(s.alpha), beta = static_cast<V>(s.beta);
    const std::vector<V> y0 = input_y<V>(a.rows(), s.beta, ++stream);
    const std::string ctx = name + " alpha=" + std::to_string(s.alpha) + " beta=" + std::to_string(s.beta);
    const auto peer = cusparse_run(d, alpha, x, beta, y0);
    const auto y = gpu_run(plan, alpha, x, beta, y0);
    check_rows(ctx + " " + plan.describe(), a, alpha, x, beta, y0, y, accumulation::value, peer ? &*peer : nullptr);
    if (!promises_scalar_bits(plan, a)) continue;
    const auto v = compare_bits(y, gpu_run(sparse::spmv_plan<V, I>(d, sparse::spmv_algorithm::scalar), alpha, x, beta, y0));
    BOOST_TEST(v.bad == 0, ctx << ": " << plan.describe() << " differs from scalar (same order, same arithmetic): " << v.first);
  }
}

/// The CPU path (sparse::reference::spmv) on one matrix, every scenario, against the oracle.
template <class V, class I>
void check_cpu_matrix(const std::string& name, const sparse::host_csr<V, I>& a, std::uint64_t& stream) {
  const std::vector<V> x = test::random_vector<V>(a.cols(), V(-1), V(1), ++stream);
  for (const scenario& s : scenarios) {
    const V alpha = static_cast<V>(s.alpha), beta = static_cast<V>(s.beta);
    const std::vector<V> y0 = input_y<V>(a.rows(), s.beta, ++stream);
    std::vector<V> y = y0;
    sparse::reference::spmv(a, alpha, x.data(), beta, y.data());
    check_rows(name + " alpha=" + std::to_string(s.alpha) + " beta=" + std::to_string(s.beta) + " cpu", a, alpha, x,
               beta, y0, y, accumulation::wide);
  }
}

/// Eigen (sparse::reference::spmv_eigen) on one matrix and input against the oracle.
template <class V, class I>
void check_eigen(const std::string& what, const sparse::host_csr<V, I>& a, V alpha, const std::vector<V>& x, V beta,
                 const std::vector<V>& y0) {
  std::vector<V> y = y0;
  sparse::reference::spmv_eigen(a, alpha, x.data(), beta, y.data());
  check_rows(what + " eigen", a, alpha, x, beta, y0, y, accumulation::value);
}

/// The rows of `a` with a stored entry in one of `columns`.
template <class V, class I>
std::vector<bool> rows_touching(const sparse::host_csr<V, I>& a, const std::set<int64_t>& columns) {
  std::vector<bool> touches(static_cast<std::size_t>(a.rows()), false);
  for (int64_t i = 0; i < a.rows(); ++i)
    for (auto q = a.row_ptr()[i]; q < a.row_ptr()[i + 1]; ++q)
      if (columns.count(a.col_idx()[q])) touches[static_cast<std::size_t>(i)] = true;
  return touches;
}

/// The results of one input through the CPU path, or through every GPU algorithm that applies to `a`.
template <class V, class I>
std::vector<std::pair<std::string, std::vector<V>>> every_path(bool gpu, const sparse::host_csr<V, I>& a, V alpha,
                                                               const std::vector<V>& x, V beta, const std::vector<V>& y0) {
  std::vector<std::pair<std::string, std::vector<V>>> runs;
  if (!gpu) {
    std::vector<V> y = y0;
    sparse::reference::spmv(a, alpha, x.data(), beta, y.data());
    runs.emplace_back("cpu", y);
    return runs;
  }
  const sparse::device_csr<V, I> d(a);
  for (auto alg : algorithms_under_test()) {
    if (!applies(alg, a)) continue;
    const sparse::spmv_plan<V, I> plan(d, alg);
    runs.emplace_back(plan.describe(), gpu_run(plan, alpha, x, beta, y0));
  }
  return runs;
}

/// NaN in x: exactly the rows with a stored entry in a NaN column become NaN; the others stay within
/// bound. Returns how many stencil runs it made.
template <class V, class I>
int check_nan_rows_of(bool gpu, const sparse::host_csr<V, I>& a) {
  std::vector<V> x = test::random_vector<V>(a.cols(), V(-1), V(1), 32);
  const std::set<int64_t> nan_cols = {0, 17, 2500, 4998};
  for (int64_t j : nan_cols) x[static_cast<std::size_t>(j)] = std::numeric_limits<V>::quiet_NaN();
  const auto touches = rows_touching(a, nan_cols);
  int stencil_runs = 0;
  for (const scenario& s : {scenario{1.0, 0.0}, scenario{2.0, 0.5}}) {
    const V alpha = static_cast<V>(s.alpha), beta = static_cast<V>(s.beta);
    const std::vector<V> y0 = input_y<V>(a.rows(), s.beta, 33);
    for (const auto& [name, y] : every_path(gpu, a, alpha, x, beta, y0)) {
      stencil_runs += name.rfind("stencil", 0) == 0;
      const auto v = compare_nan_rows(y, touches);
      BOOST_TEST(v.bad == 0, name << " beta=" << s.beta << ": " << v.bad << " rows with the wrong NaN-ness; first: " << v.first);
      check_rows("nan " + name, a, alpha, x, beta, y0, y, gpu ? accumulation::value : accumulation::wide);
    }
  }
  return stencil_runs;
}

/// On a ragged matrix with a long row, and (so that stencil runs too) on a 2D Laplacian.
template <class V, class I>
void check_nan_rows(bool gpu) {
  std::vector<int64_t> len(3001);
  for (std::size_t i = 0; i < len.size(); ++i) len[i] = static_cast<int64_t>((i * 7) % 41);
  len[1500] = 4999;  // a block row, touches nearly every column
  int stencil_runs = check_nan_rows_of(gpu, from_lengths(5000, len, 31).template cast<V, I>());
  stencil_runs += check_nan_rows_of(gpu, sparse::generate_laplace_2d<V, I>(71));  // 5041 rows and columns
  if (gpu) BOOST_TEST(stencil_runs > 0, "the stencil kernel must have met NaN");
}

// The vector kernel at every forced width, so each of its load modes runs (4-entry chunks when the mean
// row holds >= 8 x width entries; one entry per lane otherwise, with evict-first loads when x exceeds
// 16 MiB) on long, short, ragged and unaligned rows.
template <class V, class I>
void check_vector_forced_widths() {
  std::set<std::string> modes;
  std::uint64_t stream = 7000;
  // x of 4.2M entries (16.8 MB float, 33.6 MB double): the streaming mode.
  const named_matrix huge_x{"wide_64x4200001_k3", sparse::generate_random_k<double, int64_t>(64, 4200001, 3, 26)};
  for (const char* name : {"random_2049_k24", "random_65_x_2000_k1000", "row_length_ladder", "long_row_120007",
                           "powerlaw_20000", "wide_37x50000", "empty_rows_4097", "1x1", "wide_64x4200001_k3"}) {
    const auto a = (name == huge_x.name ? huge_x : matrix(name)).a.template cast<V, I>();
    const sparse::device_csr<V, I> d(a);
    const auto x = test::random_vector<V>(a.cols(), V(-1), V(1), ++stream);
    for (const scenario& s : {scenario{1.0, 0.0}, scenario{-1.5, 0.75}}) {
      const V alpha = static_cast<V>(s.alpha), beta = static_cast<V>(s.beta);
      const auto y0 = input_y<V>(a.rows(), s.beta, ++stream);
      for (int w : {2, 4, 8, 16, 32}) {
        const sparse::spmv_plan<V, I> plan(d, sparse::spmv_algorithm::vector, w);
        BOOST_TEST(plan.vector_width() == w);
        const std::string how = plan.describe();
        modes.insert(how.find("chunks") != std::string::npos      ? "chunks"
                     : how.find("streaming") != std::string::npos ? "streaming"
                                                                  : "plain");
        check_rows(std::string(name) + " " + how, a, alpha, x, beta, y0, gpu_run(plan, alpha, x, beta, y0),
                   accumulation::value);
      }
    }
  }
  BOOST_TEST(modes.size() == 3u, "every load mode of the vector kernel must have run");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(spmv)

CPU_TEST_CASE_TEMPLATE(cpu_path_matches_the_plain_loop, C, combos) {
  std::uint64_t stream = 1000;
  for (const auto& nm : matrices()) check_cpu_matrix(nm.name, nm.a.cast<typename C::value, typename C::index>(), stream);
}

// The one comparison with Eigen: every matrix and scenario, a cancelling row (the absolute bound holds
// where a relative one fails), and NaN and Inf in x (both paths give the same class in the rows they reach).
CPU_TEST_CASE_TEMPLATE(plain_loop_matches_eigen, C, combos) {
  using V = typename C::value;
  using I = typename C::index;
  std::uint64_t stream = 3000;
  for (const auto& nm : matrices()) {
    const auto a = nm.a.cast<V, I>();
    const std::vector<V> x = test::random_vector<V>(a.cols(), V(-1), V(1), ++stream);
    for (const scenario& s : scenarios)
      check_eigen(nm.name, a, static_cast<V>(s.alpha), x, static_cast<V>(s.beta), input_y<V>(a.rows(), s.beta, ++stream));
  }
  const sparse::host_csr<V, I> cancel(1, 3, {0, 3}, {0, 1, 2}, {V(1e8), V(1), V(-1e8)});
  check_eigen("cancellation", cancel, V(1), std::vector<V>(3, V(1)), V(0), std::vector<V>(1, test::poison_value<V>()));
  const auto r = sparse::generate_random_k<V, I>(200, 50, 4, 11);
  auto x = test::random_vector<V>(50, V(-1), V(1), 12);
  x[7] = std::numeric_limits<V>::quiet_NaN();
  x[9] = std::numeric_limits<V>::infinity();
  check_eigen("NaN and Inf in x", r, V(1), x, V(0), std::vector<V>(200, test::poison_value<V>()));
  check_eigen("NaN and Inf in x, beta 0.5", r, V(1), x, V(0.5), test::random_vector<V>(200, V(-1), V(1), 13));
}

// One GPU case per kernel (and the automatic choice), each against the oracle and cuSPARSE.
#define SPMV_GPU_CASE(alg)                                                                                   \
  GPU_TEST_CASE_TEMPLATE(alg##_matches_the_plain_loop_and_cusparse, C, combos) {                            \
    check_result r;                                                                                          \
    std::uint64_t stream = 1000;                                                                             \
    for (const auto& nm : matrices())                                                                        \
      check_gpu_matrix(nm.name, nm.a.cast<typename C::value, typename C::index>(), sparse::spmv_algorithm::alg, \
                       stream, r);                                                                           \
    if (sparse::spmv_algorithm::alg == sparse::spmv_algorithm::vector)                                       \
      BOOST_TEST((r.widths == std::set<int>{2, 4, 8, 16, 32}), "every lane width 2..32 must have run");     \
    BOOST_TEST(r.matrices_run >= 12, "ran on " << r.matrices_run << " matrices only");                      \
  }
SPMV_GPU_CASE(scalar)
SPMV_GPU_CASE(shared_cached)
SPMV_GPU_CASE(warp_per_row)
SPMV_GPU_CASE(vector)
SPMV_GPU_CASE(adaptive)
SPMV_GPU_CASE(block_per_row)
SPMV_GPU_CASE(merge)
SPMV_GPU_CASE(warp_stream)
SPMV_GPU_CASE(stencil)
SPMV_GPU_CASE(windowed)
SPMV_GPU_CASE(column_blocks)
SPMV_GPU_CASE(automatic)
#undef SPMV_GPU_CASE

CPU_TEST_CASE_TEMPLATE(cpu_path_nan_reaches_exactly_the_rows_that_touch_it, C, combos) {
  check_nan_rows<typename C::value, typename C::index>(false);
}

GPU_TEST_CASE_TEMPLATE(gpu_nan_reaches_exactly_the_rows_that_touch_it, C, combos) {
  check_nan_rows<typename C::value, typename C::index>(true);
}

GPU_TEST_CASE(every_algorithm_is_run_to_run_deterministic) {
  for (const char* name : {"powerlaw_20000", "long_row_120007", "row_length_ladder", "random_257x4097_k40", "laplace3d_9"}) {
    const auto a = matrix(name).a.cast<float, int32_t>();
    const sparse::device_csr<float, int32_t> d(a);
    const auto x = test::random_vector<float>(a.cols(), -1.f, 1.f, 41);
    const auto y0 = test::random_vector<float>(a.rows(), -1.f, 1.f, 42);
    for (auto alg : algorithms_under_test()) {
      if (!applies(alg, a)) continue;
      const sparse::spmv_plan<float, int32_t> plan(d, alg);
      const auto first = gpu_run(plan, 1.25f, x, 0.5f, y0);
      for (int run = 0; run < 5; ++run) {
        const auto v = compare_bits(gpu_run(plan, 1.25f, x, 0.5f, y0), first);
        BOOST_TEST(v.bad == 0, name << " " << plan.describe() << ": run " << run << ": " << v.first);
      }
    }
  }
}

GPU_TEST_CASE_TEMPLATE(vector_every_forced_width_matches_the_plain_loop, C, combos) {
  check_vector_forced_widths<typename C::value, typename C::index>();
}

GPU_TEST_CASE(plan_from_view_and_host_row_ptr_matches_plan_from_device_csr) {
  const auto a = sparse::generate_power_law<double, int64_t>(20000, 20000, 51, 20000);
  const sparse::device_csr<double, int64_t> d(a);
  const auto x = test::random_vector<double>(a.cols(), -1.0, 1.0, 52);
  const std::vector<double> y0(static_cast<std::size_t>(a.rows()), 0.0);
  const sparse::spmv_plan<double, int64_t> p1(d), p2(d.view(), a.row_ptr().data());
  BOOST_TEST((p1.algorithm() == p2.algorithm()));
  BOOST_TEST((p1.algorithm() == sparse::choose_algorithm(p1.stats())));
  BOOST_TEST((p1.requested() == sparse::spmv_algorithm::automatic));
  const auto v = compare_bits(gpu_run(p1, 1.0, x, 0.0, y0), gpu_run(p2, 1.0, x, 0.0, y0));
  BOOST_TEST(v.bad == 0, v.first);
  // The plan is reusable: a second x through the same plan is right too.
  const auto x2 = test::random_vector<double>(a.cols(), -3.0, 3.0, 53);
  check_rows("second x", a, 1.0, x2, 0.0, y0, gpu_run(p1, 1.0, x2, 0.0, y0), accumulation::value);
}

// automatic takes windowed on large random rows where windowed_pays(), and the plan refuses a matrix
// whose columns do not fit the packed word.
GPU_TEST_CASE(automatic_takes_windowed_where_it_pays) {
  using sparse::spmv_algorithm;
  const auto r = sparse::generate_random_k<float, int32_t>(300000, 300000, 16, 84);  // 4.8M entries
  const sparse::device_csr<float, int32_t> d(r);
  const sparse::spmv_plan<float, int32_t> plan(d);
  const bool pays = sparse::windowed_pays(plan.stats(), sizeof(float), gpukit::sm_count());
  BOOST_TEST(pays, "random16-like rows on 300k columns should pay on this GPU");
  BOOST_TEST((plan.algorithm() == (pays ? spmv_algorithm::windowed : spmv_algorithm::vector)), plan.describe());
  // Its result: bitwise scalar's, and within bound of the oracle.
  const auto x = test::random_vector<float>(r.cols(), -1.f, 1.f, 85);
  const std::vector<float> y0 = test::random_vector<float>(r.rows(), -1.f, 1.f, 86);
  const auto y = gpu_run(plan, 0.5f, x, -2.0f, y0);
  const auto v = compare_bits(y, gpu_run(sparse::spmv_plan<float, int32_t>(d, spmv_algorithm::scalar), 0.5f, x, -2.0f, y0));
  BOOST_TEST(v.bad == 0, plan.describe() << " differs from scalar: " << v.first);
  check_rows("automatic on 300k x 300k, 16 per row: " + plan.describe(), r, 0.5f, x, -2.0f, y0, y, accumulation::value);
  // Rows of 1,000 (block_per_row's domain) over a 1.2 MB x: column_blocks where it pays (it does on 132
  // SMs: 5M entries, rows of >= 4 x 132), else windowed, summed in 32 slots each; within bound of the oracle.
  const auto r1k = sparse::generate_random_k<float, int32_t>(5000, 300000, 1000, 88);  // 5M entries
  const sparse::device_csr<float, int32_t> d1k(r1k);
  const sparse::spmv_plan<float, int32_t> plan1k(d1k);
  const bool blocks1k = sparse::column_blocks_pays(plan1k.stats(), sizeof(float), gpukit::sm_count());
  const bool pays1k = sparse::windowed_pays(plan1k.stats(), sizeof(float), gpukit::sm_count());
  if (gpukit::sm_count() <= 200) BOOST_TEST(blocks1k, "rows of 1,000 on " << gpukit::sm_count() << " SMs should take column_blocks");
  BOOST_TEST((plan1k.algorithm() == (blocks1k ? spmv_algorithm::column_blocks
                                     : pays1k ? spmv_algorithm::windowed
                                              : spmv_algorithm::block_per_row)), plan1k.describe());
  const auto x1k = test::random_vector<float>(r1k.cols(), -1.f, 1.f, 89);
  const std::vector<float> y1k = test::random_vector<float>(r1k.rows(), -1.f, 1.f, 90);
  check_rows("automatic on 5000 x 300k, 1000 per row: " + plan1k.describe(), r1k, 0.5f, x1k, -2.0f, y1k,
             gpu_run(plan1k, 0.5f, x1k, -2.0f, y1k), accumulation::value);
  const sparse::device_csr<float, int32_t> dw(sparse::generate_random_k<float, int32_t>(10, 5000000, 2, 87));
  try {
    sparse::spmv_plan<float, int32_t> refused(dw, spmv_algorithm::windowed);
    BOOST_ERROR("windowed accepted 5,000,000 columns");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("windowed algorithm does not apply to this matrix: 5000000 columns") !=
                   std::string::npos, e.what());
  }
  // column_blocks refuses ranges wider than 16-bit offsets: 100M columns make ranges of more than 65,536
  // on any GPU of up to 1,525 SMs.
  const sparse::device_csr<float, int32_t> dc(sparse::generate_random_k<float, int32_t>(10, 100000000, 2, 91));
  try {
    sparse::spmv_plan<float, int32_t> refused(dc, spmv_algorithm::column_blocks);
    BOOST_ERROR("column_blocks accepted 100,000,000 columns");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("column_blocks algorithm does not apply to this matrix: 100000000 columns") !=
                   std::string::npos, e.what());
  }
}

// automatic takes adaptive for scalar's short rows where x exceeds a third of L2 and the sampled columns
// are scattered, and keeps scalar where they lie near the diagonal: two matrices of 5M x 5M, 4 entries a
// row (20M entries, a 20 MB x), one of random columns, one of columns within 500 of the diagonal (too many
// patterns for stencil). Both results within bound of the oracle.
GPU_TEST_CASE(automatic_takes_adaptive_for_scattered_columns_only) {
  using sparse::spmv_algorithm;
  constexpr int64_t n = 5000000;
  const auto scattered = sparse::generate_random_k<float, int32_t>(n, n, 4, 91);
  std::vector<int32_t> rp{0}, ci;
  std::vector<float> v;
  rp.reserve(n + 1);
  ci.reserve(4 * n);
  v.reserve(4 * n);
  std::uint64_t h = 92;
  for (int64_t i = 0; i < n; ++i) {
    std::set<int64_t> row;
    while (row.size() < 4) {
      h = h * 6364136223846793005ULL + 1442695040888963407ULL;  // the columns of i +- 500
      const int64_t c = i + static_cast<int64_t>((h >> 33) % 1001) - 500;
      if (c >= 0 && c < n) row.insert(c);
    }
    for (int64_t c : row) {
      ci.push_back(static_cast<int32_t>(c));
      v.push_back(static_cast<float>((c * 7919 + i) % 1000) / 1000.f - 0.5f);
    }
    rp.push_back(static_cast<int32_t>(ci.size()));
  }
  const sparse::host_csr<float, int32_t> local(n, n, std::move(rp), std::move(ci), std::move(v));
  const auto x = test::random_vector<float>(n, -1.f, 1.f, 93);
  const std::vector<float> y0 = test::random_vector<float>(n, -1.f, 1.f, 94);
  for (const auto* a : {&scattered, &local}) {
    const sparse::device_csr<float, int32_t> d(*a);
    const sparse::spmv_plan<float, int32_t> plan(d);
    BOOST_TEST((sparse::choose_algorithm(plan.stats()) == spmv_algorithm::scalar), plan.describe());
    BOOST_TEST(sparse::samples_column_spread(plan.stats(), spmv_algorithm::scalar, sizeof(float)));
    const auto expected = a == &scattered ? spmv_algorithm::adaptive : spmv_algorithm::scalar;
    BOOST_TEST((plan.algorithm() == expected), plan.describe());
    check_rows("automatic on 5M x 5M, 4 per row: " + plan.describe(), *a, 0.5f, x, -2.0f, y0,
               gpu_run(plan, 0.5f, x, -2.0f, y0), accumulation::value);
  }
}

// automatic takes stencil where the CSR choice is scalar or vector on rows of at most 12 entries and the
// matrix qualifies, and only there.
GPU_TEST_CASE(automatic_takes_stencil_where_it_applies) {
  using sparse::spmv_algorithm;
  auto automatic = [](const base_csr& a) {
    const sparse::device_csr<float, int32_t> d(a.cast<float, int32_t>());
    return sparse::spmv_plan<float, int32_t>(d).algorithm();
  };
  BOOST_TEST((automatic(sparse::generate_laplace_2d<double, int64_t>(40)) == spmv_algorithm::stencil));
  BOOST_TEST((automatic(sparse::generate_laplace_3d<double, int64_t>(20)) == spmv_algorithm::stencil));
  // Rows of 9 (a band of half-width 4): vector's by the row statistics, stencil's by the columns.
  sparse::generate_params band;
  band.kind = sparse::matrix_class::banded;
  band.rows = 5000;
  band.k = 4;
  BOOST_TEST((automatic(sparse::generate<double, int64_t>(band)) == spmv_algorithm::stencil));
  // Short uniform random rows: scalar's domain, but thousands of patterns (refused after the first piece).
  BOOST_TEST((automatic(sparse::generate_random_k<double, int64_t>(5000, 5000, 6, 81)) == spmv_algorithm::scalar));
  BOOST_TEST((automatic(sparse::generate_random_k<double, int64_t>(5000, 5000, 2, 82)) == spmv_algorithm::vector));
  // Forced on a matrix it does not apply to: refused with the reason.
  const sparse::device_csr<float, int32_t> d(sparse::generate_random_k<float, int32_t>(5000, 5000, 8, 83));
  try {
    sparse::spmv_plan<float, int32_t> plan(d, spmv_algorithm::stencil);
    BOOST_ERROR("stencil accepted a random matrix");
  } catch (const std::invalid_argument& e) {
    // Every row a new 8-entry pattern: the 1,024-word table is full at row 113, long before 256 patterns.
    BOOST_TEST(std::string(e.what()).find("stencil algorithm does not apply to this matrix: the patterns need more than") !=
                   std::string::npos,
               e.what());
  }
}

// A launch-bound automatic stencil plan (a tridiagonal matrix of 1,000 rows) runs spmv through scalar's
// kernel and spmv_dots through the stencil kernel: y bitwise the forced stencil's and scalar's, with
// alpha and beta; one of 100,000 rows keeps the stencil kernel for both. The describe() line says which.
GPU_TEST_CASE(launch_bound_stencil_plans_apply_through_scalar) {
  using sparse::spmv_algorithm;
  for (const std::int64_t rows : {std::int64_t{1000}, std::int64_t{100000}}) {
    sparse::generate_params p;
    p.kind = sparse::matrix_class::banded;
    p.rows = rows;
    p.k = 1;
    p.seed = 4242;
    const auto a = sparse::generate<float, int32_t>(p);
    const sparse::device_csr<float, int32_t> d(a);
    const sparse::spmv_plan<float, int32_t> automatic(d);
    const std::string what = std::to_string(rows) + " rows: " + automatic.describe();
    BOOST_TEST((automatic.algorithm() == spmv_algorithm::stencil), what);
    BOOST_TEST(automatic.dots_fused(), what);
    const bool through_scalar = automatic.describe().find("spmv through scalar's kernel") != std::string::npos;
    BOOST_TEST(through_scalar == (rows <= 16384), what);
    const auto x = test::random_vector<float>(rows, -1.0f, 1.0f, 4300 + static_cast<std::uint64_t>(rows));
    const auto y0 = test::random_vector<float>(rows, -1.0f, 1.0f, 4301 + static_cast<std::uint64_t>(rows));
    const sparse::spmv_plan<float, int32_t> stencil(d, spmv_algorithm::stencil), scalar(d, spmv_algorithm::scalar);
    BOOST_TEST(stencil.describe().find("scalar's kernel") == std::string::npos, stencil.describe());
    for (const auto& [alpha, beta] : {std::pair<float, float>{1.0f, 0.0f}, {0.75f, -1.5f}}) {
      const auto got = gpu_run(automatic, alpha, x, beta, y0);
      check_rows(what, a, alpha, x, beta, y0, got, accumulation::value);
      BOOST_TEST(compare_bits(got, gpu_run(stencil, alpha, x, beta, y0)).bad == 0, what << ": not the stencil kernel's bits");
      BOOST_TEST(compare_bits(got, gpu_run(scalar, alpha, x, beta, y0)).bad == 0, what << ": not scalar's bits");
    }
  }
}

// x of 40 MB (10M float columns; 2M rows of 4 random columns, 8M entries): automatic takes adaptive
// (the column sample) and, where 40 MB lies in (L2 / 2, L2] (H100 50 MB, H200 60 MB), two column
// panels. y within the per-row bound of the plain loop, with alpha and beta; the same bound rejects y
// with one panel's share left out (the second panel's pass skipped: row 0's entries there dropped).
GPU_TEST_CASE(column_panels_match_the_plain_loop) {
  const auto a = sparse::generate_random_k<float, int32_t>(2000000, 10000000, 4, 4444);
  const sparse::device_csr<float, int32_t> d(a);
  const sparse::spmv_plan<float, int32_t> plan(d);
  const double x_bytes = 4.0 * 1e7, l2 = static_cast<double>(gpukit::l2_cache_bytes());
  const bool expected = x_bytes > l2 / 2 && x_bytes <= l2;
  BOOST_TEST((plan.algorithm() == sparse::spmv_algorithm::adaptive), plan.describe());
  BOOST_TEST((plan.describe().find("2 column panels of 5000000 columns") != std::string::npos) == expected,
             plan.describe() << " (L2 " << l2 / 1e6 << " MB)");
  const auto x = test::random_vector<float>(a.cols(), -1.0f, 1.0f, 4445);
  const auto y0 = test::random_vector<float>(a.rows(), -1.0f, 1.0f, 4446);
  for (const auto& [alpha, beta] : {std::pair<float, float>{1.0f, 0.0f}, {0.5f, -2.0f}}) {
    const auto got = gpu_run(plan, alpha, x, beta, y0);
    check_rows(plan.describe(), a, alpha, x, beta, y0, got, accumulation::value);
    // One panel left out: the first panel alone (columns below 5M) must fail the bound somewhere.
    sparse::host_csr<float, int32_t> left = a;
    for (auto& v : left.values()) v = 0.0f;
    for (int64_t i = 0; i < a.rows(); ++i)
      for (auto p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p)
        if (a.col_idx()[p] < 5000000) left.values()[p] = a.values()[p];
    const auto oracle = plain_loop(left, alpha, x, beta, y0);
    const auto v = compare_rows(oracle, plain_loop(a, alpha, x, beta, y0),
                                row_bounds(a, alpha, x, beta, y0, accumulation::value, accumulation::wide), "the plain loop");
    BOOST_TEST(v.bad > 0, "the bound accepts y without the second panel");
  }
}

CPU_TEST_CASE(bad_plan_and_peer_inputs_are_rejected) {
  // Checked before any device call, so these run without a GPU.
  const std::vector<int32_t> ptr = {0, 2, 3};
  sparse::csr_view<float, int32_t> v{2, 2, 5, nullptr, nullptr, nullptr};  // nnz disagrees with row_ptr
  BOOST_CHECK_THROW((sparse::spmv_plan<float, int32_t>(v, ptr.data())), std::invalid_argument);
  sparse::csr_view<float, int32_t> empty{0, 4, 0, nullptr, nullptr, nullptr};
  BOOST_CHECK_THROW((sparse::cusparse_spmv<float, int32_t>(empty, sparse::cusparse_algorithm::alg1, nullptr, nullptr)),
                    std::invalid_argument);
  const std::vector<int32_t> one = {0, 1};
  sparse::csr_view<float, int32_t> v1{1, 1, 1, nullptr, nullptr, nullptr};
  BOOST_CHECK_THROW((sparse::spmv_plan<float, int32_t>(v1, one.data(), sparse::spmv_algorithm::vector, 3)),
                    std::invalid_argument);  // a vector width other than a power of two in 2..32
}

// A check that cannot fail is a defect: each checker above rejects a wrong answer. On cage8 (rows of
// 5-18 entries, values ~0.01-0.5) with x in [0.5, 1): one row off by twice its bound, the last row
// dropped, an extra row, a NaN, a finite value where NaN belongs, one bit flipped; and a kernel that
// forgets each row's last entry, a real bug that the derived bound must see in most rows.
CPU_TEST_CASE(checkers_reject_wrong_answers) {
  const auto a = matrix("cage8.mtx").a.cast<float, int32_t>();
  const auto x = test::random_vector<float>(a.cols(), 0.5f, 1.0f, 21);
  const auto y0 = test::random_vector<float>(a.rows(), -1.f, 1.f, 22);
  const float alpha = 1.5f, beta = -0.5f;
  const auto oracle = plain_loop(a, alpha, x, beta, y0);
  const auto bound = row_bounds(a, alpha, x, beta, y0, accumulation::value, accumulation::wide);
  auto rows_off = [&](const std::vector<float>& got) { return compare_rows(got, oracle, bound, "the plain loop"); };
  BOOST_TEST(rows_off(oracle).bad == 0);
  const std::size_t r = oracle.size() / 2;
  auto wrong = oracle;
  // 2 bound >= 2 gamma_{k+2} S >= 4 u S, while rounding the perturbed value to float moves it <= u S.
  wrong[r] = static_cast<float>(oracle[r] + 2.0 * bound[r]);
  BOOST_TEST(rows_off(wrong).bad == 1);
  BOOST_TEST(rows_off(wrong).first.rfind("row " + std::to_string(r) + ":", 0) == 0, rows_off(wrong).first);
  wrong = oracle;
  wrong.pop_back();
  BOOST_TEST(rows_off(wrong).bad == 1, "the last row dropped");
  wrong = oracle;
  wrong.push_back(0.f);
  BOOST_TEST(rows_off(wrong).bad == 1, "an extra row");
  wrong = oracle;
  wrong[r] = std::numeric_limits<float>::quiet_NaN();
  BOOST_TEST(rows_off(wrong).bad == 1, "a NaN");
  // Rows whose inputs hold NaN are compared by class: a finite value there is wrong.
  auto x_nan = x;
  x_nan[static_cast<std::size_t>(a.col_idx()[0])] = std::numeric_limits<float>::quiet_NaN();
  const auto nan_oracle = plain_loop(a, alpha, x_nan, beta, y0);
  const auto nan_bound = row_bounds(a, alpha, x_nan, beta, y0, accumulation::value, accumulation::wide);
  wrong = nan_oracle;
  wrong[0] = 0.f;
  BOOST_TEST(compare_rows(nan_oracle, nan_oracle, nan_bound, "NaN oracle").bad == 0);
  BOOST_TEST(compare_rows(wrong, nan_oracle, nan_bound, "NaN oracle").bad == 1, "a finite value where NaN belongs");
  const auto touches = rows_touching(a, std::set<int64_t>{a.col_idx()[0]});
  BOOST_TEST(compare_nan_rows(nan_oracle, touches).bad == 0);
  BOOST_TEST(compare_nan_rows(wrong, touches).bad == 1, "the NaN-ness checker");
  wrong = oracle;
  std::uint32_t bits;
  std::memcpy(&bits, &wrong[r], sizeof bits);
  bits ^= 1u;
  std::memcpy(&wrong[r], &bits, sizeof bits);
  BOOST_TEST(compare_bits(oracle, oracle).bad == 0);
  BOOST_TEST(compare_bits(wrong, oracle).bad == 1, "one bit flipped");
  // Each row's last entry forgotten: rejected wherever that term exceeds twice the bound, in most rows.
  auto forgetful = a;
  for (int64_t i = 0; i < a.rows(); ++i)
    if (a.row_ptr()[i + 1] > a.row_ptr()[i]) forgetful.values()[static_cast<std::size_t>(a.row_ptr()[i + 1] - 1)] = 0.f;
  int64_t visible = 0;
  for (int64_t i = 0; i < a.rows(); ++i) {
    const auto last = a.row_ptr()[i + 1] - 1;
    visible += last >= a.row_ptr()[i] &&
               std::fabs(double(alpha) * a.values()[last] * x[static_cast<std::size_t>(a.col_idx()[last])]) > 2 * bound[i];
  }
  BOOST_TEST(visible > a.rows() / 2, visible << " of " << a.rows() << " rows");
  BOOST_TEST(rows_off(plain_loop(forgetful, alpha, x, beta, y0)).bad >= visible);
}

BOOST_AUTO_TEST_SUITE_END()
