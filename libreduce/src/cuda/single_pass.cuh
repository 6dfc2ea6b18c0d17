// Kernels of the single-pass device-wide reductions and the traversal they share (device code; private
// to libreduce: the launches live in dispatch.cuh and the *.cu files here). They are templates over a
// "reducer" (reducers.cuh) so that sum, min/max, argmin/argmax, dot, norm2, counts and user operators
// share one traversal and one ticket finish:
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

// ---- workspace layout: [counters (256 B) | exact-sum limbs (1 KiB) | partial slots of up to max_grid
// blocks | segment queue ...]. Every region has a single user, so calls of different kinds can share
// one workspace: the counters, limbs and partial slots are zero between calls (each kernel re-zeroes
// what it used; a new workspace is zeroed once).
constexpr int max_grid = 4096;                   // grid cap of the single-pass kernels
constexpr std::size_t exact_limbs_offset = 256;  // reproducible sum's global accumulator (<= 128 limbs)
constexpr std::size_t exact_limbs_bytes = 1024;
constexpr std::size_t partials_offset = exact_limbs_offset + exact_limbs_bytes;  // 256-byte aligned
constexpr std::size_t max_partial_bytes = 32;   // largest per-block partial (value + index, Kahan pair)
/// A partial of A travels as sizeof(A) / 4 flagged words of 8 bytes (see publish_partial).
template <class A>
constexpr std::size_t slot_bytes = 2 * sizeof(A);
constexpr std::size_t workspace_bytes = partials_offset + max_grid * 2 * max_partial_bytes;
// Offsets (bytes) of the counters inside the first 256 bytes.
constexpr std::size_t done_counter_offset = 0;      // single-pass: tickets taken (back to 0 at exit)
constexpr std::size_t segment_counter_offset = 64;  // segmented: long segments queued (back to 0 at exit)
constexpr std::size_t segment_done_offset = 72;     // segmented: long-kernel blocks finished (back to 0)
constexpr std::size_t exact_flags_offset = 128;     // reproducible sum: NaN / +inf / -inf seen
/// Bytes a fresh pool scratch must zero for single-pass partials of A on up to `grid` blocks: the
/// counters, the limbs and those slots.
template <class A>
constexpr std::size_t zeroed_bytes_for(int grid) {
  return partials_offset + static_cast<std::size_t>(grid) * slot_bytes<A>;
}
/// The counters and limbs only (kernels that use no partial slots).
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
/// OneTile: the caller guarantees the aligned body is at most ONE tile (one block, n * sizeof(T) <=
/// Threads * Unroll * 16), so the tile loop is not compiled and the body always takes the clamped
/// partial-tile path: the same elements per thread in the same order, hence the same bits.
struct no_tile_fn {};
template <int Threads, int Unroll, bool TwoInputs, bool OneTile = false, class T, class F, class G = no_tile_fn>
__device__ __forceinline__ void traverse(const T* __restrict__ x, const T* __restrict__ y, std::int64_t n,
                                         int block_rank, int blocks, F&& f, G&& tile_f = G{}) {
  constexpr bool whole_tiles = !std::is_same_v<std::decay_t<G>, no_tile_fn>;
  static_assert(!(whole_tiles && TwoInputs), "tile_f takes one input");
  static_assert(!(whole_tiles && OneTile), "tile_f takes full tiles, which a one-tile traversal does not form");
  (void)tile_f;
  constexpr int V = vec_elems<T>;
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t gid = static_cast<std::int64_t>(block_rank) * Threads + tid;
  const std::int64_t gthreads = static_cast<std::int64_t>(blocks) * Threads;
  const auto addr_x = reinterpret_cast<std::uintptr_t>(x);
  // x and y are aligned to alignof(T) (launch_single_pass checks). Where that makes them multiples of
  // sizeof(T) too (every arithmetic type), a single input never needs the element path, so it is not
  // compiled in: the smaller kernel's one-block sum took 0.3 us less device time on an H200
  // (bench/experiments/launch_floor.cu).
  constexpr bool may_misalign = alignof(T) < sizeof(T);
  bool vectorize = V > 1 && (!may_misalign || addr_x % sizeof(T) == 0);
  if constexpr (TwoInputs) vectorize = vectorize && (addr_x % 16 == reinterpret_cast<std::uintptr_t>(y) % 16);
  if (!vectorize && (TwoInputs || V <= 1 || may_misalign)) {
    // Element loads (mismatched dot operands, types that do not divide 16 bytes), Unroll * 2 in flight
    // per thread.
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
    const std::int64_t full_tiles = OneTile ? 0 : nvec / per_tile;
    std::int64_t t = block_rank;
    for (; !OneTile && t < full_tiles; t += blocks) {
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
    if (t == full_tiles && t * per_tile < nvec) {  // the partial tile, taken by the block whose turn it is
      // Loads clamped to the last vector rather than guarded, so that all Unroll are issued before any
      // use: guarded loads next to guarded uses were scheduled one after another (one L2 round trip
      // each): 0.3-0.45 us of device time at 2^14..2^22 on an H200 (bench/experiments/launch_floor.cu).
      int4 a[Unroll], b[Unroll];
      const std::int64_t v0 = t * per_tile + tid;
#pragma unroll
      for (int k = 0; k < Unroll; ++k) {
        std::int64_t v = v0 + static_cast<std::int64_t>(k) * Threads;
        v = v < nvec ? v : nvec - 1;
        a[k] = __ldg(vx + v);
        if constexpr (TwoInputs) b[k] = __ldg(vy + v);
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

/// An accumulator seen as its 32-bit words.
template <class A>
union partial_words {
  A value;
  unsigned w[sizeof(A) / 4];
};

/// One flagged 64-bit word of a partial slot: {flag (high half), word (low half)}, read and written
/// relaxed at GPU scope (see publish_partial).
__device__ __forceinline__ unsigned long long load_slot_word(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_slot_word(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/// Publishes a block's partial with no fence and no completion counter on the critical path: each
/// 4-byte word of the accumulator travels with a flag in ONE relaxed 64-bit store {flag = 1, word}. A
/// naturally aligned 64-bit access is single-copy atomic, so a reader that sees the flag sees that
/// word; no word needs ordering against another, so no __threadfence. Measured on an H200
/// (bench/experiments/README.md): the fenced finish (partial store, __threadfence, completion counter,
/// fence and reload in the last block) made the one-launch sum slower in device time than CUB's two
/// kernels at 2^16..2^20; a release/acquire flag cost 0.5-1 us more than this. The reader
/// (collect_partials) zeroes each word it took, leaving the slots ready for the next call.
template <class A>
__device__ __forceinline__ void publish_partial(unsigned long long* slot, const A& a) {
  static_assert(sizeof(A) % 4 == 0, "partials are moved as 32-bit words");
  partial_words<A> p;
  p.value = a;
#pragma unroll
  for (int k = 0; k < static_cast<int>(sizeof(A) / 4); ++k) store_slot_word(slot + k, (1ull << 32) | p.w[k]);
}

/// Partials a thread of collect_partials loads at once: 4 flagged words of 64 bits.
template <class A>
constexpr int collect_batch = sizeof(A) / 4 >= 4 ? 1 : static_cast<int>(4 / (sizeof(A) / 4));

/// The partials 0..count-1 of this launch, combined by the block: thread t takes t, t + Threads, ... in
/// that order (a fixed order: the result does not depend on which partial arrived when), waiting for
/// each to be published and zeroing its slot. Partial `own_index` is this block's own, `own` (shared
/// memory), which did not travel. Every word of collect_batch<A> partials is loaded before any is
/// waited for: a thread pays about one L2 round trip per batch, where waiting word by word paid one per
/// word (argmax at 2^24 floats on an H200, 1,056 blocks: 4 partials of 4 words per thread, 16 round
/// trips, 28.5 against CUB's 27.5 us; bench/experiments/reduce_large.cu, "argmax and min"). Kept
/// inline: as a call (__noinline__) the float sum and min took 1.005-1.014x CUB's time
/// at 2^28..2^30 in a gpu-check on an H200, against 0.984-0.994x inline in the one before.
template <int Threads, class A, class R>
__device__ __forceinline__ A collect_partials(unsigned long long* slots, unsigned count, unsigned own_index,
                                              const A& own, const R& r) {
  constexpr int words = sizeof(A) / 4;
  constexpr int P = collect_batch<A>;
  A total = r.identity();
  for (unsigned b0 = threadIdx.x; b0 < count; b0 += static_cast<unsigned>(Threads) * P) {
    unsigned long long w[P][words];
#pragma unroll
    for (int k = 0; k < P; ++k) {
      const unsigned b = b0 + static_cast<unsigned>(k * Threads);
      const bool remote = b < count && b != own_index;
#pragma unroll
      for (int j = 0; j < words; ++j) w[k][j] = remote ? load_slot_word(slots + std::size_t{b} * words + j) : 0ull;
    }
#pragma unroll
    for (int k = 0; k < P; ++k) {
      const unsigned b = b0 + static_cast<unsigned>(k * Threads);
      if (b >= count) break;
      if (b == own_index) {
        total = r.combine(total, own);
        continue;
      }
      partial_words<A> p;
#pragma unroll
      for (int j = 0; j < words; ++j) {
        unsigned long long* word = slots + std::size_t{b} * words + j;
        while ((w[k][j] >> 32) == 0) w[k][j] = load_slot_word(word);
        p.w[j] = static_cast<unsigned>(w[k][j]);
        store_slot_word(word, 0ull);
      }
      total = r.combine(total, p.value);
    }
  }
  return total;
}

/// The end of a one-launch reduction, after each block's block_reduce (single_pass_kernel,
/// multi_dot_kernel): a grid of one writes its result; otherwise every block but the one holding the last
/// ticket publishes its partial (publish_partial) and leaves, and that one collects the partials in
/// BLOCK order (collect_partials, reducer r), reduces them with the block's tree (op) and writes.
/// `write(total)` runs on thread 0 of the writing block, which then re-zeroes the ticket counter: every
/// block took its ticket, so the counter is ready for the next call without a memset. `ticket` (shared)
/// holds thread 0's ticket, stored before the block_reduce; `mine` and `tmp` are the block's shared
/// memory.
template <int Threads, class A, class Op, class R, class Write>
__device__ __forceinline__ void ticket_finish(A acc, const Op& op, const R& r,
                                              typename block::block_reduce<Threads, A>::storage& tmp,
                                              const unsigned& ticket, A& mine, unsigned long long* __restrict__ slots,
                                              unsigned int* __restrict__ tickets, Write write) {
  using br = block::block_reduce<Threads, A>;
  constexpr int words = sizeof(A) / 4;
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) {
      write(acc);
      *tickets = 0;
    }
    return;
  }
  __syncthreads();  // `ticket` is visible to the whole block
  if (ticket != gridDim.x - 1) {
    if (threadIdx.x == 0) publish_partial(slots + static_cast<std::size_t>(blockIdx.x) * words, acc);
    return;
  }
  if (threadIdx.x == 0) mine = acc;
  __syncthreads();
  A total = collect_partials<Threads, A>(slots, gridDim.x, blockIdx.x, mine, r);
  __syncthreads();  // tmp is reused
  total = br::reduce(total, op, tmp);
  if (threadIdx.x == 0) {
    write(total);
    *tickets = 0;
  }
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

/// Resident blocks per SM that the register allocation must allow (__launch_bounds__): 4 for 256-thread
/// blocks with 8 vectors per thread (64 registers: all 8 loads in flight; left free, ptxas chose 38
/// registers and issued them in parts, and the large-n sum gained nothing over 4 vectors); 5 for
/// two-input reducers (dot) in 256-thread blocks of 4 vectors (51 registers: ptxas takes 48 and keeps
/// the 8 loads of x and y in flight; left free, it chose 32 once the finish loaded its partials in
/// batches, issued the loads in parts, and dot<float> took 1.02x CUB's time at 2^24 on an H200 where it
/// had taken 0.92x); otherwise none (0: ptxas's own choice, 31 registers for the float sum at 4 vectors;
/// a one-block kernel of 512 x 8 vectors capped at 64 registers would spill in dot).
constexpr int single_pass_min_blocks(int threads, int unroll, bool two_inputs) {
  if (unroll >= 8 && threads <= 256) return 1024 / threads;
  if (two_inputs && unroll <= 4 && threads <= 256) return 1280 / threads;
  return 0;
}

/// One block, one tile: a call of at most Threads x Unroll 16-byte vectors (launch_default's 16 KiB and
/// 64 KiB shapes). The same traversal and block tree as single_pass_kernel on a grid of one, so the same
/// bits, without what only a multi-block grid needs: the ticket, the partial slots and their
/// parameters, and the tile loop (OneTile). On an H200 those cost a one-block sum 0.2 us of device time
/// against a kernel written for the case (bench/experiments/launch_floor.cu: compact block 1.22-1.27 us
/// graph-timed at 2^10..2^12, the library's single_pass_kernel 1.47-1.48, CUB's single-tile kernel 1.24).
template <int Threads, int Unroll, class R>
__global__ void __launch_bounds__(Threads)
single_block_kernel(const typename R::value_type* __restrict__ x, const typename R::value_type* __restrict__ y,
                    std::int64_t n, R r, typename R::out_type* __restrict__ out) {
  static_assert(!has_add_tile<R>::value, "argmin/argmax reduce full tiles as trees: single_pass_kernel");
  using A = typename R::acc_type;
  using br = block::block_reduce<Threads, A>;
  __shared__ typename br::storage tmp;
  A acc = r.identity();
  traverse<Threads, Unroll, R::two_inputs, true>(
      x, y, n, 0, 1, [&](std::int64_t i, typename R::value_type a, typename R::value_type b) { r.add(acc, a, b, i); });
  acc = br::reduce(acc, combine_op<R>{r}, tmp);
  if (threadIdx.x == 0) *out = r.finish(acc);
}

/// One launch for any n: grid-stride accumulation (traverse), block_reduce, then a ticket finish. Each
/// block takes a ticket (atomicAdd) as it STARTS, so the round trip overlaps its loads; every block but
/// the one holding the last ticket publishes its partial (publish_partial) and leaves; the last-ticket
/// block, whose peers have all started and so will all publish, collects the partials
/// (collect_partials, several loads in flight per thread) and combines them in BLOCK order (thread t
/// takes blocks t, t + Threads, ..., then block_reduce's fixed tree), so the result does not depend on
/// which block finished when. It re-zeroes the ticket counter. A one-block grid writes its result
/// directly.
template <int Threads, int Unroll, class R>
__global__ void __launch_bounds__(Threads, single_pass_min_blocks(Threads, Unroll, R::two_inputs))
single_pass_kernel(const typename R::value_type* __restrict__ x, const typename R::value_type* __restrict__ y,
                   std::int64_t n, R r, unsigned long long* __restrict__ slots,
                   unsigned int* __restrict__ tickets, typename R::out_type* __restrict__ out) {
  using A = typename R::acc_type;
  using br = block::block_reduce<Threads, A>;
  __shared__ typename br::storage tmp;
  __shared__ unsigned ticket;
  __shared__ A mine;
  const combine_op<R> op{r};
  // Thread 0 takes a ticket even on a grid of one (which resets it below): guarded by anything more than
  // `threadIdx.x == 0`, ptxas made this a warp-aggregated atomic (ATOMG, then a SHFL.IDX of its result),
  // so warp 0 waited for the L2 round trip before issuing its loads, and the block tree for warp 0. That
  // cost the multi-block kernel 0.17-0.25 us of device time at 2^16..2^22 floats on an H200, graph-timed,
  // against a copy without it (bench/experiments/reduce_medium.cu; check with cuobjdump -sass: no SHFL.IDX
  // or SR_LTMASK after the ATOMG). The ticket is used after the loads, so its round trip overlaps them.
  unsigned my_ticket = 0;
  if (threadIdx.x == 0) my_ticket = atomicAdd(tickets, 1u);

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
  if (threadIdx.x == 0) ticket = my_ticket;
  acc = br::reduce(acc, op, tmp);
  // out and r captured by value: captured by reference, these kernel parameters changed ptxas's register
  // allocation of the argmin/argmax kernels (sm_90: 1,522 of one argmax kernel's 1,912 instructions
  // differed); by value every libreduce kernel's SASS is byte for byte that of this finish written inline
  // (sm_90, CUDA 13.0).
  ticket_finish<Threads>(acc, op, r, tmp, ticket, mine, slots, tickets, [=](const A& total) { *out = r.finish(total); });
}

}  // namespace reduce::detail
