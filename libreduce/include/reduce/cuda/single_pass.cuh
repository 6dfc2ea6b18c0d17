// Kernels of the device-wide reductions (device code only; the launches live in device_reduce.cuh and
// libreduce/src/cuda/*.cu). They are templates over a "reducer" so that sum, min/max, argmin/argmax,
// dot, norm2, counts and user operators share one traversal and one last-block combine:
//
//   struct reducer {
//     using value_type, acc_type, out_type;        // input element, per-thread accumulator, result
//     static constexpr bool two_inputs;            // dot: x and y
//     acc_type identity() const;
//     void add(acc_type&, value_type x, value_type y, std::int64_t i) const;   // y unused unless two_inputs
//     acc_type combine(acc_type left, acc_type right) const;   // left holds the lower indices
//     out_type finish(acc_type) const;
//   };
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "reduce/cuda/block_reduce.cuh"

namespace reduce::detail {

// ---- workspace layout: [counters (256 B) | exact-sum limbs (1 KiB) | partials of up to max_grid
// blocks | segment queue ...]. Every region has a single user, so calls of different kinds can share
// one workspace: the counters and limbs are zero between calls (each kernel's last block re-zeroes
// what it used), the partials are written before they are read.
constexpr int max_grid = 4096;                   // grid cap of the single-pass kernels
constexpr std::size_t exact_limbs_offset = 256;  // reproducible sum's global accumulator (<= 128 limbs)
constexpr std::size_t exact_limbs_bytes = 1024;
constexpr std::size_t partials_offset = exact_limbs_offset + exact_limbs_bytes;  // 256-byte aligned
constexpr std::size_t max_partial_bytes = 32;   // largest per-block partial (value + index, Kahan pair)
constexpr std::size_t workspace_bytes = partials_offset + max_grid * max_partial_bytes;
// Offsets (bytes) of the counters inside the first 256 bytes.
constexpr std::size_t done_counter_offset = 0;      // single-pass: blocks finished (back to 0 at exit)
constexpr std::size_t segment_counter_offset = 64;  // segmented: long segments queued (back to 0 at exit)
constexpr std::size_t segment_done_offset = 72;     // segmented: long-kernel blocks finished (back to 0)
constexpr std::size_t exact_flags_offset = 128;     // reproducible sum: NaN / +inf / -inf seen
// Bytes a fresh pool scratch must zero: the counters and the limbs.
constexpr std::size_t zeroed_bytes = partials_offset;

/// Elements of T per 16-byte vector, or 0 when T cannot be loaded as part of one.
template <class T>
constexpr int vec_elems = (sizeof(T) <= 16 && 16 % sizeof(T) == 0 && std::is_trivially_copyable_v<T>)
                              ? static_cast<int>(16 / sizeof(T))
                              : 0;

/// The per-thread rounding chain of single_pass_kernel for n elements on `grid` blocks of `threads`
/// threads with `unroll` vectors of `vec` elements each (see reduce.hpp for how it enters the bound).
inline std::int64_t chain_length(std::int64_t n, int grid, int threads, int unroll, int vec) {
  const std::int64_t per_tile = std::int64_t{threads} * unroll * (vec > 0 ? vec : 1);
  const std::int64_t tiles = (n + per_tile - 1) / per_tile;
  const std::int64_t per_thread = (tiles + grid - 1) / grid * unroll * (vec > 0 ? vec : 1) + 2;
  int lg = 0;
  while ((1 << lg) < threads) ++lg;
  return per_thread + (grid + threads - 1) / threads + 2 * lg;
}

template <class T>
__device__ __forceinline__ T load_vector_element(const int4& raw, int e) {
  T out;
  std::memcpy(&out, reinterpret_cast<const char*>(&raw) + e * sizeof(T), sizeof(T));
  return out;
}

/// Calls f(i, x[i], y[i]) for the elements of [0, n) owned by this thread, block `block_rank` of
/// `blocks` cooperating blocks. Layout: a misaligned head of < 16 bytes (threads 0.. of the whole
/// range), the 16-byte aligned body in tiles of Threads * Unroll vectors (block b takes tiles b,
/// b + blocks, ...; thread t takes vectors t, t + Threads, ... of a tile, all Unroll loads issued before
/// any use), then a tail of < 16 bytes. The order of calls for each thread is fixed by (n, blocks).
/// With two inputs whose misalignments differ, every element is loaded on its own.
/// With a `tile_f` (one input only), each thread's share of a FULL aligned tile is handed over at once
/// as an array of Unroll * 16 / sizeof(T) elements (tile_f(const T (&)[N])) instead of element by
/// element: the reproducible sum processes it branch-free. Everything else still goes through f.
struct no_tile_fn {};
template <int Threads, int Unroll, bool TwoInputs, class T, class F, class G = no_tile_fn>
__device__ __forceinline__ void traverse(const T* __restrict__ x, const T* __restrict__ y, std::int64_t n,
                                         int block_rank, int blocks, F&& f, G&& tile_f = G{}) {
  constexpr bool whole_tiles = !std::is_same_v<std::decay_t<G>, no_tile_fn>;
  static_assert(!(whole_tiles && TwoInputs), "tile_f takes one input");
  (void)tile_f;
  constexpr int V = vec_elems<T>;
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t gid = static_cast<std::int64_t>(block_rank) * Threads + tid;
  const std::int64_t gthreads = static_cast<std::int64_t>(blocks) * Threads;
  const auto addr_x = reinterpret_cast<std::uintptr_t>(x);
  bool vectorize = V > 1;
  if constexpr (TwoInputs) vectorize = vectorize && (addr_x % 16 == reinterpret_cast<std::uintptr_t>(y) % 16);
  if (!vectorize || (addr_x % sizeof(T)) != 0) {
    // Element loads (misaligned data, mismatched dot operands, types wider than 16 bytes), Unroll * 2
    // in flight per thread.
    constexpr int U = Unroll * 2;
    const std::int64_t per_tile = static_cast<std::int64_t>(Threads) * U;
    for (std::int64_t base = static_cast<std::int64_t>(block_rank) * per_tile; base < n;
         base += static_cast<std::int64_t>(blocks) * per_tile) {
      T a[U], b[TwoInputs ? U : 1];
#pragma unroll
      for (int k = 0; k < U; ++k) {
        const std::int64_t i = base + static_cast<std::int64_t>(k) * Threads + tid;
        if (i < n) {
          a[k] = x[i];
          if constexpr (TwoInputs) b[k] = y[i];
        }
      }
#pragma unroll
      for (int k = 0; k < U; ++k) {
        const std::int64_t i = base + static_cast<std::int64_t>(k) * Threads + tid;
        if (i < n) {
          if constexpr (TwoInputs) f(i, a[k], b[k]);
          else f(i, a[k], a[k]);
        }
      }
    }
    return;
  }
  if constexpr (V > 1) {
    const std::int64_t mis = static_cast<std::int64_t>((addr_x % 16) / sizeof(T));
    const std::int64_t head = mis ? (V - mis < n ? V - mis : n) : 0;
    if (gid < head) f(gid, x[gid], TwoInputs ? y[gid] : x[gid]);
    const std::int64_t nvec = (n - head) / V;
    const int4* __restrict__ vx = reinterpret_cast<const int4*>(x + head);
    const int4* __restrict__ vy = reinterpret_cast<const int4*>((TwoInputs ? y : x) + head);
    const std::int64_t per_tile = static_cast<std::int64_t>(Threads) * Unroll;
    const std::int64_t full_tiles = nvec / per_tile;
    std::int64_t t = block_rank;
    for (; t < full_tiles; t += blocks) {
      int4 a[Unroll], b[Unroll];
      const std::int64_t v0 = t * per_tile + tid;
#pragma unroll
      for (int k = 0; k < Unroll; ++k) {
        a[k] = __ldg(vx + v0 + static_cast<std::int64_t>(k) * Threads);
        if constexpr (TwoInputs) b[k] = __ldg(vy + v0 + static_cast<std::int64_t>(k) * Threads);
      }
      if constexpr (whole_tiles) {
        T v[Unroll * V];
#pragma unroll
        for (int k = 0; k < Unroll; ++k)
#pragma unroll
          for (int e = 0; e < V; ++e) v[k * V + e] = load_vector_element<T>(a[k], e);
        // A tile_f that takes an index gets the index of v[0]; v[k * V + e] is element
        // i0 + k * Threads * V + e (argmin/argmax need positions, the reproducible sum does not).
        if constexpr (std::is_invocable_v<G&, const T(&)[Unroll * V], std::int64_t>) tile_f(v, head + v0 * V);
        else tile_f(v);
      } else {
#pragma unroll
        for (int k = 0; k < Unroll; ++k) {
          const std::int64_t i0 = head + (v0 + static_cast<std::int64_t>(k) * Threads) * V;
#pragma unroll
          for (int e = 0; e < V; ++e) {
            const T xv = load_vector_element<T>(a[k], e);
            if constexpr (TwoInputs) f(i0 + e, xv, load_vector_element<T>(b[k], e));
            else f(i0 + e, xv, xv);
          }
        }
      }
    }
    if (t == full_tiles) {  // the partial tile, guarded, taken by the block whose turn it is
      int4 a[Unroll], b[Unroll];
      const std::int64_t v0 = t * per_tile + tid;
#pragma unroll
      for (int k = 0; k < Unroll; ++k) {
        const std::int64_t v = v0 + static_cast<std::int64_t>(k) * Threads;
        if (v < nvec) {
          a[k] = __ldg(vx + v);
          if constexpr (TwoInputs) b[k] = __ldg(vy + v);
        }
      }
#pragma unroll
      for (int k = 0; k < Unroll; ++k) {
        const std::int64_t v = v0 + static_cast<std::int64_t>(k) * Threads;
        if (v < nvec) {
#pragma unroll
          for (int e = 0; e < V; ++e) {
            const T xv = load_vector_element<T>(a[k], e);
            if constexpr (TwoInputs) f(head + v * V + e, xv, load_vector_element<T>(b[k], e));
            else f(head + v * V + e, xv, xv);
          }
        }
      }
    }
    const std::int64_t tail_start = head + nvec * V;
    const std::int64_t i = tail_start + gid;
    if (i < n) f(i, x[i], TwoInputs ? y[i] : x[i]);
  }
  (void)gthreads;
}

/// Reads a partial written by another block in this launch: through L2 (ld.global.cg), never a stale
/// L1 line.
template <class A>
__device__ __forceinline__ A load_partial(const A* p) {
  static_assert(sizeof(A) % 4 == 0, "partials are moved as 32-bit words");
  constexpr int words = sizeof(A) / 4;
  unsigned w[words];
  const unsigned* q = reinterpret_cast<const unsigned*>(p);
#pragma unroll
  for (int i = 0; i < words; ++i) w[i] = __ldcg(q + i);
  A a;
  std::memcpy(&a, w, sizeof(A));
  return a;
}

/// Reducers with add_tile(acc, const T (&v)[N], i0, stride) take whole tiles (see traverse).
template <class R, class = void>
struct has_add_tile : std::false_type {};
template <class R>
struct has_add_tile<R, std::void_t<decltype(&R::template add_tile<1>)>> : std::true_type {};

template <class R>
struct combine_op {
  R r;
  template <class A>
  __device__ __forceinline__ A operator()(const A& a, const A& b) const { return r.combine(a, b); }
};

/// One launch for any n: grid-stride accumulation (traverse), block_reduce, then the LAST block to
/// finish (completion counter) combines the per-block partials in block order, so the result does not
/// depend on which block finished last. A one-block grid writes its result directly.
template <int Threads, int Unroll, class R>
__global__ void __launch_bounds__(Threads)
single_pass_kernel(const typename R::value_type* __restrict__ x, const typename R::value_type* __restrict__ y,
                   std::int64_t n, R r, typename R::acc_type* __restrict__ partials,
                   unsigned int* __restrict__ done_blocks, typename R::out_type* __restrict__ out) {
  using A = typename R::acc_type;
  using br = block::block_reduce<Threads, A>;
  __shared__ typename br::storage tmp;
  __shared__ bool am_last;
  const combine_op<R> op{r};

  A acc = r.identity();
  auto add = [&](std::int64_t i, typename R::value_type a, typename R::value_type b) { r.add(acc, a, b, i); };
  if constexpr (has_add_tile<R>::value) {
    // argmin/argmax: a thread's share of each full tile is reduced as a tree of plain compares on
    // 32-bit positions, and only the tile's winner meets the 64-bit (value, index) accumulator.
    using T = typename R::value_type;
    constexpr int N = Unroll * (vec_elems<T> > 0 ? vec_elems<T> : 1);
    traverse<Threads, Unroll, false>(x, y, n, static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x), add,
                                     [&](const T (&v)[N], std::int64_t i0) {
                                       r.add_tile(acc, v, i0, std::int64_t{Threads} * vec_elems<T>);
                                     });
  } else {
    traverse<Threads, Unroll, R::two_inputs>(x, y, n, static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x), add);
  }
  acc = br::reduce(acc, op, tmp);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = r.finish(acc);
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();  // publish the partial before announcing that this block is done
    am_last = (atomicAdd(done_blocks, 1u) == gridDim.x - 1);
  }
  __syncthreads();
  if (!am_last) return;

  __threadfence();  // see every other block's partial
  // Thread t combines partials t, t + Threads, ... in that order, loads issued 8 at a time so that the
  // tail costs one L2 round trip per 8 * Threads partials (one for the usual grid of <= 2048 blocks).
  A total = r.identity();
  for (unsigned b0 = 0; b0 < gridDim.x; b0 += 8u * Threads) {
    A p[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const unsigned b = b0 + threadIdx.x + static_cast<unsigned>(k) * Threads;
      p[k] = b < gridDim.x ? load_partial(partials + b) : r.identity();
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) total = r.combine(total, p[k]);
  }
  __syncthreads();  // tmp is reused
  total = br::reduce(total, op, tmp);
  if (threadIdx.x == 0) {
    *out = r.finish(total);
    *done_blocks = 0;  // leave the workspace ready for the next call without a memset
  }
}

