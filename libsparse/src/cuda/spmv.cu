// Dispatch of sparse::spmv: one launch per call, of the kernel of the plan's algorithm, on the grid its
// state and the matrix give; every launch is checked. sparse::spmv_dots: the stencil kernel with its dots
// epilogue (one launch), or for every other algorithm spmv() and then the dots pass (two).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>

#include "gpukit/cuda_check.hpp"
#include "gpukit/cuda_launch.hpp"
#include "instantiate.hpp"
#include "sparse/spmv.hpp"
#include "spmv_adaptive.cuh"
#include "spmv_column_blocks.cuh"
#include "spmv_dots.cuh"
#include "spmv_merge.cuh"
#include "spmv_plan_state.hpp"
#include "spmv_row_kernels.cuh"
#include "spmv_windowed.cuh"

namespace sparse {
namespace detail {
namespace {

using gpukit::launch;  // the driver's launch path (gpukit/cuda_launch.hpp): 0.2-0.5 us less per call than <<<>>>

/// The arguments of one call, and the plan's SM count.
template <class Value, class Index>
struct spmv_call {
  csr_view<Value, Index> a;
  Value alpha;
  const Value* x;
  Value beta;
  Value* y;
  int sms;
  cudaStream_t stream;
};

// One wave of resident 256-thread blocks of Kernel (fewer when `rows` needs fewer); the kernel
// grid-strides over the rest. The wave is cached per kernel and device without a lock (cached_wave).
template <auto Kernel>
int one_wave_grid(std::int64_t rows, int sm_count) {
  static std::atomic<int> waves[64] = {};
  const std::int64_t wave = gpukit::cached_wave(waves, Kernel, block_threads);
  return static_cast<int>(std::min<std::int64_t>(grid_for(rows, block_threads, sm_count), wave));
}

/// A kernel whose arguments are the call's (a, alpha, x, beta, y) and nothing else.
template <auto Kernel, class Value, class Index>
void launch_csr(dim3 grid, int threads, const spmv_call<Value, Index>& c) {
  launch<Kernel>(grid, threads, c.stream, c.a, c.alpha, c.x, c.beta, c.y);
}

// block_per_row: 256 threads per row (about 4 entries per thread for 1000-entry rows), a block per row
// (the block scheduler balances the tail; grid-stride only beyond 2^31 - 1 rows). On an H200, random1000:
// 150.1-150.2 us, against 154.0-154.5 for 128 threads and at most 16 blocks per SM, 152.9-153.2 for one
// wave of 256-thread blocks, and ALG1's 151.1 (bench/experiments/spmv_variants.cu).
constexpr int row_block_threads = 256;
// warp_stream: 32 rows per warp, 8 warps per block; 256 staged entries per warp (8 per row: the
// Laplacians' 5-7 and random2 fit), 8 KB per block for float, so L1 keeps most of its 256 KB.
constexpr int warp_stream_entries = 256;

/// The row kernels, which need nothing but the matrix: `algorithm` says which.
template <class Value, class Index>
void run(const csr_state&, spmv_algorithm algorithm, const spmv_call<Value, Index>& c) {
  const std::int64_t rows = c.a.rows;
  switch (algorithm) {
    case spmv_algorithm::scalar:
      // One wave of resident blocks, each thread grid-striding over ~rows / (wave x 256) rows: on an
      // H200 the Laplacians ran 2-4 % faster than with two waves (16 blocks per SM) and 7-16 % faster
      // than with a block per 256 rows (bench/experiments/spmv_variants.cu).
      launch_csr<spmv_scalar_kernel<Value, Index>>(one_wave_grid<spmv_scalar_kernel<Value, Index>>(rows, c.sms),
                                                   block_threads, c);
      break;
    case spmv_algorithm::shared_cached:
      launch_csr<spmv_shared_cached_kernel<block_threads, Value, Index>>(grid_for(rows, block_threads, c.sms),
                                                                         block_threads, c);
      break;
    case spmv_algorithm::warp_per_row:
      launch_csr<spmv_warp_per_row_kernel<Value, Index>>(grid_for(rows, block_threads / 32, c.sms), block_threads, c);
      break;
    case spmv_algorithm::warp_stream:
      launch_csr<spmv_warp_stream_kernel<warp_stream_entries, Value, Index>>(grid_for(rows, block_threads, c.sms),
                                                                             block_threads, c);
      break;
    case spmv_algorithm::block_per_row:
      launch_csr<spmv_block_per_row_kernel<row_block_threads, gather::l2_only, Value, Index>>(
          static_cast<unsigned>(std::min<std::int64_t>(rows, 0x7fffffff)), row_block_threads, c);
      break;
    default: break;  // the other algorithms have their own state types
  }
}

template <bool Chunked, entry_load E, class Value, class Index>
void launch_vector(int width, const spmv_call<Value, Index>& c) {
  const int grid = grid_for(c.a.rows, block_threads / width, c.sms);
  switch (width) {
    case 2: launch_csr<spmv_vector_kernel<2, Chunked, E, gather::ldg, Value, Index>>(grid, block_threads, c); break;
    case 4: launch_csr<spmv_vector_kernel<4, Chunked, E, gather::ldg, Value, Index>>(grid, block_threads, c); break;
    case 8: launch_csr<spmv_vector_kernel<8, Chunked, E, gather::ldg, Value, Index>>(grid, block_threads, c); break;
    case 16: launch_csr<spmv_vector_kernel<16, Chunked, E, gather::ldg, Value, Index>>(grid, block_threads, c); break;
    default: launch_csr<spmv_vector_kernel<32, Chunked, E, gather::ldg, Value, Index>>(grid, block_threads, c); break;
  }
}

template <class Value, class Index>
void run(const vector_state& st, spmv_algorithm, const spmv_call<Value, Index>& c) {
  if (st.chunked) launch_vector<true, entry_load::cached>(st.width, c);
  else if (st.streaming) launch_vector<false, entry_load::streaming>(st.width, c);
  else launch_vector<false, entry_load::cached>(st.width, c);
}

// stencil on scalar's grid (one wave of resident blocks), its pattern table from the plan, launched with PDL
// (gpukit::launch_dependent: its launch hides behind the tail of the kernel ahead, as in a solver's
// iteration, where a vector pass precedes every SpMV). Dots: with
// spmv_dots's epilogue (`dots` unused otherwise); its grid stays within grid_for(rows, block_threads),
// the blocks of the plan's dots_workspace.
template <int Unroll, dots_kind Dots, class Value, class Index>
void launch_stencil(const stencil_state& st, const spmv_call<Value, Index>& c, const dots_args<Value>& dots) {
  static_assert(stencil_block_threads == block_threads, "one_wave_grid sizes the grid for block_threads");
  constexpr auto kernel = spmv_stencil_kernel<Unroll, Dots, Value, Index>;
  gpukit::launch_dependent<kernel>(one_wave_grid<kernel>(c.a.rows, c.sms), stencil_block_threads, c.stream, c.a,
                                   stencil_rows{st.pattern_of_row.data(), st.packed_row.data(), st.group_start.data()},
                                   st.table.data(), st.patterns,
                                   static_cast<int>(st.table.size()), c.alpha, c.x, c.beta, c.y, dots);
}

// All loads of a row at once where rows hold <= 8.
template <dots_kind Dots, class Value, class Index>
void run_stencil(const stencil_state& st, const spmv_call<Value, Index>& c, const dots_args<Value>& dots) {
  if (st.unrolled) launch_stencil<stencil_unrolled_row, Dots>(st, c, dots);
  else launch_stencil<0, Dots>(st, c, dots);
}

// A launch-bound automatic plan takes scalar's kernel (bitwise the same sums; spmv_choice.cpp), with x
// from the room's start as every CSR kernel (spmv() below).
template <class Value, class Index>
void run(const stencil_state& st, spmv_algorithm, const spmv_call<Value, Index>& c) {
  if (st.plain_through_scalar) run(csr_state{}, spmv_algorithm::scalar, c);
  else run_stencil<dots_kind::none>(st, c, dots_args<Value>{});
}

// windowed: a block per 16 warps of the layout, their slot sums in dynamic shared memory (up to 96 KB,
// hence the opt-in). The L1/shared split is the kernel's attribute: just the shared memory two blocks
// need, the rest stays L1 for the windows of x. Plans differ, so it is set when it changes (per device;
// a host call costs microseconds that the timing of a ~200 us call would see).
template <bool Slots, class Value, class Index>
void launch_windowed(const windowed_state<Value>& st, const spmv_call<Value, Index>& c) {
  auto* kernel = spmv_windowed_kernel<windowed_unroll, Slots, Value>;
  const int smem = st.block_slots * static_cast<int>(sizeof(Value));
  static std::atomic<int> carveout_set[64];  // 0: not yet opted in; else carveout + 1
  const int device = gpukit::current_device();
  const int carveout = std::min(100, (2 * (smem + 1024) * 100 + st.shared_per_sm - 1) / std::max(1, st.shared_per_sm));
  if (carveout_set[device & 63].load(std::memory_order_relaxed) != carveout + 1) {
    GPUKIT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, windowed_max_shared_bytes));
    GPUKIT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
    carveout_set[device & 63].store(carveout + 1, std::memory_order_relaxed);
  }
  const auto blocks = (st.warps + windowed_warps_per_block - 1) / windowed_warps_per_block;
  kernel<<<static_cast<unsigned>(blocks), windowed_threads, static_cast<std::size_t>(smem), c.stream>>>(
      st.packed.data(), st.values.data(), st.warp_begin.data(), st.warp_row0.data(), st.warp_slot0.data(),
      st.row_slot.data(), st.warps, c.alpha, c.x, c.beta, c.y);
  GPUKIT_CHECK_LAUNCH();
}

template <class Value, class Index>
void run(const windowed_state<Value>& st, spmv_algorithm, const spmv_call<Value, Index>& c) {
  if (st.row_slot.size() > 0) launch_windowed<true>(st, c);
  else launch_windowed<false>(st, c);
}

// One block per merge tile (the plan checks the count fits gridDim.x); rows crossing a block boundary
// are finished inside the same launch by the block that writes their last part.
template <class Value, class Index>
void run(const merge_state<Value>& st, spmv_algorithm, const spmv_call<Value, Index>& c) {
  launch<spmv_merge_kernel<Value, Index>>(static_cast<unsigned>(st.partition.blocks.size() - 1), merge_threads,
                                          c.stream, c.a, c.alpha, c.x, c.beta, c.y, st.blocks.data(),
                                          st.split.partials.data(), st.split.rows.data(), st.split.arrivals.data());
}

// One block per tile (the plan checks that the tile count fits gridDim.x). Entries are read once
// (coalesced in every tile kind), so they skip L1 and are first out of L2: x keeps both caches
// (powerlaw on an H200: 62.3-62.4 us against 64.6-64.7 with plain loads; bench/experiments).
// Registers capped for 8 resident blocks per SM (32 instead of 39: 88 % of warps active instead of
// 66 %): powerlaw 59.0-59.2 us against 61.3-61.8 (ALG1 58.8). Medium rows grouped longest first
// (warp_row_order): 57.4-57.9 us against 59.1-59.3 in row order (ALG1 58.7).
template <class Value, class Index>
void run(const adaptive_state<Value>& st, spmv_algorithm, const spmv_call<Value, Index>& c) {
  launch<spmv_adaptive_kernel<entry_load::once, gather::ldg, 8, Value, Index>>(
      static_cast<unsigned>(st.partition.tiles.size()), tile_threads, c.stream, c.a, c.alpha, c.x, c.beta, c.y,
      st.tiles.data(), st.segments.data(), st.warp_rows.data(), st.split.partials.data(), st.split.rows.data(),
      st.split.arrivals.data());
}

// Column panels: panel 0 with the caller's beta, every later panel adding to y (beta 1), each on its own
// adaptive partition, x advanced to the panel's first column (spmv_panels_plan.hpp).
template <class Value, class Index>
void run(const column_panels_state<Value, Index>& st, spmv_algorithm, const spmv_call<Value, Index>& c) {
  for (std::size_t k = 0; k < st.matrices.size(); ++k) {
    spmv_call<Value, Index> part = c;
    part.a = st.matrices[k].view();
    part.x = c.x + static_cast<std::int64_t>(k) * st.width;
    part.beta = k == 0 ? c.beta : Value(1);
    run(st.plans[k], spmv_algorithm::adaptive, part);
  }
}

// column_blocks: one block per column range (a block per SM, the plan's count), its slice of x in dynamic
// shared memory (opted in up to the device's limit once per device), then the sum of each row's partials
// in block order on one wave of 256-thread blocks.
template <class Value, class Index>
void run(const column_blocks_state<Value>& st, spmv_algorithm, const spmv_call<Value, Index>& c) {
  constexpr auto partials_kernel = spmv_column_block_partials_kernel<Value>;
  static std::atomic<bool> opted_in[64] = {};
  const int device = gpukit::current_device();
  if (!opted_in[device & 63].load(std::memory_order_relaxed)) {
    GPUKIT_CUDA_CHECK(cudaFuncSetAttribute(partials_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(gpukit::shared_bytes_per_block_optin())));
    opted_in[device & 63].store(true, std::memory_order_relaxed);
  }
  const auto smem = static_cast<std::size_t>(st.width) * sizeof(Value);
  partials_kernel<<<static_cast<unsigned>(st.blocks), column_blocks_threads, smem, c.stream>>>(
      st.base.data(), st.start.data(), st.col.data(), st.values.data(), c.x, c.a.cols, st.width, c.a.rows,
      st.partials.data());
  GPUKIT_CHECK_LAUNCH();
  constexpr auto sum_kernel = spmv_column_block_sum_kernel<Value>;
  launch<sum_kernel>(one_wave_grid<sum_kernel>(c.a.rows, c.sms), block_threads, c.stream, st.partials.data(), st.blocks,
                     c.a.rows, c.alpha, c.beta, c.y);
}

// spmv_dots's pass after the SpMV of a plan that does not fuse it: one wave of 256-thread blocks (at
// most grid_for(n, block_threads), the blocks of the plan's dots_workspace), grid-striding over the rows.
template <dots_kind Kind, class Value>
void run_dots_pass(std::int64_t n, const Value* x, const Value* y, const dots_args<Value>& dots, int sms,
                   cudaStream_t stream) {
  constexpr auto kernel = spmv_dots_kernel<block_threads, Kind, Value>;
  gpukit::launch_dependent<kernel>(one_wave_grid<kernel>(n, sms), block_threads, stream, n, x, y, dots);
}

// spmv_dots's preconditions, checked before any CUDA call.
void check_dots_arguments(std::int64_t rows, std::int64_t cols, const x_halo& halo, const void* x, const void* y,
                          const void* w, const double* sums, dots_summation how, dots_store store) {
  if (rows != cols - halo.before - halo.after)
    throw std::invalid_argument("spmv_dots: the matrix is " + std::to_string(rows) + " x " + std::to_string(cols) +
                                (halo.before + halo.after > 0 ? " around an x halo of " +
                                     std::to_string(halo.before + halo.after) : std::string()) +
                                " (x and y must both have rows entries: square matrices only)");
  if (sums == nullptr || (rows > 0 && (x == nullptr || y == nullptr || w == nullptr)))
    throw std::invalid_argument("spmv_dots: a null pointer among x, y, w, sums");
  if (how == dots_summation::exact && store == dots_store::accumulate)
    throw std::invalid_argument("spmv_dots: exact sums cannot be accumulated (adding rounded sums rounds again)");
}

}  // namespace
}  // namespace detail

