// The reference SpMV: boring on purpose (plain loops, double accumulation, column order).
#include <cmath>
#include <limits>

#include "instantiate.hpp"
#include "sparse/reference.hpp"

namespace sparse::reference {

template <class Value, class Index>
void spmv_reference(const csr_view<Value, Index>& a, Value alpha, const Value* x, Value beta, Value* y) {
  const double al = alpha, be = beta;
#pragma omp parallel for schedule(dynamic, 1024)
  for (std::int64_t i = 0; i < a.rows; ++i) {
    double acc = 0;
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
      acc += static_cast<double>(a.values[p]) * static_cast<double>(x[a.col_idx[p]]);
    // beta == 0 must not read y: the caller's y may be uninitialised or poisoned with NaN.
    y[i] = static_cast<Value>(beta == Value(0) ? al * acc : al * acc + be * static_cast<double>(y[i]));
  }
}

template <class Value, class Index>
std::vector<double> row_error_bounds(const csr_view<Value, Index>& a, Value alpha, const Value* x, Value beta,
                                     const Value* y) {
  std::vector<double> bound(static_cast<std::size_t>(a.rows));
  const double u = std::numeric_limits<Value>::epsilon() / 2.0;
#pragma omp parallel for schedule(dynamic, 1024)
  for (std::int64_t i = 0; i < a.rows; ++i) {
    double s = 0;
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
      s += std::fabs(static_cast<double>(a.values[p])) * std::fabs(static_cast<double>(x[a.col_idx[p]]));
    s *= std::fabs(static_cast<double>(alpha));
    if (beta != Value(0)) s += std::fabs(static_cast<double>(beta) * static_cast<double>(y[i]));
    const double k = static_cast<double>(a.row_ptr[i + 1] - a.row_ptr[i]) + 2.0;
    const double gamma = k * u < 1.0 ? k * u / (1.0 - k * u) : std::numeric_limits<double>::infinity();
    // 1.01: the bound computation rounds too (s is a double sum; a few ulps of double).
    bound[static_cast<std::size_t>(i)] = std::isfinite(s) ? 2.0 * gamma * s * 1.01 : std::numeric_limits<double>::infinity();
  }
  return bound;
}

#define SPARSE_REF_INSTANTIATE(V, I)                                                                 \
  template void spmv_reference<V, I>(const csr_view<V, I>&, V, const V*, V, V*);                    \
  template std::vector<double> row_error_bounds<V, I>(const csr_view<V, I>&, V, const V*, V, const V*);
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_REF_INSTANTIATE)
#undef SPARSE_REF_INSTANTIATE

}  // namespace sparse::reference
