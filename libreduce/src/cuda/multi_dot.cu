// Dispatch of reduce::multi_dot: argument checks, the grid, scratch, and the one launch of
// multi_dot_kernel (multi_dot_kernel.cuh) for M = m; and multi_dot_chain_length, the k of its bound.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "dispatch.cuh"
#include "multi_dot_kernel.cuh"

namespace reduce {
namespace detail {
namespace {

/// Threads per block: the single-pass kernels' default (dispatch.cuh).
constexpr int multi_dot_threads = default_threads;

/// What needs no device: m in [0, multi_dot_max], n >= 0, the pointer arrays present, every vector a valid
/// T* (a multiple of alignof(T)). Every entry point calls it before its first CUDA call.
template <class T>
void check_multi_dot(const T* const* d_x, const T* const* d_y, int m, std::int64_t n, const char* what) {
  if (m < 0 || m > multi_dot_max)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(m) + " dot products, expected 0 to " +
                                std::to_string(multi_dot_max));
  check_count(n, what);
  if (m > 0 && (d_x == nullptr || d_y == nullptr))
    throw std::invalid_argument(std::string(what) + ": null array of vector pointers");
  for (int j = 0; j < m; ++j) {
    check_aligned(d_x[j], what);
    check_aligned(d_y[j], what);
  }
}

/// Grid for M dot products of n elements of T: one block per block_min_bytes (32 KiB, as the single-pass
/// policy beyond medium_bytes) of the 2M vectors' bytes together, so that a small call is one block and a
/// large one one wave of resident blocks, and never more blocks than the workspace has partial slots
/// for M sums (partial_slots_for). A function of (n, M, T, device) only: the same grid every call, hence
/// the same bits.
template <int M, class T>
int multi_dot_grid(std::int64_t n) {
  static std::atomic<int> waves[64] = {};  // one per instantiation: see cached_wave
  const std::int64_t wave = cached_wave(waves, multi_dot_kernel<multi_dot_threads, M, T>, multi_dot_threads);
  const std::int64_t cap = std::min<std::int64_t>(wave, partial_slots_for<multi_sums<T, M>>);
  return policy_grid(n, 2 * M * sizeof(T), cap);
}

template <int M, class T>
void launch_multi_dot(const T* const* d_x, const T* const* d_y, std::int64_t n, T* d_out, workspace* ws,
                      cudaStream_t stream, const char* what) {
  using A = multi_sums<T, M>;
  multi_dot_view<T, M> v;
  for (int j = 0; j < M; ++j) {
    v.x[j] = d_x[j];
    v.y[j] = d_y[j];
  }
  const int grid = multi_dot_grid<M, T>(n);
  auto go = [&](void* scratch) {
    auto* tickets = reinterpret_cast<unsigned int*>(static_cast<char*>(scratch) + done_counter_offset);
    auto* slots = reinterpret_cast<unsigned long long*>(static_cast<char*>(scratch) + partials_offset);
    launch<multi_dot_kernel<multi_dot_threads, M, T>>(dim3(static_cast<unsigned>(grid)), dim3(multi_dot_threads),
                                                      stream, v, n, slots, tickets, d_out);
  };
  if (ws) {
    require_workspace(*ws, workspace_bytes, what);
    go(ws->data());
  } else {
    // One memset over the counters (the ticket), the limbs (unused here) and exactly the grid's slots.
    pool_scratch s(workspace_bytes, zeroed_bytes_for<A>(grid), stream);
    go(s.data());
  }
}

template <class T>
void run_multi_dot(const T* const* d_x, const T* const* d_y, int m, std::int64_t n, T* d_out, workspace* ws,
                   cudaStream_t stream) {
  constexpr const char* what = "reduce::multi_dot";
  check_multi_dot(d_x, d_y, m, n, what);
  static_assert(multi_dot_max == 8, "one case per M below");
  switch (m) {
    case 1: launch_multi_dot<1>(d_x, d_y, n, d_out, ws, stream, what); return;
    case 2: launch_multi_dot<2>(d_x, d_y, n, d_out, ws, stream, what); return;
    case 3: launch_multi_dot<3>(d_x, d_y, n, d_out, ws, stream, what); return;
    case 4: launch_multi_dot<4>(d_x, d_y, n, d_out, ws, stream, what); return;
    case 5: launch_multi_dot<5>(d_x, d_y, n, d_out, ws, stream, what); return;
    case 6: launch_multi_dot<6>(d_x, d_y, n, d_out, ws, stream, what); return;
    case 7: launch_multi_dot<7>(d_x, d_y, n, d_out, ws, stream, what); return;
    case 8: launch_multi_dot<8>(d_x, d_y, n, d_out, ws, stream, what); return;
    default: return;  // m = 0: nothing to do (check_multi_dot refused the rest)
  }
}

}  // namespace
}  // namespace detail