template <class Value, class Index>
void spmv_dots(const spmv_plan<Value, Index>& plan, const Value* d_x, Value* d_y, const Value* d_w, double* d_sums,
               stream_t stream, dots_summation how, dots_store store) {
  const auto& a = plan.matrix();
  detail::check_dots_arguments(a.rows, a.cols, plan.halo(), d_x, d_y, d_w, d_sums, how, store);
  if (a.rows == 0) {
    if (store == dots_store::overwrite) GPUKIT_CUDA_CHECK(cudaMemsetAsync(d_sums, 0, 3 * sizeof(double), stream));
    return;
  }
  const auto& ws = plan.state().dots;
  const detail::dots_args<Value> dots{d_w,    ws.partials.data(),   ws.ticket.data(),
                                      d_sums, ws.exact_limb.data(), ws.exact_counters.data(),
                                      store == dots_store::accumulate};
  const bool exact = how == dots_summation::exact;
  if (const auto* st = std::get_if<detail::stencil_state>(&plan.state().algorithm)) {  // plan.dots_fused()
    const detail::spmv_call<Value, Index> call{a, Value(1), d_x, Value(0), d_y, plan.state().sm_count, stream};
    if (exact) detail::run_stencil<detail::dots_kind::exact>(*st, call, dots);
    else detail::run_stencil<detail::dots_kind::fast>(*st, call, dots);
    return;
  }
  spmv(plan, Value(1), d_x, Value(0), d_y, stream);  // x.y below pairs y_i with the row's own x_i: d_x itself
  if (exact) detail::run_dots_pass<detail::dots_kind::exact>(a.rows, d_x, d_y, dots, plan.state().sm_count, stream);
  else detail::run_dots_pass<detail::dots_kind::fast>(a.rows, d_x, d_y, dots, plan.state().sm_count, stream);
}

