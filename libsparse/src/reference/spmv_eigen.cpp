// The Eigen CPU backend: the CSR arrays mapped (no copy) as a row-major Eigen::SparseMatrix.
#include <Eigen/SparseCore>

#include "instantiate.hpp"
#include "sparse/reference.hpp"

namespace sparse::reference {

template <class Value, class Index>
void spmv_eigen(const csr_view<Value, Index>& a, Value alpha, const Value* x, Value beta, Value* y) {
  using matrix = Eigen::SparseMatrix<Value, Eigen::RowMajor, Index>;
  using vector = Eigen::Matrix<Value, Eigen::Dynamic, 1>;
  Eigen::Map<vector> ym(y, static_cast<Eigen::Index>(a.rows));
  if (a.rows == 0) return;
  // Eigen::Map wants the outer-index array of a compressed matrix: exactly row_ptr. Index is the
  // StorageIndex (int32 or int64), so nothing is converted or copied.
  Eigen::Map<const matrix> am(static_cast<Eigen::Index>(a.rows), static_cast<Eigen::Index>(a.cols),
                              static_cast<Eigen::Index>(a.nnz), a.row_ptr, a.col_idx, a.values);
  Eigen::Map<const vector> xm(x, static_cast<Eigen::Index>(a.cols));
  if (beta == Value(0)) {
    ym.noalias() = alpha * (am * xm);  // y is written, never read: NaN poison in y cannot leak
  } else {
    ym *= beta;
    ym.noalias() += alpha * (am * xm);
  }
}

#define SPARSE_EIGEN_INSTANTIATE(V, I) template void spmv_eigen<V, I>(const csr_view<V, I>&, V, const V*, V, V*);
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_EIGEN_INSTANTIATE)
#undef SPARSE_EIGEN_INSTANTIATE

}  // namespace sparse::reference
