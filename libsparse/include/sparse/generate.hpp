// Deterministic generators of the SpMV benchmark matrix classes (same seed -> same matrix on every
// machine and thread count: each block of 4,096 rows draws from its own splitmix64-seeded
// std::mt19937_64, and integers/reals are mapped from raw 64-bit draws without std:: distributions,
// whose algorithms differ between standard libraries).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sparse/csr.hpp"

namespace sparse {

/// The benchmark matrix classes.
enum class matrix_class {
  laplace_2d,  ///< 5-point Laplacian on an n x n grid: n^2 rows, 5n^2 - 4n entries (4 on the diagonal, -1 off)
  laplace_3d,  ///< 7-point Laplacian on an n^3 grid: n^3 rows, 7n^3 - 6n^2 entries (6 / -1)
  random_k,    ///< k columns per row drawn uniformly WITH replacement, then sorted and deduplicated
  power_law,   ///< row length L = min(max_length, floor(2 u^-0.7)), u uniform in (0,1]; L distinct columns
  dense_row,   ///< short random rows (k per row, as random_k) plus one row (rows / 2) of dense_length distinct columns
  banded,      ///< row r holds every column of [r - k, r + k] within [0, cols): 2k + 1 entries inside the band
  block_diagonal,  ///< dense k x k blocks on the diagonal: row r holds the columns [k floor(r / k), k floor(r / k) + k) within [0, cols)
  arrow,       ///< rows 0 .. k-1 hold every column; any other row r holds columns 0 .. k-1 and r (when r < cols)
};

/// Parameters of generate(); fields that a class does not use are ignored. Values of the random classes
/// are uniform in [-1, 1) (drawn in double and rounded to Value, so float and double share structure).
struct generate_params {
  matrix_class kind = matrix_class::laplace_2d;
  std::int64_t n = 0;      ///< grid side (laplace_2d, laplace_3d)
  std::int64_t rows = 0;   ///< every class but the Laplacians
  std::int64_t cols = 0;   ///< 0: cols = rows
  std::int64_t k = 0;      ///< entries drawn per row (random_k, the short rows of dense_row); half-bandwidth
                           ///< (banded, >= 0), block size (block_diagonal, >= 1), arrow width (arrow, >= 1)
  std::int64_t max_length = 200000;    ///< power_law cap on the row length (also capped at cols)
  std::int64_t dense_length = 200000;  ///< dense_row: length of the dense row (capped at cols)
  std::uint64_t seed = 20261121;
};

/// Class name as used on the command line: "laplace2d", "laplace3d", "random", "powerlaw", "denserow",
/// "banded", "blockdiag", "arrow".
const char* class_name(matrix_class c);
/// Inverse of class_name; std::invalid_argument listing the names otherwise.
matrix_class parse_class(const std::string& name);

/// Generates the matrix described by `p` (sorted, unique columns; validated shape). Throws
/// std::invalid_argument for negative or missing sizes, or when rows/cols/nnz do not fit Index.
/// Cost: about 20-40 ns per entry on one core (OpenMP over row blocks); 32M entries in ~1-2 s.
///
/// Example:
///   sparse::generate_params p;  p.kind = sparse::matrix_class::laplace_2d;  p.n = 2048;
///   auto a = sparse::generate<double, std::int32_t>(p);   // 4,194,304 rows, 20,963,328 entries
template <class Value, class Index>
host_csr<Value, Index> generate(const generate_params& p);

/// Convenience wrappers of generate().
template <class Value, class Index>
host_csr<Value, Index> generate_laplace_2d(std::int64_t n);
template <class Value, class Index>
host_csr<Value, Index> generate_laplace_3d(std::int64_t n);
template <class Value, class Index>
host_csr<Value, Index> generate_random_k(std::int64_t rows, std::int64_t cols, std::int64_t k, std::uint64_t seed);
template <class Value, class Index>
host_csr<Value, Index> generate_power_law(std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                                          std::int64_t max_length = 200000);

/// One benchmark matrix: a short name for tables and its parameters.
struct benchmark_matrix {
  std::string name;
  generate_params params;
};

/// The benchmark set (ANCHORS): laplace2d n=2048 (20,963,328 nnz), laplace3d n=160 (28,518,400 nnz),
/// random 16/row 2,000,000 rows (~31,999,880 nnz), powerlaw 1,000,000 rows (~6.1-6.2M nnz), random 2/row
/// 8,000,000 rows, random 1000/row 20,000 x 2,000,000, denserow 1,000,000 rows with one 200,000-entry row.
/// `quick` scales each down about 10x in entries (CI / smoke runs).
std::vector<benchmark_matrix> benchmark_matrices(bool quick);

}  // namespace sparse