template <class Value, class Index>
void spmv(const spmv_plan<Value, Index>& plan, Value alpha, const Value* d_x, Value beta, Value* d_y, stream_t stream) {
  if (plan.matrix().rows == 0) return;
  // With an x halo, column c multiplies d_x[c - before]: the CSR kernels index from the room's start; the
  // stencil kernel's offsets are already relative to the row's own entry (spmv_plan::take_stencil).
  const auto* stencil = std::get_if<detail::stencil_state>(&plan.state().algorithm);
  const bool stencil_kernel = stencil != nullptr && !stencil->plain_through_scalar;
  const Value* x = stencil_kernel ? d_x : d_x - plan.halo().before;
  const detail::spmv_call<Value, Index> call{plan.matrix(), alpha, x, beta, d_y, plan.state().sm_count, stream};
  std::visit([&](const auto& st) { detail::run(st, plan.algorithm(), call); }, plan.state().algorithm);
}

#define SPARSE_SPMV_INSTANTIATE(V, I)                                              \
  template void spmv<V, I>(const spmv_plan<V, I>&, V, const V*, V, V*, stream_t); \
  template void spmv_dots<V, I>(const spmv_plan<V, I>&, const V*, V*, const V*, double*, stream_t, dots_summation, \
                                dots_store);
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_SPMV_INSTANTIATE)
#undef SPARSE_SPMV_INSTANTIATE

}  // namespace sparse
