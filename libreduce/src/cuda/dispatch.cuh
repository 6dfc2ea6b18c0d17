// Dispatch of the device-wide reductions: the launch-shape policy (grid and block from n, the element
// size and the reducer), the launches of the single-pass and segmented kernels, workspace checks and
// pool scratch. Host code over the kernels of single_pass.cuh and segmented_kernels.cuh; private to
// libreduce (its *.cu files, and white-box tests and benchmarks through reduce::internal).
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gpukit/cuda_check.hpp"
#include "gpukit/cuda_launch.hpp"
#include "reduce/reduce.hpp"
#include "scratch_pool.hpp"
#include "segmented_kernels.cuh"
#include "single_pass.cuh"

namespace reduce::detail {

// The common layer's launch helpers (gpukit/cuda_launch.hpp), used unqualified below.
using gpukit::cached_wave;
using gpukit::launch;
using gpukit::resident_blocks;
using gpukit::sm_count;

// ---- launch shape ----
constexpr int default_threads = 256;
constexpr int default_unroll = 4;  // 4 x 16-byte loads in flight per thread

// ---- launch-shape policy (measured on an H200, see libreduce/README.md and bench/experiments) ----
// Up to 16 KiB: ONE block of default_threads x default_unroll vectors (one tile); up to 64 KiB: ONE block
// of single_block_threads x single_block_unroll vectors (every load of the call in flight at once; no
// ticket, no slots). Graph-timed on an H200, 2^12 floats: 1.48 us against 1.72 for the 512 x 8 block;
// 2^14: 1.73 against 2.17 for 256 x 4 (bench/experiments/launch_floor.cu). Up to medium_bytes (L2-resident
// sizes, launch- and latency-bound): blocks of medium_threads x medium_unroll vectors, one per
// medium_block_bytes (one tile each), at most medium_blocks_per_sm<R> per SM. What one SM reads from L2
// takes time: a 32 KiB block loaded in ~700 ns where one round trip is ~300 ns (an H200, %globaltimer per
// block, bench/experiments/reduce_medium.cu). So 256 KiB-2 MiB load sooner spread over more SMs in
// smaller blocks, whose block tree is also shorter. Beyond medium_bytes (DRAM-bound): large_threads<R>
// blocks, one per block_min_bytes, up to one full wave of resident blocks.
constexpr std::int64_t small_block_bytes = std::int64_t{16} << 10;   // <= 4K floats: 256 x 4 x 16 B
constexpr std::int64_t single_block_bytes = std::int64_t{64} << 10;  // <= 16K floats: 512 x 8 x 16 B
constexpr int single_block_threads = 512;
constexpr int single_block_unroll = 8;
constexpr std::int64_t medium_bytes = std::int64_t{16} << 20;        // <= 4M floats
constexpr int medium_threads = default_threads;
constexpr int medium_unroll = default_unroll;
constexpr std::int64_t medium_block_bytes = std::int64_t{medium_threads} * medium_unroll * 16;  // 16 KiB
constexpr std::int64_t block_min_bytes = std::int64_t{32} << 10;

/// One-input reducers whose accumulator is a single value of the input type and which take elements one
/// at a time (sum, sum of squares, user operators): their loop is little more than the loads. The others
/// (two inputs, (value, index) pairs, Kahan pairs, wider accumulators, min/max tile trees) do more work
/// between loads and want more of them in flight.
template <class R>
constexpr bool light_reducer = !R::two_inputs && std::is_same_v<typename R::acc_type, typename R::value_type> &&
                               !has_add_tile<R>::value && sizeof(typename R::acc_type) <= 8;

/// Vectors in flight per thread beyond medium_bytes (DRAM-bound): 8 for light reducers, 4 for the rest,
/// whose registers would otherwise cut the resident blocks. On an H200 the float sum at 2^30 took 0.993x
/// CUB's time with 8 in four runs on four boards (920-942 us), 1.000-1.001x with 4
/// (bench/experiments/reduce_large.cu: "t256 u8 inter ldg w1" against the library's row); 2^26 0.6-1.5 %
/// faster, 2^28 within -0.4..+0.8 %.
template <class R>
constexpr int large_unroll = light_reducer<R> ? 8 : default_unroll;

/// Threads per block beyond medium_bytes: 512 for the reducers that reduce tiles as trees (min/max,
/// argmin/argmax), 256 for the rest. One wave of 256 x 4 blocks is 8 per SM, 1,056 partials on an H200
/// for the last block to collect; 512 x 4 keeps the same loads in flight in half the blocks. Float argmax
/// / min on an H200 (bench/experiments/reduce_large.cu, "argmax and min"), ratio to CUB's time at 2^24 /
/// 2^26 / 2^28: 0.938 / 0.966 / 0.976 and 0.941 / 0.976 / 0.990 at 512 threads, against 0.961 / 0.991 /
/// 0.988 and 1.014 / 1.010 / 1.003 at 256 (both with collect_partials' batched loads).
template <class R>
constexpr int large_threads = has_add_tile<R>::value ? 512 : default_threads;

/// Medium blocks per SM at most: ONE for light reducers, 2 for the rest. The library's kernel on an H200,
/// graph-timed us at 2^18 / 2^20 / 2^21 / 2^22 floats (bench/experiments/reduce_medium.cu, "Medium shapes"):
/// sum 2.29 / 2.68 / 3.28 / 4.32 at one per SM against 2.29 / 2.77 / 3.48 / 4.44 at two; min 3.38 / 4.10 /
/// 5.55 / 8.12 at one against 3.37 / 3.91 / 4.72 / 6.08 at two; argmax 4.84 / 5.34 / 6.27 / 7.98 against
/// 4.84 / 5.50 / 6.30 / 7.48. The alternative shape (512 x 4 vectors, one per 32 KiB, up to 2 per SM): sum
/// 2.68 / 2.81 / 3.40 / 4.43, min 3.65 / 3.91 / 4.79 / 5.76, argmax 5.51 / 5.40 / 6.43 / 7.99.
template <class R>
constexpr int medium_blocks_per_sm = light_reducer<R> ? 1 : 2;

/// Grid of a single-pass launch for n elements of `elem_bytes` bytes, given the cap (a wave, or
/// medium_blocks_per_sm x SMs): one block per `per_block_bytes`, at most `cap` and max_grid.
inline int policy_grid(std::int64_t n, std::size_t elem_bytes, std::int64_t cap,
                       std::int64_t per_block_bytes = block_min_bytes) {
  const std::int64_t bytes = n * static_cast<std::int64_t>(elem_bytes);
  const std::int64_t blocks = (bytes + per_block_bytes - 1) / per_block_bytes;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>({blocks, cap, max_grid})));
}

