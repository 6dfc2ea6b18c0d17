// Kernels of the CSR operator's set-up: its diagonal, and a count of NaN/Inf values.
#pragma once
#include <cstdint>

#include "reduce/cuda/block_reduce.cuh"
#include "sparse/csr_view.hpp"

namespace solve::detail {

/// d[i] = sum of the stored entries (i, i) of row i (0 when none): a thread per row.
template <class Value, class Index>
__global__ void extract_diagonal(sparse::csr_view<Value, Index> a, Value* d) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.rows; i += stride) {
    Value s = 0;
    for (Index e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e)
      if (a.col_idx[e] == i) s += a.values[e];
    d[i] = s;
  }
}

/// *count += number of NaN/Inf among values[0..n) (integer atomics: exact and order independent).
template <int Block, class Value>
__global__ void __launch_bounds__(Block) count_non_finite(const Value* values, std::int64_t n, unsigned long long* count) {
  unsigned long long c = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * Block;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * Block + threadIdx.x; i < n; i += stride)
    c += isfinite(values[i]) ? 0 : 1;
  using block_sum = reduce::block::block_reduce<Block, unsigned long long>;
  __shared__ typename block_sum::storage tmp;
  c = block_sum::reduce(c, reduce::plus{}, tmp);
  if (threadIdx.x == 0 && c != 0) atomicAdd(count, c);
}

}  // namespace solve::detail
