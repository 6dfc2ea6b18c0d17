// libsparse host side: CSR containers and validation, Matrix Market and HDF5 I/O (including every
// malformed-file case) and the generators. The CPU SpMV paths are tested with the GPU ones (test_spmv.cpp).
#include <hdf5.h>

#include <boost/mpl/list.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "gpukit/error.hpp"
#include "gpukit_paths.hpp"
#include "sparse/csr.hpp"
#include "sparse/generate.hpp"
#include "sparse/io.hpp"
#include "temp_dir.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using std::int32_t;
using std::int64_t;

namespace {

/// This file's temporary directories (tests/support/temp_dir.hpp).
struct temp_dir : test::temp_dir {
  temp_dir() : test::temp_dir("test_sparse_io") {}
};

/// True when no temporary output (NAME.<pid>.<n>.partial, gpukit::atomic_output) is left in `dir`.
bool no_temporaries_in(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".partial") return false;
  return true;
}


std::string data(const std::string& name) { return std::string(gpukit::data_dir) + "/sparse/" + name; }

/// Runs f, expects exception E whose message contains every string in `parts`.
template <class E, class F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) BOOST_TEST(msg.find(p) != std::string::npos, "'" << msg << "' should contain '" << p << "'");
    return;
  }
  BOOST_ERROR("no exception; expected one containing '" << (parts.empty() ? "" : parts[0]) << "'");
}

template <class V, class I>
bool same(const sparse::host_csr<V, I>& a, const sparse::host_csr<V, I>& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && a.row_ptr() == b.row_ptr() && a.col_idx() == b.col_idx() &&
         a.values() == b.values();
}

using dense = std::vector<std::vector<double>>;
template <class V, class I>
dense to_dense(const sparse::host_csr<V, I>& a) {
  dense d(static_cast<std::size_t>(a.rows()), std::vector<double>(static_cast<std::size_t>(a.cols()), 0.0));
  for (int64_t i = 0; i < a.rows(); ++i)
    for (int64_t p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p) d[i][a.col_idx()[p]] += a.values()[p];
  return d;
}

using value_index_types = boost::mpl::list<std::pair<float, int32_t>, std::pair<float, int64_t>,
                                           std::pair<double, int32_t>, std::pair<double, int64_t>>;

}  // namespace

// ---------------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(containers)

CPU_TEST_CASE(constructor_rejects_inconsistent_shapes) {
  using M = sparse::host_csr<double, int32_t>;
  expect_error<sparse::invalid_matrix>([] { M(-1, 2, {0}, {}, {}); }, {"negative shape"});
  expect_error<sparse::invalid_matrix>([] { M(2, 2, {0, 1}, {0}, {1.0}); }, {"row_ptr has 2 entries", "rows + 1 = 3"});
  expect_error<sparse::invalid_matrix>([] { M(1, 2, {0, 1}, {0, 1}, {1.0}); }, {"col_idx has 2", "values has 1"});
  expect_error<sparse::invalid_matrix>([] { M(1, 2, {0, 2}, {0}, {1.0}); }, {"row_ptr[1] = 2", "nnz = 1"});
  M empty;
  BOOST_TEST(empty.rows() == 0);
  BOOST_TEST(empty.row_ptr().size() == 1u);
  empty.validate();
}

CPU_TEST_CASE(validate_names_the_first_violation) {
  using M = sparse::host_csr<float, int64_t>;
  M ok(3, 4, {0, 2, 2, 4}, {0, 3, 1, 2}, {1, 2, 3, 4});
  sparse::validate_options strict;
  strict.require_sorted_columns = strict.require_unique_columns = true;
  ok.validate(strict);

  M a = ok;
  a.row_ptr()[0] = 1;
  expect_error<sparse::invalid_matrix>([&] { a.validate(); }, {"row_ptr[0] = 1"});
  a = ok;
  a.row_ptr()[2] = 1;  // 2 > 1 at row 1
  expect_error<sparse::invalid_matrix>([&] { a.validate(); }, {"decreases at row 1", "row_ptr[1] = 2 > row_ptr[2] = 1"});
  a = ok;
  a.row_ptr()[2] = 5;
  expect_error<sparse::invalid_matrix>([&] { a.validate(); }, {"row 1", "exceeds nnz = 4"});
  a = ok;
  a.col_idx()[1] = 4;
  expect_error<sparse::invalid_matrix>([&] { a.validate(); }, {"row 0", "col_idx[1] = 4", "[0, 4)"});
  a = ok;
  a.col_idx()[2] = -1;
  expect_error<sparse::invalid_matrix>([&] { a.validate(); }, {"row 2", "col_idx[2] = -1"});
  a = ok;
  a.col_idx()[0] = 3;
  a.col_idx()[1] = 0;
  a.validate();  // unsorted is allowed by default
  expect_error<sparse::invalid_matrix>([&] { a.validate(strict); }, {"row 0", "not sorted", "col_idx[0] = 3 > col_idx[1] = 0"});
  a = ok;
  a.col_idx()[3] = 1;  // row 2 = {1, 1}
  a.validate();
  sparse::validate_options unique_only;
  unique_only.require_unique_columns = true;
  expect_error<sparse::invalid_matrix>([&] { a.validate(unique_only); }, {"row 2", "column 1 repeated"});
  expect_error<sparse::invalid_matrix>([&] { a.validate(strict); }, {"row 2", "column 1 repeated"});
  a = ok;
  a.row_ptr().push_back(4);
  expect_error<sparse::invalid_matrix>([&] { a.validate(); }, {"row_ptr has 5 entries", "rows + 1 = 4"});
}

CPU_TEST_CASE(cast_converts_and_checks_index_range) {
  sparse::host_csr<double, int64_t> a(2, 3, {0, 1, 3}, {2, 0, 1}, {0.1, -2.5, 1e300});
  auto f = a.cast<float, int32_t>();
  BOOST_TEST(f.values()[0] == 0.1f);
  BOOST_TEST(std::isinf(f.values()[2]));  // 1e300 overflows float: IEEE rounding gives inf
  BOOST_TEST((f.col_idx() == std::vector<int32_t>{2, 0, 1}));
  auto back = f.cast<double, int64_t>();
  BOOST_TEST(back.values()[1] == -2.5);
  sparse::host_csr<double, int64_t> wide(1, int64_t{1} << 33, {0, 1}, {int64_t{1} << 32}, {1.0});
  wide.validate();
  expect_error<sparse::invalid_matrix>([&] { wide.cast<double, int32_t>(); }, {"col_idx[0] = 4294967296", "does not fit"});
}

