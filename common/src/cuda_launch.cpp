// gpukit::launch_kernel: cuLaunchKernel through the runtime's driver entry point.
#include "gpukit/cuda_launch.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "gpukit/cuda_check.hpp"
#include "gpukit/error.hpp"

namespace gpukit {
namespace {

struct driver_api {
  PFN_cuLaunchKernel_v4000 launch = nullptr;
  PFN_cuGetErrorName_v6000 error_name = nullptr;
};

void* entry_point(const char* symbol, unsigned int version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();  // not sticky; leave no trace for the caller's next check
    return nullptr;
  }
  return fn;
}

const driver_api& driver() {
  static const driver_api api = [] {
    driver_api a;
    a.launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(entry_point("cuLaunchKernel", 4000));
    a.error_name = reinterpret_cast<PFN_cuGetErrorName_v6000>(entry_point("cuGetErrorName", 6000));
    return a;
  }();
  return api;
}

}  // namespace

void launch_kernel(const void* kernel, function_handles& handles, dim3 grid, dim3 block, cudaStream_t stream,
                   void** args) {
  const driver_api& api = driver();
  if (api.launch == nullptr) {
    GPUKIT_CUDA_CHECK(cudaLaunchKernel(kernel, grid, block, args, 0, stream));
    return;
  }
  int device = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  std::atomic<void*>& slot = handles[device & 63];
  auto fetch = [&] {
    cudaFunction_t f = nullptr;
    GPUKIT_CUDA_CHECK(cudaGetFuncBySymbol(&f, kernel));
    if (device < 64) slot.store(reinterpret_cast<void*>(f), std::memory_order_relaxed);
    return reinterpret_cast<void*>(f);
  };
  void* handle = device < 64 ? slot.load(std::memory_order_relaxed) : nullptr;
  if (handle == nullptr) handle = fetch();
  auto go = [&] {
    return api.launch(static_cast<CUfunction>(handle), grid.x, grid.y, grid.z, block.x, block.y, block.z, 0,
                      reinterpret_cast<CUstream>(stream), args, nullptr);
  };
  CUresult r = go();
  if (r == CUDA_ERROR_INVALID_HANDLE || r == CUDA_ERROR_CONTEXT_IS_DESTROYED || r == CUDA_ERROR_INVALID_CONTEXT) {
    handle = fetch();  // the cached handle belonged to a context since destroyed (cudaDeviceReset): once more
    r = go();
  }
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    if (api.error_name) api.error_name(r, &name);
    throw cuda_error(static_cast<int>(r), std::string("CUDA driver error ") + (name ? name : "(unnamed)") + " (" +
                                              std::to_string(static_cast<int>(r)) + ") in cuLaunchKernel at " +
                                              __FILE__ + ":" + std::to_string(__LINE__));
  }
}

bool dependent_launch_enabled() {
  static const bool allowed = [] {
    const char* v = std::getenv("GPUKIT_PDL");
    return v == nullptr || std::string(v) != "0";
  }();
  static std::atomic<int> capable[64] = {};  // 0: not yet asked; 1: no; 2: yes
  if (!allowed) return false;
  const int device = current_device();
  int c = capable[device & 63].load(std::memory_order_relaxed);
  if (c == 0) {
    int major = 0;
    GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    c = major >= 9 ? 2 : 1;
    capable[device & 63].store(c, std::memory_order_relaxed);
  }
  return c == 2;
}

void launch_kernel_dependent(const void* kernel, dim3 grid, dim3 block, cudaStream_t stream, void** args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = dependent_launch_enabled() ? 1 : 0;
  GPUKIT_CUDA_CHECK(cudaLaunchKernelExC(&config, kernel, args));
}

}  // namespace gpukit
