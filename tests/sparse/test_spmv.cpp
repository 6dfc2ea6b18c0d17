// SpMV: every GPU algorithm (and the automatic choice) against the double-accumulating reference, against
// Eigen (CPU) and against cuSPARSE (GPU) on the bundled real matrices, each generated class at small size
// and the hostile cases; the CPU path (sparse::reference::spmv) through the same checks; determinism;
// the plan's statistics, automatic choice and adaptive partition.
//
// Error bound used by every comparison (row i, length k_i, Value precision, u = eps/2):
//   S_i = |alpha| sum_j |a_ij| |x_j| + |beta| |y_i|   (the |beta y_i| term only when beta != 0)
//   |y_i(any algorithm) - exact| <= gamma_{k_i+2} S_i: a k-term dot product summed in any order (one
//     thread in storage order, a warp tree, a block tree, chunk partials) has error <= gamma_k sum|a_ij x_j|
//     (Higham 3.1); alpha * s rounds once more and + beta * y once more: k + 2 roundings in the chain.
//   The reference is within gamma_{k+2}(double) S_i + u |y_i| <= gamma_{k+2}(Value) S_i of exact, Eigen
//     (Value accumulation) and cuSPARSE within gamma_{k+2}(Value) S_i too.
//   So any two of them differ by at most 2 gamma_{k_i+2}(Value) S_i: sparse::reference::row_error_bounds.
// Rows whose S_i is not finite (NaN/Inf in x) are compared for NaN-ness / exact Inf instead.
#include <boost/mpl/list.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "gpukit_paths.hpp"
#include "gpukit/device_buffer.hpp"
#include "sparse/csr.hpp"
#include "sparse/generate.hpp"
#include "sparse/io.hpp"
#include "sparse/reference.hpp"
#include "sparse/spmv.hpp"
#include "spmv_plan_state.hpp"  // white-box: the adaptive partition (libsparse/src/cuda)
#include "test_support.hpp"

using std::int32_t;
using std::int64_t;

namespace {

template <class V, class I>
struct combo {
  using value = V;
  using index = I;
};
using combos = boost::mpl::list<combo<float, int32_t>, combo<double, int64_t>, combo<float, int64_t>,
                                combo<double, int32_t>>;

using base_csr = sparse::host_csr<double, int64_t>;

struct named_matrix {
  std::string name;
  base_csr a;
};

/// A matrix with the given row lengths: row i gets lengths[i] distinct sorted columns (evenly spaced with
/// a random offset inside each stride), values uniform in [-1, 1).
base_csr from_lengths(int64_t cols, const std::vector<int64_t>& lengths, std::uint64_t stream) {
  auto g = test::rng(stream);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<int64_t> ptr{0}, col;
  std::vector<double> v;
  for (int64_t len : lengths) {
    if (len > cols) throw std::invalid_argument("from_lengths: a row longer than the column count");
    const int64_t step = len > 0 ? cols / len : 0;
    for (int64_t t = 0; t < len; ++t) {
      col.push_back(t * step + static_cast<int64_t>(g() % static_cast<std::uint64_t>(step)));
      v.push_back(val(g));
    }
    ptr.push_back(static_cast<int64_t>(col.size()));
  }
  return base_csr(static_cast<int64_t>(lengths.size()), cols, std::move(ptr), std::move(col), std::move(v));
}

/// Row i holds columns i + o for each offset o that lands in [0, cols): a banded matrix whose edge rows
/// lose entries (a few column-offset patterns, so the stencil algorithm applies), values in [-1, 1).
base_csr banded(int64_t rows, int64_t cols, const std::vector<int64_t>& offsets, std::uint64_t stream) {
  auto g = test::rng(stream);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<int64_t> ptr{0}, col;
  std::vector<double> v;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t o : offsets)
      if (i + o >= 0 && i + o < cols) {
        col.push_back(i + o);
        v.push_back(val(g));
      }
    ptr.push_back(static_cast<int64_t>(col.size()));
  }
  return base_csr(rows, cols, std::move(ptr), std::move(col), std::move(v));
}

std::vector<named_matrix> test_matrices() {
  std::vector<named_matrix> m;
  // Bundled real matrices (SuiteSparse, data/sparse; provenance in data/README.md) and small bundled
  // generated ones, read through both file formats.
  for (const char* f : {"494_bus.mtx", "cage8.mtx", "jagmesh7.mtx", "lp_afiro.mtx", "west0479.mtx", "west0479.h5",
                        "laplace2d_16.mtx", "random_k5_300x200.mtx", "powerlaw_2000.h5"})
    m.push_back({f, sparse::read_matrix<double, int64_t>(std::string(gpukit::data_dir) + "/sparse/" + f)});
  // Each generated class at small size.
  m.push_back({"laplace2d_33", sparse::generate_laplace_2d<double, int64_t>(33)});
  m.push_back({"laplace3d_9", sparse::generate_laplace_3d<double, int64_t>(9)});
  // More rows (360,000) than one wave of stencil's blocks covers, so its grid-stride loop turns.
  m.push_back({"laplace2d_600", sparse::generate_laplace_2d<double, int64_t>(600)});
  // Banded, rectangular both ways: tall with empty rows at the bottom, wide with far offsets.
  m.push_back({"banded_5000x3000", banded(5000, 3000, {-700, -3, 0, 1, 2, 40}, 27)});
  m.push_back({"banded_2000x9000", banded(2000, 9000, {0, 4000, 8999}, 28)});
  // Rows of up to 12 entries: the stencil kernel's plain loop (rows of <= 8 take its unrolled form).
  m.push_back({"banded_3001_k12", banded(3001, 3001, {-900, -64, -9, -3, -2, -1, 0, 1, 2, 5, 64, 1000}, 29)});
  m.push_back({"random_4099_k3", sparse::generate_random_k<double, int64_t>(4099, 4099, 3, 17)});  // vector: 4 lanes
  m.push_back({"random_2049_k24", sparse::generate_random_k<double, int64_t>(2049, 2049, 24, 18)});  // stream: 32 lanes
  m.push_back({"random_1025x517_k5", sparse::generate_random_k<double, int64_t>(1025, 517, 5, 11)});
  m.push_back({"random_257x4097_k40", sparse::generate_random_k<double, int64_t>(257, 4097, 40, 12)});
  m.push_back({"random_65_x_2000_k1000", sparse::generate_random_k<double, int64_t>(65, 2000, 1000, 13)});
  m.push_back({"powerlaw_20000", sparse::generate_power_law<double, int64_t>(20000, 20000, 14, 20000)});
  {
    sparse::generate_params p;
    p.kind = sparse::matrix_class::dense_row;
    p.rows = 3001;
    p.k = 4;
    p.dense_length = 3001;
    p.seed = 15;
    m.push_back({"denserow_3001", sparse::generate<double, int64_t>(p)});
  }
  // More rows than one grid of the row kernels covers (16 blocks x 256 per SM x 132 SMs = 540,672), so
  // their grid-stride loops turn.
  m.push_back({"random_1000003_k2", sparse::generate_random_k<double, int64_t>(1000003, 1000003, 2, 16)});
  // Hostile shapes.
  m.push_back({"0x0", base_csr()});
  m.push_back({"1x1", base_csr(1, 1, {0, 1}, {0}, {-0.75})});
  m.push_back({"1x1_empty", base_csr(1, 1, {0, 0}, {}, {})});
  m.push_back({"all_rows_empty_1025x33", base_csr(1025, 33, std::vector<int64_t>(1026, 0), {}, {})});
  m.push_back({"0_columns_5x0", base_csr(5, 0, std::vector<int64_t>(6, 0), {}, {})});
  {
    std::vector<int64_t> len(4097);
    for (std::size_t i = 0; i < len.size(); ++i) len[i] = i % 3 == 0 ? 0 : static_cast<int64_t>(i % 7);  // every third empty
    m.push_back({"empty_rows_4097", from_lengths(4097, len, 21)});
  }
  {
    // Every bin boundary of the adaptive partition, and of warp/vector strides.
    std::vector<int64_t> len;
    for (int64_t l = 0; l <= 40; ++l) len.push_back(l);
    for (int64_t l : {63, 64, 65, 255, 256, 257, 1023, 1024, 1025, 2047, 4095, 4097, 8191, 8192, 8193, 16384, 16385})
      len.push_back(l);
    for (int64_t l = 0; l < 3000; ++l) len.push_back(l % 5);  // a long run of short rows after the long ones
    m.push_back({"row_length_ladder", from_lengths(20000, len, 22)});
  }
  // One row longer than 100k entries between short rows (split over 15 blocks), rectangular.
  m.push_back({"long_row_120007", from_lengths(130000, {1, 3, 120007, 0, 2, 8193, 5}, 23)});
  m.push_back({"tall_5000x37", sparse::generate_random_k<double, int64_t>(5000, 37, 5, 24)});
  m.push_back({"wide_37x50000", sparse::generate_random_k<double, int64_t>(37, 50000, 3000, 25)});
  m.push_back({"wide_3x300", base_csr(3, 300, {0, 2, 2, 3}, {0, 299, 150}, {1.5, -2.0, 0.25})});
  return m;
}