/// Throws std::invalid_argument when p is not a multiple of alignof(T), i.e. not a valid T*: the
/// kernels would load such data as misaligned 16-byte vectors.
template <class T>
void check_aligned(const T* p, const char* what) {
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) != 0)
    throw std::invalid_argument(std::string(what) + ": input pointer not aligned to its element type (" +
                                std::to_string(alignof(T)) + " bytes)");
}

inline void check_count(std::int64_t n, const char* what) {
  if (n < 0) throw std::invalid_argument(std::string(what) + ": negative element count " + std::to_string(n));
}

/// Launches single_pass_kernel for reducer `r` on `scratch` (workspace layout: single_pass.cuh; the
/// ticket counter and the partial slots must be zero, and are zero again when the kernel ends). grid = 0:
/// one block per block_min_bytes up to a full wave.
template <int Threads, class R, int Unroll = default_unroll>
void launch_single_pass(const typename R::value_type* x, const typename R::value_type* y, std::int64_t n,
                        const R& r, typename R::out_type* d_out, void* scratch, cudaStream_t stream,
                        int grid = 0) {
  static_assert(sizeof(typename R::acc_type) <= max_partial_bytes, "accumulator larger than a partial slot");
  static_assert(std::is_trivially_copyable_v<typename R::acc_type>, "accumulators are moved as bytes");
  check_aligned(x, "reduce");
  check_aligned(y, "reduce");
  auto kernel = single_pass_kernel<Threads, Unroll, R>;
  static std::atomic<int> waves[64] = {};  // one per instantiation: see cached_wave
  if (grid <= 0) grid = policy_grid(n, sizeof(typename R::value_type), cached_wave(waves, kernel, Threads));
  grid = std::min(grid, max_grid);
  auto* tickets = reinterpret_cast<unsigned int*>(static_cast<char*>(scratch) + done_counter_offset);
  auto* slots = reinterpret_cast<unsigned long long*>(static_cast<char*>(scratch) + partials_offset);
  // The driver's launch path: a small call's time is mostly the launch (launch.hpp).
  launch<single_pass_kernel<Threads, Unroll, R>>(dim3(static_cast<unsigned>(grid)), dim3(Threads), stream, x, y, n, r,
                                                 slots, tickets, d_out);
}

