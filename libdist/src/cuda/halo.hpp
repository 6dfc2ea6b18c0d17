// Host entry points of the halo kernels (halo.cu).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace dist::detail {
template <class Value>
void gather(const Value* d_in, const std::int64_t* d_index, std::int64_t n, Value* d_out, cudaStream_t stream);
template <class Value>
void scatter(const Value* d_in, const std::int64_t* d_index, std::int64_t n, Value* d_out, cudaStream_t stream);
}  // namespace dist::detail
