#include "scratch_pool.hpp"

#include <cstdint>
#include <mutex>
#include <vector>

#include "gpukit/cuda_check.hpp"

namespace reduce::detail {
namespace {

/// The pool of `device`, created under the lock on first use. Never destroyed: pools outlive every
/// allocation, and destroying one at static destruction could run after the CUDA context is gone.
cudaMemPool_t pool_of(int device) {
  static std::mutex lock;
  static std::vector<cudaMemPool_t> pools;
  const std::lock_guard<std::mutex> hold(lock);
  if (pools.size() <= static_cast<std::size_t>(device)) pools.resize(static_cast<std::size_t>(device) + 1, nullptr);
  cudaMemPool_t& pool = pools[static_cast<std::size_t>(device)];
  if (pool == nullptr) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t created = nullptr;
    GPUKIT_CUDA_CHECK(cudaMemPoolCreate(&created, &props));
    std::uint64_t keep = scratch_pool_keep_bytes;
    GPUKIT_CUDA_CHECK(cudaMemPoolSetAttribute(created, cudaMemPoolAttrReleaseThreshold, &keep));
    pool = created;
  }
  return pool;
}

}  // namespace

void* scratch_malloc_async(std::size_t bytes, cudaStream_t stream) {
  int device = 0;
  GPUKIT_CUDA_CHECK(cudaStreamGetDevice(stream, &device));
  void* p = nullptr;
  GPUKIT_CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes, pool_of(device), stream));
  return p;
}

}  // namespace reduce::detail
