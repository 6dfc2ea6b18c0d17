// The reduce studies' check of a float sum: a double-precision host sum of the input as the oracle, an
// error bound, and a variant run several times on a poisoned output (bitwise run-to-run equality).
// Header-only; include from the studies' .cu files.
#pragma once
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gpukit/cuda_check.hpp"

namespace experiments {

/// sum x[0..n) and sum |x[0..n)| in double (exact enough to be the oracle of a float sum).
struct host_sum {
  double ref = 0;
  double abs_sum = 0;
};
inline host_sum host_sum_of(const std::vector<float>& x, std::int64_t n) {
  host_sum h;
  for (std::int64_t i = 0; i < n; ++i) {
    h.ref += x[static_cast<std::size_t>(i)];
    h.abs_sum += std::fabs(x[static_cast<std::size_t>(i)]);
  }
  return h;
}

/// |computed - exact| <= gamma_k sum|x| with u = 2^-24 and a generous chain length k = n / 2^10 + 64
/// (every variant's per-thread chain, block trees and final combine are shorter).
inline bool within_float_sum_bound(float got, std::int64_t n, const host_sum& h) {
  const double k = static_cast<double>(n) / 1024.0 + 64.0;
  const double u = std::ldexp(1.0, -24);
  return std::fabs(static_cast<double>(got) - h.ref) <= k * u / (1 - k * u) * h.abs_sum;
}

/// Runs `run()` (which writes one float to d_out on `stream`) `runs` times, each on an output poisoned
/// with NaN; returns "ok", "OUT OF BOUND" or "NOT DETERMINISTIC" (results that differ in any bit).
template <class Run>
const char* check_float_sum(Run&& run, float* d_out, cudaStream_t stream, std::int64_t n, const host_sum& h,
                            int runs = 5) {
  float first = 0;
  bool stable = true;
  for (int rep = 0; rep < runs; ++rep) {
    GPUKIT_CUDA_CHECK(cudaMemsetAsync(d_out, 0xFF, sizeof(float), stream));
    run();
    float got = 0;
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(&got, d_out, sizeof(float), cudaMemcpyDeviceToHost, stream));
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (rep == 0) first = got;
    else if (std::memcmp(&got, &first, sizeof(float)) != 0) stable = false;
  }
  if (!stable) return "NOT DETERMINISTIC";
  return within_float_sum_bound(first, n, h) ? "ok" : "OUT OF BOUND";
}

}  // namespace experiments
