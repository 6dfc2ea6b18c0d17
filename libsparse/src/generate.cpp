// Benchmark matrix generators. Random classes are generated in blocks of rows, each block with its own
// generator, so the result does not depend on the number of OpenMP threads.
#include "sparse/generate.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpukit/host_memory.hpp"
#include "instantiate.hpp"

namespace sparse {
namespace {

constexpr std::int64_t block_rows = 4096;

/// An exception must not leave an OpenMP region (std::terminate, "terminate called after throwing
/// std::bad_alloc"): each iteration body runs through run(), the first exception is kept, the remaining
/// iterations are skipped, and rethrow() raises it on the calling thread after the region.
class omp_exception_guard {
public:
  template <class Body>
  void run(Body&& body) noexcept {
    if (failed_.load(std::memory_order_relaxed)) return;
    try {
      body();
    } catch (...) {
#pragma omp critical(sparse_generate_exception)
      if (!first_) first_ = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
  }
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

private:
  std::atomic<bool> failed_{false};
  std::exception_ptr first_;
};

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Uniform integer in [0, n): multiply-shift (Lemire) without rejection; the bias is below n / 2^64
/// (< 2^-30 for any n < 2^34): irrelevant for benchmark matrices, and portable, unlike std:: distributions.
std::int64_t below(std::mt19937_64& g, std::int64_t n) {
  return static_cast<std::int64_t>((static_cast<unsigned __int128>(g()) * static_cast<std::uint64_t>(n)) >> 64);
}
/// Uniform in [0, 1) with 53 random bits.
double unit(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1.0p-53; }
/// Uniform in (0, 1]: the power-law draw needs u > 0 (u^-0.7 is infinite at 0).
double unit_open0(std::mt19937_64& g) { return static_cast<double>((g() >> 11) + 1) * 0x1.0p-53; }

/// Appends `length` distinct sorted columns of [0, cols) to `out` (length <= cols). Draws with
/// replacement, sorts and deduplicates, and tops up until there are enough; above cols / 2 it picks
/// the columns to leave out instead, so the expected number of rounds stays below ~2.
void distinct_columns(std::mt19937_64& g, std::int64_t cols, std::int64_t length, std::vector<std::int64_t>& out,
                      std::vector<std::int64_t>& scratch) {
  const bool complement = length > cols / 2;
  const std::int64_t want = complement ? cols - length : length;
  scratch.clear();
  while (static_cast<std::int64_t>(scratch.size()) < want) {
    const std::int64_t missing = want - static_cast<std::int64_t>(scratch.size());
    for (std::int64_t i = 0; i < missing; ++i) scratch.push_back(below(g, cols));
    std::sort(scratch.begin(), scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
  }
  if (!complement) {
    out.insert(out.end(), scratch.begin(), scratch.end());
    return;
  }
  std::size_t s = 0;
  for (std::int64_t c = 0; c < cols; ++c) {
    if (s < scratch.size() && scratch[s] == c) ++s;
    else out.push_back(c);
  }
}

template <class Index>
void check_fits(std::int64_t v, const char* what) {
  if (v > static_cast<std::int64_t>(std::numeric_limits<Index>::max()) - 1)
    throw std::invalid_argument(std::string("generate: ") + what + " = " + std::to_string(v) + " does not fit the " +
                                std::to_string(8 * sizeof(Index)) + "-bit index type (use --index 64)");
}

/// Builds a matrix row block by row block: row_fn(g, row, cols_out, vals_out) appends one row
/// (sorted unique columns). Blocks run in parallel; each has generator seeded from (seed, block).
template <class Value, class Index, class RowFn>
host_csr<Value, Index> build_blocked(std::int64_t rows, std::int64_t cols, std::uint64_t seed, RowFn row_fn) {
  const std::int64_t blocks = (rows + block_rows - 1) / block_rows;
  std::vector<std::vector<std::int64_t>> bcols(static_cast<std::size_t>(blocks));
  std::vector<std::vector<double>> bvals(static_cast<std::size_t>(blocks));
  std::vector<std::int64_t> row_end(static_cast<std::size_t>(rows), 0);  // end of each row within its block
  omp_exception_guard guard;
#pragma omp parallel
  {
    std::vector<std::int64_t> scratch;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t b = 0; b < blocks; ++b) {
      guard.run([&] {
        std::mt19937_64 g(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(b))));
        auto& c = bcols[static_cast<std::size_t>(b)];
        auto& v = bvals[static_cast<std::size_t>(b)];
        const std::int64_t r1 = std::min(rows, (b + 1) * block_rows);
        for (std::int64_t r = b * block_rows; r < r1; ++r) {
          row_fn(g, r, c, v, scratch);
          row_end[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(c.size());
        }
      });
    }
  }
  guard.rethrow();
  // Per-block running sizes -> global offsets.
  std::vector<std::int64_t> block_start(static_cast<std::size_t>(blocks) + 1, 0);
  for (std::int64_t b = 0; b < blocks; ++b)
    block_start[static_cast<std::size_t>(b) + 1] = block_start[static_cast<std::size_t>(b)] +
                                                   static_cast<std::int64_t>(bcols[static_cast<std::size_t>(b)].size());
  const std::int64_t nnz = block_start.back();
  check_fits<Index>(nnz, "nnz");
  std::vector<Index> row_ptr(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<Index> col_idx(static_cast<std::size_t>(nnz));
  std::vector<Value> values(static_cast<std::size_t>(nnz));
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t off = block_start[static_cast<std::size_t>(b)];
    auto& c = bcols[static_cast<std::size_t>(b)];
    auto& v = bvals[static_cast<std::size_t>(b)];
    for (std::size_t i = 0; i < c.size(); ++i) {
      col_idx[static_cast<std::size_t>(off) + i] = static_cast<Index>(c[i]);
      values[static_cast<std::size_t>(off) + i] = static_cast<Value>(v[i]);
    }
    const std::int64_t r1 = std::min(rows, (b + 1) * block_rows);
    for (std::int64_t r = b * block_rows; r < r1; ++r)
      row_ptr[static_cast<std::size_t>(r) + 1] = static_cast<Index>(off + row_end[static_cast<std::size_t>(r)]);
    std::vector<std::int64_t>().swap(c);  // peak memory: free each block's copy as soon as it is placed
    std::vector<double>().swap(v);
  }
  return host_csr<Value, Index>(rows, cols, std::move(row_ptr), std::move(col_idx), std::move(values));
}

/// Appends k columns drawn with replacement, sorted and deduplicated, with values in [-1, 1).
void random_row(std::mt19937_64& g, std::int64_t cols, std::int64_t k, std::vector<std::int64_t>& c,
                std::vector<double>& v) {
  const std::size_t first = c.size();
  for (std::int64_t i = 0; i < k; ++i) c.push_back(below(g, cols));
  std::sort(c.begin() + static_cast<std::ptrdiff_t>(first), c.end());
  c.erase(std::unique(c.begin() + static_cast<std::ptrdiff_t>(first), c.end()), c.end());
  for (std::size_t i = first; i < c.size(); ++i) v.push_back(2.0 * unit(g) - 1.0);
}

/// Appends column j with a value in [-1, 1).
void put(std::mt19937_64& g, std::int64_t j, std::vector<std::int64_t>& c, std::vector<double>& v) {
  c.push_back(j);
  v.push_back(2.0 * unit(g) - 1.0);
}

/// Upper bound on the entries of a class with a known row length (all but power_law; dense_row's one
/// long row aside): false when it overflows int64.
bool upper_entries(matrix_class kind, std::int64_t rows, std::int64_t cols, std::int64_t k, std::int64_t& entries) {
  const std::int64_t head = std::min(k, cols);
  if (kind == matrix_class::banded) return gpukit::checked_mul(rows, k >= cols / 2 ? cols : 2 * k + 1, entries);
  if (kind != matrix_class::arrow) return gpukit::checked_mul(rows, head, entries);
  std::int64_t others = 0, dense = 0;  // arrow: head + 1 per row, plus min(k, rows) rows of cols
  if (!gpukit::checked_mul(rows, head + 1, others) || !gpukit::checked_mul(std::min(k, rows), cols, dense) ||
      others > std::numeric_limits<std::int64_t>::max() - dense)
    return false;
  entries = others + dense;
  return true;
}

template <class Value, class Index>
host_csr<Value, Index> stencil(std::int64_t n, int dims) {
  if (n < 0) throw std::invalid_argument("generate: grid side n = " + std::to_string(n) + " is negative");
  // The largest count computed below is nnz = c n^dims - ... with c = 5 (2D) or 7 (3D); rows = n^dims and
  // the subtracted terms are smaller, so c n^dims <= INT64_MAX makes every product fit. Tested with
  // floor divisions (a b <= M <=> b <= floor(M / a) for a > 0), which cannot overflow themselves: the
  // old limits (n^dims fits: 3037000499 / 2097151) let 5 n^2 and 7 n^3 overflow (UBSan, issue 19).
  {
    std::int64_t limit = std::numeric_limits<std::int64_t>::max() / (dims == 2 ? 5 : 7);
    for (int d = 0; d < dims && n > 0; ++d) {
      if (n > limit)
        throw std::invalid_argument("generate: grid side n = " + std::to_string(n) + " makes " +
                                    (dims == 2 ? "5 n^2" : "7 n^3") + " entries, which overflows 64-bit sizes");
      limit /= n;
    }
  }
  const std::int64_t rows = dims == 2 ? n * n : n * n * n;
  const std::int64_t nnz = dims == 2 ? 5 * n * n - 4 * n : 7 * n * n * n - 6 * n * n;
  check_fits<Index>(rows, "rows");
  check_fits<Index>(std::max<std::int64_t>(nnz, 0), "nnz");
  {
    const std::uint64_t entry_bytes = gpukit::saturating_bytes(std::max<std::int64_t>(nnz, 0), sizeof(Index) + sizeof(Value));
    const std::uint64_t bytes = entry_bytes + gpukit::saturating_bytes(rows + 1, sizeof(Index));  // wrapped: < entry_bytes
    if (auto why = gpukit::host_memory_shortfall(bytes < entry_bytes ? UINT64_MAX : bytes,
                                                 "the " + std::to_string(rows) + "-row Laplacian"))
      throw std::invalid_argument("generate: " + *why);
  }
  std::vector<Index> row_ptr(static_cast<std::size_t>(rows) + 1);
  std::vector<Index> col_idx(static_cast<std::size_t>(std::max<std::int64_t>(nnz, 0)));
  std::vector<Value> values(col_idx.size());
  const Value diag = static_cast<Value>(2 * dims);
  // Row r = (z, y, x) with x fastest. Entries before row r are computable in closed form, so rows fill
  // in parallel without a prefix pass: count the neighbours of every earlier row...; simpler and as fast:
  // a serial count pass (one add per row) then a parallel fill.
  row_ptr[0] = 0;
  std::int64_t acc = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t x = r % n, y = (r / n) % n, z = dims == 3 ? r / (n * n) : 0;
    std::int64_t len = 1 + (x > 0) + (x < n - 1) + (y > 0) + (y < n - 1);
    if (dims == 3) len += (z > 0) + (z < n - 1);
    acc += len;
    row_ptr[static_cast<std::size_t>(r) + 1] = static_cast<Index>(acc);
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t x = r % n, y = (r / n) % n, z = dims == 3 ? r / (n * n) : 0;
    std::size_t p = static_cast<std::size_t>(row_ptr[static_cast<std::size_t>(r)]);
    auto put = [&](std::int64_t c, Value v) {
      col_idx[p] = static_cast<Index>(c);
      values[p] = v;
      ++p;
    };
    // Ascending column order: -n^2, -n, -1, 0, +1, +n, +n^2.
    if (dims == 3 && z > 0) put(r - n * n, Value(-1));
    if (y > 0) put(r - n, Value(-1));
    if (x > 0) put(r - 1, Value(-1));
    put(r, diag);
    if (x < n - 1) put(r + 1, Value(-1));
    if (y < n - 1) put(r + n, Value(-1));
    if (dims == 3 && z < n - 1) put(r + n * n, Value(-1));
  }
  return host_csr<Value, Index>(rows, rows, std::move(row_ptr), std::move(col_idx), std::move(values));
}

}  // namespace

