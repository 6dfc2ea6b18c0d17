// The windowed SpMV kernel: the plan's window-ordered copy of the matrix (build_windowed_layout in
// spmv_windowed_plan.cpp; the format is described in spmv_windowed_plan.hpp). Device code only;
// dispatch in spmv.cu.
//
// Why it is faster on random rows: each random 4-byte gather of x costs a 32-byte L2 sector in a
// row-ordered kernel, and those sectors bound it (cuSPARSE ALG1 included). Here every warp walks its
// entries in column-window order, so at any moment the warps of an SM gather from a few 16 KB windows
// of x, which stay in L1: a second gather to a sector the SM fetched moments ago hits L1 instead of L2.
// Measured on an H200, random16 (2M rows of 16 random columns of 2M): 32.8-33.1M L2 sectors instead of
// ALG1's 40.0M, 192.5 us against 240.8 (bench/experiments/spmv_windowed.cu).
#pragma once
#include <cstdint>

#include "spmv_windowed_plan.hpp"
#include "spmv_row_kernels.cuh"  // store_row

namespace sparse::detail {

/// One block of windowed_threads threads per windowed_warps_per_block warps of the layout. Each warp
/// owns a range of whole rows, and the block keeps their slots' sums in shared memory (one Value per
/// slot). The warp reads its entries 32 at a time (a group: no slot twice, so the 32 fused multiply-adds
/// into shared memory are independent), `Unroll` groups per step with all their loads in flight. A slot's
/// entries come in column order; a row's sum is its slots' sums in slot order (`row_slot`; `Slots` false:
/// one slot per row, row_slot unused), so a row of one slot is summed exactly as scalar sums it: bitwise
/// scalar's. Two instantiations, so that plans of one slot per row run the loop without the slot
/// epilogue: with it, random16 ran 203 us on an H200, without it 192.5 (neither spills; the cause was
/// not profiled further).
template <int Unroll, bool Slots, class Value>
__global__ void __launch_bounds__(windowed_threads, 2)
spmv_windowed_kernel(const std::uint32_t* __restrict__ packed, const Value* __restrict__ values,
                     const std::int64_t* __restrict__ warp_begin, const std::int64_t* __restrict__ warp_row0,
                     const std::int64_t* __restrict__ warp_slot0, const std::int64_t* __restrict__ row_slot,
                     std::int64_t warps, Value alpha, const Value* __restrict__ x, Value beta, Value* __restrict__ y) {
  extern __shared__ __align__(16) unsigned char windowed_shared[];
  Value* sums = reinterpret_cast<Value*>(windowed_shared);
  const std::int64_t g0 = static_cast<std::int64_t>(blockIdx.x) * windowed_warps_per_block;
  const std::int64_t g_end = g0 + windowed_warps_per_block < warps ? g0 + windowed_warps_per_block : warps;
  const std::int64_t slot0 = warp_slot0[g0];
  const int slots = static_cast<int>(warp_slot0[g_end] - slot0);  // <= the plan's largest block
  for (int i = static_cast<int>(threadIdx.x); i < slots; i += windowed_threads) sums[i] = Value(0);
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x & 31);
  const std::int64_t g = g0 + static_cast<std::int64_t>(threadIdx.x / 32);
  if (g < g_end) {
    Value* mine = sums + (warp_slot0[g] - slot0);
    const std::int64_t end = warp_begin[g + 1];
    // Lists are whole groups (the plan pads them): no per-entry bound check inside a group.
    for (std::int64_t k = warp_begin[g]; k < end; k += 32 * Unroll) {
      std::uint32_t p[Unroll];
      Value v[Unroll], xv[Unroll];
#pragma unroll
      for (int u = 0; u < Unroll; ++u) {
        const std::int64_t i = k + 32 * u + lane;
        p[u] = windowed_pad;
        v[u] = Value(0);
        if (i < end) {  // the last step may hold fewer than Unroll groups
          p[u] = __ldcs(packed + i);  // read once: evict-first, so x keeps L1 and L2
          v[u] = __ldcs(values + i);
        }
      }
#pragma unroll
      for (int u = 0; u < Unroll; ++u) xv[u] = p[u] != windowed_pad ? __ldg(x + (p[u] & windowed_column_mask)) : Value(0);
#pragma unroll
      for (int u = 0; u < Unroll; ++u) {
        if (p[u] != windowed_pad) {
          Value& s = mine[p[u] >> windowed_column_bits];
          s = fma(v[u], xv[u], s);  // fma: scalar's contracted s += v * x, explicitly (no hoisted multiply)
        }
        __syncwarp();  // the next group may add into a slot this one touched, from another lane
      }
    }
  }
  __syncthreads();
  const std::int64_t row0 = warp_row0[g0];
  const int rows = static_cast<int>(warp_row0[g_end] - row0);
  for (int i = static_cast<int>(threadIdx.x); i < rows; i += windowed_threads) {
    if (!Slots) {
      store_row(y, row0 + i, sums[i], alpha, beta);
    } else {
      const std::int64_t q0 = row_slot[row0 + i] - slot0, q1 = row_slot[row0 + i + 1] - slot0;
      Value s = sums[q0];
      for (std::int64_t q = q0 + 1; q < q1; ++q) s += sums[q];  // slot order: fixed
      store_row(y, row0 + i, s, alpha, beta);
    }
  }
}

}  // namespace sparse::detail