const std::vector<named_matrix>& matrices() {
  static const std::vector<named_matrix> m = test_matrices();
  return m;
}

struct scenario {
  double alpha, beta;
};
// y = A x; y = -1.5 A x + 0.75 y; alpha = 0 (y = 2 y: A x must not leak in); alpha = beta = 0 (y = 0).
const scenario scenarios[] = {{1.0, 0.0}, {-1.5, 0.75}, {0.0, 2.0}, {0.0, 0.0}};

/// Compares `got` row by row with the reference, Eigen and (if given) cuSPARSE within the derived bound.
/// Reports the number of bad comparisons and the first one.
template <class V, class I>
void check_rows(const std::string& what, const sparse::host_csr<V, I>& a, V alpha, const std::vector<V>& x, V beta,
                const std::vector<V>& y0, const std::vector<V>& got,
                typename std::common_type<const std::vector<V>*>::type cusparse_y) {  // not deduced: nullptr ok
  const auto n = static_cast<std::size_t>(a.rows());
  BOOST_TEST_REQUIRE(got.size() == n);
  std::vector<V> ref = y0, eig = y0;
  sparse::reference::spmv_reference(a, alpha, x.data(), beta, ref.data());
  sparse::reference::spmv_eigen(a, alpha, x.data(), beta, eig.data());
  const std::vector<double> bound = sparse::reference::row_error_bounds(a, alpha, x.data(), beta, y0.data());
  std::int64_t bad = 0;
  std::ostringstream first;
  auto compare = [&](std::size_t i, double other, const char* name) {
    const double g = got[i];
    bool ok;
    if (std::isfinite(bound[i])) ok = std::fabs(g - other) <= bound[i];  // NaN fails here
    else ok = (std::isnan(g) && std::isnan(other)) || g == other;         // NaN/Inf rows: same class
    if (!ok && bad++ == 0)
      first << "row " << i << " (length " << a.row_ptr()[i + 1] - a.row_ptr()[i] << "): got " << g << " vs "
            << name << " " << other << ", bound " << bound[i];
  };
  for (std::size_t i = 0; i < n; ++i) {
    compare(i, ref[i], "reference");
    compare(i, eig[i], "Eigen");
    if (cusparse_y) compare(i, (*cusparse_y)[i], "cuSPARSE");
  }
  BOOST_TEST(bad == 0, what << ": " << bad << " bad comparisons; first: " << first.str());
}

