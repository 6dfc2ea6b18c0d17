// Dispatch of sparse::spmv: grid sizing, the launch of the plan's algorithm, error checks.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "gpukit/cuda_check.hpp"
#include "gpukit/cuda_launch.hpp"
#include "gpukit/cuda_launch.hpp"
#include "sparse/spmv.hpp"
#include "spmv_adaptive.cuh"
#include "spmv_merge.cuh"
#include "spmv_plan_state.hpp"
#include "spmv_row_kernels.cuh"
#include "spmv_windowed.cuh"

namespace sparse {
namespace detail {

int current_sm_count() {
  int device = 0, sms = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

int current_shared_per_sm() {
  int device = 0, bytes = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  return bytes;
}

namespace {
using gpukit::launch;  // the driver's launch path (launch.hpp): 0.2-0.5 us less per call than <<<>>>
constexpr int block_threads = 256;

// Grid for `items` work items of `per_block` each: enough blocks for every item, capped at 16 blocks of
// 256 per SM (two full residencies of 8 blocks); grid-stride loops cover the rest.
int grid_for(std::int64_t items, std::int64_t per_block, int sm_count) {
  const std::int64_t wanted = (items + per_block - 1) / per_block;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(wanted, std::int64_t{16} * sm_count)));
}

// One wave of resident 256-thread blocks of Kernel (fewer when `rows` needs fewer); the kernel
// grid-strides over the rest. The wave is cached per kernel and device without a lock (cached_wave).
template <auto Kernel>
int one_wave_grid(std::int64_t rows, int sm_count) {
  static std::atomic<int> waves[64] = {};
  const std::int64_t wave = gpukit::cached_wave(waves, Kernel, block_threads);
  return static_cast<int>(std::min<std::int64_t>(grid_for(rows, block_threads, sm_count), wave));
}

// stencil on scalar's grid (one wave of resident blocks), its pattern table from the plan.
template <int Unroll, class Value, class Index>
void launch_stencil(const spmv_plan_state& st, const csr_view<Value, Index>& a, Value alpha, const Value* x, Value beta,
                    Value* y, int sms, cudaStream_t s) {
  launch<spmv_stencil_kernel<Unroll, Value, Index>>(one_wave_grid<spmv_stencil_kernel<Unroll, Value, Index>>(a.rows, sms),
                                                    block_threads, s, a, st.stencil_rows.data(), st.stencil_table.data(),
                                                    st.stencil_patterns, static_cast<int>(st.stencil_table.size()), alpha,
                                                    x, beta, y);
}

template <bool Chunked, entry_load E, class Value, class Index>
void launch_vector(int width, const csr_view<Value, Index>& a, Value alpha, const Value* x, Value beta, Value* y,
                   int sms, cudaStream_t s) {
  const int grid = grid_for(a.rows, block_threads / width, sms);
  switch (width) {
    case 2: launch<spmv_vector_kernel<2, Chunked, E, gather::ldg, Value, Index>>(grid, block_threads, s, a, alpha, x, beta, y); break;
    case 4: launch<spmv_vector_kernel<4, Chunked, E, gather::ldg, Value, Index>>(grid, block_threads, s, a, alpha, x, beta, y); break;
    case 8: launch<spmv_vector_kernel<8, Chunked, E, gather::ldg, Value, Index>>(grid, block_threads, s, a, alpha, x, beta, y); break;
    case 16: launch<spmv_vector_kernel<16, Chunked, E, gather::ldg, Value, Index>>(grid, block_threads, s, a, alpha, x, beta, y); break;
    default: launch<spmv_vector_kernel<32, Chunked, E, gather::ldg, Value, Index>>(grid, block_threads, s, a, alpha, x, beta, y); break;
  }
}

// block_per_row: 256 threads per row (about 4 entries per thread for 1000-entry rows), a block per row
// (the block scheduler balances the tail; grid-stride only beyond 2^31 - 1 rows). On an H200, random1000:
// 150.1-150.2 us, against 154.0-154.5 for 128 threads and at most 16 blocks per SM, 152.9-153.2 for one
// wave of 256-thread blocks, and ALG1's 151.1 (bench/experiments/spmv_variants.cu).
constexpr int row_block_threads = 256;
constexpr int warp_stream_entries = 256;

// windowed: a block per 16 warps of the layout, their slot sums in dynamic shared memory (up to 96 KB,
// hence the opt-in). The L1/shared split is the kernel's attribute: just the shared memory two blocks
// need, the rest stays L1 for the windows of x. Plans differ, so it is set when it changes (per device;
// a host call costs microseconds that the timing of a ~200 us call would see).
template <bool Slots, class Value>
void launch_windowed(const spmv_plan_state& st, Value alpha, const Value* x, Value beta, Value* y, cudaStream_t s) {
  auto* kernel = spmv_windowed_kernel<windowed_unroll, Slots, Value>;
  const int smem = st.windowed_block_slots * static_cast<int>(sizeof(Value));
  static std::atomic<int> carveout_set[64];  // 0: not yet opted in; else carveout + 1
  int device = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  const int carveout = std::min(100, (2 * (smem + 1024) * 100 + st.shared_per_sm - 1) / std::max(1, st.shared_per_sm));
  if (carveout_set[device & 63].load(std::memory_order_relaxed) != carveout + 1) {
    GPUKIT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 96 << 10));
    GPUKIT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
    carveout_set[device & 63].store(carveout + 1, std::memory_order_relaxed);
  }
  const auto blocks = (st.windowed_warps + windowed_warps_per_block - 1) / windowed_warps_per_block;
  kernel<<<static_cast<unsigned>(blocks), windowed_threads, static_cast<std::size_t>(smem), s>>>(
      st.windowed_packed.data(), reinterpret_cast<const Value*>(st.windowed_values.data()), st.windowed_warp_begin.data(),
      st.windowed_warp_row0.data(), st.windowed_warp_slot0.data(), st.windowed_row_slot.data(), st.windowed_warps, alpha,
      x, beta, y);
  GPUKIT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace
}  // namespace detail

