// The corpus of `spmv bench --corpus` (apps/spmv/corpus.cpp), host only: which files a directory gives,
// duplicates, names, the errors (one bad_input naming the path), loading, and the generated cases' span.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "app_errors.hpp"
#include "corpus.hpp"
#include "gpukit_paths.hpp"
#include "sparse/generate.hpp"
#include "sparse/io.hpp"
#include "temp_dir.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

/// This file's temporary directories (tests/support/temp_dir.hpp).
struct temp_dir : test::temp_dir {
  temp_dir() : test::temp_dir("test_spmv_corpus") {}
};

const std::string small_mtx = "%%MatrixMarket matrix coordinate real general\n2 3 3\n1 1 1.0\n2 2 2.0\n2 3 -1\n";

std::vector<std::string> names(const std::vector<spmv_app::corpus_entry>& v) {
  std::vector<std::string> n;
  for (const auto& e : v) n.push_back(e.name);
  return n;
}

/// Runs f, which must throw gpukit::bad_input whose message holds every part.
template <class F>
void refuses(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const gpukit::bad_input& e) {
    const std::string what = e.what();
    BOOST_TEST_INFO(what);
    for (const auto& p : parts) BOOST_TEST(what.find(p) != std::string::npos);
    BOOST_TEST(what.find('\n') == std::string::npos);  // one line
    return;
  }
  BOOST_ERROR("no bad_input thrown");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(corpus)

CPU_TEST_CASE(a_directory_gives_its_matrix_files_sorted_and_skips_the_rest) {
  temp_dir t;
  t.file("b.mtx", small_mtx);
  sparse::write_matrix(t / "a.h5", sparse::generate_random_k<double, std::int32_t>(50, 40, 3, 1));
  t.file("C.HDF5", "");  // listed by extension; only reading it would refuse it
  t.file("junk.txt", "not a matrix");
  t.file("README", "");
  t.file("m.mtx.partial", small_mtx);
  fs::create_directories(t.path / "sub");
  t.file("sub/d.mtx", small_mtx);  // not recursed into
  fs::create_directories(t.path / "dir.mtx");
  std::vector<std::string> skipped;
  const auto c = spmv_app::corpus_files({t.path.string()}, skipped);
  BOOST_TEST(names(c) == (std::vector<std::string>{"C.HDF5", "a.h5", "b.mtx"}), boost::test_tools::per_element());
  for (const auto& e : c) BOOST_TEST(e.path == t / e.name);
  for (const auto& e : c) BOOST_TEST(!e.generated());
  std::vector<std::string> want = {t / "README", t / "dir.mtx", t / "junk.txt", t / "m.mtx.partial", t / "sub"};
  BOOST_TEST(skipped == want, boost::test_tools::per_element());
}

CPU_TEST_CASE(files_named_twice_are_listed_once_and_shared_names_become_paths) {
  temp_dir t;
  fs::create_directories(t.path / "x");
  fs::create_directories(t.path / "y");
  const std::string a = t.file("x/m.mtx", small_mtx), b = t.file("y/m.mtx", small_mtx), o = t.file("x/o.mtx", small_mtx);
  std::vector<std::string> skipped;
  const auto c = spmv_app::corpus_files({t / "x", a, t / "y"}, skipped);
  BOOST_TEST(names(c) == (std::vector<std::string>{a, "o.mtx", b}), boost::test_tools::per_element());
  BOOST_TEST(skipped.empty());
}

CPU_TEST_CASE(bad_paths_are_one_line_naming_the_path) {
  temp_dir t;
  std::vector<std::string> skipped;
  refuses([&] { spmv_app::corpus_files({t / "missing"}, skipped); }, {t / "missing", "no such file"});
  refuses([&] { spmv_app::corpus_files({t.path.string()}, skipped); }, {t.path.string(), "no .mtx, .h5 or .hdf5"});
  const std::string junk = t.file("junk.txt", "x");
  refuses([&] { spmv_app::corpus_files({junk}, skipped); }, {junk, "not a matrix file"});
  refuses([&] { spmv_app::corpus_files({}, skipped); }, {"no directory or matrix file"});
}

