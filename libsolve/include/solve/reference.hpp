// The CPU path of libsolve: the same methods, options and result as solve::solver, in plain loops (vectors in
// Value, scalars in double, every dot and norm a compensated sum of the exact products (Dot2: within
// u |x.y| + gamma_2n^2 sum |x_i y_i| of the exact dot, whatever the order), the GPU path's arithmetic up to
// the rounding of the dots and fma contraction in the updates). The oracle of the GPU tests and the app's
// --device cpu. Deterministic always (serial). No CUDA headers.
#pragma once
#include <cstdint>
#include <vector>

#include "solve/types.hpp"
#include "sparse/csr.hpp"

namespace solve::reference {

/// Solves A x = b from x0 = x (on entry, when `use_guess`) or 0. `b` and `x` hold a.rows() entries (host
/// memory). options::check_every, reproducible, block_size and grid_blocks have no effect here (a serial
/// dot is already reproducible). Throws std::invalid_argument naming the problem for a non-square or empty
/// matrix, b of the wrong size, NaN/Inf in A or b, a zero or non-finite diagonal entry with pcg.
///
/// Example:
///   std::vector<double> x(a.rows());
///   solve::result r = solve::reference::solve(a, b, x, opt);
template <class Value, class Index>
result solve(const sparse::host_csr<Value, Index>& a, const std::vector<Value>& b, std::vector<Value>& x,
             const options& opt, bool use_guess = false);

/// ||b - A x|| / ||b|| in double (0 when b = 0).
template <class Value, class Index>
double true_relative_residual(const sparse::host_csr<Value, Index>& a, const std::vector<Value>& b,
                              const std::vector<Value>& x);

/// The checks every solve makes on its matrix (square, not empty, finite values) and, with `need_diagonal`,
/// on its diagonal (no zero, no NaN/Inf: the first bad row is named). Throws std::invalid_argument.
template <class Value, class Index>
void check_matrix(const sparse::host_csr<Value, Index>& a, bool need_diagonal);

}  // namespace solve::reference