template <class V>
std::vector<V> input_y(std::int64_t rows, double beta, std::uint64_t stream) {
  // beta == 0: y is poison (NaN bytes); a path that reads it would turn rows into NaN.
  if (beta == 0) return std::vector<V>(static_cast<std::size_t>(rows), test::poison_value<V>());
  return test::random_vector<V>(rows, V(-1), V(1), stream);
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
std::optional<std::vector<V>> cusparse_run(const sparse::device_csr<V, I>& d, sparse::cusparse_algorithm alg, V alpha,
                                           const std::vector<V>& x, V beta, const std::vector<V>& y0) {
  // cuSPARSE takes no empty shapes (see spmv.hpp); with no entries at all there is nothing to compare
  // beyond what the reference already checks (y = beta y), and cuSPARSE's handling of null col/value
  // arrays is not documented, so those are skipped too.
  if (d.rows() == 0 || d.cols() == 0 || d.nnz() == 0) return std::nullopt;
  gpukit::device_buffer<V> dx(x), dy(static_cast<std::int64_t>(y0.size()));
  if (beta == V(0)) dy.fill_bytes(test::poison_byte);
  else dy.upload(y0);
  sparse::cusparse_spmv<V, I> peer(d.view(), alg, dx.data(), dy.data(), alpha, beta);
  peer.run(alpha, beta);
  return dy.download();
}

std::vector<sparse::spmv_algorithm> algorithms_under_test() {
  auto v = sparse::concrete_spmv_algorithms();
  v.push_back(sparse::spmv_algorithm::automatic);
  return v;
}

enum class path { cpu, gpu };

/// The stencil table of a host matrix, col_idx fetched in pieces of `chunk` entries.
template <class V, class I>
sparse::detail::stencil_table host_stencil_table(const sparse::host_csr<V, I>& a, std::int64_t chunk = std::int64_t{1} << 20) {
  const I* cols = a.col_idx().data();
  return sparse::detail::build_stencil_table<I>(
      a.rows(), a.row_ptr().data(),
      [cols](std::int64_t first, std::int64_t count, I* dst) { std::memcpy(dst, cols + first, static_cast<std::size_t>(count) * sizeof(I)); },
      chunk);
}

/// The longest row of a host matrix.
template <class V, class I>
std::int64_t longest_row(const sparse::host_csr<V, I>& a) {
  std::int64_t longest = 0;
  for (std::int64_t i = 0; i < a.rows(); ++i) longest = std::max<std::int64_t>(longest, a.row_ptr()[i + 1] - a.row_ptr()[i]);
  return longest;
}

/// Whether the windowed algorithm takes the matrix: columns that fit 22 bits, rows that fit 64 slots.
template <class V, class I>
bool windowed_applies(const sparse::host_csr<V, I>& a) {
  namespace d = sparse::detail;
  return a.cols() <= d::windowed_max_cols && longest_row(a) <= std::int64_t{d::windowed_slot_entries} * d::windowed_max_row_slots;
}

/// Whether `alg` applies to `a` (stencil and windowed refuse some matrices; every other algorithm takes all).
template <class V, class I>
bool applies(sparse::spmv_algorithm alg, const sparse::host_csr<V, I>& a) {
  if (alg == sparse::spmv_algorithm::stencil) return host_stencil_table(a).usable();
  if (alg == sparse::spmv_algorithm::windowed) return windowed_applies(a);
  return true;
}

struct check_result {
  std::set<int> widths;  ///< the vector widths the plans chose (every width 2..32 must run)
  int matrices_run = 0;  ///< matrices the algorithm ran on (stencil applies to some only)
};

/// The one check: every matrix, every scenario, through the CPU path or one GPU algorithm. `stencil`
/// and `windowed` run where they apply (and their plans must throw elsewhere); stencil, and windowed
/// where every row is one slot (<= 32 entries), must give bitwise scalar's result (the same sum in the
/// same order).
template <class V, class I>
check_result check_all_matrices(path p, sparse::spmv_algorithm alg = sparse::spmv_algorithm::automatic) {
  check_result result;
  std::uint64_t stream = 1000;
  for (const auto& nm : matrices()) {
    const auto a = nm.a.cast<V, I>();
    const std::vector<V> x = test::random_vector<V>(a.cols(), V(-1), V(1), ++stream);
    std::unique_ptr<sparse::device_csr<V, I>> d;
    if (p == path::gpu) d = std::make_unique<sparse::device_csr<V, I>>(a);
    if (p == path::gpu && !applies(alg, a)) {
      BOOST_CHECK_THROW((sparse::spmv_plan<V, I>(*d, alg)), std::invalid_argument);
      continue;
    }
    ++result.matrices_run;
    for (const scenario& s : scenarios) {
      const V alpha = static_cast<V>(s.alpha), beta = static_cast<V>(s.beta);
      const std::vector<V> y0 = input_y<V>(a.rows(), s.beta, ++stream);
      const std::string ctx = nm.name + " alpha=" + std::to_string(s.alpha) + " beta=" + std::to_string(s.beta);
      if (p == path::cpu) {
        std::vector<V> y = y0;
        sparse::reference::spmv(a, alpha, x.data(), beta, y.data());
        check_rows(ctx + " cpu", a, alpha, x, beta, y0, y, nullptr);
        continue;
      }
      const auto peer = cusparse_run(*d, sparse::cusparse_algorithm::alg1, alpha, x, beta, y0);  // any index type
      const sparse::spmv_plan<V, I> plan(*d, alg);
      if (plan.algorithm() == sparse::spmv_algorithm::vector) result.widths.insert(plan.vector_width());
      const auto y = gpu_run(plan, alpha, x, beta, y0);
      check_rows(ctx + " " + plan.describe(), a, alpha, x, beta, y0, y, peer ? &*peer : nullptr);
      if (plan.algorithm() == sparse::spmv_algorithm::stencil ||
          (plan.algorithm() == sparse::spmv_algorithm::windowed && longest_row(a) <= sparse::detail::windowed_slot_entries)) {
        const sparse::spmv_plan<V, I> scalar(*d, sparse::spmv_algorithm::scalar);
        const auto ys = gpu_run(scalar, alpha, x, beta, y0);
        BOOST_TEST(std::memcmp(y.data(), ys.data(), y.size() * sizeof(V)) == 0,
                   ctx << ": " << plan.describe() << " differs bitwise from scalar (same order, same arithmetic)");
      }
    }
  }
  return result;
}

/// NaN in x: exactly the rows with a stored entry in a NaN column become NaN; the others stay within bound.
/// Returns how many stencil runs it made.
template <class V, class I>
int check_nan_rows_of(path p, const sparse::host_csr<V, I>& a) {
  std::vector<V> x = test::random_vector<V>(a.cols(), V(-1), V(1), 32);
  const std::set<int64_t> nan_cols = {0, 17, 2500, 4998};
  for (int64_t j : nan_cols) x[static_cast<std::size_t>(j)] = std::numeric_limits<V>::quiet_NaN();
  std::vector<bool> touches(static_cast<std::size_t>(a.rows()), false);
  for (int64_t i = 0; i < a.rows(); ++i)
    for (auto q = a.row_ptr()[i]; q < a.row_ptr()[i + 1]; ++q)
      if (nan_cols.count(a.col_idx()[q])) touches[static_cast<std::size_t>(i)] = true;
  std::unique_ptr<sparse::device_csr<V, I>> d;
  if (p == path::gpu) d = std::make_unique<sparse::device_csr<V, I>>(a);
  int stencil_runs = 0;
  for (const scenario& s : {scenario{1.0, 0.0}, scenario{2.0, 0.5}}) {
    const V alpha = static_cast<V>(s.alpha), beta = static_cast<V>(s.beta);
    const std::vector<V> y0 = input_y<V>(a.rows(), s.beta, 33);
    std::vector<std::pair<std::string, std::vector<V>>> runs;
    if (p == path::cpu) {
      std::vector<V> y = y0;
      sparse::reference::spmv(a, alpha, x.data(), beta, y.data());
      runs.emplace_back("cpu", y);
    } else {
      for (auto alg : algorithms_under_test()) {
        if (!applies(alg, a)) continue;
        const sparse::spmv_plan<V, I> plan(*d, alg);
        stencil_runs += plan.algorithm() == sparse::spmv_algorithm::stencil;
        runs.emplace_back(plan.describe(), gpu_run(plan, alpha, x, beta, y0));
      }
    }
    for (const auto& [name, y] : runs) {
      std::int64_t wrong = 0;
      for (std::size_t i = 0; i < y.size(); ++i) wrong += std::isnan(y[i]) != touches[i];
      BOOST_TEST(wrong == 0, name << " beta=" << s.beta << ": " << wrong << " rows with the wrong NaN-ness");
      check_rows("nan " + name, a, alpha, x, beta, y0, y, nullptr);
    }
  }
  return stencil_runs;
}

/// On a ragged matrix with a long row, and (so that stencil runs too) on a 2D Laplacian.
template <class V, class I>
void check_nan_rows(path p) {
  const auto ragged = from_lengths(5000, [] {
                        std::vector<int64_t> len(3001);
                        for (std::size_t i = 0; i < len.size(); ++i) len[i] = static_cast<int64_t>((i * 7) % 41);
                        len[1500] = 4999;  // a block row, touches nearly every column
                        return len;
                      }(), 31).template cast<V, I>();
  int stencil_runs = check_nan_rows_of(p, ragged);
  stencil_runs += check_nan_rows_of(p, sparse::generate_laplace_2d<V, I>(71));  // 5041 rows and columns
  if (p == path::gpu) BOOST_TEST(stencil_runs > 0, "the stencil kernel must have met NaN");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(spmv)

CPU_TEST_CASE_TEMPLATE(cpu_path_matches_reference_and_eigen, C, combos) {
  check_all_matrices<typename C::value, typename C::index>(path::cpu);
}

// One GPU case per kernel (and the automatic choice), each against the reference, Eigen and cuSPARSE.
#define SPMV_GPU_CASE(alg)                                                                    \
  GPU_TEST_CASE_TEMPLATE(alg##_matches_reference_eigen_and_cusparse, C, combos) {             \
    const auto r = check_all_matrices<typename C::value, typename C::index>(path::gpu, sparse::spmv_algorithm::alg); \
    if (sparse::spmv_algorithm::alg == sparse::spmv_algorithm::vector)                        \
      BOOST_TEST((r.widths == std::set<int>{2, 4, 8, 16, 32}), "every lane width 2..32 must have run"); \
    BOOST_TEST(r.matrices_run >= 12, "ran on " << r.matrices_run << " matrices only");       \
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
SPMV_GPU_CASE(automatic)
#undef SPMV_GPU_CASE

CPU_TEST_CASE_TEMPLATE(cpu_path_nan_reaches_exactly_the_rows_that_touch_it, C, combos) {
  check_nan_rows<typename C::value, typename C::index>(path::cpu);
}

GPU_TEST_CASE_TEMPLATE(gpu_nan_reaches_exactly_the_rows_that_touch_it, C, combos) {
  check_nan_rows<typename C::value, typename C::index>(path::gpu);
}

GPU_TEST_CASE(every_algorithm_is_run_to_run_deterministic) {
  for (const char* name : {"powerlaw_20000", "long_row_120007", "row_length_ladder", "random_257x4097_k40", "laplace3d_9"}) {
    const named_matrix* nm = nullptr;
    for (const auto& m : matrices()) if (m.name == name) nm = &m;
    BOOST_TEST_REQUIRE(nm != nullptr);
    const auto a = nm->a.cast<float, int32_t>();
    const sparse::device_csr<float, int32_t> d(a);
    const auto x = test::random_vector<float>(a.cols(), -1.f, 1.f, 41);
    const auto y0 = test::random_vector<float>(a.rows(), -1.f, 1.f, 42);
    for (auto alg : algorithms_under_test()) {
      if (!applies(alg, a)) continue;
      const sparse::spmv_plan<float, int32_t> plan(d, alg);
      const auto first = gpu_run(plan, 1.25f, x, 0.5f, y0);
      for (int run = 0; run < 5; ++run) {
        const auto again = gpu_run(plan, 1.25f, x, 0.5f, y0);
        BOOST_TEST(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)) == 0,
                   name << " " << plan.describe() << ": run " << run << " differs bitwise");
      }
    }
  }
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
    const named_matrix* nm = name == huge_x.name ? &huge_x : nullptr;
    for (const auto& m : matrices()) if (m.name == name) nm = &m;
    BOOST_TEST_REQUIRE(nm != nullptr);
    const auto a = nm->a.template cast<V, I>();
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
        check_rows(std::string(name) + " " + plan.describe(), a, alpha, x, beta, y0, gpu_run(plan, alpha, x, beta, y0),
                   nullptr);
      }
    }
  }
  BOOST_TEST(modes.size() == 3u, "every load mode of the vector kernel must have run");
}

