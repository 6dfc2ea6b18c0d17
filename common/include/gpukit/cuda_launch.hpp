// Part of the common layer (gpukit::common): launch helpers every library's dispatch code shares.
// Kernel launches through the CUDA driver's cuLaunchKernel, for the launches whose host cost matters:
// the one-launch reductions, where launching IS most of the time of a small call. Measured on an
// H200 (bench/experiments/launch_floor.cu, events around one call, eight runs on several boards): an
// empty kernel costs 3.8-4.7 us through cuLaunchKernel against 4.0-5.6 us through <<<...>>>, and the
// one-block sum 0.2-0.5 us less.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpukit/cuda_check.hpp"

namespace gpukit {

/// The driver's function handles of ONE kernel, one per device (index device & 63); zero-initialize
/// it as a static next to the launch site: `static function_handles handles = {};`.
using function_handles = std::atomic<void*>[64];

/// Launches the __global__ function `kernel` (its address) on `stream` with `args` (the address of
/// each argument, as for cudaLaunchKernel), no dynamic shared memory. Uses cuLaunchKernel, found
/// through cudaGetDriverEntryPointByVersion (no link to libcuda), with the kernel's handle cached in
/// `handles`; where the driver entry point is unavailable, cudaLaunchKernel. Throws gpukit::cuda_error
/// when the launch fails (the code is then the driver's CUresult).
void launch_kernel(const void* kernel, function_handles& handles, dim3 grid, dim3 block, cudaStream_t stream,
                   void** args);

namespace detail {
/// `args` converted to the parameter types of `kernel`, then go(args) with `args` the array of their
/// addresses, as the launch APIs take them.
template <class... Params, class Go, class... Args>
void with_kernel_args(void (*)(Params...), Go&& go, Args&&... args) {
  static_assert(sizeof...(Params) > 0 && sizeof...(Params) == sizeof...(Args), "one argument per kernel parameter");
  std::tuple<std::decay_t<Params>...> values(std::forward<Args>(args)...);
  std::apply(
      [&](auto&... v) {
        void* ptrs[] = {const_cast<void*>(static_cast<const void*>(&v))...};
        go(ptrs);
      },
      values);
}
}  // namespace detail

/// launch_kernel for `kernel` with `args` converted to its parameter types.
template <class... Params, class... Args>
void launch_with(void (*kernel)(Params...), function_handles& handles, dim3 grid, dim3 block, cudaStream_t stream,
                 Args&&... args) {
  detail::with_kernel_args(
      kernel,
      [&](void** ptrs) { launch_kernel(reinterpret_cast<const void*>(kernel), handles, grid, block, stream, ptrs); },
      std::forward<Args>(args)...);
}

/// `launch<kernel>(grid, block, stream, args...)`: the driver launch of one kernel, its function handles
/// cached in a static of this instantiation (so one per kernel, not per signature).
template <auto Kernel, class... Args>
void launch(dim3 grid, dim3 block, cudaStream_t stream, Args&&... args) {
  static function_handles handles = {};
  launch_with(Kernel, handles, grid, block, stream, std::forward<Args>(args)...);
}

/// Whether launch_dependent sets programmatic stream serialization on the current device: compute
/// capability 9.0 or newer, and the environment does not say GPUKIT_PDL=0 (which benchmarks use to measure
/// what it saves; read once per process).
bool dependent_launch_enabled();

/// Launches `kernel` as launch_kernel does, through the driver's cuLaunchKernelEx (cudaLaunchKernelExC where
/// the entry point is unavailable) with programmatic stream serialization (programmatic dependent launch,
/// PDL) where dependent_launch_enabled(): the kernel may start while the previous kernel on the stream is
/// finishing, so its launch and block scheduling hide behind that kernel's tail. The kernel MUST call
/// gpukit::wait_for_prior_grids() (gpukit/grid_dependency.cuh) before it touches memory that earlier work
/// on the stream writes. Measured on an H100 (two dependent float4 passes over 160^3 entries, 400 times):
/// 19.55 -> 18.13 us per kernel. Elsewhere, and with GPUKIT_PDL=0, a plain launch.
void launch_kernel_dependent(const void* kernel, function_handles& handles, dim3 grid, dim3 block,
                             cudaStream_t stream, void** args);

/// launch_kernel_dependent for `kernel` with `args` converted to its parameter types.
template <class... Params, class... Args>
void launch_dependent_with(void (*kernel)(Params...), function_handles& handles, dim3 grid, dim3 block,
                           cudaStream_t stream, Args&&... args) {
  detail::with_kernel_args(
      kernel,
      [&](void** ptrs) {
        launch_kernel_dependent(reinterpret_cast<const void*>(kernel), handles, grid, block, stream, ptrs);
      },
      std::forward<Args>(args)...);
}

/// `launch_dependent<kernel>(grid, block, stream, args...)`: launch_kernel_dependent with `args` converted
/// to the kernel's parameter types, the kernel's driver handles cached in a static of this instantiation.
template <auto Kernel, class... Args>
void launch_dependent(dim3 grid, dim3 block, cudaStream_t stream, Args&&... args) {
  static function_handles handles = {};
  launch_dependent_with(Kernel, handles, grid, block, stream, std::forward<Args>(args)...);
}

/// The current CUDA device (checked cudaGetDevice).
inline int current_device() {
  int device = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

/// An attribute of the current device, read once per device into `cache` (one array per attribute).
inline int cached_device_attribute(std::atomic<int> (&cache)[64], cudaDeviceAttr attribute) {
  const int device = current_device();
  std::atomic<int>& slot = cache[device & 63];
  int value = slot.load(std::memory_order_relaxed);
  if (value == 0) {
    GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
    slot.store(value, std::memory_order_relaxed);
  }
  return value;
}

/// Streaming multiprocessors of the current device (queried once per device).
inline int sm_count() {
  static std::atomic<int> cached[64] = {};
  return cached_device_attribute(cached, cudaDevAttrMultiProcessorCount);
}

/// L2 cache bytes of the current device (queried once per device).
inline std::int64_t l2_cache_bytes() {
  static std::atomic<int> cached[64] = {};
  return cached_device_attribute(cached, cudaDevAttrL2CacheSize);
}

/// The most shared memory one block of the current device may opt in to, bytes (queried once per device).
inline std::int64_t shared_bytes_per_block_optin() {
  static std::atomic<int> cached[64] = {};
  return cached_device_attribute(cached, cudaDevAttrMaxSharedMemoryPerBlockOptin);
}

/// Resident blocks per SM of `kernel` at `threads` threads, queried once per (kernel, threads, device)
/// (the kernel's address is the key: kernels of one signature share a pointer type).
template <class Kernel>
int resident_blocks(Kernel kernel, int threads) {
  struct entry {
    const void* kernel;
    int threads;
    int device;
    int blocks;
  };
  static std::mutex m;
  static std::vector<entry> cache;
  const int device = current_device();
  const void* key = reinterpret_cast<const void*>(kernel);
  {
    std::lock_guard<std::mutex> lock(m);
    for (const auto& e : cache)
      if (e.kernel == key && e.threads == threads && e.device == device) return e.blocks;
  }
  int blocks = 0;
  GPUKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0));
  blocks = std::max(blocks, 1);
  std::lock_guard<std::mutex> lock(m);
  cache.push_back({key, threads, device, blocks});
  return blocks;
}

/// One full wave of `kernel` at `threads` threads on the current device. `cache` must be a static
/// array owned by ONE kernel instantiation (kernels of one signature share a function-pointer type,
/// so the cache cannot be keyed by the type): no lock on the call path of a small reduction, which is
/// dominated by host overhead.
template <class Kernel>
std::int64_t cached_wave(std::atomic<int> (&cache)[64], Kernel kernel, int threads) {
  const int slot = current_device() & 63;
  int w = cache[slot].load(std::memory_order_relaxed);
  if (w == 0) {
    w = sm_count() * resident_blocks(kernel, threads);
    cache[slot].store(w, std::memory_order_relaxed);
  }
  return w;
}

}  // namespace gpukit
