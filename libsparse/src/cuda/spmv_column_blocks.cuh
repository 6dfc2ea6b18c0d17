// The column_blocks SpMV kernels (layout: spmv_column_blocks_plan.hpp). Device code only.
//
// Why: a matrix of few long rows of random columns over a large x (random1000: 20,000 rows of 1,000
// columns out of 2M, x 8 MB) is bound by the L2's rate of random 4-byte reads when summed row by row:
// every gather of x costs a 32-byte sector, and 20M of them take ~137 us at the ~146 G sectors/s an
// H200's L2 serves (windowed 142-144 us, ALG1 155-166). Here one thread block per SM copies its range of
// x to shared memory with coalesced loads, and its threads (one per row) sum their row's entries of the
// range from there into one partial each; a second kernel adds each row's partials in block order. The
// gathers become shared-memory reads; the price is the partials and the row starts, blocks x rows x
// (4 + 4 + 4) bytes for float, which is why automatic takes it only for rows of at least 4 entries per
// block (spmv_choice.cpp, column_blocks_pays). H200, 2026-12-03 (bench/experiments/spmv_column_blocks.cu,
// median us, ALG1 in the same run): random1000 77.9 against windowed's 141.9 and ALG1's 155.3; 20k rows
// of 300 entries (2.3 per block) 52.2 against vector's 54.5; 100k rows of 200 (1.5 per block) 158.2
// against windowed's 136.6. A thread per row beat 2 and 4 lanes (89.9, 116.4 us), and one block per SM
// beat two and four (82.4, 118.5 us: their partials double and quadruple).
#pragma once
#include <cstdint>

#include "spmv_column_blocks_plan.hpp"
#include "spmv_row_kernels.cuh"

namespace sparse::detail {

/// Block p: x[p width .. p width + width) into shared memory, then partials[p rows + r] = the sum of row
/// r's entries of the block, in storage (column) order, one thread per row.
template <class Value>
__global__ void __launch_bounds__(column_blocks_threads)
spmv_column_block_partials_kernel(const std::int64_t* __restrict__ base, const std::uint32_t* __restrict__ start,
                                  const std::uint16_t* __restrict__ col, const Value* __restrict__ values,
                                  const Value* __restrict__ x, std::int64_t cols, std::int64_t width, std::int64_t rows,
                                  Value* __restrict__ partials) {
  extern __shared__ unsigned char column_block_x[];
  Value* xs = reinterpret_cast<Value*>(column_block_x);
  const std::int64_t p = blockIdx.x, c0 = p * width;
  const std::int64_t w = c0 < cols ? (width < cols - c0 ? width : cols - c0) : 0;
  for (std::int64_t j = threadIdx.x; j < w; j += blockDim.x) xs[j] = x[c0 + j];
  __syncthreads();
  const std::uint32_t* st = start + p * (rows + 1);
  const std::uint16_t* cp = col + base[p];
  const Value* vp = values + base[p];
  for (std::int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
    Value s = Value(0);
    const std::uint32_t end = st[r + 1];
#pragma unroll 4
    for (std::uint32_t q = st[r]; q < end; ++q) s += vp[q] * xs[cp[q]];
    partials[p * rows + r] = s;
  }
}

/// y[r] = alpha * (partials of row r added in block order) + beta * y[r].
template <class Value>
__global__ void __launch_bounds__(256)
spmv_column_block_sum_kernel(const Value* __restrict__ partials, int blocks, std::int64_t rows, Value alpha, Value beta,
                             Value* __restrict__ y) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    Value s = Value(0);
    for (int p = 0; p < blocks; ++p) s += partials[p * rows + r];
    store_row(y, r, s, alpha, beta);
  }
}

}  // namespace sparse::detail