GPU_TEST_CASE_TEMPLATE(vector_every_forced_width_matches_reference, C, combos) {
  check_vector_forced_widths<typename C::value, typename C::index>();
}

CPU_TEST_CASE(vector_width_other_than_a_power_of_two_is_rejected) {
  const std::vector<int32_t> ptr = {0, 1};
  sparse::csr_view<float, int32_t> v{1, 1, 1, nullptr, nullptr, nullptr};
  BOOST_CHECK_THROW((sparse::spmv_plan<float, int32_t>(v, ptr.data(), sparse::spmv_algorithm::vector, 3)),
                    std::invalid_argument);
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
  const auto y1 = gpu_run(p1, 1.0, x, 0.0, y0), y2 = gpu_run(p2, 1.0, x, 0.0, y0);
  BOOST_TEST(std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(double)) == 0);
  // The plan is reusable: a second x through the same plan is right too.
  const auto x2 = test::random_vector<double>(a.cols(), -3.0, 3.0, 53);
  check_rows("second x", a, 1.0, x2, 0.0, y0, gpu_run(p1, 1.0, x2, 0.0, y0), nullptr);
}

CPU_TEST_CASE(algorithm_names_round_trip) {
  for (auto a : algorithms_under_test()) BOOST_TEST((sparse::parse_spmv_algorithm(sparse::to_string(a)) == a));
  BOOST_TEST((sparse::parse_spmv_algorithm("auto") == sparse::spmv_algorithm::automatic));
  BOOST_CHECK_THROW(sparse::parse_spmv_algorithm("csr_vector"), std::invalid_argument);
  BOOST_TEST(sparse::concrete_spmv_algorithms().size() == 10u);
}

CPU_TEST_CASE(row_stats_are_exact) {
  // Lengths 0, 3, 0, 40, 5000, 1: every counter is known.
  const auto a = from_lengths(6000, {0, 3, 0, 40, 5000, 1}, 61);
  const auto s = sparse::compute_row_stats(a.rows(), a.cols(), a.row_ptr().data());
  BOOST_TEST(s.rows == 6);
  BOOST_TEST(s.cols == 6000);
  BOOST_TEST(s.nnz == 5044);
  BOOST_TEST(s.min_length == 0);
  BOOST_TEST(s.max_length == 5000);
  BOOST_TEST(s.empty_rows == 2);
  BOOST_TEST(s.rows_over_32 == 2);
  BOOST_TEST(s.rows_over_4096 == 1);
  BOOST_TEST(s.nnz_in_rows_over_32 == 5040);
  BOOST_TEST(s.mean_length == 5044.0 / 6.0);
  const auto empty = sparse::compute_row_stats<int64_t>(0, 0, nullptr);
  BOOST_TEST(empty.nnz == 0);
}

CPU_TEST_CASE(automatic_choice_follows_the_documented_thresholds) {
  auto stats_of = [](const base_csr& a) { return sparse::compute_row_stats(a.rows(), a.cols(), a.row_ptr().data()); };
  using sparse::spmv_algorithm;
  BOOST_TEST((sparse::choose_algorithm(stats_of(base_csr())) == spmv_algorithm::scalar));
  BOOST_TEST((sparse::choose_algorithm(stats_of(sparse::generate_laplace_2d<double, int64_t>(40))) == spmv_algorithm::scalar));
  BOOST_TEST((sparse::choose_algorithm(stats_of(sparse::generate_laplace_3d<double, int64_t>(20))) == spmv_algorithm::scalar));
  BOOST_TEST((sparse::choose_algorithm(stats_of(sparse::generate_random_k<double, int64_t>(5000, 5000, 2, 3))) ==
              spmv_algorithm::vector));
  BOOST_TEST((sparse::choose_algorithm(stats_of(from_lengths(100000, std::vector<int64_t>(20, 5000), 64))) ==
              spmv_algorithm::adaptive));  // uniform but longer than a 128-thread block should take
  BOOST_TEST((sparse::choose_algorithm(stats_of(sparse::generate_power_law<double, int64_t>(5000, 5000, 3))) ==
              spmv_algorithm::adaptive));
  BOOST_TEST((sparse::choose_algorithm(stats_of(from_lengths(4000, std::vector<int64_t>(300, 500), 62))) ==
              spmv_algorithm::block_per_row));
  BOOST_TEST((sparse::choose_algorithm(stats_of(from_lengths(4000, std::vector<int64_t>(300, 48), 63))) ==
              spmv_algorithm::vector));
  sparse::row_stats s;
  s.rows = 10;
  s.nnz = 50;
  s.mean_length = 5;
  BOOST_TEST(sparse::choose_vector_width(s) == 2);
  s.mean_length = 1;
  BOOST_TEST(sparse::choose_vector_width(s) == 2);
  s.mean_length = 15.99994;  // random16
  BOOST_TEST(sparse::choose_vector_width(s) == 4);
  s.mean_length = 48;
  BOOST_TEST(sparse::choose_vector_width(s) == 16);
  s.mean_length = 1000;
  BOOST_TEST(sparse::choose_vector_width(s) == 32);
  // The GPU case `vector_matches_reference_eigen_and_cusparse` needs every width among the test matrices.
  std::set<int> widths;
  for (const auto& nm : matrices()) widths.insert(sparse::choose_vector_width(stats_of(nm.a)));
  BOOST_TEST((widths == std::set<int>{2, 4, 8, 16, 32}));
}

