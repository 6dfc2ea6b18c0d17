// REDUCE_CUDA_CHECK / REDUCE_CHECK_LAUNCH: every CUDA call and every launch in the toolkit goes through
// these. Failures throw reduce::cuda_error with the CUDA error name and text, file, line and the call.
// For the toolkit's .cu/.cpp implementation files (includes the CUDA runtime header).
#pragma once
#include <cuda_runtime_api.h>

#include <string>

#include "reduce/error.hpp"

namespace reduce::detail {
[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw cuda_error(static_cast<int>(err), std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                                              cudaGetErrorString(err) + ") at " + file + ":" +
                                              std::to_string(line) + " in " + call);
}
}  // namespace reduce::detail

#define REDUCE_CUDA_CHECK(call)                                                   \
  do {                                                                            \
    const cudaError_t reduce_check_err_ = (call);                                 \
    if (reduce_check_err_ != cudaSuccess)                                         \
      ::reduce::detail::throw_cuda_error(reduce_check_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a <<<...>>> launch: catches bad configurations at once. Asynchronous faults surface at the next
// synchronizing call, which is itself checked.
#define REDUCE_CHECK_LAUNCH() REDUCE_CUDA_CHECK(cudaGetLastError())
