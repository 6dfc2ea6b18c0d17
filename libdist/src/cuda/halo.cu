// Launches of the halo kernels (halo_kernels.cuh) for the device SpMV.
#include <algorithm>

#include "gpukit/cuda_check.hpp"
#include "halo.hpp"
#include "halo_kernels.cuh"

namespace dist::detail {
namespace {
// 256 threads; up to 1024 blocks of grid-stride loops: a halo is at most a few million entries.
constexpr int threads = 256;
int blocks_for(std::int64_t n) {
  return static_cast<int>(std::min<std::int64_t>((n + threads - 1) / threads, 1024));
}
}  // namespace

template <class Value>
void gather(const Value* d_in, const std::int64_t* d_index, std::int64_t n, Value* d_out, cudaStream_t stream) {
  if (n == 0) return;
  gather_kernel<<<blocks_for(n), threads, 0, stream>>>(d_in, d_index, n, d_out);
  GPUKIT_CHECK_LAUNCH();
}
template <class Value>
void scatter(const Value* d_in, const std::int64_t* d_index, std::int64_t n, Value* d_out, cudaStream_t stream) {
  if (n == 0) return;
  scatter_kernel<<<blocks_for(n), threads, 0, stream>>>(d_in, d_index, n, d_out);
  GPUKIT_CHECK_LAUNCH();
}
template void gather<float>(const float*, const std::int64_t*, std::int64_t, float*, cudaStream_t);
template void gather<double>(const double*, const std::int64_t*, std::int64_t, double*, cudaStream_t);
template void scatter<float>(const float*, const std::int64_t*, std::int64_t, float*, cudaStream_t);
template void scatter<double>(const double*, const std::int64_t*, std::int64_t, double*, cudaStream_t);

}  // namespace dist::detail