// White-box: the adaptive partition covers every row exactly once and respects every tile budget.
CPU_TEST_CASE(adaptive_partition_covers_every_row_once) {
  namespace d = sparse::detail;
  std::set<int> lanes_used;
  for (const auto& nm : matrices()) {
    const auto& a = nm.a;
    const auto& ptr = a.row_ptr();
    const auto p = d::build_adaptive_partition(a.rows(), ptr.data());
    std::vector<int> seen(static_cast<std::size_t>(a.rows()), 0);
    std::vector<int64_t> split_covered(static_cast<std::size_t>(a.rows()), 0);
    bool budgets_ok = true;
    for (const auto& t : p.tiles) {
      if (t.kind == d::tile_stream) {
        budgets_ok &= t.count >= 1 && t.count <= d::stream_tile_segments && t.rows >= 1 &&
                      t.rows <= d::stream_tile_rows && t.entries <= d::stream_tile_entries;
        int64_t rows_seen = 0, entries_seen = 0;
        for (int k = 0; k < t.count; ++k) {
          const auto& sg = p.segments[static_cast<std::size_t>(t.first + k)];
          const int64_t seg_rows =
              (k + 1 < t.count ? p.segments[static_cast<std::size_t>(t.first + k + 1)].r0 : t.rows) - sg.r0;
          budgets_ok &= sg.r0 == rows_seen && sg.q0 == entries_seen && sg.p0 == ptr[sg.first_row] && seg_rows >= 1;
          for (int64_t r = sg.first_row; r < sg.first_row + seg_rows; ++r) {
            ++seen[static_cast<std::size_t>(r)];
            budgets_ok &= ptr[r + 1] - ptr[r] <= d::stream_max_row;
          }
          rows_seen += seg_rows;
          entries_seen += ptr[sg.first_row + seg_rows] - ptr[sg.first_row];
        }
        budgets_ok &= rows_seen == t.rows && entries_seen == t.entries && t.lanes == d::stream_lanes(t.entries, t.rows);
        lanes_used.insert(t.lanes);
      } else if (t.kind == d::tile_warp) {
        budgets_ok &= t.count >= 1 && t.count <= d::warps_per_tile;
        for (int64_t k = t.first; k < t.first + t.count; ++k) {
          const int64_t r = p.warp_rows[static_cast<std::size_t>(k)];
          ++seen[static_cast<std::size_t>(r)];
          budgets_ok &= ptr[r + 1] - ptr[r] > d::stream_max_row && ptr[r + 1] - ptr[r] <= d::warp_max_row;
        }
      } else if (t.kind == d::tile_block) {
        ++seen[static_cast<std::size_t>(t.first)];
        budgets_ok &= ptr[t.first + 1] - ptr[t.first] > d::warp_max_row && ptr[t.first + 1] - ptr[t.first] <= d::block_max_row;
      } else {
        split_covered[static_cast<std::size_t>(t.first)] += t.count;
        budgets_ok &= t.count <= d::split_chunk && t.begin >= ptr[t.first] && t.begin + t.count <= ptr[t.first + 1];
        // The kernel's in-launch finish (finish_split) finds the row's chunk list through t.split.
        budgets_ok &= t.split >= 0 && static_cast<std::size_t>(t.split) < p.split_rows.size();
        if (budgets_ok) {
          const auto& sr = p.split_rows[static_cast<std::size_t>(t.split)];
          budgets_ok &= sr.row == t.first && t.slot >= sr.first_slot && t.slot < sr.first_slot + sr.chunks;
        }
      }
    }
    for (const auto& s : p.split_rows) {
      ++seen[static_cast<std::size_t>(s.row)];
      budgets_ok &= split_covered[static_cast<std::size_t>(s.row)] == ptr[s.row + 1] - ptr[s.row];
    }
    int64_t wrong = 0;
    for (int c : seen) wrong += c != 1;
    BOOST_TEST(wrong == 0, nm.name << ": " << wrong << " rows not covered exactly once");
    // Medium rows longest first, ties in row order (warp_row_order::longest_first, the library's).
    bool ordered = true;
    for (std::size_t k = 1; k < p.warp_rows.size(); ++k) {
      const int64_t r0 = p.warp_rows[k - 1], r1 = p.warp_rows[k];
      const int64_t l0 = ptr[r0 + 1] - ptr[r0], l1 = ptr[r1 + 1] - ptr[r1];
      ordered &= l0 > l1 || (l0 == l1 && r0 < r1);
    }
    BOOST_TEST(ordered, nm.name << ": medium rows are not longest first");
    BOOST_TEST(budgets_ok, nm.name << ": a tile exceeds its budget or a split row is not fully covered");
  }
  // The GPU cases run these matrices: every reduce-phase width of the stream tiles is exercised.
  BOOST_TEST((lanes_used == std::set<int>{1, 16, 32}));
}

