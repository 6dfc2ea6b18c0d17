// Kernel of reduce::multi_dot: M dot products in one pass over memory and one launch (device code, and the
// chain length of its traversal; private to libreduce: the launch lives in multi_dot.cu). Its own traversal
// (element loads of the 2M vectors, which may each have their own misalignment), then single_pass_kernel's
// block tree and finish on a struct of M sums: reduce::block::block_reduce, the same ticket counter and
// partial slots (publish_partial, collect_partials) in the same workspace layout (single_pass.cuh).
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "reduce/cuda/block_reduce.cuh"
#include "single_pass.cuh"

namespace reduce::detail {

/// The 2M vectors of one call, passed by value (kernel parameters: 128 bytes at M = 8).
template <class T, int M>
struct multi_dot_view {
  const T* x[M];
  const T* y[M];
};

/// M running sums: a thread's accumulator, a block's partial (moved through a partial slot as
/// sizeof(T) * M / 4 flagged words) and the last block's total. Indexed by constants only (every loop over
/// it is unrolled), so a thread's sums stay in registers.
template <class T, int M>
struct multi_sums {
  T v[M];
};

/// identity / combine (collect_partials' reducer interface) and operator() (block_reduce's operator) of
/// M sums, and the per-element step. Integers wrap modulo 2^bits (computed unsigned, so that a signed
/// overflow is the defined wrap-around and not undefined behaviour); floats add one fused multiply-add
/// per element, as dot_reducer does.
template <class T, int M>
struct multi_dot_op {
  using sums = multi_sums<T, M>;
  using wrap = std::make_unsigned_t<std::conditional_t<std::is_floating_point_v<T>, int, T>>;
  __device__ __forceinline__ static T add(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return a + b;
    else return static_cast<T>(static_cast<wrap>(a) + static_cast<wrap>(b));
  }
  __device__ __forceinline__ static T multiply_add(T x, T y, T acc) {
    if constexpr (std::is_floating_point_v<T>) return fma(x, y, acc);
    else return static_cast<T>(static_cast<wrap>(acc) + static_cast<wrap>(x) * static_cast<wrap>(y));
  }
  __device__ __forceinline__ sums identity() const {
    sums s;
#pragma unroll
    for (int j = 0; j < M; ++j) s.v[j] = T(0);
    return s;
  }
  __device__ __forceinline__ sums combine(const sums& a, const sums& b) const {
    sums s;
#pragma unroll
    for (int j = 0; j < M; ++j) s.v[j] = add(a.v[j], b.v[j]);
    return s;
  }
  __device__ __forceinline__ sums operator()(const sums& a, const sums& b) const { return combine(a, b); }
};

/// Elements of each vector a thread loads per tile: 8 / M (at least 1), so that 2 M U loads, 10 to 16, are
/// issued before the first is used, about what reduce::dot's element path keeps in flight (8 of x and 8 of
/// y: traverse with Unroll 4). A fixed U for every M would multiply the registers holding loads by M
/// (U = 8 at M = 8 doubles: 128 loads of 2 registers, past the 255 registers a thread can have).
constexpr int multi_dot_unroll(int m) { return m >= 8 ? 1 : 8 / m; }

/// Partial slots of the workspace for partials of A: the region after partials_offset holds max_grid
/// partials of max_partial_bytes (max_grid * 2 * max_partial_bytes bytes: 256 KiB) and a partial of A takes
/// slot_bytes<A> = 2 sizeof(A) bytes, so larger partials get fewer slots: up to 32 bytes (8 floats, 4
/// doubles) the full 4,096 (max_grid), 8 doubles (64 bytes) 2,048. The grid never exceeds this.
constexpr int partial_slots(std::size_t partial_bytes) {
  const std::size_t fit = max_grid * 2 * max_partial_bytes / (2 * partial_bytes);
  return fit < static_cast<std::size_t>(max_grid) ? static_cast<int>(fit) : max_grid;
}
template <class A>
constexpr int partial_slots_for = partial_slots(sizeof(A));
static_assert(partials_offset + std::size_t{partial_slots(64)} * 2 * 64 <= workspace_bytes,
              "the largest multi_dot partials (8 doubles) fit the partial slots region");

/// The longest chain of roundings any product x_j[i] y_j[i] goes through in multi_dot_kernel on `grid`
/// blocks of `threads` with `unroll` elements per vector and tile, when the last block collects at most
/// `collected` partials per thread:
///  * per thread: tiles of threads x unroll elements, block b taking tiles b, b + grid, ..., so a thread
///    owns at most ceil(ceil(n / (threads unroll)) / grid) unroll elements; the first one's fused
///    multiply-add rounds once (x y + 0), and each later one rounds the running sum once more;
///  * the block tree (block_reduce: log2(32) shuffle levels, then log2(threads / 32) over the warps'
///    results): log2(threads);
///  * the last block: thread t adds partials t, t + threads, ... from zero (the first addition is exact):
///    at most `collected` roundings; then its block tree, log2(threads) again.
/// multi_dot_chain_length (multi_dot.cu) evaluates it at the device's extreme grids.
inline std::int64_t multi_dot_chain(std::int64_t n, int grid, int threads, int unroll, std::int64_t collected) {
  const std::int64_t per_tile = std::int64_t{threads} * unroll;
  const std::int64_t tiles = (n + per_tile - 1) / per_tile;
  const std::int64_t per_thread = (tiles + grid - 1) / grid * unroll;
  int lg = 0;
  while ((1 << lg) < threads) ++lg;
  return per_thread + 2 * lg + collected;
}

/// One launch for M dot products: each thread accumulates M sums over its elements (loads of every vector
/// of a tile issued before any use, through the read-only path), block_reduce on the M sums, then
/// single_pass_kernel's ticket finish: each block takes a ticket as it starts, every block but the one with
/// the last ticket publishes its partial and leaves, and that one collects the partials in BLOCK order
/// (thread t takes blocks t, t + Threads, ..., then the same fixed tree), so the bits do not depend on which
/// block finished when. It re-zeroes the ticket counter, and collect_partials zeroes every slot it read:
/// the workspace is ready for the next call. A grid of one writes its sums directly. out[j] for j < M only.
template <int Threads, int M, class T>
__global__ void __launch_bounds__(Threads)
multi_dot_kernel(multi_dot_view<T, M> v, std::int64_t n, unsigned long long* __restrict__ slots,
                 unsigned int* __restrict__ tickets, T* __restrict__ out) {
  using op_t = multi_dot_op<T, M>;
  using A = multi_sums<T, M>;
  using br = block::block_reduce<Threads, A>;
  static_assert(sizeof(A) % 4 == 0, "partials are moved as 32-bit words");
  constexpr int U = multi_dot_unroll(M);
  constexpr std::int64_t per_tile = std::int64_t{Threads} * U;
  __shared__ typename br::storage tmp;
  __shared__ unsigned ticket;
  __shared__ A mine;
  const op_t op{};
  // Taken by thread 0 under no other condition, as in single_pass_kernel (which says why).
  unsigned my_ticket = 0;
  if (threadIdx.x == 0) my_ticket = atomicAdd(tickets, 1u);

  A acc = op.identity();
  const std::int64_t tid = threadIdx.x;
  const std::int64_t full_tiles = n / per_tile;
  std::int64_t t = blockIdx.x;
  for (; t < full_tiles; t += gridDim.x) {
    const std::int64_t i0 = t * per_tile + tid;
    T a[M][U], b[M][U];
#pragma unroll
    for (int k = 0; k < U; ++k)
#pragma unroll
      for (int j = 0; j < M; ++j) {
        a[j][k] = __ldg(v.x[j] + i0 + k * Threads);
        b[j][k] = __ldg(v.y[j] + i0 + k * Threads);
      }
#pragma unroll
    for (int k = 0; k < U; ++k)
#pragma unroll
      for (int j = 0; j < M; ++j) acc.v[j] = op_t::multiply_add(a[j][k], b[j][k], acc.v[j]);
  }
  if (t == full_tiles && t * per_tile < n) {  // the partial tile, taken by the block whose turn it is
    // Loads clamped to the last element rather than guarded, so that all are issued before any use, as
    // traverse does for its partial tile (which measured guarded loads issued one after another).
    const std::int64_t i0 = t * per_tile + tid;
    T a[M][U], b[M][U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const std::int64_t i = i0 + k * Threads < n ? i0 + k * Threads : n - 1;
#pragma unroll
      for (int j = 0; j < M; ++j) {
        a[j][k] = __ldg(v.x[j] + i);
        b[j][k] = __ldg(v.y[j] + i);
      }
    }
#pragma unroll
    for (int k = 0; k < U; ++k) {
      if (i0 + k * Threads < n) {
#pragma unroll
        for (int j = 0; j < M; ++j) acc.v[j] = op_t::multiply_add(a[j][k], b[j][k], acc.v[j]);
      }
    }
  }

  if (threadIdx.x == 0) ticket = my_ticket;
  acc = br::reduce(acc, op, tmp);
  ticket_finish<Threads>(acc, op, op, tmp, ticket, mine, slots, tickets, [&](const A& total) {
#pragma unroll
    for (int j = 0; j < M; ++j) out[j] = total.v[j];
  });
}

}  // namespace reduce::detail
