// Dispatch of the CSR operator: the SpMV through libsparse's plan, its diagonal and the NaN/Inf check.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "gpukit/cuda_check.hpp"
#include "gpukit/cuda_launch.hpp"
#include "gpukit/device_buffer.hpp"
#include "operator_kernels.cuh"
#include "solve/linear_operator.hpp"

namespace solve {

namespace {
int blocks_for(std::int64_t n, int block) {
  const std::int64_t cap = static_cast<std::int64_t>(gpukit::sm_count()) * (2048 / block);
  return static_cast<int>(std::max<std::int64_t>(1, std::min(cap, (n + block - 1) / block)));
}
}  // namespace

template <class Value, class Index>
csr_operator<Value, Index>::csr_operator(const sparse::device_csr<Value, Index>& a, sparse::spmv_algorithm algorithm)
    : plan_(a, algorithm) {
  const auto v = plan_.matrix();
  if (v.nnz > 0) {
    gpukit::device_buffer<unsigned long long> count(1);
    count.fill_bytes(0);
    constexpr int block = 256;
    detail::count_non_finite<block><<<blocks_for(v.nnz, block), block>>>(v.values, v.nnz, count.data());
    GPUKIT_CHECK_LAUNCH();
    const auto c = count.download();  // synchronous
    if (c[0] != 0)
      throw std::invalid_argument("the matrix holds NaN or Inf (" + std::to_string(c[0]) + " of its " +
                                  std::to_string(v.nnz) + " values)");
  }
}

template <class Value, class Index>
void csr_operator<Value, Index>::apply(const Value* d_x, Value* d_y, stream_t stream) const {
  sparse::spmv(plan_, Value(1), d_x, Value(0), d_y, stream);
}

template <class Value, class Index>
void csr_operator<Value, Index>::apply_with_dots(const Value* d_x, Value* d_y, const Value* d_w, double* d_sums,
                                                 sparse::dots_summation how, stream_t stream) const {
  sparse::spmv_dots(plan_, d_x, d_y, d_w, d_sums, stream, how);
}

template <class Value, class Index>
void csr_operator<Value, Index>::diagonal(Value* d_diag, stream_t stream) const {
  const auto v = plan_.matrix();
  if (v.rows == 0) return;
  detail::extract_diagonal<<<blocks_for(v.rows, 256), 256, 0, stream>>>(v, d_diag);
  GPUKIT_CHECK_LAUNCH();
}

template class csr_operator<float, std::int32_t>;
template class csr_operator<float, std::int64_t>;
template class csr_operator<double, std::int32_t>;
template class csr_operator<double, std::int64_t>;

}  // namespace solve