/// Launches single_block_kernel: one block for a call of at most Threads x Unroll vectors (16 bytes).
template <int Threads, class R, int Unroll>
void launch_single_block(const typename R::value_type* x, const typename R::value_type* y, std::int64_t n,
                         const R& r, typename R::out_type* d_out, cudaStream_t stream) {
  check_aligned(x, "reduce");
  check_aligned(y, "reduce");
  if (n * static_cast<std::int64_t>(sizeof(typename R::value_type)) > std::int64_t{Threads} * Unroll * 16)
    throw std::logic_error("reduce: launch_single_block given more than one tile");
  launch<single_block_kernel<Threads, Unroll, R>>(dim3(1), dim3(Threads), stream, x, y, n, r, d_out);
}

/// One block of Threads x Unroll vectors for a call that fits it: the one-tile kernel, except for
/// argmin/argmax, which reduce full tiles as trees and keep single_pass_kernel on a grid of one.
template <int Threads, int Unroll, class R>
void launch_one_block(const typename R::value_type* x, const typename R::value_type* y, std::int64_t n, const R& r,
                      typename R::out_type* d_out, void* scratch, cudaStream_t stream) {
  if constexpr (has_add_tile<R>::value) launch_single_pass<Threads, R, Unroll>(x, y, n, r, d_out, scratch, stream, 1);
  else launch_single_block<Threads, R, Unroll>(x, y, n, r, d_out, stream);
}

/// The usual shape (see the policy above).
template <class R>
void launch_default(const typename R::value_type* x, const typename R::value_type* y, std::int64_t n,
                    const R& r, typename R::out_type* d_out, void* scratch, cudaStream_t stream) {
  static_assert(small_block_bytes == std::int64_t{default_threads} * default_unroll * 16 &&
                    single_block_bytes == std::int64_t{single_block_threads} * single_block_unroll * 16,
                "each single-block size is exactly one tile of its shape");
  const std::int64_t bytes = n * static_cast<std::int64_t>(sizeof(typename R::value_type));
  if (bytes <= small_block_bytes) {
    launch_one_block<default_threads, default_unroll>(x, y, n, r, d_out, scratch, stream);
  } else if (bytes <= single_block_bytes) {
    launch_one_block<single_block_threads, single_block_unroll>(x, y, n, r, d_out, scratch, stream);
  } else if (bytes <= medium_bytes) {
    const int grid = policy_grid(n, sizeof(typename R::value_type), std::int64_t{medium_blocks_per_sm<R>} * sm_count(),
                                 medium_block_bytes);
    launch_single_pass<medium_threads, R, medium_unroll>(x, y, n, r, d_out, scratch, stream, grid);
  } else {
    launch_single_pass<large_threads<R>, R, large_unroll<R>>(x, y, n, r, d_out, scratch, stream);
  }
}

inline void require_workspace(const workspace& ws, std::size_t bytes, const char* what) {
  if (ws.data() == nullptr || ws.bytes() < bytes)
    throw std::invalid_argument(std::string(what) + ": workspace of " + std::to_string(ws.bytes()) +
                                " bytes, this call needs " + std::to_string(bytes) +
                                " (construct it with that size or call reserve())");
}

/// Pool scratch for one call: allocated and zeroed (first `zero_bytes`) in stream order, freed in
/// stream order after the launches that use it, from libreduce's own pool (scratch_pool.hpp), which keeps
/// freed blocks mapped for the next call.
class pool_scratch {
public:
  pool_scratch(std::size_t bytes, std::size_t zero_bytes, cudaStream_t stream) : stream_(stream) {
    data_ = scratch_malloc_async(bytes, stream);
    if (zero_bytes) GPUKIT_CUDA_CHECK(cudaMemsetAsync(data_, 0, zero_bytes, stream));
  }
  ~pool_scratch() { (void)cudaFreeAsync(data_, stream_); }
  pool_scratch(const pool_scratch&) = delete;
  pool_scratch& operator=(const pool_scratch&) = delete;
  void* data() const { return data_; }

private:
  void* data_ = nullptr;
  cudaStream_t stream_;
};

/// Runs reducer r with a workspace or pool scratch.
template <class R>
void run(const typename R::value_type* x, const typename R::value_type* y, std::int64_t n, const R& r,
         typename R::out_type* d_out, workspace* ws, cudaStream_t stream, const char* what) {
  check_count(n, what);
  if (ws) {
    require_workspace(*ws, workspace_bytes, what);
    launch_default(x, y, n, r, d_out, ws->data(), stream);
  } else {
    // The counters, the limbs and the slots of the largest grid need zeroing.
    pool_scratch s(workspace_bytes, zeroed_bytes_for<typename R::acc_type>(max_grid), stream);
    launch_default(x, y, n, r, d_out, s.data(), stream);
  }
}

