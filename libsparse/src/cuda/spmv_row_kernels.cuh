// The row-parallel SpMV kernels: scalar (a thread per row), shared_cached (the seed's csrmul_shared),
// warp_per_row and vector (Width lanes per row). Device code only; dispatch in spmv.cu.
// Every kernel sums row i in a fixed order (its entries in column-storage order per thread or lane, then
// libreduce's fixed warp tree), so results are run-to-run deterministic.
#pragma once
#include <cstdint>

#include "reduce/cuda/warp_reduce.cuh"
#include "reduce/operators.hpp"
#include "sparse/csr_view.hpp"

namespace sparse::detail {

/// y_i = alpha * s + beta * y_i; beta == 0 never reads y (the caller's y may be NaN poison).
template <class Value>
__device__ __forceinline__ void store_row(Value* __restrict__ y, std::int64_t row, Value s, Value alpha, Value beta) {
  y[row] = beta == Value(0) ? alpha * s : alpha * s + beta * y[row];
}

/// Sequential dot product of entries [begin, end) with x: one thread, column-storage order.
template <class Value, class Index>
__device__ __forceinline__ Value row_dot(const csr_view<Value, Index>& a, const Value* __restrict__ x,
                                         std::int64_t begin, std::int64_t end) {
  Value s = Value(0);
  for (std::int64_t p = begin; p < end; ++p) s += a.values[p] * __ldg(x + a.col_idx[p]);
  return s;
}

/// Strided partial dot product: entries begin + lane, begin + lane + stride, ... (lane's share of a row).
/// Unrolled by 4 so each thread has four independent (col -> x) load chains in flight.
template <class Value, class Index>
__device__ __forceinline__ Value strided_dot(const csr_view<Value, Index>& a, const Value* __restrict__ x,
                                             std::int64_t begin, std::int64_t end, int lane, int stride) {
  Value s = Value(0);
#pragma unroll 4
  for (std::int64_t p = begin + lane; p < end; p += stride) s += a.values[p] * __ldg(x + a.col_idx[p]);
  return s;
}

/// scalar: one thread per row (the seed's csrmul_kernel), grid-stride over rows.
template <class Value, class Index>
__global__ void __launch_bounds__(256)
spmv_scalar_kernel(csr_view<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta, Value* __restrict__ y) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < a.rows; row += stride)
    store_row(y, row, row_dot(a, x, a.row_ptr[row], a.row_ptr[row + 1]), alpha, beta);
}

/// shared_cached: the seed's csrmul_shared. A block owns rows [begin, begin + BlockThreads) and caches
/// x[begin .. begin + BlockThreads) (clipped to cols, so rectangular matrices work) in shared memory;
/// columns outside that window are read from global memory.
template <int BlockThreads, class Value, class Index>
__global__ void __launch_bounds__(BlockThreads)
spmv_shared_cached_kernel(csr_view<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta,
                          Value* __restrict__ y) {
  __shared__ Value cache[BlockThreads];
  for (std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * BlockThreads; begin < a.rows;
       begin += static_cast<std::int64_t>(gridDim.x) * BlockThreads) {  // uniform per block: barriers are safe
    const std::int64_t window_end = begin + BlockThreads < a.cols ? begin + BlockThreads : a.cols;
    const std::int64_t row = begin + threadIdx.x;
    if (begin + threadIdx.x < window_end) cache[threadIdx.x] = x[begin + threadIdx.x];
    __syncthreads();
    if (row < a.rows) {
      Value s = Value(0);
      for (std::int64_t p = a.row_ptr[row]; p < a.row_ptr[row + 1]; ++p) {
        const std::int64_t j = a.col_idx[p];
        const Value xj = (j >= begin && j < window_end) ? cache[j - begin] : __ldg(x + j);
        s += a.values[p] * xj;
      }
      store_row(y, row, s, alpha, beta);
    }
    __syncthreads();  // the cache is overwritten by the next window
  }
}

/// warp_per_row: one warp per row, lanes stride the row, reduce::warp::reduce_to_first finishes it.
/// The loop bound is uniform per warp, so all 32 lanes reach the shuffle together.
template <class Value, class Index>
__global__ void __launch_bounds__(256)
spmv_warp_per_row_kernel(csr_view<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta,
                         Value* __restrict__ y) {
  constexpr int ws = reduce::warp::warp_size;
  const int lane = static_cast<int>(threadIdx.x) % ws;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / ws);
  for (std::int64_t row = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / ws; row < a.rows;
       row += warps) {
    Value s = strided_dot(a, x, a.row_ptr[row], a.row_ptr[row + 1], lane, ws);
    s = reduce::warp::reduce_to_first(s, reduce::plus{});
    if (lane == 0) store_row(y, row, s, alpha, beta);
  }
}

/// vector: Width lanes per row (Width in 2..32), reduce::warp::all_reduce<Width> finishes each row.
/// The loop runs over warp-sized groups of rows so every lane of the warp joins every shuffle; lanes of a
/// row past the end contribute a 0 they never store.
template <int Width, class Value, class Index>
__global__ void __launch_bounds__(256)
spmv_vector_kernel(csr_view<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta, Value* __restrict__ y) {
  constexpr int ws = reduce::warp::warp_size;
  constexpr int rows_per_warp = ws / Width;
  const int lane = static_cast<int>(threadIdx.x) % Width;
  const int group = (static_cast<int>(threadIdx.x) % ws) / Width;
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / ws;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / ws);
  for (std::int64_t base = warp * rows_per_warp; base < a.rows; base += warps * rows_per_warp) {
    const std::int64_t row = base + group;
    Value s = Value(0);
    if (row < a.rows) s = strided_dot(a, x, a.row_ptr[row], a.row_ptr[row + 1], lane, Width);
    s = reduce::warp::all_reduce<Width>(s, reduce::plus{});
    if (row < a.rows && lane == 0) store_row(y, row, s, alpha, beta);
  }
}

}  // namespace sparse::detail