// ---------------------------------------------------------------------------------------------
// Segmented reduction, binned by length.

/// Programmatic dependent launch (sm_90+; no-ops on older GPUs and when the dependent kernel was
/// launched without the attribute): the primary lets the dependent grid be scheduled early, the
/// dependent waits until the primary grid has finished and its memory is visible.
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_primary_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
constexpr std::int64_t segment_thread_max = 16;   // a thread per segment up to 16 elements
constexpr std::int64_t segment_warp_max = 4096;   // a warp per segment up to 4096 (128 per lane)

/// Each warp owns 32 consecutive segments. Segments of <= 16 elements: one lane each, all 16 guarded
/// loads issued at once. <= 4096: the whole warp on one segment at a time (4 loads in flight per lane),
/// then warp::reduce_to_first. Longer ones are queued for segmented_long_kernel (a block each).
template <int Threads, class T, class Op>
__global__ void __launch_bounds__(Threads)
segmented_short_kernel(const T* __restrict__ in, const std::int64_t* __restrict__ offsets,
                       std::int64_t num_segments, Op op, T identity, T* __restrict__ out,
                       std::int64_t* __restrict__ long_queue, unsigned long long* __restrict__ long_count) {
  allow_dependent_launch();  // segmented_long_kernel may be scheduled now; it waits for this grid's results
  const int lane = static_cast<int>(threadIdx.x) % warp::warp_size;
  const std::int64_t first = (static_cast<std::int64_t>(blockIdx.x) * Threads + threadIdx.x) -
                             static_cast<std::int64_t>(lane);  // first segment of this warp
  if (first >= num_segments) return;  // whole warp leaves together
  const std::int64_t seg = first + lane;
  const bool valid = seg < num_segments;
  const std::int64_t b = valid ? offsets[seg] : 0;
  const std::int64_t e = valid ? offsets[seg + 1] : 0;
  const std::int64_t len = e - b;

  if (valid && len <= segment_thread_max) {
    T v[segment_thread_max];
#pragma unroll
    for (int k = 0; k < segment_thread_max; ++k) v[k] = k < len ? in[b + k] : identity;
    T acc = identity;
#pragma unroll
    for (int k = 0; k < segment_thread_max; ++k) acc = op(acc, v[k]);
    out[seg] = acc;
  } else if (valid && len > segment_warp_max) {
    long_queue[atomicAdd(long_count, 1ull)] = seg;
  }
  unsigned todo = __ballot_sync(warp::full_mask, valid && len > segment_thread_max && len <= segment_warp_max);
  while (todo) {
    const int src = __ffs(todo) - 1;
    todo &= todo - 1;
    const std::int64_t sb = __shfl_sync(warp::full_mask, b, src);
    const std::int64_t se = __shfl_sync(warp::full_mask, e, src);
    T acc = identity;
    for (std::int64_t i0 = sb; i0 < se; i0 += 4 * warp::warp_size) {
      T v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const std::int64_t i = i0 + k * warp::warp_size + lane;
        v[k] = i < se ? in[i] : identity;
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) acc = op(acc, v[k]);
    }
    acc = warp::reduce_to_first(acc, op);
    if (lane == 0) out[first + src] = acc;
  }
}

