// Dispatch for the teaching ladder: grid sizing, multi-pass drivers, workspace, launches and checks.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "ladder_kernels.cuh"
#include "gpukit/cuda_check.hpp"
#include "reduce/ladder.hpp"

namespace reduce {
namespace {

namespace lk = detail::ladder;

// 256 threads for every rung (see ladder_kernels.cuh): one element per thread for rungs 1-3 and the
// atomics, two for rungs 4-6.
constexpr int block = 256;
constexpr int log2_block = 8;
// Grid-stride rungs launch enough blocks to fill the chip once: 8 resident blocks of 256 per SM
// (2048 threads per SM on sm_70..sm_90), at most max_grid.
constexpr int blocks_per_sm = 8;
constexpr std::int64_t max_grid = 4096;
// Workspace layout: [counter | 256-byte pad | buffer A | buffer B], element slots of 8 bytes.
constexpr std::size_t counter_bytes = 256;
constexpr std::size_t slot_bytes = 8;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

int sm_count() {
  int device = 0, sms = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// Blocks of a grid-stride rung for n elements, each block covering `per_block` per sweep.
std::int64_t grid_stride_blocks(std::int64_t n, std::int64_t per_block, int sms) {
  return std::max<std::int64_t>(1, std::min<std::int64_t>({ceil_div(n, per_block),
                                                           std::int64_t{blocks_per_sm} * sms, max_grid}));
}

// Buffer sizes (elements): A takes the first pass's partials (n/256 for rungs 1-3, at most max_grid for
// the grid-stride rungs), B the second's; passes alternate A, B, A, ... each smaller than the last.
std::int64_t buffer_a_slots(std::int64_t max_n) { return std::max<std::int64_t>(ceil_div(max_n, block), max_grid); }
std::int64_t buffer_b_slots(std::int64_t max_n) { return ceil_div(buffer_a_slots(max_n), block) + 1; }

struct scratch {
  unsigned int* counter;
  void* a;
  void* b;
};
scratch carve(const ladder_workspace& ws) {
  auto* base = static_cast<char*>(ws.data());
  const std::size_t a_bytes = static_cast<std::size_t>(buffer_a_slots(ws.max_n())) * slot_bytes;
  return {reinterpret_cast<unsigned int*>(base), base + counter_bytes, base + counter_bytes + a_bytes};
}

template <class T>
void launch_atomic_prologue(T* d_out, stream_t stream) {
  // The atomic rungs add into *d_out: start it at the identity (0 is all-zero bytes for every T here).
  GPUKIT_CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(T), stream));
}

// Harris 1-6: one block per `per_block` elements, relaunched on the partials until one value remains;
// the last pass writes d_out.
template <class T, class Launch>
void multi_pass(const T* d_in, std::int64_t n, T* d_out, const scratch& sc, std::int64_t per_block, Launch launch) {
  const T* src = d_in;
  std::int64_t m = n;
  bool to_a = true;
  for (;;) {
    const std::int64_t grid = std::max<std::int64_t>(1, ceil_div(m, per_block));
    T* dst = grid == 1 ? d_out : static_cast<T*>(to_a ? sc.a : sc.b);
    launch(src, m, static_cast<unsigned>(grid), dst);
    GPUKIT_CHECK_LAUNCH();
    if (grid == 1) return;
    src = dst;
    m = grid;
    to_a = !to_a;
  }
}

// Grid-stride rungs with a second single-block launch over the partials.
template <class T, class Launch>
void two_launches(const T* d_in, std::int64_t n, T* d_out, const scratch& sc, std::int64_t per_block, int sms,
                  Launch launch) {
  const std::int64_t grid = grid_stride_blocks(n, per_block, sms);
  if (grid == 1) {
    launch(d_in, n, 1u, d_out);
    GPUKIT_CHECK_LAUNCH();
    return;
  }
  T* partials = static_cast<T*>(sc.a);
  launch(d_in, n, static_cast<unsigned>(grid), partials);
  GPUKIT_CHECK_LAUNCH();
  launch(partials, grid, 1u, d_out);
  GPUKIT_CHECK_LAUNCH();
}

}  // namespace

