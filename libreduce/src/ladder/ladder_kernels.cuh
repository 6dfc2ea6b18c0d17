// The ladder's kernels, one per rung, in ladder order. Each keeps its own code on purpose (so it can be
// timed); the production reductions use reduce/cuda/{warp,block}_reduce.cuh instead.
//
// Differences from the seeds (Harris's slides, the lecture and article notes in src/ladder/README.md):
//  * every rung is correct for every n: out-of-range elements are replaced by the identity;
//  * indices are 64-bit where they address the input (n may exceed 2^31);
//  * the seeds' `volatile` warp-synchronous tails (rungs 5 and 6) are a data race on Volta and later,
//    where independent thread scheduling lets lanes of one warp drift apart: a lane may read
//    s[tid + 16] before the owner wrote it. Here each step reads, __syncwarp()s, writes, __syncwarp()s;
//  * the operator is a template parameter where the shape allows it (the tree rungs); the atomic rungs
//    are sums by construction (atomicAdd).
// Block size: 256 threads for every rung (the seeds used 128-1024), so the rungs differ only in the
// idea they add. Rungs 1-5 read blockDim.x at run time, as in the seeds; rung 6 makes it a template.
#pragma once
#include <cstdint>
#include <type_traits>

#include "serial_accumulate.hpp"

namespace reduce::detail::ladder {

/// a + b; integers add unsigned so that overflow wraps modulo 2^bits instead of being undefined.
struct wrap_plus {
  template <class T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};

template <class T>
__device__ __forceinline__ void atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));  // wraps
  } else {
    atomicAdd(p, v);  // int, float, double (sm_60+)
  }
}

/// Dynamic shared memory typed as T (one extern symbol for every T).
template <class T>
__device__ __forceinline__ T* shared_array() {
  extern __shared__ __align__(16) unsigned char ladder_smem[];
  return reinterpret_cast<T*>(ladder_smem);
}

__device__ __forceinline__ std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_threads() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// ---- serial -------------------------------------------------------------------------------------
// Baseline: one thread on the whole GPU; every load waits on the previous add. ~1/100000 of the chip.
template <class T>
__global__ void serial_kernel(const T* __restrict__ in, std::int64_t n, T* __restrict__ out) {
  *out = serial_accumulate(in, n);
}

// ---- atomic_global ------------------------------------------------------------------------------
// Fixes: uses every thread. Still slow: all n atomics hit ONE address and are serialised in L2
// (about one per clock), so it runs at atomic throughput, not memory bandwidth. Float order: arbitrary.
template <class T>
__global__ void atomic_global_kernel(const T* __restrict__ in, std::int64_t n, T* out) {
  const std::int64_t i = global_thread();
  if (i < n) atomic_add(out, in[i]);
}

// ---- atomic_shared ------------------------------------------------------------------------------
// Fixes: the contention moves to shared memory (one counter per block, fast on-SM atomics) and only
// one global atomic per block remains: n/256 instead of n global atomics.
template <class T>
__global__ void atomic_shared_kernel(const T* __restrict__ in, std::int64_t n, T* out) {
  __shared__ T block_total;
  const std::int64_t i = global_thread();
  if (threadIdx.x == 0) block_total = T(0);
  __syncthreads();
  if (i < n) atomic_add(&block_total, in[i]);
  __syncthreads();
  if (threadIdx.x == 0) atomic_add(out, block_total);
}

