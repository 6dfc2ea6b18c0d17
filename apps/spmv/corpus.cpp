// The corpus of `spmv bench --corpus`: enumeration of matrix files, the generated cases, loading.
#include "corpus.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <system_error>

#include "app.hpp"
#include "sparse/io.hpp"

namespace spmv_app {
namespace {

namespace fs = std::filesystem;

bool matrix_extension(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return ext == ".mtx" || ext == ".h5" || ext == ".hdf5";
}

/// The files of directory `dir` with a matrix extension, sorted by name; the other entries go to `skipped`.
std::vector<std::string> directory_matrices(const std::string& dir, std::vector<std::string>& skipped) {
  std::vector<std::string> found, others;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path();
    std::error_code tec;
    (fs::is_regular_file(p, tec) && matrix_extension(p) ? found : others).push_back(p.filename().string());
  }
  if (ec) throw gpukit::bad_input("corpus: " + dir + ": cannot list the directory: " + ec.message());
  std::sort(found.begin(), found.end());
  std::sort(others.begin(), others.end());
  const fs::path base(dir);
  for (const auto& o : others) skipped.push_back((base / o).string());
  if (found.empty()) throw gpukit::bad_input("corpus: " + dir + " holds no .mtx, .h5 or .hdf5 file");
  for (auto& f : found) f = (base / f).string();
  return found;
}

corpus_entry generated(const std::string& name, sparse::matrix_class kind, std::int64_t rows, std::int64_t cols,
                       std::int64_t k, std::int64_t dense_length = 0) {
  corpus_entry e;
  e.name = name;
  e.params.kind = kind;
  e.params.rows = rows;
  e.params.cols = cols;
  e.params.k = k;
  if (dense_length > 0) e.params.dense_length = dense_length;
  return e;
}

corpus_entry grid(const std::string& name, sparse::matrix_class kind, std::int64_t n) {
  corpus_entry e;
  e.name = name;
  e.params.kind = kind;
  e.params.n = n;
  return e;
}

}  // namespace

std::vector<corpus_entry> corpus_files(const std::vector<std::string>& paths, std::vector<std::string>& skipped) {
  if (paths.empty()) throw gpukit::bad_input("corpus: no directory or matrix file given");
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st)) throw gpukit::bad_input("corpus: " + p + ": no such file or directory");
    if (fs::is_directory(st)) {
      for (auto& f : directory_matrices(p, skipped)) files.push_back(std::move(f));
    } else if (matrix_extension(p)) {
      files.push_back(p);
    } else {
      throw gpukit::bad_input("corpus: " + p + ": not a matrix file (.mtx, .h5, .hdf5) or a directory");
    }
  }
  std::vector<corpus_entry> out;
  std::set<fs::path> seen;
  std::map<std::string, int> name_count;
  for (const auto& f : files) {
    std::error_code ec;
    const fs::path key = fs::weakly_canonical(f, ec);
    if (!seen.insert(ec ? fs::path(f) : key).second) continue;  // the same file named twice
    corpus_entry e;
    e.path = f;
    e.name = fs::path(f).filename().string();
    ++name_count[e.name];
    out.push_back(std::move(e));
  }
  for (auto& e : out)
    if (name_count[e.name] > 1) e.name = e.path;
  return out;
}

std::vector<corpus_entry> generated_corpus() {
  using mc = sparse::matrix_class;
  return {
      generated("banded_k1_1k", mc::banded, 1000, 0, 1),  // tridiagonal: launch-bound
      generated("banded_k4_100k", mc::banded, 100000, 0, 4),
      generated("banded_k16_1m", mc::banded, 1000000, 0, 16),
      generated("banded_k1_10m", mc::banded, 10000000, 0, 1),
      generated("blockdiag_b4_10k", mc::block_diagonal, 10000, 0, 4),
      generated("blockdiag_b256_100k", mc::block_diagonal, 100000, 0, 256),
      generated("blockdiag_b32_1m", mc::block_diagonal, 1000000, 0, 32),
      generated("powerlaw_10k", mc::power_law, 10000, 0, 0),
      generated("powerlaw_1m", mc::power_law, 1000000, 0, 0),
      generated("powerlaw_10m", mc::power_law, 10000000, 0, 0),
      generated("arrow_w1_100k", mc::arrow, 100000, 0, 1),
      generated("arrow_w4_1m", mc::arrow, 1000000, 0, 4),
      generated("random_k8_1k", mc::random_k, 1000, 0, 8),
      generated("random_k16_100k", mc::random_k, 100000, 0, 16),
      generated("random_k64_1m", mc::random_k, 1000000, 0, 64),
      generated("random_k4_10m", mc::random_k, 10000000, 0, 4),
      generated("denserow_2k", mc::dense_row, 2000, 0, 4, 2000),  // launch-bound, one full row
      generated("denserow_16k", mc::dense_row, 16000, 0, 4, 16000),
      generated("denserow_100k", mc::dense_row, 100000, 0, 4, 100000),  // one full row
      generated("denserow_4m", mc::dense_row, 4000000, 0, 2, 1000000),
      generated("rect_1k_x_1m", mc::random_k, 1000, 1000000, 256),  // wide: few long rows over a large x
      generated("rect_1m_x_1k", mc::random_k, 1000000, 1000, 8),    // tall: x stays in L1/L2
      generated("rect_20k_x_2m", mc::random_k, 20000, 2000000, 1000),
      grid("laplace2d_1m", mc::laplace_2d, 1000),
      grid("laplace3d_1m", mc::laplace_3d, 100),
  };
}

std::int64_t expected_entries(const sparse::generate_params& p) {
  using mc = sparse::matrix_class;
  const std::int64_t rows = p.rows, cols = p.cols ? p.cols : p.rows, k = p.k;
  switch (p.kind) {
    case mc::laplace_2d: return 5 * p.n * p.n - 4 * p.n;
    case mc::laplace_3d: return 7 * p.n * p.n * p.n - 6 * p.n * p.n;
    case mc::random_k: return rows * std::min(k, cols);
    case mc::power_law: return rows * 62 / 10;
    case mc::dense_row: return (rows - 1) * std::min(k, cols) + std::min(p.dense_length, cols);
    case mc::banded:  // square: the band loses k (k + 1) entries at its two ends
      return rows == cols && 2 * k + 1 <= cols ? rows * (2 * k + 1) - k * (k + 1) : rows * std::min(2 * k + 1, cols);
    case mc::block_diagonal: return rows * std::min(k, cols);
    case mc::arrow: return std::min(k, rows) * cols + (rows - std::min(k, rows)) * (std::min(k, cols) + 1);
  }
  return 0;
}

sparse::host_csr<float, std::int32_t> load(const corpus_entry& e) {
  if (e.generated()) return sparse::generate<float, std::int32_t>(e.params);
  sparse::host_csr<float, std::int32_t> a;
  try {
    a = sparse::read_matrix<float, std::int32_t>(e.path);
  } catch (const std::bad_alloc&) {
    throw;  // out of host memory: exit 3
  } catch (const std::length_error&) {
    throw;
  } catch (const std::exception& ex) {
    const std::string what = ex.what();
    throw gpukit::bad_input(what.find(e.path) != std::string::npos ? "corpus: " + what
                                                                     : "corpus: " + e.path + ": " + what);
  }
  if (a.rows() == 0 || a.nnz() == 0)
    throw gpukit::bad_input("corpus: " + e.path + ": " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                            " with " + std::to_string(a.nnz()) + " entries: nothing to time");
  return a;
}

}  // namespace spmv_app
