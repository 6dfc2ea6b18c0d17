// Dispatch of reduce::reproducible_sum (exact integer accumulation, correctly rounded result).
#include <algorithm>
#include <cstdint>

#include "entry_points.hpp"
#include "reproducible_sum.cuh"

namespace reduce {
namespace detail {
namespace {

template <int Threads, class T, class Out>
void launch_reproducible(const T* d_in, std::int64_t n, Out* d_out, void* scratch, cudaStream_t stream, int grid) {
  static_assert(exact_traits<T>::limbs * sizeof(std::int64_t) <= exact_limbs_bytes);
  check_aligned(d_in, "reduce::reproducible_sum");
  auto kernel = reproducible_sum_kernel<Threads, T, Out>;
  static std::atomic<int> waves[64] = {};  // one per instantiation: see cached_wave
  if (grid <= 0) {
    // The usual shape (one block per 32 KiB, at most one wave), and beyond one wave one block per
    // reproducible_block_bytes, up to reproducible_waves waves (see reproducible_sum.cuh).
    const std::int64_t wave = cached_wave(waves, kernel, Threads);
    const std::int64_t big = n * static_cast<std::int64_t>(sizeof(T)) / reproducible_block_bytes;
    grid = std::max<int>(policy_grid(n, sizeof(T), wave),
                         static_cast<int>(std::min<std::int64_t>(big, reproducible_waves<T> * wave)));
  }
  grid = std::min(grid, max_grid);
  char* s = static_cast<char*>(scratch);
  kernel<<<grid, Threads, 0, stream>>>(d_in, n, reinterpret_cast<unsigned long long*>(s + exact_limbs_offset),
                                       reinterpret_cast<unsigned int*>(s + exact_flags_offset),
                                       reinterpret_cast<unsigned int*>(s + done_counter_offset), d_out);
  GPUKIT_CHECK_LAUNCH();
}

template <class T, class Out>
void launch_reproducible(const T* d_in, std::int64_t n, Out* d_out, void* scratch, cudaStream_t stream,
                         launch_config config) {
  switch (config.block) {
    case 0:
    case 256: launch_reproducible<256>(d_in, n, d_out, scratch, stream, config.grid); break;
    case 128: launch_reproducible<128>(d_in, n, d_out, scratch, stream, config.grid); break;
    case 512: launch_reproducible<512>(d_in, n, d_out, scratch, stream, config.grid); break;
    default: throw std::invalid_argument("reduce::reproducible_sum: block must be 128, 256 or 512");
  }
}


}  // namespace

template <class T>
void reproducible_sum(const T* d_in, std::int64_t n, T* d_out, workspace& ws, launch_config config,
                      stream_t stream) {
  check_count(n, "reduce::reproducible_sum");
  require_workspace(ws, workspace_bytes, "reduce::reproducible_sum");
  launch_reproducible(d_in, n, d_out, ws.data(), stream, config);
}
template void reproducible_sum<float>(const float*, std::int64_t, float*, workspace&, launch_config, stream_t);
template void reproducible_sum<double>(const double*, std::int64_t, double*, workspace&, launch_config, stream_t);

}  // namespace detail

template <class T>
void reproducible_sum(const T* d_in, std::int64_t n, T* d_out, workspace& ws, stream_t stream) {
  detail::reproducible_sum(d_in, n, d_out, ws, detail::launch_config{}, stream);
}
template <class T>
void reproducible_sum(const T* d_in, std::int64_t n, T* d_out, stream_t stream) {
  detail::check_count(n, "reduce::reproducible_sum");
  detail::pool_scratch s(detail::workspace_bytes, detail::zeroed_bytes, stream);  // counters and limbs
  detail::launch_reproducible(d_in, n, d_out, s.data(), stream, detail::launch_config{});
}
template <class T>
T reproducible_sum(const T* d_in, std::int64_t n, stream_t stream) {
  return detail::to_host<T>(stream, [&](T* d_out) { reproducible_sum(d_in, n, d_out, stream); });
}

REDUCE_INSTANTIATE_UNARY(reproducible_sum, float, float)
REDUCE_INSTANTIATE_UNARY(reproducible_sum, double, double)

template <class T>
void reproducible_sum_state(const T* d_in, std::int64_t n, exact_accumulator<T>* d_state, stream_t stream) {
  detail::check_count(n, "reduce::reproducible_sum_state");
  detail::check_aligned(d_state, "reduce::reproducible_sum_state");
  detail::pool_scratch s(detail::workspace_bytes, detail::zeroed_bytes, stream);  // counters and limbs
  detail::launch_reproducible(d_in, n, d_state, s.data(), stream, detail::launch_config{});
}
template <class T>
exact_accumulator<T> reproducible_sum_state(const T* d_in, std::int64_t n, stream_t stream) {
  return detail::to_host<exact_accumulator<T>>(stream, [&](exact_accumulator<T>* d_state) {
    reproducible_sum_state(d_in, n, d_state, stream);
  });
}
template void reproducible_sum_state<float>(const float*, std::int64_t, exact_accumulator<float>*, stream_t);
template void reproducible_sum_state<double>(const double*, std::int64_t, exact_accumulator<double>*, stream_t);
template exact_accumulator<float> reproducible_sum_state<float>(const float*, std::int64_t, stream_t);
template exact_accumulator<double> reproducible_sum_state<double>(const double*, std::int64_t, stream_t);

}  // namespace reduce