std::size_t ladder_workspace::required_bytes(std::int64_t max_n) {
  if (max_n < 0) throw std::invalid_argument("ladder_workspace: negative size " + std::to_string(max_n));
  return counter_bytes + static_cast<std::size_t>(buffer_a_slots(max_n) + buffer_b_slots(max_n)) * slot_bytes;
}

ladder_workspace::ladder_workspace(std::int64_t max_n) : bytes_(required_bytes(max_n)), max_n_(max_n) {
  GPUKIT_CUDA_CHECK(cudaMalloc(&data_, bytes_));
  GPUKIT_CUDA_CHECK(cudaMemset(data_, 0, bytes_));  // the single-pass counter starts at zero
  // cudaMemset may still be running when it returns; a kernel on a non-blocking stream would not wait
  // for it, so finish it here (once per workspace).
  GPUKIT_CUDA_CHECK(cudaDeviceSynchronize());
}
ladder_workspace::~ladder_workspace() {
  if (data_) (void)cudaFree(data_);
}
ladder_workspace::ladder_workspace(ladder_workspace&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)), max_n_(std::exchange(o.max_n_, 0)) {}
ladder_workspace& ladder_workspace::operator=(ladder_workspace&& o) noexcept {
  if (this != &o) {
    if (data_) (void)cudaFree(data_);
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    max_n_ = std::exchange(o.max_n_, 0);
  }
  return *this;
}

