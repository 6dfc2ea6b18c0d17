// The input checks and the stopping threshold shared by the CPU path and the GPU solver (host code), so that
// both reject the same inputs with the same words.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "solve/types.hpp"
#include "sparse/csr.hpp"

namespace solve::detail {

inline void check_shape(std::int64_t rows, std::int64_t cols) {
  if (rows != cols)
    throw std::invalid_argument("the matrix is not square (" + std::to_string(rows) + " x " + std::to_string(cols) + ")");
  if (rows == 0) throw std::invalid_argument("the matrix is empty (0 x 0)");
}

inline void check_vector_size(const char* what, std::int64_t size, std::int64_t rows) {
  if (size != rows)
    throw std::invalid_argument(std::string("size mismatch: the ") + what + " has " + std::to_string(size) +
                                " entries, the matrix " + std::to_string(rows) + " rows");
}

inline void check_options(const options& o) {
  if (!(o.rtol >= 0) || !std::isfinite(o.rtol)) throw std::invalid_argument("rtol must be finite and >= 0");
  if (!(o.atol >= 0) || !std::isfinite(o.atol)) throw std::invalid_argument("atol must be finite and >= 0");
  if (o.max_iterations < 0) throw std::invalid_argument("max_iterations must be >= 0");
  if (o.check_every < 1) throw std::invalid_argument("check_every must be >= 1");
  if (o.block_size != 0 && o.block_size != 128 && o.block_size != 256)
    throw std::invalid_argument("block_size must be 0 (automatic), 128 or 256");
  if (o.grid_blocks < 0) throw std::invalid_argument("grid_blocks must be >= 0");
  if (o.residual_check_every < -1) throw std::invalid_argument("residual_check_every must be >= -1");
  if (o.graph && o.method == krylov_method::pipecg)
    throw std::invalid_argument("graph mode runs cg, pcg and bicgstab: pipecg's recomputations are decided on the host");
}

/// options::residual_check_every resolved: -1 means 10 in float (whose recurrences drift within tens of
/// iterations on cond ~1e5) and 50 in double.
template <class Value>
inline int pipecg_check_every(const options& o) {
  if (o.residual_check_every >= 0) return o.residual_check_every;
  return sizeof(Value) == 4 ? 10 : 50;
}


/// The stopping test ||r||^2 <= threshold2 = max(rtol^2 ||b||^2, atol^2).
inline double threshold2(const options& o, double b_norm2) {
  return std::max(o.rtol * o.rtol * b_norm2, o.atol * o.atol);
}

/// 1 / d_i in Value for each diagonal entry, after checking that none is zero or non-finite (the first bad
/// row is named).
template <class Value>
std::vector<Value> checked_inverse(const std::vector<Value>& diag) {
  std::vector<Value> inv(diag.size());
  for (std::size_t i = 0; i < diag.size(); ++i) {
    const double d = static_cast<double>(diag[i]);
    if (d == 0)
      throw std::invalid_argument("zero on the diagonal at row " + std::to_string(i) +
                                  ": Jacobi preconditioning (pcg) needs a nonzero diagonal");
    if (!std::isfinite(d)) throw std::invalid_argument("NaN or Inf on the diagonal at row " + std::to_string(i));
    inv[i] = static_cast<Value>(1.0 / d);
  }
  return inv;
}

/// The diagonal of a host CSR matrix (duplicates summed, 0 where none is stored), inverted and checked.
template <class Value, class Index>
std::vector<Value> jacobi_inverse(const sparse::host_csr<Value, Index>& a) {
  std::vector<Value> d(static_cast<std::size_t>(a.rows()), Value(0));
  for (std::int64_t i = 0; i < a.rows(); ++i)
    for (Index e = a.row_ptr()[i]; e < a.row_ptr()[i + 1]; ++e)
      if (a.col_idx()[e] == i) d[i] += a.values()[e];
  return checked_inverse(d);
}

}  // namespace solve::detail
