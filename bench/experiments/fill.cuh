// Device-side input for the experiments: x[i] uniform in [-1, 1) from a hash of (i, seed), so the values
// do not depend on the grid and the host can copy them back once for its double-precision oracle.
// Each experiment is one translation unit, hence the unnamed namespace.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"

namespace experiments {
namespace {

/// A 64-bit hash of (i, seed): the same on every grid.
__device__ __forceinline__ std::uint64_t mix64(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t h = (i + seed) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return h;
}

__global__ void fill_uniform_kernel(float* x, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    x[i] = static_cast<float>(static_cast<double>(mix64(static_cast<std::uint64_t>(i), seed) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/// n uniform floats on the device and their copy on the host (the oracle's input), filled on `stream`.
struct uniform_floats {
  gpukit::device_buffer<float> device;
  std::vector<float> host;
};
inline uniform_floats make_uniform_floats(std::int64_t n, std::uint64_t seed, cudaStream_t stream) {
  uniform_floats u{gpukit::device_buffer<float>(n), std::vector<float>(static_cast<std::size_t>(n))};
  fill_uniform_kernel<<<1024, 256, 0, stream>>>(u.device.data(), n, seed);
  GPUKIT_CHECK_LAUNCH();
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(u.host.data(), u.device.data(), sizeof(float) * u.host.size(),
                                    cudaMemcpyDeviceToHost, stream));
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return u;
}

}  // namespace
}  // namespace experiments