template <class T>
void ladder_sum(ladder_kernel kernel, const T* d_in, std::int64_t n, T* d_out, ladder_workspace& ws, stream_t stream) {
  static_assert(sizeof(T) <= slot_bytes);
  if (n < 0) throw std::invalid_argument("ladder_sum: negative element count " + std::to_string(n));
  if (n > ws.max_n())
    throw std::invalid_argument("ladder_sum: " + std::to_string(n) + " elements exceed the workspace's " +
                                std::to_string(ws.max_n()));
  const scratch sc = carve(ws);
  const T id = T(0);
  const lk::wrap_plus op{};
  const std::size_t smem = block * sizeof(T);  // dynamic shared memory of the rungs that use it
  const std::int64_t one_per_thread_grid = std::max<std::int64_t>(1, ceil_div(n, block));

  switch (kernel) {
    case ladder_kernel::serial:
      lk::serial_kernel<<<1, 1, 0, stream>>>(d_in, n, d_out);
      GPUKIT_CHECK_LAUNCH();
      return;
    case ladder_kernel::atomic_global:
      launch_atomic_prologue(d_out, stream);
      lk::atomic_global_kernel<<<static_cast<unsigned>(one_per_thread_grid), block, 0, stream>>>(d_in, n, d_out);
      GPUKIT_CHECK_LAUNCH();
      return;
    case ladder_kernel::atomic_shared:
      launch_atomic_prologue(d_out, stream);
      lk::atomic_shared_kernel<<<static_cast<unsigned>(one_per_thread_grid), block, 0, stream>>>(d_in, n, d_out);
      GPUKIT_CHECK_LAUNCH();
      return;
    case ladder_kernel::interleaved_divergent:
      multi_pass(d_in, n, d_out, sc, block, [&](const T* in, std::int64_t m, unsigned g, T* out) {
        lk::interleaved_divergent_kernel<<<g, block, smem, stream>>>(in, m, id, op, out);
      });
      return;
    case ladder_kernel::interleaved_strided:
      multi_pass(d_in, n, d_out, sc, block, [&](const T* in, std::int64_t m, unsigned g, T* out) {
        lk::interleaved_strided_kernel<<<g, block, smem, stream>>>(in, m, id, op, out);
      });
      return;
    case ladder_kernel::sequential_addressing:
      multi_pass(d_in, n, d_out, sc, block, [&](const T* in, std::int64_t m, unsigned g, T* out) {
        lk::sequential_addressing_kernel<<<g, block, smem, stream>>>(in, m, id, op, out);
      });
      return;
    case ladder_kernel::first_add_during_load:
      multi_pass(d_in, n, d_out, sc, 2 * block, [&](const T* in, std::int64_t m, unsigned g, T* out) {
        lk::first_add_during_load_kernel<<<g, block, smem, stream>>>(in, m, id, op, out);
      });
      return;
    case ladder_kernel::unroll_last_warp:
      multi_pass(d_in, n, d_out, sc, 2 * block, [&](const T* in, std::int64_t m, unsigned g, T* out) {
        lk::unroll_last_warp_kernel<<<g, block, smem, stream>>>(in, m, id, op, out);
      });
      return;
    case ladder_kernel::complete_unroll:
      // Harris switched over 10 block sizes; the ladder runs one (256), so one instantiation.
      multi_pass(d_in, n, d_out, sc, 2 * block, [&](const T* in, std::int64_t m, unsigned g, T* out) {
        lk::complete_unroll_kernel<block><<<g, block, 0, stream>>>(in, m, id, op, out);
      });
      return;
    default:
      break;
  }

  const int sms = sm_count();
  switch (kernel) {
    case ladder_kernel::multiple_per_thread:
      two_launches(d_in, n, d_out, sc, 2 * block, sms, [&](const T* in, std::int64_t m, unsigned g, T* out) {
        lk::multiple_per_thread_kernel<block><<<g, block, 0, stream>>>(in, m, id, op, out);
      });
      return;
    case ladder_kernel::shuffle:
      two_launches(d_in, n, d_out, sc, block, sms, [&](const T* in, std::int64_t m, unsigned g, T* out) {
        lk::shuffle_kernel<block><<<g, block, 0, stream>>>(in, m, id, op, out);
      });
      return;
    case ladder_kernel::warp_atomics: {
      launch_atomic_prologue(d_out, stream);
      const auto g = static_cast<unsigned>(grid_stride_blocks(n, block, sms));
      lk::warp_atomics_kernel<<<g, block, 0, stream>>>(d_in, n, d_out);
      GPUKIT_CHECK_LAUNCH();
      return;
    }
    case ladder_kernel::block_atomics: {
      launch_atomic_prologue(d_out, stream);
      const auto g = static_cast<unsigned>(grid_stride_blocks(n, block, sms));
      lk::block_atomics_kernel<block><<<g, block, 0, stream>>>(d_in, n, d_out);
      GPUKIT_CHECK_LAUNCH();
      return;
    }
    case ladder_kernel::two_pass_contiguous:
      two_launches(d_in, n, d_out, sc, block, sms, [&](const T* in, std::int64_t m, unsigned g, T* out) {
        lk::two_pass_contiguous_kernel<<<g, block, smem, stream>>>(in, m, id, op, out);
      });
      return;
    case ladder_kernel::two_pass_interleaved:
      two_launches(d_in, n, d_out, sc, block, sms, [&](const T* in, std::int64_t m, unsigned g, T* out) {
        lk::two_pass_interleaved_kernel<<<g, block, smem, stream>>>(in, m, id, op, out);
      });
      return;
    case ladder_kernel::single_pass_last_block: {
      const auto g = static_cast<unsigned>(grid_stride_blocks(n, block, sms));
      lk::single_pass_last_block_kernel<block><<<g, block, 0, stream>>>(d_in, n, id, op, static_cast<T*>(sc.a),
                                                                        sc.counter, d_out);
      GPUKIT_CHECK_LAUNCH();
      return;
    }
    default:
      break;
  }
  throw std::invalid_argument("ladder_sum: unknown ladder_kernel value " + std::to_string(static_cast<int>(kernel)));
}

