// Kernel of reduce::round_exact on the device: each thread rounds one exact accumulator state once
// (exact_sum.hpp's exact_to_float, the arithmetic of the reproducible sum's last block and of the host
// round_exact), so a caller whose scalars live on the device never copies a state to the host.
#pragma once
#include <cstdint>

#include "reduce/detail/exact_sum.hpp"
#include "reduce/exact_accumulator.hpp"

namespace reduce::detail {

/// Threads per block of round_exact_kernel: a solver rounds at most 6 states per pass, so one block.
constexpr int round_exact_threads = 32;

template <class T>
__global__ void __launch_bounds__(round_exact_threads)
round_exact_kernel(const exact_accumulator<T>* __restrict__ states, int count, T* __restrict__ out) {
  constexpr int L = exact_accumulator<T>::limbs;
  // exact_to_float's digit scratch: 68 x 4 bytes per thread for double, in shared memory (no local frame).
  __shared__ std::uint32_t digits[round_exact_threads][L];
  const int j = static_cast<int>(blockIdx.x) * round_exact_threads + static_cast<int>(threadIdx.x);
  if (j >= count) return;
  const exact_accumulator<T>& a = states[j];
  const unsigned flags = (a.nan != 0 ? exact_nan : 0u) | (a.pos_inf != 0 ? exact_pos_inf : 0u) |
                         (a.neg_inf != 0 ? exact_neg_inf : 0u);
  out[j] = exact_to_float<T>(a.limb, flags, digits[threadIdx.x]);
}

}  // namespace reduce::detail
