// Kernels of the device SpMV's halo: gathering the x entries to send, scattering the interior and
// boundary results into y. Plain element-wise copies through index lists.
#pragma once
#include <cstdint>

namespace dist::detail {

/// out[i] = in[index[i]], i < n (packing the send buffer).
template <class Value>
__global__ void gather_kernel(const Value* __restrict__ in, const std::int64_t* __restrict__ index, std::int64_t n,
                              Value* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[i] = in[index[i]];
}

/// out[index[i]] = in[i], i < n (a row subset's results into y).
template <class Value>
__global__ void scatter_kernel(const Value* __restrict__ in, const std::int64_t* __restrict__ index, std::int64_t n,
                               Value* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[index[i]] = in[i];
}

}  // namespace dist::detail