CPU_TEST_CASE(loading_reads_float_int32_and_refuses_bad_or_empty_matrices_naming_the_file) {
  temp_dir t;
  std::vector<std::string> skipped;
  const auto bus = spmv_app::corpus_files({std::string(gpukit::data_dir) + "/sparse/494_bus.mtx"}, skipped);
  const auto a = spmv_app::load(bus.at(0));
  BOOST_TEST(a.rows() == 494);
  BOOST_TEST(a.nnz() == 1666);  // symmetric storage expanded
  spmv_app::corpus_entry bad;
  bad.path = t.file("bad.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n0 1 1.0\n2 2 2.0\n");
  bad.name = "bad.mtx";
  refuses([&] { spmv_app::load(bad); }, {bad.path});
  bad.path = t.file("huge.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e300\n");  // not a float
  refuses([&] { spmv_app::load(bad); }, {bad.path});
  bad.path = t.file("empty.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 0\n");
  refuses([&] { spmv_app::load(bad); }, {bad.path, "nothing to time"});
  bad.path = t.file("junk.h5", "not HDF5");
  refuses([&] { spmv_app::load(bad); }, {bad.path});
}

CPU_TEST_CASE(the_generated_cases_span_the_classes_and_sizes_and_fit_an_80_gb_gpu) {
  using mc = sparse::matrix_class;
  const auto g = spmv_app::generated_corpus();
  BOOST_TEST(g.size() >= 20u);
  std::set<std::string> unique;
  std::set<mc> classes;
  std::int64_t min_rows = INT64_MAX, max_rows = 0, total = 0;
  bool rectangular = false;
  for (const auto& e : g) {
    BOOST_TEST_INFO(e.name);
    BOOST_TEST(e.generated());
    unique.insert(e.name);
    classes.insert(e.params.kind);
    const auto& p = e.params;
    const std::int64_t rows = p.kind == mc::laplace_2d ? p.n * p.n : p.kind == mc::laplace_3d ? p.n * p.n * p.n : p.rows;
    min_rows = std::min(min_rows, rows);
    max_rows = std::max(max_rows, rows);
    rectangular |= p.cols != 0 && p.cols != p.rows;
    const std::int64_t nnz = spmv_app::expected_entries(p);
    total += nnz;
    BOOST_TEST(nnz < (std::int64_t{1} << 31) - 1);  // int32 indices
    // Device: the CSR (8 bytes an entry), three format copies of it at most (windowed, adaptive, merge),
    // x and y and a row pointer: far below 80 GB.
    BOOST_TEST(4.0 * 8 * nnz + 16.0 * rows < 8e9);
  }
  BOOST_TEST(unique.size() == g.size());
  for (auto c : {mc::banded, mc::block_diagonal, mc::power_law, mc::arrow, mc::random_k, mc::dense_row})
    BOOST_TEST(classes.count(c) == 1u);
  BOOST_TEST(rectangular);
  BOOST_TEST(min_rows == 1000);
  BOOST_TEST(max_rows == 10000000);
  BOOST_TEST(total < 500000000);  // ~350M entries: the --quick run time estimate in apps/README.md
  // With the bundled matrices, at least 30 matrices.
  std::vector<std::string> skipped;
  BOOST_TEST(spmv_app::corpus_files({std::string(gpukit::data_dir) + "/sparse"}, skipped).size() + g.size() >= 30u);
  BOOST_TEST(skipped.empty());
}

CPU_TEST_CASE(expected_entries_are_exact_for_the_structured_classes_and_bound_the_random_ones) {
  using mc = sparse::matrix_class;
  for (auto kind : {mc::banded, mc::block_diagonal, mc::arrow, mc::laplace_2d, mc::laplace_3d, mc::random_k}) {
    sparse::generate_params p;
    p.kind = kind;
    p.rows = 3000;
    p.cols = kind == mc::random_k ? 500 : 0;
    p.k = 5;
    p.n = 9;
    const auto a = sparse::generate<float, std::int32_t>(p);
    BOOST_TEST_INFO(sparse::class_name(kind));
    if (kind == mc::random_k) BOOST_TEST(a.nnz() <= spmv_app::expected_entries(p));
    else BOOST_TEST(a.nnz() == spmv_app::expected_entries(p));
  }
}

BOOST_AUTO_TEST_SUITE_END()
