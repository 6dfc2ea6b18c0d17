// The SpMV test matrices (spmv_test_support.hpp).
#include "spmv_test_support.hpp"

#include <random>
#include <stdexcept>

#include "gpukit_paths.hpp"
#include "sparse/generate.hpp"
#include "sparse/io.hpp"

namespace spmv_test {

base_csr from_lengths(std::int64_t cols, const std::vector<std::int64_t>& lengths, std::uint64_t stream) {
  auto g = test::rng(stream);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<std::int64_t> ptr{0}, col;
  std::vector<double> v;
  for (std::int64_t len : lengths) {
    if (len > cols) throw std::invalid_argument("from_lengths: a row longer than the column count");
    const std::int64_t step = len > 0 ? cols / len : 0;
    for (std::int64_t t = 0; t < len; ++t) {
      col.push_back(t * step + static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(step)));
      v.push_back(val(g));
    }
    ptr.push_back(static_cast<std::int64_t>(col.size()));
  }
  return base_csr(static_cast<std::int64_t>(lengths.size()), cols, std::move(ptr), std::move(col), std::move(v));
}

base_csr banded(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& offsets, std::uint64_t stream) {
  auto g = test::rng(stream);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<std::int64_t> ptr{0}, col;
  std::vector<double> v;
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t o : offsets)
      if (i + o >= 0 && i + o < cols) {
        col.push_back(i + o);
        v.push_back(val(g));
      }
    ptr.push_back(static_cast<std::int64_t>(col.size()));
  }
  return base_csr(rows, cols, std::move(ptr), std::move(col), std::move(v));
}

namespace {

// Bundled real matrices (SuiteSparse, data/sparse; provenance in data/README.md) and small bundled
// generated ones, read through both file formats; each generated class at small size.
void add_bundled_and_generated(std::vector<named_matrix>& m) {
  for (const char* f : {"494_bus.mtx", "cage8.mtx", "jagmesh7.mtx", "lp_afiro.mtx", "west0479.mtx", "west0479.h5",
                        "laplace2d_16.mtx", "random_k5_300x200.mtx", "powerlaw_2000.h5"})
    m.push_back({f, sparse::read_matrix<double, std::int64_t>(std::string(gpukit::data_dir) + "/sparse/" + f)});
  m.push_back({"laplace2d_33", sparse::generate_laplace_2d<double, std::int64_t>(33)});
  m.push_back({"laplace3d_9", sparse::generate_laplace_3d<double, std::int64_t>(9)});
  // More rows (360,000) than one wave of stencil's blocks covers, so its grid-stride loop turns (not in
  // reduced runs, test::reduced_sizes(): the sanitizers' pass).
  if (!test::reduced_sizes()) m.push_back({"laplace2d_600", sparse::generate_laplace_2d<double, std::int64_t>(600)});
  // Banded, rectangular both ways: tall with empty rows at the bottom, wide with far offsets.
  m.push_back({"banded_5000x3000", banded(5000, 3000, {-700, -3, 0, 1, 2, 40}, 27)});
  m.push_back({"banded_2000x9000", banded(2000, 9000, {0, 4000, 8999}, 28)});
  // Rows of up to 12 entries: the stencil kernel's plain loop (rows of <= 8 take its unrolled form).
  m.push_back({"banded_3001_k12", banded(3001, 3001, {-900, -64, -9, -3, -2, -1, 0, 1, 2, 5, 64, 1000}, 29)});
  m.push_back({"random_4099_k3", sparse::generate_random_k<double, std::int64_t>(4099, 4099, 3, 17)});  // vector: 4 lanes
  m.push_back({"random_2049_k24", sparse::generate_random_k<double, std::int64_t>(2049, 2049, 24, 18)});  // stream: 32 lanes
  m.push_back({"random_1025x517_k5", sparse::generate_random_k<double, std::int64_t>(1025, 517, 5, 11)});
  m.push_back({"random_257x4097_k40", sparse::generate_random_k<double, std::int64_t>(257, 4097, 40, 12)});
  m.push_back({"random_65_x_2000_k1000", sparse::generate_random_k<double, std::int64_t>(65, 2000, 1000, 13)});
  m.push_back({"powerlaw_20000", sparse::generate_power_law<double, std::int64_t>(20000, 20000, 14, 20000)});
  sparse::generate_params p;
  p.kind = sparse::matrix_class::dense_row;
  p.rows = 3001;
  p.k = 4;
  p.dense_length = 3001;
  p.seed = 15;
  m.push_back({"denserow_3001", sparse::generate<double, std::int64_t>(p)});
  // More rows than one grid of the row kernels covers (16 blocks x 256 per SM x 132 SMs = 540,672), so
  // their grid-stride loops turn.
  if (!test::reduced_sizes())
    m.push_back({"random_1000003_k2", sparse::generate_random_k<double, std::int64_t>(1000003, 1000003, 2, 16)});
}

// Hostile shapes: empty in every way, every bin boundary of the adaptive partition, a row split over
// 15 blocks, very tall and very wide.
void add_hostile(std::vector<named_matrix>& m) {
  m.push_back({"0x0", base_csr()});
  m.push_back({"0x5", base_csr(0, 5, {0}, {}, {})});
  m.push_back({"1x1", base_csr(1, 1, {0, 1}, {0}, {-0.75})});
  m.push_back({"1x1_empty", base_csr(1, 1, {0, 0}, {}, {})});
  m.push_back({"all_rows_empty_1025x33", base_csr(1025, 33, std::vector<std::int64_t>(1026, 0), {}, {})});
  m.push_back({"0_columns_5x0", base_csr(5, 0, std::vector<std::int64_t>(6, 0), {}, {})});
  std::vector<std::int64_t> len(4097);
  for (std::size_t i = 0; i < len.size(); ++i) len[i] = i % 3 == 0 ? 0 : static_cast<std::int64_t>(i % 7);  // every third empty
  m.push_back({"empty_rows_4097", from_lengths(4097, len, 21)});
  len.clear();
  for (std::int64_t l = 0; l <= 40; ++l) len.push_back(l);
  for (std::int64_t l : {63, 64, 65, 255, 256, 257, 1023, 1024, 1025, 2047, 4095, 4097, 8191, 8192, 8193, 16384, 16385})
    len.push_back(l);
  for (std::int64_t l = 0; l < 3000; ++l) len.push_back(l % 5);  // a long run of short rows after the long ones
  m.push_back({"row_length_ladder", from_lengths(20000, len, 22)});
  m.push_back({"long_row_120007", from_lengths(130000, {1, 3, 120007, 0, 2, 8193, 5}, 23)});
  m.push_back({"tall_5000x37", sparse::generate_random_k<double, std::int64_t>(5000, 37, 5, 24)});
  m.push_back({"wide_37x50000", sparse::generate_random_k<double, std::int64_t>(37, 50000, 3000, 25)});
  m.push_back({"wide_3x300", base_csr(3, 300, {0, 2, 2, 3}, {0, 299, 150}, {1.5, -2.0, 0.25})});
}

}  // namespace

const std::vector<named_matrix>& matrices() {
  static const std::vector<named_matrix> m = [] {
    std::vector<named_matrix> all;
    add_bundled_and_generated(all);
    add_hostile(all);
    return all;
  }();
  return m;
}

const named_matrix& matrix(const std::string& name) {
  for (const auto& m : matrices())
    if (m.name == name) return m;
  BOOST_FAIL("no test matrix named " << name);
  throw std::logic_error("unreachable");  // BOOST_FAIL throws; this keeps -Wreturn-type quiet
}

}  // namespace spmv_test