std::int64_t ladder_error_depth(ladder_kernel kernel, std::int64_t n) {
  if (n < 0) throw std::invalid_argument("ladder_error_depth: negative element count " + std::to_string(n));
  if (n <= 1) return 0;  // zero or one element: only exact additions of the identity
  // Per pass: the longest per-thread chain plus the block tree's depth. Trees over 256 values add
  // log2(256) = 8 levels (the warp tail's 6 steps included); the shuffle block reduce adds 5 + 5; the
  // two-pass rungs' thread 0 adds 256 values serially. Identity additions are counted (they are exact).
  auto multi = [&](std::int64_t per_block, std::int64_t load_adds) {
    std::int64_t depth = 0, m = n;
    do {
      depth += load_adds + log2_block;
      m = ceil_div(m, per_block);
    } while (m > 1);
    return depth;
  };
  auto two = [&](std::int64_t per_block, std::int64_t per_thread_sweep, std::int64_t tree) {
    const std::int64_t grid = grid_stride_blocks(n, per_block, sm_count());
    // chain: identity + one add per element the thread sees (pairs: two adds per sweep)
    const std::int64_t chain = ceil_div(n, grid * per_block) * per_thread_sweep;
    if (grid == 1) return chain + tree;
    const std::int64_t chain2 = ceil_div(grid, per_block) * per_thread_sweep;
    return chain + tree + chain2 + tree;
  };
  switch (kernel) {
    case ladder_kernel::serial: return n;
    // Atomic stages add in no fixed order: a stage of m atomic additions into one total is bounded like
    // any-order summation of m terms (m additions, counting the exact one onto the zero start). Any
    // order of the whole sum is also bounded by n - 1, so the smaller of the two holds.
    case ladder_kernel::atomic_global: return n - 1;
    case ladder_kernel::atomic_shared: return std::min(n - 1, block + ceil_div(n, block));
    case ladder_kernel::warp_atomics: {
      const std::int64_t grid = grid_stride_blocks(n, block, sm_count());
      return std::min(n - 1, ceil_div(n, grid * block) + 5 + grid * (block / 32));
    }
    case ladder_kernel::block_atomics: {
      const std::int64_t grid = grid_stride_blocks(n, block, sm_count());
      return std::min(n - 1, ceil_div(n, grid * block) + 10 + grid);
    }
    case ladder_kernel::interleaved_divergent:
    case ladder_kernel::interleaved_strided:
    case ladder_kernel::sequential_addressing: return multi(block, 0);
    case ladder_kernel::first_add_during_load:
    case ladder_kernel::unroll_last_warp:
    case ladder_kernel::complete_unroll: return multi(2 * block, 1);
    case ladder_kernel::multiple_per_thread: return two(2 * block, 2, log2_block);
    case ladder_kernel::shuffle: return two(block, 1, 10);
    case ladder_kernel::two_pass_interleaved: return two(block, 1, block);
    case ladder_kernel::two_pass_contiguous: {
      // each thread sums ceil(ceil(n/grid)/256) consecutive elements; second pass likewise over grid
      const std::int64_t grid = grid_stride_blocks(n, block, sm_count());
      const std::int64_t chain = ceil_div(ceil_div(n, grid), block) + block;
      return grid == 1 ? chain : chain + ceil_div(grid, block) + block;
    }
    case ladder_kernel::single_pass_last_block: {
      const std::int64_t grid = grid_stride_blocks(n, block, sm_count());
      return ceil_div(n, grid * block) + log2_block + ceil_div(grid, block) + log2_block;
    }
  }
  throw std::invalid_argument("ladder_error_depth: unknown ladder_kernel value " +
                              std::to_string(static_cast<int>(kernel)));
}

#define REDUCE_INSTANTIATE_LADDER(T) \
  template void ladder_sum<T>(ladder_kernel, const T*, std::int64_t, T*, ladder_workspace&, stream_t);
REDUCE_INSTANTIATE_LADDER(std::int32_t)
REDUCE_INSTANTIATE_LADDER(std::int64_t)
REDUCE_INSTANTIATE_LADDER(float)
REDUCE_INSTANTIATE_LADDER(double)
#undef REDUCE_INSTANTIATE_LADDER

}  // namespace reduce