// ---- Harris 1: interleaved addressing, divergent branch ------------------------------------------
// Fixes: no atomics; a shared-memory tree per block (log2(256) = 8 barrier steps), partials reduced by
// relaunching on them. Slow: `tid % (2s)` is a real integer modulo and the active threads are spread
// over every warp, so all 8 warps stay busy (divergent) while only a few lanes of each work.
template <class T, class Op>
__global__ void interleaved_divergent_kernel(const T* __restrict__ in, std::int64_t n, T identity, Op op,
                                             T* __restrict__ out) {
  T* s = shared_array<T>();
  const unsigned tid = threadIdx.x;
  const std::int64_t i = global_thread();
  s[tid] = i < n ? in[i] : identity;
  __syncthreads();
  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    if (tid % (2 * stride) == 0) s[tid] = op(s[tid], s[tid + stride]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// ---- Harris 2: interleaved addressing, strided index ----------------------------------------------
// Fixes: the active threads are the first ones (index = 2 s tid), so whole warps retire and no modulo.
// New problem: threads of a warp access s[2 s tid], a stride of 2s words: 2-way and worse shared-memory
// bank conflicts at every step.
template <class T, class Op>
__global__ void interleaved_strided_kernel(const T* __restrict__ in, std::int64_t n, T identity, Op op,
                                           T* __restrict__ out) {
  T* s = shared_array<T>();
  const unsigned tid = threadIdx.x;
  const std::int64_t i = global_thread();
  s[tid] = i < n ? in[i] : identity;
  __syncthreads();
  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    const unsigned index = 2 * stride * tid;
    if (index < blockDim.x) s[index] = op(s[index], s[index + stride]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// ---- Harris 3: sequential addressing ---------------------------------------------------------------
// Fixes: thread tid adds s[tid + s] into s[tid]: consecutive lanes touch consecutive words, so no bank
// conflicts. Remaining waste: half the threads idle from the first step (they only loaded).
template <class T, class Op>
__global__ void sequential_addressing_kernel(const T* __restrict__ in, std::int64_t n, T identity, Op op,
                                             T* __restrict__ out) {
  T* s = shared_array<T>();
  const unsigned tid = threadIdx.x;
  const std::int64_t i = global_thread();
  s[tid] = i < n ? in[i] : identity;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] = op(s[tid], s[tid + stride]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// ---- Harris 4: first add during load -----------------------------------------------------------------
// Fixes: each thread loads two elements (a block covers 2 x 256) and adds them before the tree: half
// the blocks, every thread does useful work in the first step, twice the bytes in flight per thread.
template <class T, class Op>
__global__ void first_add_during_load_kernel(const T* __restrict__ in, std::int64_t n, T identity, Op op,
                                             T* __restrict__ out) {
  T* s = shared_array<T>();
  const unsigned tid = threadIdx.x;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * (2 * blockDim.x) + tid;
  T v = i < n ? in[i] : identity;
  if (i + blockDim.x < n) v = op(v, in[i + blockDim.x]);
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] = op(s[tid], s[tid + stride]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

/// The last warp's six steps (64 -> 1 values), warp-synchronous. The seeds write
/// `volatile T* vs = s; vs[tid] += vs[tid + 16]; ...` relying on lock-step warps; with independent thread
/// scheduling (Volta+) that is a data race, so each step reads into a register, __syncwarp()s, writes,
/// and __syncwarp()s again. Lanes >= 16 etc. do useless but harmless work, as in the seeds.
/// Needs 64 valid values in s[0..64) and all 32 lanes of warp 0.
template <class T, class Op>
__device__ __forceinline__ T last_warp_reduce(T* s, unsigned tid, Op op) {
  T x = s[tid];
#pragma unroll
  for (unsigned stride = 32; stride > 0; stride >>= 1) {
    x = op(x, s[tid + stride]);
    __syncwarp();
    s[tid] = x;
    __syncwarp();
  }
  return x;
}

// ---- Harris 5: unroll the last warp -------------------------------------------------------------------
// Fixes: once <= 32 threads are active only warp 0 works, so the last 6 steps need no __syncthreads()
// and no `if (tid < s)`: the loop overhead and 6 block-wide barriers go away for every block.
template <class T, class Op>
__global__ void unroll_last_warp_kernel(const T* __restrict__ in, std::int64_t n, T identity, Op op,
                                        T* __restrict__ out) {
  T* s = shared_array<T>();
  const unsigned tid = threadIdx.x;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * (2 * blockDim.x) + tid;
  T v = i < n ? in[i] : identity;
  if (i + blockDim.x < n) v = op(v, in[i + blockDim.x]);
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 32; stride >>= 1) {
    if (tid < stride) s[tid] = op(s[tid], s[tid + stride]);
    __syncthreads();
  }
  if (tid < 32) {
    const T total = last_warp_reduce(s, tid, op);
    if (tid == 0) out[blockIdx.x] = total;
  }
}

/// The block tree with the block size known at compile time: every `if (Block >= ...)` and the loop
/// vanish at compile time, leaving straight-line code.
template <int Block, class T, class Op>
__device__ __forceinline__ void unrolled_block_tree(T* s, unsigned tid, Op op) {
  static_assert(Block >= 64 && Block <= 1024 && (Block & (Block - 1)) == 0, "power of two in [64, 1024]");
  if constexpr (Block >= 1024) { if (tid < 512) s[tid] = op(s[tid], s[tid + 512]); __syncthreads(); }
  if constexpr (Block >= 512) { if (tid < 256) s[tid] = op(s[tid], s[tid + 256]); __syncthreads(); }
  if constexpr (Block >= 256) { if (tid < 128) s[tid] = op(s[tid], s[tid + 128]); __syncthreads(); }
  if constexpr (Block >= 128) { if (tid < 64) s[tid] = op(s[tid], s[tid + 64]); __syncthreads(); }
}

// ---- Harris 6: completely unrolled ------------------------------------------------------------------
// Fixes: the remaining loop and its address arithmetic: with Block a template parameter the whole tree
// is unrolled (the dispatch picks the instantiation, as Harris's switch over block sizes did).
template <int Block, class T, class Op>
__global__ void __launch_bounds__(Block)
complete_unroll_kernel(const T* __restrict__ in, std::int64_t n, T identity, Op op, T* __restrict__ out) {
  __shared__ T s[Block];
  const unsigned tid = threadIdx.x;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * (2 * Block) + tid;
  T v = i < n ? in[i] : identity;
  if (i + Block < n) v = op(v, in[i + Block]);
  s[tid] = v;
  __syncthreads();
  unrolled_block_tree<Block>(s, tid, op);
  if (tid < 32) {
    const T total = last_warp_reduce(s, tid, op);
    if (tid == 0) out[blockIdx.x] = total;
  }
}

// ---- Harris 7: multiple elements per thread -----------------------------------------------------------
// Fixes: one element pair per thread means n/512 blocks, each paying the tree and a store. A grid sized
// to fill the chip once (8 blocks of 256 per SM) with a grid-stride loop makes each thread sum many
// pairs in registers (Brent's theorem: O(n/p + log p)); the tree runs once per block, and the partials
// (a few thousand) take one more single-block launch.
template <int Block, class T, class Op>
__global__ void __launch_bounds__(Block)
multiple_per_thread_kernel(const T* __restrict__ in, std::int64_t n, T identity, Op op, T* __restrict__ out) {
  __shared__ T s[Block];
  const unsigned tid = threadIdx.x;
  const std::int64_t grid_size = static_cast<std::int64_t>(2 * Block) * gridDim.x;
  T v = identity;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * (2 * Block) + tid; i < n; i += grid_size) {
    v = op(v, in[i]);
    if (i + Block < n) v = op(v, in[i + Block]);
  }
  s[tid] = v;
  __syncthreads();
  unrolled_block_tree<Block>(s, tid, op);
  if (tid < 32) {
    const T total = last_warp_reduce(s, tid, op);
    if (tid == 0) out[blockIdx.x] = total;
  }
}

// ---- shuffle ----------------------------------------------------------------------------------------
// Fixes: inside a warp, registers are exchanged with __shfl_down_sync (one instruction per step, no
// shared memory, no volatile, no barrier): shared memory only carries one value per warp. The ladder's
// own copy of the warp tree (the library's lives in reduce/cuda/warp_reduce.cuh).
template <class T, class Op>
__device__ __forceinline__ T ladder_warp_reduce(T v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;  // lane 0 holds the warp's total
}

/// warp trees, one value per warp through shared memory, warp 0 reduces those. Result in thread 0.
template <int Block, class T, class Op>
__device__ __forceinline__ T ladder_block_reduce(T v, T identity, Op op) {
  static_assert(Block % 32 == 0 && Block <= 1024);
  __shared__ T warp_totals[Block / 32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = ladder_warp_reduce(v, op);
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < Block / 32 ? warp_totals[lane] : identity;
    v = ladder_warp_reduce(v, op);
  }
  return v;
}

template <int Block, class T, class Op>
__global__ void __launch_bounds__(Block)
shuffle_kernel(const T* __restrict__ in, std::int64_t n, T identity, Op op, T* __restrict__ out) {
  T v = identity;
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) v = op(v, in[i]);
  v = ladder_block_reduce<Block>(v, identity, op);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// ---- warp_atomics -----------------------------------------------------------------------------------
// Fixes: the second launch and the partials array: each warp's total goes straight to the result with
// one atomicAdd (n/32/elements-per-thread atomics, spread in time), no shared memory, no barrier.
template <class T>
__global__ void warp_atomics_kernel(const T* __restrict__ in, std::int64_t n, T* out) {
  T v = T(0);
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) v = wrap_plus{}(v, in[i]);
  v = ladder_warp_reduce(v, wrap_plus{});
  if (threadIdx.x % 32 == 0) atomic_add(out, v);
}

// ---- block_atomics ----------------------------------------------------------------------------------
// Fixes: 8x fewer atomics than warp_atomics (one per block) at the cost of one barrier per block.
template <int Block, class T>
__global__ void __launch_bounds__(Block) block_atomics_kernel(const T* __restrict__ in, std::int64_t n, T* out) {
  T v = T(0);
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) v = wrap_plus{}(v, in[i]);
  v = ladder_block_reduce<Block>(v, T(0), wrap_plus{});
  if (threadIdx.x == 0) atomic_add(out, v);
}

// ---- two_pass_contiguous ------------------------------------------------------------------------------
// The article's first parallel version: block b owns a contiguous slice, thread t a contiguous chunk of
// it; thread 0 then adds the 256 per-thread sums serially; a second 1-block launch adds the partials.
// Slow part: at any instant the 32 lanes of a warp read 32 addresses one chunk apart, so every load
// instruction touches 32 different 32-byte sectors (uncoalesced) instead of 4.
template <class T, class Op>
__global__ void two_pass_contiguous_kernel(const T* __restrict__ in, std::int64_t n, T identity, Op op,
                                           T* __restrict__ out) {
  T* s = shared_array<T>();
  const std::int64_t per_block = (n + gridDim.x - 1) / gridDim.x;
  const std::int64_t block_begin = per_block * blockIdx.x;
  const std::int64_t block_end = block_begin + per_block < n ? block_begin + per_block : n;
  const std::int64_t per_thread = (per_block + blockDim.x - 1) / blockDim.x;
  const std::int64_t begin = block_begin + per_thread * threadIdx.x;
  const std::int64_t end = begin + per_thread < block_end ? begin + per_thread : block_end;
  T v = identity;
  for (std::int64_t i = begin; i < end; ++i) v = op(v, in[i]);
  s[threadIdx.x] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    T total = identity;
    for (unsigned t = 0; t < blockDim.x; ++t) total = op(total, s[t]);
    out[blockIdx.x] = total;
  }
}

// ---- two_pass_interleaved -----------------------------------------------------------------------------
// Fixes: coalescing. Thread g reads in[g], in[g + grid threads], ...: at each step a warp reads 32
// consecutive elements (128 bytes for 4-byte T), so each load instruction is one fully used line.
// Thread 0 still adds the per-thread sums serially (255 dependent shared loads and adds per block).
template <class T, class Op>
__global__ void two_pass_interleaved_kernel(const T* __restrict__ in, std::int64_t n, T identity, Op op,
                                            T* __restrict__ out) {
  T* s = shared_array<T>();
  T v = identity;
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) v = op(v, in[i]);
  s[threadIdx.x] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    T total = identity;
    for (unsigned t = 0; t < blockDim.x; ++t) total = op(total, s[t]);
    out[blockIdx.x] = total;
  }
}