const char* class_name(matrix_class c) {
  switch (c) {
    case matrix_class::laplace_2d: return "laplace2d";
    case matrix_class::laplace_3d: return "laplace3d";
    case matrix_class::random_k: return "random";
    case matrix_class::power_law: return "powerlaw";
    case matrix_class::dense_row: return "denserow";
    case matrix_class::banded: return "banded";
    case matrix_class::block_diagonal: return "blockdiag";
    case matrix_class::arrow: return "arrow";
  }
  return "?";
}

matrix_class parse_class(const std::string& name) {
  for (auto c : {matrix_class::laplace_2d, matrix_class::laplace_3d, matrix_class::random_k, matrix_class::power_law,
                 matrix_class::dense_row, matrix_class::banded, matrix_class::block_diagonal, matrix_class::arrow})
    if (name == class_name(c)) return c;
  throw std::invalid_argument("unknown matrix class '" + name +
                              "' (laplace2d, laplace3d, random, powerlaw, denserow, banded, blockdiag, arrow)");
}

template <class Value, class Index>
host_csr<Value, Index> generate(const generate_params& p) {
  if (p.kind == matrix_class::laplace_2d) return stencil<Value, Index>(p.n, 2);
  if (p.kind == matrix_class::laplace_3d) return stencil<Value, Index>(p.n, 3);
  const std::int64_t rows = p.rows, cols = p.cols == 0 ? p.rows : p.cols;
  if (rows < 0 || cols < 0)
    throw std::invalid_argument("generate: negative size rows = " + std::to_string(rows) + ", cols = " + std::to_string(cols));
  check_fits<Index>(rows, "rows");
  check_fits<Index>(cols, "cols");
  // Every class holds a row end (int64) and a row pointer (Index) per row; the classes with a known
  // row length (all but power_law) hold at most upper_entries() entries, each an int64 column and a
  // double value per block, then Index + Value in the matrix. (Power-law lengths are drawn: their bytes
  // are not known ahead; running out there is "out of host memory", exit 3.)
  std::uint64_t bytes = gpukit::saturating_bytes(rows, 8 + sizeof(Index));
  std::string what = std::to_string(rows) + " rows";
  if (p.kind != matrix_class::power_law) {
    if (p.k < 0) throw std::invalid_argument("generate: k = " + std::to_string(p.k) + " is negative");
    if (p.k == 0 && (p.kind == matrix_class::block_diagonal || p.kind == matrix_class::arrow))
      throw std::invalid_argument(std::string("generate: ") + class_name(p.kind) + " needs k >= 1 (" +
                                  (p.kind == matrix_class::arrow ? "arrow width" : "block size") + ")");
    if (p.k > 0 && cols == 0 && rows > 0) throw std::invalid_argument("generate: k > 0 entries per row but cols = 0");
    std::int64_t entries = 0;
    const std::uint64_t entry_bytes = upper_entries(p.kind, rows, cols, p.k, entries)
                                          ? gpukit::saturating_bytes(entries, 16 + sizeof(Index) + sizeof(Value))
                                          : UINT64_MAX;
    bytes = bytes + entry_bytes < bytes ? UINT64_MAX : bytes + entry_bytes;
    what += p.kind == matrix_class::random_k || p.kind == matrix_class::dense_row
                ? " of " + std::to_string(p.k) + " entries"
                : std::string(" of ") + class_name(p.kind) + " k = " + std::to_string(p.k);
  }
  if (auto why = gpukit::host_memory_shortfall(bytes, what)) throw std::invalid_argument("generate: " + *why);
  switch (p.kind) {
    case matrix_class::random_k: {
      const std::int64_t k = p.k;
      return build_blocked<Value, Index>(rows, cols, p.seed, [=](std::mt19937_64& g, std::int64_t, auto& c, auto& v, auto&) {
        random_row(g, cols, k, c, v);
      });
    }
    case matrix_class::power_law: {
      if (p.max_length < 0) throw std::invalid_argument("generate: max_length is negative");
      const std::int64_t cap = std::min(p.max_length, cols);
      return build_blocked<Value, Index>(rows, cols, p.seed, [=](std::mt19937_64& g, std::int64_t, auto& c, auto& v, auto& scratch) {
        const double len = std::floor(2.0 * std::pow(unit_open0(g), -0.7));  // >= 2; < 2^63 since u >= 2^-53
        const std::int64_t length = std::min<std::int64_t>(cap, static_cast<std::int64_t>(std::min(len, 9.0e18)));
        const std::size_t first = c.size();
        distinct_columns(g, cols, length, c, scratch);
        for (std::size_t i = first; i < c.size(); ++i) v.push_back(2.0 * unit(g) - 1.0);
      });
    }
    case matrix_class::dense_row: {
      if (p.dense_length < 0) throw std::invalid_argument("generate: dense_length is negative");
      const std::int64_t k = p.k, dense = std::min(p.dense_length, cols), dense_at = rows / 2;
      return build_blocked<Value, Index>(rows, cols, p.seed, [=](std::mt19937_64& g, std::int64_t r, auto& c, auto& v, auto& scratch) {
        if (r != dense_at) {
          random_row(g, cols, k, c, v);
          return;
        }
        const std::size_t first = c.size();
        distinct_columns(g, cols, dense, c, scratch);
        for (std::size_t i = first; i < c.size(); ++i) v.push_back(2.0 * unit(g) - 1.0);
      });
    }
    case matrix_class::banded: {
      const std::int64_t k = p.k;
      return build_blocked<Value, Index>(rows, cols, p.seed, [=](std::mt19937_64& g, std::int64_t r, auto& c, auto& v, auto&) {
        const std::int64_t lo = r > k ? r - k : 0, hi = k >= cols - r ? cols - 1 : r + k;  // no overflow
        for (std::int64_t j = lo; j <= hi; ++j) put(g, j, c, v);
      });
    }
    case matrix_class::block_diagonal: {
      const std::int64_t k = p.k;
      return build_blocked<Value, Index>(rows, cols, p.seed, [=](std::mt19937_64& g, std::int64_t r, auto& c, auto& v, auto&) {
        const std::int64_t first = r / k * k;  // <= r
        const std::int64_t end = first >= cols ? first : (k > cols - first ? cols : first + k);
        for (std::int64_t j = first; j < end; ++j) put(g, j, c, v);
      });
    }
    case matrix_class::arrow: {
      const std::int64_t k = p.k, head = std::min(p.k, cols);
      return build_blocked<Value, Index>(rows, cols, p.seed, [=](std::mt19937_64& g, std::int64_t r, auto& c, auto& v, auto&) {
        for (std::int64_t j = 0; j < (r < k ? cols : head); ++j) put(g, j, c, v);
        if (r >= k && r < cols) put(g, r, c, v);
      });
    }
    default: break;
  }
  throw std::invalid_argument("generate: unknown matrix class");
}

