// CPU SpMV: the plain reference (the oracle twin of every GPU kernel) and the Eigen backend.
// Both compute y = alpha * A * x + beta * y; with beta == 0, y is only written (it may hold NaN poison).
#pragma once
#include <cstdint>
#include <vector>

#include "sparse/csr.hpp"
#include "sparse/csr_view.hpp"

namespace sparse::reference {

/// Plain loops, OpenMP over rows, each row accumulated in double in column order, then
/// y_i = alpha * acc + beta * y_i rounded once to Value. Error: |y_i - exact| <= gamma_{k+2}(double) *
/// S_i + u(Value) |y_i| with S_i = |alpha| sum_j |a_ij x_j| + |beta y_i|, k = row length.
/// Deterministic (same bits run to run and for any thread count). `a` holds host pointers.
///
/// Example:
///   std::vector<double> y(a.rows());
///   sparse::reference::spmv_reference(a.view(), 1.0, x.data(), 0.0, y.data());
template <class Value, class Index>
void spmv_reference(const csr_view<Value, Index>& a, Value alpha, const Value* x, Value beta, Value* y);
template <class Value, class Index>
void spmv_reference(const host_csr<Value, Index>& a, Value alpha, const Value* x, Value beta, Value* y) {
  spmv_reference(a.view(), alpha, x, beta, y);
}

/// The same product through Eigen (Eigen::Map of the CSR arrays as a row-major SparseMatrix; Eigen
/// parallelises row-major sparse * dense with OpenMP above ~20,000 entries). Accumulates in Value, so
/// |y_i - exact| <= gamma_{k+2}(Value) * S_i. Deterministic (each row summed by one thread in order).
///
/// Example:
///   sparse::reference::spmv_eigen(a.view(), 2.0f, x.data(), 1.0f, y.data());
template <class Value, class Index>
void spmv_eigen(const csr_view<Value, Index>& a, Value alpha, const Value* x, Value beta, Value* y);
template <class Value, class Index>
void spmv_eigen(const host_csr<Value, Index>& a, Value alpha, const Value* x, Value beta, Value* y) {
  spmv_eigen(a.view(), alpha, x, beta, y);
}

/// Per-row bound on |y_computed - y_reference| for any SpMV that sums row i in Value precision in any
/// order (sequential, warp tree, split rows): 2 * gamma_{k_i + 2}(Value) * S_i, where
/// S_i = |alpha| sum_j |a_ij| |x_j| + |beta| |y_i| (the |beta y_i| term only if beta != 0; y is the input
/// y, not read when beta == 0), k_i the row length. Derivation: a k-term dot product in any order has
/// error <= gamma_k sum |a_ij x_j| (Higham 3.1); the alpha scaling and the beta*y add cost 2 more
/// roundings; the reference itself is within gamma_{k+2}(double) S_i + u(Value) |y_i| <= gamma_{k+2}(Value) S_i
/// of the exact value, hence the factor 2. NaN/Inf in S_i gives an infinite bound: compare those rows
/// for NaN/Inf equality instead. Computed in double (long double for the sum of magnitudes is not needed:
/// the bound itself only needs a few correct digits).
template <class Value, class Index>
std::vector<double> row_error_bounds(const csr_view<Value, Index>& a, Value alpha, const Value* x, Value beta,
                                     const Value* y);
template <class Value, class Index>
std::vector<double> row_error_bounds(const host_csr<Value, Index>& a, Value alpha, const Value* x, Value beta,
                                     const Value* y) {
  return row_error_bounds(a.view(), alpha, x, beta, y);
}

}  // namespace sparse::reference