using device_types = boost::mpl::list<float, double>;
GPU_TEST_CASE_TEMPLATE(device_csr_round_trip, V, device_types) {
  auto a = sparse::generate_random_k<V, int32_t>(1025, 333, 7, 11);
  sparse::device_csr<V, int32_t> d(a);
  BOOST_TEST(d.rows() == a.rows());
  BOOST_TEST(d.nnz() == a.nnz());
  const auto v = d.view();
  BOOST_TEST(v.nnz == a.nnz());
  BOOST_TEST(same(d.download(), a));
  sparse::device_csr<V, int32_t> moved(std::move(d));
  BOOST_TEST(same(moved.download(), a));
  sparse::device_csr<V, int32_t> empty(sparse::host_csr<V, int32_t>{});
  BOOST_TEST(empty.download().rows() == 0);
}

// A size no device holds fails naming it: 2^62 doubles wrap to 0 bytes in size_t (refused before any
// CUDA call, so this runs without a GPU); 2^50 bytes (1 PiB) is a real cudaMalloc that fails.
CPU_TEST_CASE(device_allocations_beyond_size_t_are_refused) {
  expect_error<gpukit::cuda_error>([] { gpukit::device_buffer<double> b(std::int64_t{1} << 62); },
                                   {"out of device memory", "4611686018427387904 elements of 8 bytes"});
}
// Not in the sanitizers' pass (GPUKIT_TEST_REDUCED): the failing cudaMalloc is the point of the case, and
// memcheck reports every failed API call as an error.
BOOST_AUTO_TEST_CASE(device_allocations_beyond_memory_name_the_bytes,
                     *boost::unit_test::label("gpu") * boost::unit_test::precondition([](boost::unit_test::test_unit_id id) {
                       if (!test::reduced_sizes()) return test::cuda_device_present(id);
                       boost::test_tools::assertion_result skip(false);
                       skip.message() << "GPUKIT_TEST_REDUCED is set (memcheck counts the intended cudaMalloc failure)";
                       return skip;
                     })) {
  expect_error<gpukit::cuda_error>([] { gpukit::device_buffer<char> b(std::int64_t{1} << 50); },
                                   {"out of device memory: an allocation of 1125899906842624 bytes failed", "bytes free"});
  gpukit::device_buffer<char> after(1024);  // the failure left no sticky error behind
  BOOST_TEST(after.size() == 1024);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(matrix_market)

CPU_TEST_CASE(reads_general_with_duplicates_and_explicit_zeros) {
  temp_dir t;
  const auto p = t.file("g.mtx",
                        "%%MatrixMarket matrix coordinate real general\r\n"
                        "% a comment\n"
                        "\n"
                        "3 4 6\n"
                        "3 4 1.5\n"
                        "1 2 -2e-3\n"
                        "   1 1 0\n"          // explicit zero kept
                        "3 1 +4\n"
                        "3 4 2.25\n"          // duplicate of (3,4): summed to 3.75
                        "1 2 1e-3\n"
                        "% trailing comment\n");
  auto a = sparse::read_matrix_market<double, int32_t>(p);
  BOOST_TEST(a.rows() == 3);
  BOOST_TEST(a.cols() == 4);
  BOOST_TEST((a.row_ptr() == std::vector<int32_t>{0, 2, 2, 4}));
  BOOST_TEST((a.col_idx() == std::vector<int32_t>{0, 1, 0, 3}));
  BOOST_TEST(a.values()[0] == 0.0);
  BOOST_TEST(a.values()[1] == -2e-3 + 1e-3);  // summed in double, as the code does: exact same rounding
  BOOST_TEST(a.values()[2] == 4.0);
  BOOST_TEST(a.values()[3] == 3.75);
  sparse::validate_options strict;
  strict.require_sorted_columns = strict.require_unique_columns = true;
  a.validate(strict);
}

CPU_TEST_CASE(expands_symmetric_skew_and_pattern) {
  temp_dir t;
  auto s = sparse::read_matrix_market<double, int64_t>(t.file("s.mtx",
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2\n3 1 -1\n2 2 5\n"));
  BOOST_TEST((to_dense(s) == dense{{2, 0, -1}, {0, 5, 0}, {-1, 0, 0}}));
  auto k = sparse::read_matrix_market<float, int32_t>(t.file("k.mtx",
      "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 7\n3 2 -4\n"));
  BOOST_TEST((to_dense(k) == dense{{0, -7, 0}, {7, 0, 4}, {0, -4, 0}}));
  auto pt = sparse::read_matrix_market<double, int32_t>(t.file("p.mtx",
      "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n"));
  BOOST_TEST((to_dense(pt) == dense{{0, 0, 1}, {1, 0, 0}}));
  auto ps = sparse::read_matrix_market<double, int32_t>(t.file("ps.mtx",
      "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n2 1\n2 2\n"));
  BOOST_TEST((to_dense(ps) == dense{{0, 1}, {1, 1}}));
  auto e = sparse::read_matrix_market<double, int32_t>(t.file("e.mtx",
      "%%MatrixMarket matrix coordinate real general\n0 0 0\n"));
  BOOST_TEST(e.rows() == 0);
  BOOST_TEST(e.nnz() == 0);
}

CPU_TEST_CASE(bundled_matrices_match_their_documented_properties) {
  // From the SuiteSparse Matrix Collection records of each matrix (data/README.md): rows, cols, full nnz after symmetric expansion.
  struct expect { const char* file; int64_t rows, cols, nnz; };
  for (const expect& e : {expect{"494_bus.mtx", 494, 494, 1666}, expect{"west0479.mtx", 479, 479, 1910},
                          expect{"cage8.mtx", 1015, 1015, 11003}, expect{"jagmesh7.mtx", 1138, 1138, 7450},
                          expect{"lp_afiro.mtx", 27, 51, 102}, expect{"olm1000.mtx", 1000, 1000, 3996},
                          expect{"zenios.mtx", 2873, 2873, 27191}, expect{"pushpull.mtx", 4000, 4000, 196305},
                          expect{"dnn_n1024_l1.mtx", 1024, 1024, 32768},
                          expect{"dnn_images_1024.mtx", 1200, 1024, 122713}}) {
    BOOST_TEST_CONTEXT(e.file) {
      auto a = sparse::read_matrix_market<double, int32_t>(data(e.file));
      BOOST_TEST(a.rows() == e.rows);
      BOOST_TEST(a.cols() == e.cols);
      BOOST_TEST(a.nnz() == e.nnz);
    }
  }
  // west0479 keeps its 22 explicit zeros.
  auto w = sparse::read_matrix_market<double, int32_t>(data("west0479.mtx"));
  BOOST_TEST(std::count(w.values().begin(), w.values().end(), 0.0) == 22);
  // The bundled HDF5 copy is the same matrix.
  BOOST_TEST(same(sparse::read_hdf5<double, int32_t>(data("west0479.h5")), w));
}

CPU_TEST_CASE_TEMPLATE(write_read_round_trip_is_exact, P, value_index_types) {
  using V = typename P::first_type;
  using I = typename P::second_type;
  temp_dir t;
  auto a = sparse::generate_random_k<V, I>(257, 129, 9, 5);
  a.values()[3] = V(0);                       // explicit zero survives
  a.values()[4] = std::numeric_limits<V>::denorm_min();
  a.values()[5] = std::numeric_limits<V>::max();
  const std::string p = t / "a.mtx";
  sparse::write_matrix_market(p, a, "line one\nline two");
  BOOST_TEST(no_temporaries_in(t.path));
  auto b = sparse::read_matrix_market<V, I>(p);
  BOOST_TEST(same(a, b));  // shortest round-trip decimals: bit-identical values
  // Vectors.
  std::vector<V> x = test::random_vector<V>(1001, V(-1e6), V(1e6), 3);
  x[0] = V(0);
  x[1] = -std::numeric_limits<V>::min();
  sparse::write_matrix_market_vector(t / "x.mtx", x);
  BOOST_TEST(sparse::read_matrix_market_vector<V>(t / "x.mtx") == x);
  auto row = sparse::read_matrix_market_vector<V>(t.file("r.mtx", "%%MatrixMarket matrix array real general\n1 3\n1\n2\n-3.5\n"));
  BOOST_TEST((row == std::vector<V>{1, 2, V(-3.5)}));
}

CPU_TEST_CASE(malformed_files_name_file_line_and_problem) {
  temp_dir t;
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n";
  struct bad { const char* name; std::string text; std::vector<std::string> parts; };
  const std::vector<bad> cases = {
      {"empty", "", {"empty file"}},
      {"banner", "%%MatrixMarkt matrix coordinate real general\n1 1 1\n1 1 1\n", {":1:", "bad banner"}},
      {"banner_words", "%%MatrixMarket matrix coordinate real\n1 1 0\n", {":1:", "expected 5 words"}},
      {"banner_format", "%%MatrixMarket matrix sparse real general\n", {":1:", "format 'sparse'"}},
      {"complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", {":1:", "complex"}},
      {"no_size", banner + "% only comments\n", {"size line"}},
      {"size_words", banner + "3 3\n", {":2:", "size line"}},
      {"negative", banner + "-3 3 1\n1 1 1\n", {":2:", "negative size"}},
      {"overflow", banner + "99999999999999999999 3 1\n1 1 1\n", {":2:", "does not fit a 64-bit integer"}},
      {"too_big_for_int32", banner + "3000000000 1 0\n", {":2:", "rows = 3000000000", "32-bit"}},
      {"count_vs_bytes", banner + "3 3 1000000\n1 1 1\n", {":2:", "declares 1000000 entries", "truncated"}},
      {"truncated", banner + "3 3 4\n1 1 1\n2 2 1\n", {":4:", "ends after 2 of 4 entries"}},
      {"extra", banner + "3 3 1\n1 1 1\n2 2 1\n", {":4:", "more entries than the 1 declared"}},
      {"row_range", banner + "3 3 2\n1 1 1\n4 1 1\n", {":4:", "row index 4 out of range 1..3"}},
      {"col_zero", banner + "3 3 1\n1 0 1\n", {":3:", "column index 0 out of range 1..3"}},
      {"non_numeric_index", banner + "3 3 1\n1 x 1\n", {":3:", "non-numeric token 'x'"}},
      {"non_numeric_value", banner + "3 3 1\n1 1 1.5abc\n", {":3:", "non-numeric token '1.5abc'"}},
      {"value_overflow", banner + "3 3 1\n1 1 1e999\n", {":3:", "overflows double"}},
      {"fields", banner + "3 3 1\n1 1\n", {":3:", "expected 3 fields, found 2"}},
      {"pattern_fields", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", {":3:", "expected 2 fields, found 3"}},
      {"skew_diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n", {":3:", "diagonal"}},
      {"symmetric_rect", "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", {":2:", "square"}},
      {"array_as_matrix", "%%MatrixMarket matrix array real general\n2 1\n1\n2\n", {":1:", "array format"}},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      const auto p = t.file(std::string(c.name) + ".mtx", c.text);
      auto parts = c.parts;
      parts.push_back(p);  // every message names the file
      expect_error<sparse::io_error>([&] { sparse::read_matrix_market<double, int32_t>(p); }, parts);
    }
  }
  // 10^15 rows fit int64 but not memory (8 PB > any host): refused at the size line, before allocating.
  expect_error<sparse::io_error>(
      [&] { sparse::read_matrix_market<double, int64_t>(t.file("huge.mtx", banner + "1000000000000000 1 0\n")); },
      {"huge.mtx:2:", "needs 8000000000000008 bytes", "of host memory for 1000000000000000 rows"});
  expect_error<sparse::io_error>([&] { sparse::read_matrix_market<double, int32_t>(t / "missing.mtx"); },
                                 {"missing.mtx", "cannot open"});
  // Vectors.
  const std::string vb = "%%MatrixMarket matrix array real general\n";
  expect_error<sparse::io_error>([&] { sparse::read_matrix_market_vector<double>(t.file("v1.mtx", vb + "2 2\n1\n2\n3\n4\n")); },
                                 {"v1.mtx:2:", "not a vector"});
  expect_error<sparse::io_error>([&] { sparse::read_matrix_market_vector<double>(t.file("v2.mtx", vb + "3 1\n1\n2\n")); },
                                 {"v2.mtx:4:", "ends after 2 of 3 values"});
  expect_error<sparse::io_error>([&] { sparse::read_matrix_market_vector<double>(t.file("v3.mtx", vb + "2 1\n1\nnan?\n")); },
                                 {"v3.mtx:4:", "non-numeric token 'nan?'"});
  expect_error<sparse::io_error>([&] { sparse::read_matrix_market_vector<double>(t.file("v4.mtx", banner + "2 1 0\n")); },
                                 {"v4.mtx:1:", "array format"});
}

// Values: NaN/Inf refused unless allowed, the range of the type read into, underflow kept; symmetric files
// keep one triangle; integer fields hold integers; tokens quoted to 60 characters.
CPU_TEST_CASE(values_and_symmetric_storage_follow_the_documented_rules) {
  temp_dir t;
  const std::string g = "%%MatrixMarket matrix coordinate real general\n";
  const std::string nan_file = t.file("nan.mtx", g + "2 2 2\n1 1 1\n2 2 nan\n");
  expect_error<sparse::io_error>([&] { sparse::read_matrix_market<double, int32_t>(nan_file); },
                                 {"nan.mtx:4:", "value 'nan' is not finite"});
  sparse::read_options allow;
  allow.allow_nonfinite = true;
  const auto with_nan = sparse::read_matrix_market<double, int32_t>(nan_file, allow);
  BOOST_TEST(std::isnan(with_nan.values()[1]));

  const std::string big = t.file("big.mtx", g + "2 2 2\n1 1 1\n2 2 1e300\n");
  const auto big_double = sparse::read_matrix_market<double, int32_t>(big);
  BOOST_TEST(big_double.values()[1] == 1e300);
  expect_error<sparse::io_error>([&] { sparse::read_matrix_market<float, int32_t>(big); },
                                 {"big.mtx:4:", "value '1e300' overflows float"});
  // The largest float stays; the next double past the rounding midpoint to 2^128 would be inf.
  const auto fmax = sparse::read_matrix_market<float, int32_t>(t.file("fmax.mtx", g + "1 1 1\n1 1 3.4028235e38\n"));
  BOOST_TEST(fmax.values()[0] == std::numeric_limits<float>::max());
  expect_error<sparse::io_error>(
      [&] { sparse::read_matrix_market<float, int32_t>(t.file("dup.mtx", g + "1 1 2\n1 1 3e38\n1 1 3e38\n")); },
      {"dup.mtx", "duplicate entries of (1, 1) sum to 6e+38, which overflows float"});
  expect_error<sparse::io_error>([&] { sparse::read_matrix_market<double, int32_t>(t.file("o.mtx", g + "1 1 1\n1 1 1e999\n")); },
                                 {"o.mtx:3:", "overflows double"});
  // Below the normal range: the correctly rounded value, not an error.
  const auto tiny = sparse::read_matrix_market<double, int32_t>(t.file("tiny.mtx", g + "1 2 2\n1 1 1e-310\n1 2 1e-400\n"));
  BOOST_TEST(tiny.values()[0] == 1e-310);
  BOOST_TEST(std::fpclassify(tiny.values()[0]) == FP_SUBNORMAL);
  BOOST_TEST(tiny.values()[1] == 0.0);

  const std::string s = "%%MatrixMarket matrix coordinate real symmetric\n";
  expect_error<sparse::io_error>(
      [&] { sparse::read_matrix_market<double, int32_t>(t.file("both.mtx", s + "2 2 3\n2 1 5\n1 1 1\n1 2 5\n")); },
      {"both.mtx:5:", "entry (1, 2) lies above the diagonal while line 3 holds one below it", "both triangles"});
  const auto upper = sparse::read_matrix_market<double, int32_t>(t.file("upper.mtx", s + "2 2 2\n1 2 5\n2 2 1\n"));
  BOOST_TEST(upper.nnz() == 3);  // (1,2) mirrored once

  const std::string i = "%%MatrixMarket matrix coordinate integer general\n";
  expect_error<sparse::io_error>([&] { sparse::read_matrix_market<double, int32_t>(t.file("i.mtx", i + "1 1 1\n1 1 1.5\n")); },
                                 {"i.mtx:3:", "value '1.5' is not an integer"});
  const auto integers = sparse::read_matrix_market<double, int32_t>(t.file("i2.mtx", i + "1 1 1\n1 1 -7\n"));
  BOOST_TEST(integers.values()[0] == -7.0);

  expect_error<sparse::io_error>(
      [&] { sparse::read_matrix_market<double, int32_t>(t.file("bom.mtx", "\xEF\xBB\xBF" + g + "1 1 0\n")); },
      {"bom.mtx:1:", "byte-order mark"});
  const std::string long_token(100000, 'x');
  try {
    sparse::read_matrix_market<double, int32_t>(t.file("long.mtx", g + "1 1 1\n1 1 " + long_token + "\n"));
    BOOST_TEST(false, "a 100000-character token was accepted");
  } catch (const sparse::io_error& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("'" + std::string(60, 'x') + "'... (100000 bytes)") != std::string::npos, what);
    BOOST_TEST(what.size() < 300u);
  }
  const std::string vb = "%%MatrixMarket matrix array real general\n";
  expect_error<sparse::io_error>([&] { sparse::read_matrix_market_vector<float>(t.file("v.mtx", vb + "2 1\n1\n-inf\n")); },
                                 {"v.mtx:4:", "value '-inf' is not finite"});
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(hdf5)

// read_hdf5_rows reads only a row block (hyperslabs): every block, chunked (> 65,536 entries, deflated)
// and not, equals the same rows of the whole matrix; the header functions agree; rows outside the
// matrix are refused naming the file.
CPU_TEST_CASE_TEMPLATE(row_blocks_equal_the_rows_of_the_whole_matrix, P, value_index_types) {
  using V = typename P::first_type;
  using I = typename P::second_type;
  temp_dir t;
  for (int64_t rows : {int64_t{1}, int64_t{37}, int64_t{20011}}) {
    const auto a = sparse::generate_random_k<V, I>(rows, rows, 5, 7 + static_cast<std::uint64_t>(rows));
    const std::string p = t / ("a" + std::to_string(rows) + ".h5");
    sparse::write_hdf5(p, a);
    const auto info = sparse::read_hdf5_info(p);
    BOOST_TEST(info.rows == rows);
    BOOST_TEST(info.cols == rows);
    BOOST_TEST(info.nnz == a.nnz());
    const auto rp = sparse::read_hdf5_row_ptr(p, "/matrix", 0, rows);
    BOOST_TEST(std::equal(rp.begin(), rp.end(), a.row_ptr().begin(), a.row_ptr().end()));
    for (auto [b, e] : {std::pair<int64_t, int64_t>{0, rows}, {0, 0}, {rows / 3, rows / 3 + 1}, {rows / 2, rows}}) {
      const auto block = sparse::read_hdf5_rows<V, I>(p, "/matrix", b, e);
      BOOST_TEST_CONTEXT("rows " << b << ".." << e << " of " << rows) {
        BOOST_TEST(block.rows() == e - b);
        BOOST_TEST(block.cols() == rows);
        const I first = a.row_ptr()[b];
        for (int64_t i = 0; i <= e - b; ++i) BOOST_TEST(block.row_ptr()[i] == a.row_ptr()[b + i] - first);
        BOOST_TEST(std::equal(block.col_idx().begin(), block.col_idx().end(), a.col_idx().begin() + first));
        BOOST_TEST(std::equal(block.values().begin(), block.values().end(), a.values().begin() + first));
      }
    }
    expect_error<std::invalid_argument>([&] { sparse::read_hdf5_rows<V, I>(p, "/matrix", 0, rows + 1); }, {p, "rows"});
  }
  expect_error<sparse::io_error>([&] { sparse::read_hdf5_rows<V, I>(t / "missing.h5", "/matrix", 0, 1); },
                                 {"missing.h5", "cannot open"});
}

CPU_TEST_CASE_TEMPLATE(round_trip_every_type, P, value_index_types) {
  using V = typename P::first_type;
  using I = typename P::second_type;
  temp_dir t;
  // 70,000 rows x 3 > 65,536 elements: chunked and (if available) compressed datasets.
  for (int64_t rows : {int64_t{0}, int64_t{1}, int64_t{33}, int64_t{70001}}) {
    BOOST_TEST_CONTEXT("rows " << rows) {
      auto a = sparse::generate_random_k<V, I>(rows, rows + 5, 3, 9);
      std::vector<V> x = test::random_vector<V>(a.cols(), V(-1), V(1), 1);
      std::vector<V> y = test::random_vector<V>(a.rows(), V(-1), V(1), 2);
      sparse::hdf5_write_options<V> opt;
      opt.x = &x;
      opt.y = &y;
      opt.description = "test";
      const std::string p = t / "a.h5";
      sparse::write_hdf5(p, a, opt);
      BOOST_TEST(no_temporaries_in(t.path));
      BOOST_TEST(same(sparse::read_hdf5<V, I>(p), a));
      BOOST_TEST(*sparse::read_hdf5_vector<V>(p, "/matrix/x") == x);
      BOOST_TEST(*sparse::read_hdf5_vector<V>(p, "/matrix/y") == y);
      BOOST_TEST(!sparse::read_hdf5_vector<V>(p, "/matrix/z").has_value());
      // Other stored types convert on read: float <-> double values, int32 <-> int64 indices.
      auto other = sparse::read_hdf5<double, int64_t>(p);
      BOOST_TEST(same(other.template cast<V, I>(), a));
    }
  }
  // A non-default group, uncompressed.
  auto a = sparse::generate_laplace_2d<V, I>(7);
  sparse::hdf5_write_options<V> opt;
  opt.group = "/deep/inside/m";
  opt.deflate_level = 0;
  sparse::write_hdf5(t / "g.h5", a, opt);
  BOOST_TEST(same(sparse::read_hdf5<V, I>(t / "g.h5", "/deep/inside/m"), a));
  expect_error<sparse::io_error>([&] { sparse::read_hdf5<V, I>(t / "g.h5"); }, {"g.h5", "missing group /matrix"});
}

CPU_TEST_CASE(deflate_is_reported) {
  // Debian and Ubuntu HDF5 builds carry zlib; the writer compresses when this is true.
  BOOST_TEST_MESSAGE("HDF5 deflate available: " << sparse::hdf5_deflate_available());
  temp_dir t;
  auto a = sparse::generate_laplace_2d<double, int32_t>(300);  // 449,400 entries, highly compressible
  sparse::write_hdf5(t / "c.h5", a);
  sparse::hdf5_write_options<double> raw;
  raw.deflate_level = 0;
  sparse::write_hdf5(t / "r.h5", a, raw);
  if (sparse::hdf5_deflate_available()) BOOST_TEST(fs::file_size(t / "c.h5") * 4 < fs::file_size(t / "r.h5"));
  BOOST_TEST(same(sparse::read_hdf5<double, int32_t>(t / "c.h5"), a));
}

namespace {
/// Writes a small valid file, then lets `edit` break it with the HDF5 C API.
template <class Edit>
std::string broken_h5(const temp_dir& t, const std::string& name, Edit edit) {
  const std::string p = t / name;
  sparse::host_csr<double, int64_t> a(3, 4, {0, 2, 2, 3}, {0, 3, 1}, {1, 2, 3});
  sparse::write_hdf5(p, a);
  hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  BOOST_REQUIRE(f >= 0);
  edit(f);
  H5Fclose(f);
  return p;
}
template <class T>
void replace_dataset(hid_t f, const char* name, hid_t type, const std::vector<T>& v, hid_t mem_type) {
  H5Ldelete(f, name, H5P_DEFAULT);
  hsize_t n = v.size();
  hid_t s = H5Screate_simple(1, &n, nullptr);
  hid_t d = H5Dcreate2(f, name, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  H5Dclose(d);
  H5Sclose(s);
}
void replace_int_attr(hid_t f, const char* name, std::vector<int64_t> v) {
  hid_t g = H5Gopen2(f, "/matrix", H5P_DEFAULT);
  H5Adelete(g, name);
  hsize_t n = v.size();
  hid_t s = H5Screate_simple(1, &n, nullptr);
  hid_t a = H5Acreate2(g, name, H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_INT64, v.data());
  H5Aclose(a);
  H5Sclose(s);
  H5Gclose(g);
}

struct bad_file {
  std::string path;
  std::vector<std::string> parts;  ///< what the error message must name
};

/// Files that are not HDF5, cut short, or lack a dataset or give one the wrong type, length or rank.
std::vector<bad_file> broken_dataset_files(const temp_dir& t) {
  std::vector<bad_file> cases;
  cases.push_back({t.file("text.h5", "this is not HDF5\n"), {"not an HDF5 file"}});
  sparse::write_hdf5(t / "full.h5", sparse::generate_random_k<double, int32_t>(5000, 5000, 4, 1));
  std::ifstream in(t / "full.h5", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  cases.push_back({t.file("truncated.h5", bytes.substr(0, bytes.size() / 2)), {"truncated.h5"}});  // cut in half
  cases.push_back({broken_h5(t, "no_col_idx.h5", [](hid_t f) { H5Ldelete(f, "/matrix/col_idx", H5P_DEFAULT); }),
                   {"missing dataset /matrix/col_idx"}});
  cases.push_back({broken_h5(t, "no_values.h5", [](hid_t f) { H5Ldelete(f, "/matrix/values", H5P_DEFAULT); }),
                   {"missing dataset /matrix/values"}});
  cases.push_back({broken_h5(t, "float_idx.h5", [](hid_t f) {
                     replace_dataset<double>(f, "/matrix/col_idx", H5T_IEEE_F64LE, {0, 3, 1}, H5T_NATIVE_DOUBLE);
                   }),
                   {"/matrix/col_idx", "non-integer dtype"}});
  cases.push_back({broken_h5(t, "int_values.h5", [](hid_t f) {
                     replace_dataset<int64_t>(f, "/matrix/values", H5T_STD_I64LE, {1, 2, 3}, H5T_NATIVE_INT64);
                   }),
                   {"/matrix/values", "non-float dtype"}});
  cases.push_back({broken_h5(t, "short_row_ptr.h5", [](hid_t f) {
                     replace_dataset<int64_t>(f, "/matrix/row_ptr", H5T_STD_I64LE, {0, 2, 3}, H5T_NATIVE_INT64);
                   }),
                   {"/matrix/row_ptr", "has 3 entries, expected 4"}});
  // values chunked by 2: the second chunk unwritten (HDF5 would read its entry as a fill value, 0), or
  // compressed by scale-offset (whose output size its input does not bound).
  const auto chunked_values = [](hid_t f, hsize_t written, bool scale_offset) {
    H5Ldelete(f, "/matrix/values", H5P_DEFAULT);
    const hsize_t n = 3, chunk = 2, start = 0;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &chunk);
    if (scale_offset) H5Pset_scaleoffset(dcpl, H5Z_SO_FLOAT_DSCALE, 3);
    hid_t s = H5Screate_simple(1, &n, nullptr);
    hid_t d = H5Dcreate2(f, "/matrix/values", H5T_IEEE_F64LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    const double v[3] = {1, 2, 3};
    hid_t m = H5Screate_simple(1, &written, nullptr);
    H5Sselect_hyperslab(s, H5S_SELECT_SET, &start, nullptr, &written, nullptr);
    H5Dwrite(d, H5T_NATIVE_DOUBLE, m, s, H5P_DEFAULT, v);
    H5Sclose(m);
    H5Dclose(d);
    H5Sclose(s);
    H5Pclose(dcpl);
  };
#if H5_VERSION_GE(1, 10, 5)
  const std::string one_of_two = "stores 1 of its 2 chunks";
#else
  const std::string one_of_two = "stores 16 bytes, its 3 elements need 24";
#endif
  cases.push_back({broken_h5(t, "missing_chunk.h5", [&](hid_t f) { chunked_values(f, 2, false); }),
                   {"/matrix/values", one_of_two}});
  if (H5Zfilter_avail(H5Z_FILTER_SCALEOFFSET) > 0)
    cases.push_back({broken_h5(t, "scaleoffset.h5", [&](hid_t f) { chunked_values(f, 3, true); }),
                     {"/matrix/values", "HDF5 filter 6"}});
  cases.push_back({broken_h5(t, "rank2.h5", [](hid_t f) {
                     H5Ldelete(f, "/matrix/values", H5P_DEFAULT);
                     hsize_t dims[2] = {3, 1};
                     hid_t s = H5Screate_simple(2, dims, nullptr);
                     hid_t d = H5Dcreate2(f, "/matrix/values", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
                     H5Dclose(d);
                     H5Sclose(s);
                   }),
                   {"/matrix/values", "rank 2, expected 1"}});
  return cases;
}

/// Files whose CSR structure is invalid or whose group attributes are wrong or missing.
std::vector<bad_file> broken_content_files(const temp_dir& t) {
  std::vector<bad_file> cases;
  cases.push_back({broken_h5(t, "decreasing.h5", [](hid_t f) {
                     replace_dataset<int64_t>(f, "/matrix/row_ptr", H5T_STD_I64LE, {0, 2, 1, 3}, H5T_NATIVE_INT64);
                   }),
                   {"not a valid CSR matrix", "row_ptr decreases at row 1"}});
  cases.push_back({broken_h5(t, "col_range.h5", [](hid_t f) {
                     replace_dataset<int64_t>(f, "/matrix/col_idx", H5T_STD_I64LE, {0, 4, 1}, H5T_NATIVE_INT64);
                   }),
                   {"not a valid CSR matrix", "row 0", "col_idx[1] = 4"}});
  cases.push_back({broken_h5(t, "idx_too_big.h5", [](hid_t f) {
                     replace_dataset<int64_t>(f, "/matrix/col_idx", H5T_STD_I64LE, {0, int64_t{1} << 40, 1}, H5T_NATIVE_INT64);
                   }),
                   {"/matrix/col_idx[1] = 1099511627776", "does not fit the 32-bit index type"}});
  cases.push_back({broken_h5(t, "neg_shape.h5", [](hid_t f) { replace_int_attr(f, "shape", {-3, 4}); }),
                   {"shape is negative"}});
  cases.push_back({broken_h5(t, "huge_shape.h5", [](hid_t f) { replace_int_attr(f, "shape", {int64_t{1} << 40, 4}); }),
                   {"shape (1099511627776, 4)", "does not fit"}});
  cases.push_back({broken_h5(t, "shape1.h5", [](hid_t f) { replace_int_attr(f, "shape", {3}); }),
                   {"/matrix.shape has 1 elements, expected 2"}});
  cases.push_back({broken_h5(t, "base1.h5", [](hid_t f) { replace_int_attr(f, "index_base", {1}); }),
                   {"index_base is 1"}});
  cases.push_back({broken_h5(t, "no_format.h5", [](hid_t f) {
                     hid_t g = H5Gopen2(f, "/matrix", H5P_DEFAULT);
                     H5Adelete(g, "format");
                     H5Gclose(g);
                   }),
                   {"/matrix has no attribute 'format'"}});
  cases.push_back({broken_h5(t, "no_group.h5", [](hid_t f) { H5Ldelete(f, "/matrix", H5P_DEFAULT); }),
                   {"missing group /matrix"}});
  return cases;
}

}  // namespace

CPU_TEST_CASE(malformed_files_name_file_dataset_and_problem) {
  temp_dir t;
  using M = sparse::host_csr<double, int32_t>;
  auto read = [](const std::string& p) { return sparse::read_hdf5<double, int32_t>(p); };
  auto cases = broken_dataset_files(t);
  for (auto& c : broken_content_files(t)) cases.push_back(std::move(c));
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.path) {
      auto parts = c.parts;
      parts.push_back(c.path);
      expect_error<sparse::io_error>([&] { read(c.path); }, parts);
    }
  }
  expect_error<sparse::io_error>([&] { read(t / "missing.h5"); }, {"missing.h5", "cannot open"});
  // A dataset of the wrong length for x is caught on write.
  std::vector<double> x(3);
  sparse::hdf5_write_options<double> opt;
  opt.x = &x;
  expect_error<sparse::io_error>([&] { sparse::write_hdf5(t / "x.h5", M(2, 4, {0, 0, 0}, {}, {}), opt); },
                                 {"x.h5", "x has 3 entries, expected cols = 4"});
  BOOST_TEST(!fs::exists(t / "x.h5"));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(no_partial_output)

CPU_TEST_CASE(failed_writes_leave_nothing_behind) {
  temp_dir t;
  {  // the leftover check itself sees a temporary
    t.file("out.mtx.123.0.partial", "x");
    BOOST_TEST(!no_temporaries_in(t.path));
    fs::remove(t.path / "out.mtx.123.0.partial");
  }
  auto a = sparse::generate_laplace_2d<double, int32_t>(4);
  for (const std::string name : {"out.h5", "out.mtx"}) {
    BOOST_TEST_CONTEXT(name) {
      // The output path is a directory: the rename fails after the temp file was written completely.
      fs::create_directories(t / name);
      expect_error<sparse::io_error>([&] { sparse::write_matrix(t / name, a); }, {name});
      BOOST_TEST(no_temporaries_in(t.path));
      // A missing directory: nothing can be created at all.
      expect_error<sparse::io_error>([&] { sparse::write_matrix(t / ("nodir/" + name), a); }, {"nodir/" + name});
      BOOST_TEST(!fs::exists(t / "nodir"));
      // An invalid matrix is refused before any file is created.
      auto bad = a;
      bad.col_idx()[0] = 99;
      expect_error<sparse::io_error>([&] { sparse::write_matrix(t / ("bad_" + name), bad); },
                                     {"bad_" + name, "invalid", "col_idx[0] = 99"});
      BOOST_TEST(!fs::exists(t / ("bad_" + name)));
      BOOST_TEST(no_temporaries_in(t.path));
    }
  }
  // An existing good output is not clobbered by a failed conversion (the read fails before any write).
  sparse::write_matrix(t / "keep.h5", a);
  const auto before = fs::file_size(t / "keep.h5");
  const auto src = t.file("broken.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n9 9 1\n");
  expect_error<sparse::io_error>([&] { sparse::write_matrix(t / "keep.h5", sparse::read_matrix<double, int32_t>(src)); },
                                 {"broken.mtx:3:"});
  BOOST_TEST(fs::file_size(t / "keep.h5") == before);
  expect_error<sparse::io_error>([&] { sparse::format_of("a.csv"); }, {"a.csv", "unknown file type"});
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(generators)

// Regression (issue 19, UBSan: signed overflow in generate.cpp): the old guard only kept n^2 (2D) / n^3
// (3D) inside int64, so 5 n^2 - 4 n and 7 n^3 - 6 n^2 overflowed for n up to 3037000499 / 2097151. The
// largest sides whose entry counts fit are floor(sqrt(INT64_MAX / 5)) = 1358187913 and
// floor(cbrt(INT64_MAX / 7)) = 1096302; one more, and the old limits themselves, must be refused with
// std::invalid_argument naming the parameter, before anything is allocated.
CPU_TEST_CASE(laplacian_sizes_whose_entry_count_overflows_are_refused) {
  auto refuses = [](auto&& make, int64_t n) {
    try {
      make(n);
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      BOOST_TEST_INFO("n = " << n << ": " << what);
      BOOST_TEST(what.find("grid side n = " + std::to_string(n)) != std::string::npos);
      BOOST_TEST(what.find("overflows") != std::string::npos);
      return;
    }
    BOOST_ERROR("n = " << n << " was accepted");
  };
  auto make2 = [](int64_t n) { return sparse::generate_laplace_2d<double, int64_t>(n); };
  auto make3 = [](int64_t n) { return sparse::generate_laplace_3d<double, int64_t>(n); };
  for (int64_t n : {int64_t{1358187914}, int64_t{2147483648}, int64_t{3037000499}, int64_t{3037000500},
                    std::numeric_limits<int64_t>::max()})
    refuses(make2, n);
  for (int64_t n : {int64_t{1096303}, int64_t{2097151}, int64_t{2097152}, std::numeric_limits<int64_t>::max()})
    refuses(make3, n);
  // At the limit the count fits, and int32 indices are what refuse it (naming rows or nnz).
  BOOST_CHECK_THROW((sparse::generate_laplace_2d<double, int32_t>(1358187913)), std::invalid_argument);
  BOOST_CHECK_THROW((sparse::generate_laplace_3d<double, int32_t>(1096302)), std::invalid_argument);
}

CPU_TEST_CASE(laplacians_have_the_stencil_structure) {
  sparse::validate_options strict;
  strict.require_sorted_columns = strict.require_unique_columns = true;
  for (int64_t n : {0, 1, 2, 3, 17}) {
    auto a = sparse::generate_laplace_2d<double, int32_t>(n);
    BOOST_TEST(a.rows() == n * n);
    BOOST_TEST(a.nnz() == 5 * n * n - 4 * n);
    a.validate(strict);
    auto b = sparse::generate_laplace_3d<float, int64_t>(n);
    BOOST_TEST(b.rows() == n * n * n);
    BOOST_TEST(b.nnz() == 7 * n * n * n - 6 * n * n);
    b.validate(strict);
    // Symmetric, diagonal 2d, off-diagonals -1 and row sums 0 away from the boundary.
    const auto d = to_dense(a);
    for (int64_t i = 0; i < a.rows(); ++i) {
      BOOST_TEST(d[i][i] == 4.0);
      double sum = 0;
      for (int64_t j = 0; j < a.cols(); ++j) {
        BOOST_TEST(d[i][j] == d[j][i]);
        sum += d[i][j];
      }
      const int64_t x = i % n, y = i / n;
      if (x > 0 && y > 0 && x < n - 1 && y < n - 1) BOOST_TEST(sum == 0.0);
    }
  }
  // The 2D benchmark anchor, exactly.
  auto big = sparse::generate_laplace_2d<float, int32_t>(2048);
  BOOST_TEST(big.rows() == 4194304);
  BOOST_TEST(big.nnz() == 20963328);
  expect_error<std::invalid_argument>([] { sparse::generate_laplace_2d<float, int32_t>(50000); }, {"rows = 2500000000", "32-bit"});
  expect_error<std::invalid_argument>([] { sparse::generate_laplace_3d<float, int64_t>(-1); }, {"negative"});
}

namespace {
sparse::validate_options strict_options() {
  sparse::validate_options strict;
  strict.require_sorted_columns = strict.require_unique_columns = true;
  return strict;
}
}  // namespace

CPU_TEST_CASE(random_classes_are_deterministic_sorted_unique_and_in_range) {
  const auto strict = strict_options();
  // Rectangular both ways, more draws than columns, k = 0.
  struct shape { int64_t rows, cols, k; };
  for (const shape s : {shape{0, 0, 3}, shape{1, 1, 5}, shape{4097, 33, 16}, shape{100, 100000, 1000}, shape{9000, 7, 0}}) {
    BOOST_TEST_CONTEXT(s.rows << "x" << s.cols << " k " << s.k) {
      auto a = sparse::generate_random_k<double, int32_t>(s.rows, s.cols, s.k, 42);
      BOOST_TEST(a.rows() == s.rows);
      BOOST_TEST(a.cols() == s.cols);
      a.validate(strict);
      for (int64_t i = 0; i < a.rows(); ++i) {
        const int64_t len = a.row_ptr()[i + 1] - a.row_ptr()[i];
        BOOST_TEST(len <= std::min(s.k, s.cols));
        BOOST_TEST((s.k == 0 || len >= 1));
      }
      for (double v : a.values()) BOOST_TEST((v >= -1.0 && v < 1.0));
      BOOST_TEST(same(a, sparse::generate_random_k<double, int32_t>(s.rows, s.cols, s.k, 42)));
      // float and double share the structure; values are the double ones rounded.
      auto f = sparse::generate_random_k<float, int64_t>(s.rows, s.cols, s.k, 42);
      BOOST_TEST(same(f, a.cast<float, int64_t>()));
    }
  }
  auto a = sparse::generate_random_k<double, int32_t>(5000, 5000, 8, 1);
  auto b = sparse::generate_random_k<double, int32_t>(5000, 5000, 8, 2);
  BOOST_TEST(a.col_idx() != b.col_idx());
  // Drawing with replacement then deduplicating: 16 of 2e6 columns loses C(16,2)/2e6 = 6e-5 entries per
  // row; for 200,000 rows expect 12 +- 3.5 lost (Poisson). 40 would be 8 sigma.
  auto r = sparse::generate_random_k<float, int32_t>(200000, 2000000, 16, 3);
  BOOST_TEST(r.nnz() <= 200000 * 16);
  BOOST_TEST(r.nnz() >= 200000 * 16 - 40);
}

CPU_TEST_CASE(power_law_rows_follow_the_law) {
  // Power law: every length is in [2, cap] (u <= 1 gives floor(2 u^-0.7) >= 2), columns distinct.
  auto p = sparse::generate_power_law<float, int32_t>(100000, 50000, 5, 20000);
  p.validate(strict_options());
  int64_t longest = 0;
  for (int64_t i = 0; i < p.rows(); ++i) {
    const int64_t len = p.row_ptr()[i + 1] - p.row_ptr()[i];
    BOOST_TEST((len >= 2 && len <= 20000));
    longest = std::max(longest, len);
  }
  // Mean of min(cap, floor(2 u^-0.7)) is sum_m P(L >= m) ~= 6.1 for this cap; the heavy tail makes the
  // sample mean noisy (sd ~ 0.3 at 1e5 rows): 4.5 .. 8 is a > 4-sigma window.
  BOOST_TEST(p.nnz() > 450000);
  BOOST_TEST(p.nnz() < 800000);
  BOOST_TEST(longest > 1000);  // P(L > 1000) = 500^-1.43 = 1.4e-4: ~14 such rows expected
  BOOST_TEST(same(p, sparse::generate_power_law<float, int32_t>(100000, 50000, 5, 20000)));
}

CPU_TEST_CASE(dense_row_and_class_names) {
  // Dense row: row rows/2 holds exactly dense_length distinct columns, the others at most k.
  sparse::generate_params d;
  d.kind = sparse::matrix_class::dense_row;
  d.rows = 3001;
  d.cols = 150000;
  d.k = 3;
  d.dense_length = 100000;  // > cols / 2: exercises the complement path
  auto dr = sparse::generate<double, int64_t>(d);
  dr.validate(strict_options());
  for (int64_t i = 0; i < dr.rows(); ++i) {
    const int64_t len = dr.row_ptr()[i + 1] - dr.row_ptr()[i];
    if (i == 1500) BOOST_TEST(len == 100000);
    else BOOST_TEST(len <= 3);
  }
  BOOST_TEST((sparse::parse_class("powerlaw") == sparse::matrix_class::power_law));
  expect_error<std::invalid_argument>([] { sparse::parse_class("tridiagonal"); }, {"tridiagonal", "laplace2d", "arrow"});
  for (auto c : {sparse::matrix_class::banded, sparse::matrix_class::block_diagonal, sparse::matrix_class::arrow})
    BOOST_TEST((sparse::parse_class(sparse::class_name(c)) == c));
  BOOST_TEST(sparse::benchmark_matrices(false).size() == 7u);
  BOOST_TEST(sparse::benchmark_matrices(true)[0].params.n < 2048);
}

namespace {
/// The columns row r of a structured class must hold (generate.hpp), from the definitions alone.
std::vector<int64_t> expected_columns(sparse::matrix_class kind, int64_t r, int64_t cols, int64_t k) {
  std::vector<int64_t> c;
  for (int64_t j = 0; j < cols; ++j) {
    bool in = false;
    if (kind == sparse::matrix_class::banded) in = j >= r - k && j <= r + k;
    if (kind == sparse::matrix_class::block_diagonal) in = j / k == r / k;
    if (kind == sparse::matrix_class::arrow) in = r < k || j < k || j == r;
    if (in) c.push_back(j);
  }
  return c;
}
}  // namespace

CPU_TEST_CASE(banded_block_diagonal_and_arrow_have_exactly_their_structure) {
  struct shape { sparse::matrix_class kind; int64_t rows, cols, k; };
  using mc = sparse::matrix_class;
  // Square, tall and wide; rows past one 4,096-row block; k not dividing rows; k beyond cols; k = 0 band.
  for (const shape s : {shape{mc::banded, 5000, 5000, 3}, shape{mc::banded, 300, 40, 5}, shape{mc::banded, 40, 300, 7},
                        shape{mc::banded, 10, 10, 0}, shape{mc::banded, 6, 4, 100},
                        shape{mc::block_diagonal, 5003, 5003, 7}, shape{mc::block_diagonal, 100, 30, 8},
                        shape{mc::block_diagonal, 30, 100, 8}, shape{mc::block_diagonal, 9, 9, 20},
                        shape{mc::arrow, 4500, 4500, 2}, shape{mc::arrow, 50, 20, 3}, shape{mc::arrow, 20, 50, 3},
                        shape{mc::arrow, 5, 3, 4}, shape{mc::banded, 0, 0, 2}}) {
    BOOST_TEST_CONTEXT(sparse::class_name(s.kind) << " " << s.rows << "x" << s.cols << " k " << s.k) {
      sparse::generate_params p;
      p.kind = s.kind;
      p.rows = s.rows;
      p.cols = s.cols;
      p.k = s.k;
      const auto a = sparse::generate<double, int32_t>(p);
      BOOST_TEST(a.rows() == s.rows);
      BOOST_TEST(a.cols() == s.cols);
      a.validate(strict_options());
      int64_t wrong_rows = 0;
      for (int64_t r = 0; r < a.rows(); ++r) {
        const std::vector<int64_t> got(a.col_idx().begin() + a.row_ptr()[r], a.col_idx().begin() + a.row_ptr()[r + 1]);
        if (got != expected_columns(s.kind, r, s.cols, s.k)) ++wrong_rows;
      }
      BOOST_TEST(wrong_rows == 0);
      for (double v : a.values()) BOOST_TEST((v >= -1.0 && v < 1.0));
      BOOST_TEST(same(a, sparse::generate<double, int32_t>(p)));
      BOOST_TEST(same(sparse::generate<float, int64_t>(p), a.cast<float, int64_t>()));
    }
  }
  // Entry counts of the larger cases, in closed form.
  sparse::generate_params b;
  b.kind = mc::banded;
  b.rows = b.cols = 5000;
  b.k = 3;
  BOOST_TEST((sparse::generate<float, int32_t>(b).nnz() == 7 * 5000 - 2 * (1 + 2 + 3)));
  b.kind = mc::block_diagonal;
  b.k = 7;  // 714 full blocks and one of 2 rows
  BOOST_TEST((sparse::generate<float, int32_t>(b).nnz() == 714 * 49 + 4));
  b.kind = mc::arrow;
  b.k = 2;  // 2 dense rows of 5000, 4998 rows of 3
  BOOST_TEST((sparse::generate<float, int32_t>(b).nnz() == 2 * 5000 + 4998 * 3));
  // Parameters they refuse, naming the problem.
  for (auto kind : {mc::block_diagonal, mc::arrow}) {
    b.kind = kind;
    b.k = 0;
    expect_error<std::invalid_argument>([&] { sparse::generate<float, int32_t>(b); }, {"k >= 1"});
  }
  b.kind = mc::banded;
  b.k = -1;
  expect_error<std::invalid_argument>([&] { sparse::generate<float, int32_t>(b); }, {"negative"});
  b.rows = b.cols = int64_t{1} << 40;  // a 2^40-row band 2^50 wide: refused before anything is allocated
  b.k = int64_t{1} << 50;
  BOOST_CHECK_THROW((sparse::generate<float, int64_t>(b)), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
