// gpukit::launch_kernel and launch_kernel_dependent: cuLaunchKernel and cuLaunchKernelEx through the
// runtime's driver entry points.
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
  PFN_cuLaunchKernelEx_v11060 launch_ex = nullptr;
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
    a.launch_ex = reinterpret_cast<PFN_cuLaunchKernelEx_v11060>(entry_point("cuLaunchKernelEx", 11060));
    a.error_name = reinterpret_cast<PFN_cuGetErrorName_v6000>(entry_point("cuGetErrorName", 6000));
    return a;
  }();
  return api;
}

/// Runs `go(handle)` with the driver handle of `kernel` on the current device, cached in `handles`; once
/// more with a fresh handle where the cached one belonged to a context since destroyed (cudaDeviceReset).
/// A failure throws gpukit::cuda_error naming the driver call `what`.
template <class Go>
void with_handle(const void* kernel, function_handles& handles, const char* what, Go&& go) {
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
  CUresult r = go(static_cast<CUfunction>(handle));
  if (r == CUDA_ERROR_INVALID_HANDLE || r == CUDA_ERROR_CONTEXT_IS_DESTROYED || r == CUDA_ERROR_INVALID_CONTEXT)
    r = go(static_cast<CUfunction>(fetch()));
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    if (driver().error_name) driver().error_name(r, &name);
    throw cuda_error(static_cast<int>(r), std::string("CUDA driver error ") + (name ? name : "(unnamed)") + " (" +
                                              std::to_string(static_cast<int>(r)) + ") in " + what);
  }
}

}  // namespace

void launch_kernel(const void* kernel, function_handles& handles, dim3 grid, dim3 block, cudaStream_t stream,
                   void** args) {
  const driver_api& api = driver();
  if (api.launch == nullptr) {
    GPUKIT_CUDA_CHECK(cudaLaunchKernel(kernel, grid, block, args, 0, stream));
    return;
  }
  with_handle(kernel, handles, "cuLaunchKernel", [&](CUfunction f) {
    return api.launch(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, 0, reinterpret_cast<CUstream>(stream),
                      args, nullptr);
  });
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

void launch_kernel_dependent(const void* kernel, function_handles& handles, dim3 grid, dim3 block,
                             cudaStream_t stream, void** args) {
  const bool pdl = dependent_launch_enabled();
  const driver_api& api = driver();
  if (api.launch_ex == nullptr) {
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = pdl ? 1 : 0;
    GPUKIT_CUDA_CHECK(cudaLaunchKernelExC(&config, kernel, args));
    return;
  }
  CUlaunchAttribute attribute{};
  attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attribute.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = grid.x;
  config.gridDimY = grid.y;
  config.gridDimZ = grid.z;
  config.blockDimX = block.x;
  config.blockDimY = block.y;
  config.blockDimZ = block.z;
  config.sharedMemBytes = 0;
  config.hStream = reinterpret_cast<CUstream>(stream);
  config.attrs = &attribute;
  config.numAttrs = pdl ? 1 : 0;
  with_handle(kernel, handles, "cuLaunchKernelEx", [&](CUfunction f) { return api.launch_ex(&config, f, args, nullptr); });
}

}  // namespace gpukit
