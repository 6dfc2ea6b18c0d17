// Kernel launches through the CUDA driver's cuLaunchKernel, for the launches whose host cost matters:
// the one-launch reductions, where launching IS most of the time of a small call. Measured on an
// H200 (bench/experiments/launch_floor.cu, events around one call, eight runs on several boards): an
// empty kernel costs 3.8-4.7 us through cuLaunchKernel against 4.0-5.6 us through <<<...>>>, and the
// one-block sum 0.2-0.5 us less.
#pragma once
#include <cuda_runtime_api.h>

#include <atomic>
#include <tuple>
#include <type_traits>
#include <utility>

namespace reduce::detail {

/// The driver's function handles of ONE kernel, one per device (index device & 63); zero-initialize
/// it as a static next to the launch site: `static function_handles handles = {};`.
using function_handles = std::atomic<void*>[64];

/// Launches the __global__ function `kernel` (its address) on `stream` with `args` (the address of
/// each argument, as for cudaLaunchKernel), no dynamic shared memory. Uses cuLaunchKernel, found
/// through cudaGetDriverEntryPointByVersion (no link to libcuda), with the kernel's handle cached in
/// `handles`; where the driver entry point is unavailable, cudaLaunchKernel. Throws reduce::cuda_error
/// when the launch fails (the code is then the driver's CUresult).
void launch_kernel(const void* kernel, function_handles& handles, dim3 grid, dim3 block, cudaStream_t stream,
                   void** args);

/// launch_kernel for `kernel` with `args` converted to its parameter types.
template <class... Params, class... Args>
void launch_with(void (*kernel)(Params...), function_handles& handles, dim3 grid, dim3 block, cudaStream_t stream,
                 Args&&... args) {
  static_assert(sizeof...(Params) > 0 && sizeof...(Params) == sizeof...(Args), "one argument per kernel parameter");
  std::tuple<std::decay_t<Params>...> values(std::forward<Args>(args)...);
  std::apply(
      [&](auto&... v) {
        void* ptrs[] = {const_cast<void*>(static_cast<const void*>(&v))...};
        launch_kernel(reinterpret_cast<const void*>(kernel), handles, grid, block, stream, ptrs);
      },
      values);
}

/// `launch<kernel>(grid, block, stream, args...)`: the driver launch of one kernel, its function handles
/// cached in a static of this instantiation (so one per kernel, not per signature).
template <auto Kernel, class... Args>
void launch(dim3 grid, dim3 block, cudaStream_t stream, Args&&... args) {
  static function_handles handles = {};
  launch_with(Kernel, handles, grid, block, stream, std::forward<Args>(args)...);
}

}  // namespace reduce::detail