// ---- single_pass_last_block ---------------------------------------------------------------------------
// Fixes: the second launch (a few us of launch latency, which dominates below ~2^20 elements). Each block
// publishes its partial, __threadfence()s, and bumps a counter; the block that brings it to gridDim.x
// knows every partial is visible and combines them in block order (deterministic), then re-arms the
// counter for the next call.
template <int Block, class T, class Op>
__global__ void __launch_bounds__(Block)
single_pass_last_block_kernel(const T* __restrict__ in, std::int64_t n, T identity, Op op,
                              T* __restrict__ partials, unsigned int* __restrict__ done_blocks,
                              T* __restrict__ out) {
  __shared__ T s[Block];
  __shared__ bool am_last;
  const unsigned tid = threadIdx.x;
  T v = identity;
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) v = op(v, in[i]);
  s[tid] = v;
  __syncthreads();
  unrolled_block_tree<Block>(s, tid, op);
  if (tid < 32) {
    const T total = last_warp_reduce(s, tid, op);
    if (tid == 0) {
      partials[blockIdx.x] = total;
      __threadfence();  // the partial is visible device-wide before the counter says so
      am_last = atomicAdd(done_blocks, 1u) == gridDim.x - 1;
    }
  }
  __syncthreads();
  if (!am_last) return;
  __threadfence();  // acquire side: see every other block's partial
  v = identity;
  for (unsigned b = tid; b < gridDim.x; b += Block) v = op(v, static_cast<volatile const T*>(partials)[b]);
  s[tid] = v;
  __syncthreads();
  unrolled_block_tree<Block>(s, tid, op);
  if (tid < 32) {
    const T total = last_warp_reduce(s, tid, op);
    if (tid == 0) {
      *out = total;
      *done_blocks = 0;  // re-armed: the next call needs no memset
    }
  }
}

}  // namespace reduce::detail::ladder
