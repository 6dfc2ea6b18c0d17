// The checked device-memory calls behind gpukit::device_buffer (device_buffer.hpp).
#include <cuda_runtime_api.h>

#include <string>

#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"

namespace gpukit {

void* device_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    // Name what was asked and what the device has: "out of memory" alone does not say whether the
    // input is too large for this GPU or something else holds the memory.
    (void)cudaGetLastError();  // cudaMalloc's error is not sticky; clear it for the next call
    std::size_t free_bytes = 0, total_bytes = 0;
    const bool known = cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
    throw cuda_error(static_cast<int>(err),
                     "out of device memory: an allocation of " + std::to_string(bytes) + " bytes failed" +
                         (known ? " (" + std::to_string(free_bytes) + " of " + std::to_string(total_bytes) +
                                      " bytes free on the device)"
                                : std::string()));
  }
  GPUKIT_CUDA_CHECK(err);
  return p;
}
void* device_allocate_array(std::int64_t count, std::size_t element_bytes) {
  std::size_t bytes = 0;
  if (count < 0 || __builtin_mul_overflow(static_cast<std::size_t>(count), element_bytes, &bytes))
    throw cuda_error(static_cast<int>(cudaErrorMemoryAllocation),
                     "out of device memory: " + std::to_string(count) + " elements of " +
                         std::to_string(element_bytes) + " bytes do not fit any allocation");
  return device_allocate(bytes);
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