template <class Value, class Index>
void spmv(const spmv_plan<Value, Index>& plan, Value alpha, const Value* d_x, Value beta, Value* d_y, stream_t stream) {
  const csr_view<Value, Index>& a = plan.matrix();
  if (a.rows == 0) return;
  const auto& st = plan.state();
  const int sms = st.sm_count;
  const cudaStream_t s = stream;
  using namespace detail;
  switch (plan.algorithm()) {
    case spmv_algorithm::scalar: {
      // One wave of resident blocks, each thread grid-striding over ~rows / (wave x 256) rows: on an
      // H200 the Laplacians ran 2-4 % faster than with two waves (16 blocks per SM) and 7-16 % faster
      // than with a block per 256 rows (bench/experiments/spmv_variants.cu).
      launch<spmv_scalar_kernel<Value, Index>>(one_wave_grid<spmv_scalar_kernel<Value, Index>>(a.rows, sms), block_threads,
                                               s, a, alpha, d_x, beta, d_y);
      break;
    }
    case spmv_algorithm::stencil:
      // All loads of a row at once where rows hold <= 8.
      if (st.stencil_unrolled) launch_stencil<8>(st, a, alpha, d_x, beta, d_y, sms, s);
      else launch_stencil<0>(st, a, alpha, d_x, beta, d_y, sms, s);
      break;
    case spmv_algorithm::windowed:
      if (st.windowed_row_slot.size() > 0) launch_windowed<true>(st, alpha, d_x, beta, d_y, s);
      else launch_windowed<false>(st, alpha, d_x, beta, d_y, s);
      break;
    case spmv_algorithm::shared_cached:
      launch<spmv_shared_cached_kernel<block_threads, Value, Index>>(grid_for(a.rows, block_threads, sms), block_threads, s,
                                                                      a, alpha, d_x, beta, d_y);
      break;
    case spmv_algorithm::warp_per_row:
      launch<spmv_warp_per_row_kernel<Value, Index>>(grid_for(a.rows, block_threads / 32, sms), block_threads, s, a, alpha,
                                                     d_x, beta, d_y);
      break;
    case spmv_algorithm::vector:
      if (st.vector_chunked) launch_vector<true, entry_load::cached>(plan.vector_width(), a, alpha, d_x, beta, d_y, sms, s);
      else if (st.vector_streaming) launch_vector<false, entry_load::streaming>(plan.vector_width(), a, alpha, d_x, beta, d_y, sms, s);
      else launch_vector<false, entry_load::cached>(plan.vector_width(), a, alpha, d_x, beta, d_y, sms, s);
      break;
    case spmv_algorithm::warp_stream:
      // 32 rows per warp, 8 warps per block; 256 staged entries per warp (8 per row: the Laplacians'
      // 5-7 and random2 fit), 8 KB per block for float, so L1 keeps most of its 256 KB.
      launch<spmv_warp_stream_kernel<warp_stream_entries, Value, Index>>(grid_for(a.rows, block_threads, sms), block_threads,
                                                                         s, a, alpha, d_x, beta, d_y);
      break;
    case spmv_algorithm::block_per_row:
      launch<spmv_block_per_row_kernel<row_block_threads, gather::l2_only, Value, Index>>(
          static_cast<unsigned>(std::min<std::int64_t>(a.rows, 0x7fffffff)), row_block_threads, s, a, alpha, d_x, beta, d_y);
      break;
    case spmv_algorithm::merge: {
      // One block per merge tile (the plan checks the count fits gridDim.x); rows crossing a block
      // boundary are finished inside the same launch by the block that writes their last part.
      auto* partials = reinterpret_cast<Value*>(const_cast<double*>(st.partials.data()));
      launch<spmv_merge_kernel<Value, Index>>(static_cast<unsigned>(st.merge.blocks.size() - 1), merge_threads, s, a, alpha,
                                              d_x, beta, d_y, st.merge_blocks.data(), partials, st.split_rows.data(),
                                              const_cast<int*>(st.split_arrivals.data()));
      break;
    }
    case spmv_algorithm::adaptive:
    case spmv_algorithm::automatic: {  // automatic never reaches here (resolved in the plan)
      const auto& part = st.partition;
      auto* partials = reinterpret_cast<Value*>(const_cast<double*>(st.partials.data()));
      // One block per tile (the plan checks that the tile count fits gridDim.x). Entries are read once
      // (coalesced in every tile kind), so they skip L1 and are first out of L2: x keeps both caches
      // (powerlaw on an H200: 62.3-62.4 us against 64.6-64.7 with plain loads; bench/experiments).
      // Registers capped for 8 resident blocks per SM (32 instead of 39: 88 % of warps active instead of
      // 66 %): powerlaw 59.0-59.2 us against 61.3-61.8 (ALG1 58.8). Medium rows grouped longest first
      // (warp_row_order): 57.4-57.9 us against 59.1-59.3 in row order (ALG1 58.7).
      launch<spmv_adaptive_kernel<entry_load::once, gather::ldg, 8, Value, Index>>(
          static_cast<unsigned>(part.tiles.size()), tile_threads, s, a, alpha, d_x, beta, d_y, st.tiles.data(),
          st.segments.data(), st.warp_rows.data(), partials, st.split_rows.data(), const_cast<int*>(st.split_arrivals.data()));
      break;
    }
  }
}

#define SPARSE_SPMV_INSTANTIATE(V, I) \
  template void spmv<V, I>(const spmv_plan<V, I>&, V, const V*, V, V*, stream_t);
SPARSE_SPMV_INSTANTIATE(float, std::int32_t)
SPARSE_SPMV_INSTANTIATE(float, std::int64_t)
SPARSE_SPMV_INSTANTIATE(double, std::int32_t)
SPARSE_SPMV_INSTANTIATE(double, std::int64_t)
#undef SPARSE_SPMV_INSTANTIATE

}  // namespace sparse