/// A block per queued long segment (grid-stride over the queue), 16-byte loads via traverse (misaligned
/// segment starts take its head path). Launched as a programmatic dependent of segmented_short_kernel
/// (its blocks start while the short kernel runs and wait here for its results); the last block to
/// finish zeroes the queue counter, so a call needs no memset.
template <int Threads, class T, class Op>
__global__ void __launch_bounds__(Threads)
segmented_long_kernel(const T* __restrict__ in, const std::int64_t* __restrict__ offsets, Op op, T identity,
                      T* __restrict__ out, const std::int64_t* __restrict__ long_queue,
                      unsigned long long* __restrict__ long_count, unsigned int* __restrict__ done_blocks) {
  using br = block::block_reduce<Threads, T>;
  __shared__ typename br::storage tmp;
  wait_for_primary_grid();
  const auto count = static_cast<std::int64_t>(*long_count);
  for (std::int64_t q = blockIdx.x; q < count; q += gridDim.x) {
    const std::int64_t seg = long_queue[q];
    const std::int64_t b = offsets[seg];
    const std::int64_t len = offsets[seg + 1] - b;
    T acc = identity;
    // 4 x 16 bytes in flight per thread (2 for 64-bit types: their min/max compare-selects need 114
    // registers at 4, which would spill or halve occupancy).
    constexpr int unroll = sizeof(T) == 8 ? 2 : 4;
    traverse<Threads, unroll, false>(in + b, in + b, len, 0, 1, [&](std::int64_t, T v, T) { acc = op(acc, v); });
    acc = br::reduce(acc, op, tmp);
    if (threadIdx.x == 0) out[seg] = acc;
    __syncthreads();  // tmp is reused by the next segment
  }
  // Every thread of this block has read *long_count (the barrier above, or this one when the loop did
  // not run); the last block of the grid resets both counters for the next call.
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(done_blocks, 1u) == gridDim.x - 1) {
      *long_count = 0;
      *done_blocks = 0;
    }
  }
}

}  // namespace reduce::detail