namespace {

generate_params grid_params(matrix_class kind, std::int64_t n) {
  generate_params p;
  p.kind = kind;
  p.n = n;
  return p;
}

generate_params random_params(matrix_class kind, std::int64_t rows, std::int64_t cols, std::int64_t k) {
  generate_params p;
  p.kind = kind;
  p.rows = rows;
  p.cols = cols;
  p.k = k;
  return p;
}

}  // namespace

template <class Value, class Index>
host_csr<Value, Index> generate_laplace_2d(std::int64_t n) {
  return generate<Value, Index>(grid_params(matrix_class::laplace_2d, n));
}
template <class Value, class Index>
host_csr<Value, Index> generate_laplace_3d(std::int64_t n) {
  return generate<Value, Index>(grid_params(matrix_class::laplace_3d, n));
}
template <class Value, class Index>
host_csr<Value, Index> generate_random_k(std::int64_t rows, std::int64_t cols, std::int64_t k, std::uint64_t seed) {
  generate_params p = random_params(matrix_class::random_k, rows, cols, k);
  p.seed = seed;
  return generate<Value, Index>(p);
}
template <class Value, class Index>
host_csr<Value, Index> generate_power_law(std::int64_t rows, std::int64_t cols, std::uint64_t seed, std::int64_t max_length) {
  generate_params p = random_params(matrix_class::power_law, rows, cols, 0);
  p.seed = seed;
  p.max_length = max_length;
  return generate<Value, Index>(p);
}