std::int64_t multi_dot_chain_length(std::int64_t n, int m, std::size_t element_bytes) {
  using namespace detail;  // the launch-shape constants and multi_dot_chain
  const char* what = "reduce::multi_dot_chain_length";
  if (m < 0 || m > multi_dot_max)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(m) + " dot products, expected 0 to " +
                                std::to_string(multi_dot_max));
  check_count(n, what);
  if (m == 0 || n == 0) return 0;
  // The grid is policy_grid(n, 2 m e, min(wave, slots)) (multi_dot_grid): at most `blocks` (one per
  // block_min_bytes) and `slots`, and at least min(blocks, SMs, slots), since a wave is SMs x resident
  // blocks and every kernel has at least one resident block per SM. The per-thread share is longest on the
  // smallest grid and the last block's collected partials most numerous on the largest: each part is
  // taken at its own extreme, so k holds for every occupancy (a sum of multi_sums<T, M> has no padding:
  // its partial is m e bytes).
  const int slots = partial_slots(static_cast<std::size_t>(m) * element_bytes);
  const int blocks = policy_grid(n, 2 * static_cast<std::size_t>(m) * element_bytes, max_grid);
  const int largest = std::min(blocks, slots);
  const int smallest = std::min(largest, sm_count());
  const std::int64_t collected = (largest + multi_dot_threads - 1) / multi_dot_threads;
  return multi_dot_chain(n, smallest, multi_dot_threads, multi_dot_unroll(m), collected);
}

template <class T>
void multi_dot(const T* const* d_x, const T* const* d_y, int m, std::int64_t n, T* d_out, stream_t stream) {
  detail::run_multi_dot(d_x, d_y, m, n, d_out, nullptr, stream);
}
template <class T>
void multi_dot(const T* const* d_x, const T* const* d_y, int m, std::int64_t n, T* d_out, workspace& ws,
               stream_t stream) {
  detail::run_multi_dot(d_x, d_y, m, n, d_out, &ws, stream);
}
template <class T>
std::vector<T> multi_dot(const T* const* d_x, const T* const* d_y, int m, std::int64_t n, stream_t stream) {
  detail::check_multi_dot(d_x, d_y, m, n, "reduce::multi_dot");  // before the allocation below
  std::vector<T> out(static_cast<std::size_t>(m));
  if (m == 0) return out;
  const std::size_t bytes = out.size() * sizeof(T);
  auto* d_out = static_cast<T*>(detail::scratch_malloc_async(bytes, stream));
  try {
    detail::run_multi_dot(d_x, d_y, m, n, d_out, nullptr, stream);
  } catch (...) {
    (void)cudaFreeAsync(d_out, stream);
    throw;
  }
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(out.data(), d_out, bytes, cudaMemcpyDeviceToHost, stream));
  GPUKIT_CUDA_CHECK(cudaFreeAsync(d_out, stream));
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return out;
}

#define REDUCE_INSTANTIATE_MULTI_DOT(T)                                                                     \
  template void multi_dot<T>(const T* const*, const T* const*, int, std::int64_t, T*, stream_t);             \
  template void multi_dot<T>(const T* const*, const T* const*, int, std::int64_t, T*, workspace&, stream_t); \
  template std::vector<T> multi_dot<T>(const T* const*, const T* const*, int, std::int64_t, stream_t);
REDUCE_INSTANTIATE_MULTI_DOT(std::int32_t)
REDUCE_INSTANTIATE_MULTI_DOT(std::int64_t)
REDUCE_INSTANTIATE_MULTI_DOT(std::uint32_t)
REDUCE_INSTANTIATE_MULTI_DOT(std::uint64_t)
REDUCE_INSTANTIATE_MULTI_DOT(float)
REDUCE_INSTANTIATE_MULTI_DOT(double)

}  // namespace reduce