// White-box: the merge partition tiles the merge path (rows' ends + entries) into full blocks at valid
// merge-path coordinates, and lists exactly the rows whose items fall in more than one block, with one
// partial slot per block they touch, consecutive and in block order.
CPU_TEST_CASE(merge_partition_tiles_the_merge_path) {
  namespace d = sparse::detail;
  for (const auto& nm : matrices()) {
    const auto& a = nm.a;
    const auto& ptr = a.row_ptr();
    const int64_t rows = a.rows(), nnz = a.nnz(), items = rows + nnz;
    const auto m = d::build_merge_partition(rows, ptr.data());
    BOOST_TEST_REQUIRE(m.blocks.size() == static_cast<std::size_t>((items + d::merge_tile - 1) / d::merge_tile + 1));
    bool coords_ok = m.blocks.front().row == 0 && m.blocks.front().nz == 0 && m.blocks.back().row == rows &&
                     m.blocks.back().nz == nnz;
    for (std::size_t b = 0; b + 1 < m.blocks.size(); ++b) {
      const auto& blk = m.blocks[b];
      const auto& next = m.blocks[b + 1];
      const int64_t n = (next.row - blk.row) + (next.nz - blk.nz);
      coords_ok &= n > 0 && n <= d::merge_tile && (b + 2 == m.blocks.size() || n == d::merge_tile);
      // Valid coordinate: the rows before it have ended by entry nz, row `row` has not.
      coords_ok &= (blk.row == 0 || ptr[blk.row] <= blk.nz) && blk.row < rows && ptr[blk.row + 1] >= blk.nz;
    }
    BOOST_TEST(coords_ok, nm.name << ": a merge block has a wrong size or an invalid merge-path coordinate");
    // Expected split rows: a non-empty row's first entry (item row + ptr[row]) and its end (item
    // row + ptr[row + 1]) in different blocks.
    std::vector<std::pair<int64_t, int64_t>> expected;  // (row, blocks touched)
    for (int64_t r = 0; r < rows; ++r) {
      if (ptr[r + 1] == ptr[r]) continue;
      const int64_t first = (r + ptr[r]) / d::merge_tile, last = (r + ptr[r + 1]) / d::merge_tile;
      if (first != last) expected.emplace_back(r, last - first + 1);
    }
    bool split_ok = expected.size() == m.split_rows.size();
    int64_t slot = 0;
    for (std::size_t k = 0; split_ok && k < expected.size(); ++k) {
      split_ok &= m.split_rows[k].row == expected[k].first && m.split_rows[k].chunks == expected[k].second &&
                  m.split_rows[k].first_slot == slot;
      slot += m.split_rows[k].chunks;
    }
    split_ok &= slot == m.partial_slots;
    BOOST_TEST(split_ok, nm.name << ": the rows crossing a merge block boundary are not listed exactly");
  }
}

// White-box: the stencil table decodes to exactly the matrix's columns wherever it applies, applies
// exactly where an independent count says it should, and does not depend on the fetch piece size.
CPU_TEST_CASE(stencil_table_reproduces_every_column_where_it_applies) {
  namespace d = sparse::detail;
  int usable = 0;
  std::set<bool> unrolled;  // both forms of the kernel (rows <= 8 entries, longer) must meet these matrices
  for (const auto& nm : matrices()) {
    const auto& a = nm.a;
    const auto& ptr = a.row_ptr();
    const auto& col = a.col_idx();
    // Independent verdict: distinct (column - row) sequences, longest row, table words.
    std::set<std::vector<int64_t>> patterns;
    int64_t longest = 0, words = 1;
    for (int64_t i = 0; i < a.rows(); ++i) {
      std::vector<int64_t> off;
      for (auto q = ptr[i]; q < ptr[i + 1]; ++q) off.push_back(col[q] - i);
      longest = std::max<int64_t>(longest, static_cast<int64_t>(off.size()));
      if (patterns.insert(off).second) words += 1 + static_cast<int64_t>(off.size());
    }
    const bool expected = longest <= d::stencil_max_row &&
                          patterns.size() <= static_cast<std::size_t>(d::stencil_max_patterns) &&
                          words <= d::stencil_table_words;
    const auto t = host_stencil_table(a);
    BOOST_TEST(t.usable() == expected, nm.name << ": stencil " << (t.usable() ? "applies" : "refused: " + t.why_not)
                                                << ", expected the opposite");
    for (std::int64_t chunk : {1, 7, 100}) {  // pieces of one row up to many rows: the same table
      const auto u = host_stencil_table(a, chunk);
      BOOST_TEST((u.usable() == t.usable() && u.patterns == t.patterns && u.words == t.words &&
                  u.pattern_of_row == t.pattern_of_row),
                 nm.name << ": pieces of " << chunk << " entries give a different table");
    }
    if (!t.usable()) continue;
    ++usable;
    unrolled.insert(longest <= 8);
    BOOST_TEST_MESSAGE("stencil applies to " << nm.name << ": " << t.patterns << " patterns");
    BOOST_TEST(t.patterns == static_cast<int32_t>(patterns.size()));
    BOOST_TEST_REQUIRE(t.words.size() == static_cast<std::size_t>(words));
    int64_t wrong = 0;
    for (int64_t i = 0; i < a.rows(); ++i) {
      const int pid = t.pattern_of_row[static_cast<std::size_t>(i)];
      const auto* off = t.words.data() + t.patterns + 1;
      const int32_t b = t.words[static_cast<std::size_t>(pid)], e = t.words[static_cast<std::size_t>(pid) + 1];
      wrong += e - b != ptr[i + 1] - ptr[i];
      for (int32_t k = b; k < e && k - b < ptr[i + 1] - ptr[i]; ++k) wrong += i + off[k] != col[ptr[i] + (k - b)];
    }
    BOOST_TEST(wrong == 0, nm.name << ": " << wrong << " rows or columns decode wrongly");
  }
  // The GPU cases run stencil on these (the Laplacians, the hostile small shapes, ...).
  BOOST_TEST(usable >= 14, "stencil applies to " << usable << " test matrices only");
  BOOST_TEST(unrolled.size() == 2u, "the stencil matrices need rows of <= 8 and of more entries");
  // Each refusal names its reason.
  BOOST_TEST(host_stencil_table(from_lengths(100, {3, 33, 2}, 71)).why_not.find("row 1 has 33 entries") != std::string::npos);
  std::vector<int64_t> ptr{0}, cols;
  for (int64_t i = 0; i < 300; ++i) {  // 300 rows, one entry each, every one at a new offset
    cols.push_back((2 * i) % 300);  // offset i below row 150, i - 300 from there: 300 distinct
    ptr.push_back(i + 1);
  }
  const base_csr many(300, 300, ptr, cols, std::vector<double>(300, 1.0));
  BOOST_TEST(host_stencil_table(many).why_not.find("more than 256 distinct") != std::string::npos,
             host_stencil_table(many).why_not);
  const auto wide = from_lengths(4000, std::vector<int64_t>(40, 32), 72);  // 40 patterns x 32 offsets
  BOOST_TEST(host_stencil_table(wide).why_not.find("table words") != std::string::npos, host_stencil_table(wide).why_not);
}