std::vector<benchmark_matrix> benchmark_matrices(bool quick) {
  auto grid = [](const char* name, matrix_class kind, std::int64_t n) { return benchmark_matrix{name, grid_params(kind, n)}; };
  auto rnd = [](const char* name, matrix_class kind, std::int64_t rows, std::int64_t cols, std::int64_t k) {
    return benchmark_matrix{name, random_params(kind, rows, cols, k)};
  };
  // Full sizes are the benchmark anchors; quick sizes keep the same shape with ~10x fewer entries.
  const std::int64_t s = quick ? 10 : 1;
  std::vector<benchmark_matrix> v;
  v.push_back(grid("laplace2d", matrix_class::laplace_2d, quick ? 648 : 2048));
  v.push_back(grid("laplace3d", matrix_class::laplace_3d, quick ? 74 : 160));
  v.push_back(rnd("random16", matrix_class::random_k, 2000000 / s, 2000000 / s, 16));
  v.push_back(rnd("powerlaw", matrix_class::power_law, 1000000 / s, 1000000 / s, 0));
  v.push_back(rnd("random2", matrix_class::random_k, 8000000 / s, 8000000 / s, 2));
  v.push_back(rnd("random1000", matrix_class::random_k, 20000 / s, 2000000, 1000));
  v.push_back(rnd("denserow", matrix_class::dense_row, 1000000 / s, 1000000 / s, 4));
  if (quick) v.back().params.dense_length = 100000;
  return v;
}

#define SPARSE_GEN_INSTANTIATE(V, I)                                                                   \
  template host_csr<V, I> generate<V, I>(const generate_params&);                                     \
  template host_csr<V, I> generate_laplace_2d<V, I>(std::int64_t);                                    \
  template host_csr<V, I> generate_laplace_3d<V, I>(std::int64_t);                                    \
  template host_csr<V, I> generate_random_k<V, I>(std::int64_t, std::int64_t, std::int64_t, std::uint64_t); \
  template host_csr<V, I> generate_power_law<V, I>(std::int64_t, std::int64_t, std::uint64_t, std::int64_t);
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_GEN_INSTANTIATE)
#undef SPARSE_GEN_INSTANTIATE

}  // namespace sparse
