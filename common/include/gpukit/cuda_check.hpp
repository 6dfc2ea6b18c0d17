// GPUKIT_CUDA_CHECK / GPUKIT_CHECK_LAUNCH: every CUDA call and every launch in the toolkit goes through
// these. Failures throw gpukit::cuda_error with the CUDA error name and text, file, line and the call.
// For the toolkit's .cu/.cpp implementation files (includes the CUDA runtime header).
#pragma once
#include <cuda_runtime_api.h>

#include <string>

#include "gpukit/error.hpp"

namespace gpukit::detail {
[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw cuda_error(static_cast<int>(err), std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                                              cudaGetErrorString(err) + ") at " + file + ":" +
                                              std::to_string(line) + " in " + call);
}
}  // namespace gpukit::detail

#define GPUKIT_CUDA_CHECK(call)                                                   \
  do {                                                                            \
    const cudaError_t gpukit_check_err_ = (call);                                 \
    if (gpukit_check_err_ != cudaSuccess)                                         \
      ::gpukit::detail::throw_cuda_error(gpukit_check_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a <<<...>>> launch: catches bad configurations at once. Asynchronous faults surface at the next
// synchronizing call, which is itself checked.
#define GPUKIT_CHECK_LAUNCH() GPUKIT_CUDA_CHECK(cudaGetLastError())