// White-box, and the CPU path of the windowed kernel's arithmetic: every layout holds each entry exactly
// once in the slot its position gives it (entry t of a row of S slots in slot t mod S), each slot's entries
// in column order, no slot twice in a group of 32, whole groups and whole rows per warp, and words that
// decode to the entry's slot and column. Summing it as the kernel does (a fused multiply-add per entry
// into its slot, in list order; then each row's slots in slot order) gives bitwise the same as the CPU's
// fma chains in that association, and for rows of one slot, scalar's chain. Several window widths, slot
// caps and warp counts, on every test matrix the layout takes; the others must be refused with the reason.
CPU_TEST_CASE(windowed_layout_holds_every_entry_once_in_slot_order) {
  namespace d = sparse::detail;
  struct shape {
    int window, max_slots;
    std::int64_t warps;
  };
  int built = 0, refused = 0, multi_slot = 0;
  std::int64_t padded = 0;
  for (const auto& nm : matrices()) {
    const auto& a = nm.a;
    const auto& ptr = a.row_ptr();
    const auto& col = a.col_idx();
    const auto x = test::random_vector<double>(a.cols(), -1.0, 1.0, 91);
    auto slots_of = [&](int64_t r) { return std::max<int64_t>(1, (ptr[r + 1] - ptr[r] + d::windowed_slot_entries - 1) / d::windowed_slot_entries); };
    // The expected sums: slot j of row r is the fma chain over entries j, j + S, ...; the row adds its slots in order.
    std::vector<double> expect(static_cast<std::size_t>(a.rows()), 0.0);
    for (int64_t i = 0; i < a.rows(); ++i) {
      const int64_t S = slots_of(i);
      double row = 0;
      for (int64_t j = 0; j < S; ++j) {
        double slot = 0;
        for (auto q = ptr[i] + j; q < ptr[i + 1]; q += S) slot = std::fma(a.values()[q], x[static_cast<std::size_t>(col[q])], slot);
        row = j == 0 ? slot : row + slot;
      }
      expect[static_cast<std::size_t>(i)] = row;
    }
    const bool applies = windowed_applies(a);
    for (const shape sh : {shape{4096, 1023, 64}, shape{1, 64, 7}, shape{4, 1023, 1}}) {
      const auto w = d::build_windowed_layout<int64_t>(a.rows(), a.cols(), ptr.data(), col.data(), sh.warps, sh.window, sh.max_slots);
      const std::string ctx = nm.name + " window " + std::to_string(sh.window) + " slots " + std::to_string(sh.max_slots);
      BOOST_TEST(w.usable() == applies, ctx << ": " << (w.usable() ? "built" : w.why_not));
      if (!w.usable()) {
        ++refused;
        BOOST_TEST(w.why_not.find("entries (at most 2048)") != std::string::npos, ctx << ": " << w.why_not);
        continue;
      }
      ++built;
      padded += w.padding;
      BOOST_TEST_REQUIRE(w.packed.size() == w.source.size());
      BOOST_TEST_REQUIRE((static_cast<int64_t>(w.warp_row0.size()) == w.warps() + 1 && w.warp_slot0.size() == w.warp_row0.size()));
      BOOST_TEST_REQUIRE((w.warp_row0.front() == 0 && w.warp_row0.back() == a.rows()));
      BOOST_TEST_REQUIRE(w.warp_begin.back() == static_cast<int64_t>(w.packed.size()));
      BOOST_TEST(w.padding == static_cast<int64_t>(w.packed.size()) - a.nnz());
      // Each row's first slot (the layout keeps row_slot only when some row has several).
      std::vector<int64_t> first(static_cast<std::size_t>(a.rows()) + 1, 0);
      for (int64_t i = 0; i < a.rows(); ++i) first[static_cast<std::size_t>(i) + 1] = first[static_cast<std::size_t>(i)] + slots_of(i);
      BOOST_TEST((w.row_slot.empty() ? first.back() == a.rows() : w.row_slot == first), ctx << ": row_slot");
      multi_slot += !w.row_slot.empty();
      std::vector<int> seen(static_cast<std::size_t>(a.nnz()), 0);
      std::vector<int64_t> last(static_cast<std::size_t>(first.back()), -1);  // last source per slot
      std::vector<double> slot_sum(static_cast<std::size_t>(first.back()), 0.0);
      int64_t wrong = 0, block_slots = 0;
      for (int64_t g = 0; g < w.warps(); ++g) {
        const int64_t r0 = w.warp_row0[static_cast<std::size_t>(g)], r1 = w.warp_row0[static_cast<std::size_t>(g) + 1];
        const int64_t s0 = w.warp_slot0[static_cast<std::size_t>(g)], s1 = w.warp_slot0[static_cast<std::size_t>(g) + 1];
        const int64_t b = w.warp_begin[static_cast<std::size_t>(g)], e = w.warp_begin[static_cast<std::size_t>(g) + 1];
        wrong += r1 < r0 || s0 != first[static_cast<std::size_t>(r0)] || s1 != first[static_cast<std::size_t>(r1)] ||
                 s1 - s0 > sh.max_slots || b % 32 != 0 || e < b;
        if (g % d::windowed_warps_per_block == 0) {
          const int64_t end = std::min<int64_t>(g + d::windowed_warps_per_block, w.warps());
          block_slots = std::max(block_slots, w.warp_slot0[static_cast<std::size_t>(end)] - s0);
        }
        for (int64_t q = b; q < e; q += 32) {
          std::set<int64_t> slots_in_group;
          for (int64_t k = q; k < std::min(q + 32, e); ++k) {
            const std::uint32_t word = w.packed[static_cast<std::size_t>(k)];
            const int64_t src = w.source[static_cast<std::size_t>(k)];
            if (src < 0) {
              wrong += word != d::windowed_pad;
              continue;
            }
            // The row holding entry src, searched in this warp's rows (r1 when it is not among them).
            const int64_t row = src < ptr[r0] || src >= ptr[r1] ? r1
                : static_cast<int64_t>(std::upper_bound(ptr.begin() + r0, ptr.begin() + r1 + 1, src) - ptr.begin()) - 1;
            if (row == r1 || src >= a.nnz()) {
              ++wrong;
              continue;
            }
            const int64_t slot = first[static_cast<std::size_t>(row)] + (src - ptr[row]) % slots_of(row);
            wrong += static_cast<int64_t>(word >> d::windowed_column_bits) != slot - s0 ||
                     static_cast<int64_t>(word & d::windowed_column_mask) != col[src] || word == d::windowed_pad;
            ++seen[static_cast<std::size_t>(src)];
            wrong += !slots_in_group.insert(slot).second;                 // no slot twice in a group
            wrong += src <= last[static_cast<std::size_t>(slot)];          // column (storage) order per slot
            last[static_cast<std::size_t>(slot)] = src;
            slot_sum[static_cast<std::size_t>(slot)] =
                std::fma(a.values()[src], x[static_cast<std::size_t>(col[src])], slot_sum[static_cast<std::size_t>(slot)]);
          }
        }
      }
      std::vector<double> y(static_cast<std::size_t>(a.rows()), 0.0);
      for (int64_t i = 0; i < a.rows(); ++i) {
        double s = slot_sum[static_cast<std::size_t>(first[static_cast<std::size_t>(i)])];
        for (int64_t q = first[static_cast<std::size_t>(i)] + 1; q < first[static_cast<std::size_t>(i) + 1]; ++q) s += slot_sum[static_cast<std::size_t>(q)];
        y[static_cast<std::size_t>(i)] = s;
      }
      BOOST_TEST(wrong == 0, ctx << ": " << wrong << " malformed words, groups or warps");
      BOOST_TEST(block_slots == w.max_block_slots, ctx);
      BOOST_TEST(std::count(seen.begin(), seen.end(), 1) == a.nnz(), ctx << ": an entry is missing or repeated");
      BOOST_TEST(std::memcmp(y.data(), expect.data(), y.size() * sizeof(double)) == 0,
                 ctx << ": the layout's sums differ bitwise from the slot-order fma chains");
    }
  }
  BOOST_TEST(built >= 3 * 20);
  BOOST_TEST(refused > 0, "no test matrix has rows beyond the slots: the refusal went untested");
  BOOST_TEST(multi_slot > 0, "no test matrix has rows of several slots");
  BOOST_TEST(padded > 0, "no layout needed padding: the padding path went untested");
  // Refused: columns beyond 22 bits.
  const std::vector<int64_t> ptr = {0, 1};
  const std::vector<int64_t> cols = {5};
  const auto wide = d::build_windowed_layout<int64_t>(1, d::windowed_max_cols + 1, ptr.data(), cols.data(), 1, 4096);
  BOOST_TEST(wide.why_not.find("4194305 columns (at most 4194304") != std::string::npos, wide.why_not);
  // automatic's rule: random16 in float and random1000 reuse x's sectors enough on 132 SMs; random16 in
  // double, random2 (too many columns), small matrices and rows beyond the slots do not.
  sparse::row_stats r16;
  r16.rows = r16.cols = 2000000;
  r16.nnz = 32000000;
  r16.max_length = 30;
  BOOST_TEST(sparse::windowed_pays(r16, sizeof(float), 132));
  BOOST_TEST(!sparse::windowed_pays(r16, sizeof(double), 132));
  sparse::row_stats r1000 = r16;
  r1000.rows = 20000;
  r1000.nnz = 20000000;
  r1000.max_length = 1000;
  BOOST_TEST(sparse::windowed_pays(r1000, sizeof(float), 132));
  r1000.max_length = 2049;
  BOOST_TEST(!sparse::windowed_pays(r1000, sizeof(float), 132));
  sparse::row_stats r2 = r16;
  r2.rows = r2.cols = 8000000;
  r2.nnz = 16000000;
  BOOST_TEST(!sparse::windowed_pays(r2, sizeof(float), 132));
  sparse::row_stats small = r16;
  small.rows = small.cols = 20000;
  small.nnz = 320000;
  BOOST_TEST(!sparse::windowed_pays(small, sizeof(float), 1));  // below 2^22 entries
}

