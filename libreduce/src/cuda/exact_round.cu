// Dispatch of reduce::round_exact on device states (exact_round.cuh).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "dispatch.cuh"
#include "exact_round.cuh"

namespace reduce {

template <class T>
void round_exact(const exact_accumulator<T>* d_states, int count, T* d_out, stream_t stream) {
  if (count < 0) throw std::invalid_argument("reduce::round_exact: negative count " + std::to_string(count));
  if (count == 0) return;
  detail::check_aligned(d_states, "reduce::round_exact");
  const int grid = (count + detail::round_exact_threads - 1) / detail::round_exact_threads;
  detail::round_exact_kernel<T><<<grid, detail::round_exact_threads, 0, static_cast<cudaStream_t>(stream)>>>(
      d_states, count, d_out);
  GPUKIT_CHECK_LAUNCH();
}

template void round_exact<float>(const exact_accumulator<float>*, int, float*, stream_t);
template void round_exact<double>(const exact_accumulator<double>*, int, double*, stream_t);

}  // namespace reduce
