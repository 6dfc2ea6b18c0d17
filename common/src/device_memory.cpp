// The checked device-memory calls behind gpukit::device_buffer (device_buffer.hpp).
#include <cuda_runtime_api.h>

#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"

namespace gpukit {

void* device_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  GPUKIT_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}
void device_free(void* p) noexcept {
  if (p) (void)cudaFree(p);
}
void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes) GPUKIT_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}
void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes) GPUKIT_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}
void fill_bytes(void* dst, int byte, std::size_t bytes) {
  if (bytes) GPUKIT_CUDA_CHECK(cudaMemset(dst, byte, bytes));
}
void device_synchronize() { GPUKIT_CUDA_CHECK(cudaDeviceSynchronize()); }

}  // namespace gpukit