// automatic takes windowed on large random rows where windowed_pays(), and the plan refuses a matrix
// whose columns do not fit the packed word.
GPU_TEST_CASE(automatic_takes_windowed_where_it_pays) {
  using sparse::spmv_algorithm;
  const auto r = sparse::generate_random_k<float, int32_t>(300000, 300000, 16, 84);  // 4.8M entries
  const sparse::device_csr<float, int32_t> d(r);
  const sparse::spmv_plan<float, int32_t> plan(d);
  const bool pays = sparse::windowed_pays(plan.stats(), sizeof(float), sparse::detail::current_sm_count());
  BOOST_TEST(pays, "random16-like rows on 300k columns should pay on this GPU");
  BOOST_TEST((plan.algorithm() == (pays ? spmv_algorithm::windowed : spmv_algorithm::vector)), plan.describe());
  // Its result: bitwise scalar's, and within bound of the references.
  const auto x = test::random_vector<float>(r.cols(), -1.f, 1.f, 85);
  const std::vector<float> y0 = test::random_vector<float>(r.rows(), -1.f, 1.f, 86);
  const auto y = gpu_run(plan, 0.5f, x, -2.0f, y0);
  const auto ys = gpu_run(sparse::spmv_plan<float, int32_t>(d, spmv_algorithm::scalar), 0.5f, x, -2.0f, y0);
  BOOST_TEST(std::memcmp(y.data(), ys.data(), y.size() * sizeof(float)) == 0, plan.describe() << " differs from scalar");
  check_rows("automatic on 300k x 300k, 16 per row: " + plan.describe(), r, 0.5f, x, -2.0f, y0, y, nullptr);
  // Rows of 1,000 (block_per_row's domain), summed in 32 slots each: within bound of the references.
  const auto r1k = sparse::generate_random_k<float, int32_t>(5000, 300000, 1000, 88);  // 5M entries
  const sparse::device_csr<float, int32_t> d1k(r1k);
  const sparse::spmv_plan<float, int32_t> plan1k(d1k);
  const bool pays1k = sparse::windowed_pays(plan1k.stats(), sizeof(float), sparse::detail::current_sm_count());
  BOOST_TEST((plan1k.algorithm() == (pays1k ? spmv_algorithm::windowed : spmv_algorithm::block_per_row)), plan1k.describe());
  const auto x1k = test::random_vector<float>(r1k.cols(), -1.f, 1.f, 89);
  const std::vector<float> y1k = test::random_vector<float>(r1k.rows(), -1.f, 1.f, 90);
  check_rows("automatic on 5000 x 300k, 1000 per row: " + plan1k.describe(), r1k, 0.5f, x1k, -2.0f, y1k,
             gpu_run(plan1k, 0.5f, x1k, -2.0f, y1k), nullptr);
  const auto wide = sparse::generate_random_k<float, int32_t>(10, 5000000, 2, 87);
  const sparse::device_csr<float, int32_t> dw(wide);
  try {
    sparse::spmv_plan<float, int32_t> refused(dw, spmv_algorithm::windowed);
    BOOST_ERROR("windowed accepted 5,000,000 columns");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("windowed algorithm does not apply to this matrix: 5000000 columns") !=
                   std::string::npos, e.what());
  }
}

// automatic takes stencil where the CSR choice is scalar and the matrix qualifies, and only there.
GPU_TEST_CASE(automatic_takes_stencil_where_it_applies) {
  using sparse::spmv_algorithm;
  auto automatic = [](const base_csr& a) {
    const auto f = a.cast<float, int32_t>();
    const sparse::device_csr<float, int32_t> d(f);
    return sparse::spmv_plan<float, int32_t>(d).algorithm();
  };
  BOOST_TEST((automatic(sparse::generate_laplace_2d<double, int64_t>(40)) == spmv_algorithm::stencil));
  BOOST_TEST((automatic(sparse::generate_laplace_3d<double, int64_t>(20)) == spmv_algorithm::stencil));
  // Short uniform random rows: scalar's domain, but thousands of patterns (refused after the first piece).
  BOOST_TEST((automatic(sparse::generate_random_k<double, int64_t>(5000, 5000, 8, 81)) == spmv_algorithm::scalar));
  BOOST_TEST((automatic(sparse::generate_random_k<double, int64_t>(5000, 5000, 2, 82)) == spmv_algorithm::vector));
  // Forced on a matrix it does not apply to: refused with the reason.
  const auto r = sparse::generate_random_k<float, int32_t>(5000, 5000, 8, 83);
  const sparse::device_csr<float, int32_t> d(r);
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

CPU_TEST_CASE(bad_plan_and_peer_inputs_are_rejected) {
  // Checked before any device call, so these run without a GPU.
  const std::vector<int32_t> ptr = {0, 2, 3};
  sparse::csr_view<float, int32_t> v{2, 2, 5, nullptr, nullptr, nullptr};  // nnz disagrees with row_ptr
  BOOST_CHECK_THROW((sparse::spmv_plan<float, int32_t>(v, ptr.data())), std::invalid_argument);
  sparse::csr_view<float, int32_t> empty{0, 4, 0, nullptr, nullptr, nullptr};
  BOOST_CHECK_THROW((sparse::cusparse_spmv<float, int32_t>(empty, sparse::cusparse_algorithm::alg1, nullptr, nullptr)),
                    std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
