// Part of the common layer (gpukit::common): the device side of programmatic dependent launch (PDL), for
// kernels launched with gpukit::launch_dependent (gpukit/cuda_launch.hpp). Device code only.
//
// A kernel so launched may be running while the kernel before it on the stream finishes, so it calls
// wait_for_prior_grids() before its first access to memory that earlier work writes (reads of data that
// only a synchronized setup wrote, such as a plan's tables, may come before), and allow_dependent_grids()
// once it no longer needs to hold back the kernel after it (these kernels call it right after the wait:
// the next kernel's blocks then take the SM slots this one's blocks free, and wait in turn). Both are
// no-ops when the kernel was launched without PDL and on GPUs older than compute capability 9.0.
#pragma once

namespace gpukit {

/// Waits until every grid this one depends on has completed and its memory operations are visible
/// (griddepcontrol.wait).
__device__ __forceinline__ void wait_for_prior_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Lets the next kernel on the stream, if launched with PDL, start its launch (griddepcontrol.launch_dependents).
__device__ __forceinline__ void allow_dependent_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace gpukit