/// Result types whose members leave bytes unwritten: value_index<T> of a 4-byte T holds 4 bytes of
/// padding before its 8-byte index.
template <class Out>
constexpr bool has_padding = false;
template <class T>
constexpr bool has_padding<value_index<T>> = sizeof(value_index<T>) != sizeof(T) + sizeof(std::int64_t);

/// Result to the host: one pool-allocated slot, copied back, stream synchronized. A slot with padding is
/// zeroed first, so the copy reads no byte the kernel left unwritten (compute-sanitizer's initcheck reports
/// each such copy: 371 in test_reduce on an H200).
template <class Out, class F>
Out to_host(cudaStream_t stream, F&& launch) {
  auto* d_out = static_cast<Out*>(scratch_malloc_async(sizeof(Out), stream));
  try {
    if constexpr (has_padding<Out>) GPUKIT_CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(Out), stream));
    launch(d_out);
  } catch (...) {
    (void)cudaFreeAsync(d_out, stream);
    throw;
  }
  Out result{};
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(&result, d_out, sizeof(Out), cudaMemcpyDeviceToHost, stream));
  GPUKIT_CUDA_CHECK(cudaFreeAsync(d_out, stream));
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return result;
}

/// Segmented: up to block_per_segment_max segments, segmented_block_kernel alone; more,
/// segmented_short_kernel, then segmented_long_kernel as its programmatic dependent (no memset: the long
/// kernel leaves its counters at zero; fresh pool scratch is zeroed).
template <class T, class Op>
void run_segmented(const T* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, Op op, T identity,
                   T* d_out, workspace* ws, cudaStream_t stream, const char* what) {
  if (num_segments < 0)
    throw std::invalid_argument(std::string(what) + ": negative segment count " + std::to_string(num_segments));
  if (num_segments == 0) return;
  check_aligned(d_in, what);
  constexpr int threads = default_threads;
  const std::size_t bytes = workspace::segmented_bytes(num_segments);
  auto go = [&](void* scratch) {
    if (num_segments <= block_per_segment_max) {
      segmented_block_kernel<segment_block_threads><<<static_cast<unsigned>(num_segments), segment_block_threads, 0,
                                                      stream>>>(d_in, d_offsets, op, identity, d_out);
      GPUKIT_CHECK_LAUNCH();
      return;
    }
    auto* count = reinterpret_cast<unsigned long long*>(static_cast<char*>(scratch) + segment_counter_offset);
    auto* done = reinterpret_cast<unsigned int*>(static_cast<char*>(scratch) + segment_done_offset);
    auto* queue = reinterpret_cast<std::int64_t*>(static_cast<char*>(scratch) + workspace_bytes);
    const std::int64_t warps = (num_segments + warp::warp_size - 1) / warp::warp_size;
    const std::int64_t short_grid = (warps * warp::warp_size + threads - 1) / threads;
    if (short_grid > 0x7fffffff) throw std::invalid_argument(std::string(what) + ": too many segments");
    segmented_short_kernel<threads><<<static_cast<unsigned>(short_grid), threads, 0, stream>>>(
        d_in, d_offsets, num_segments, op, identity, d_out, queue, count);
    GPUKIT_CHECK_LAUNCH();
    auto long_kernel = segmented_long_kernel<segment_block_threads, T, Op>;
    const std::int64_t wave = std::int64_t{sm_count()} * resident_blocks(long_kernel, segment_block_threads);
    const int long_grid = static_cast<int>(std::max<std::int64_t>(1, std::min(wave, num_segments)));
    // Programmatic dependent launch: the long kernel's launch overlaps the short kernel (which lets it
    // be scheduled at once), and it waits in griddepcontrol.wait for the short kernel's queue.
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(static_cast<unsigned>(long_grid));
    config.blockDim = dim3(segment_block_threads);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
    GPUKIT_CUDA_CHECK(cudaLaunchKernelEx(&config, long_kernel, d_in, d_offsets, op, identity, d_out,
                                         static_cast<const std::int64_t*>(queue), count, done));
    GPUKIT_CHECK_LAUNCH();
  };
  if (ws) {
    require_workspace(*ws, bytes, what);
    go(ws->data());
  } else {
    pool_scratch s(bytes, zeroed_bytes, stream);
    go(s.data());
  }
}

}  // namespace reduce::detail
