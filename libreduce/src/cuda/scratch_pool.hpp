// The stream-ordered memory pool behind the calls without a workspace (their scratch, the host-returning
// overloads' result slot). Host code.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace reduce::detail {

/// Bytes of freed scratch the pool keeps mapped across synchronizations. Every call needs well under 1 MiB
/// (workspace_bytes and a grid's slots), so 64 MiB keeps any mix of calls mapped; more is released to the
/// driver at the next synchronization.
constexpr std::size_t scratch_pool_keep_bytes = std::size_t{64} << 20;

/// cudaMallocFromPoolAsync of `bytes` on `stream` from libreduce's own pool for the stream's device,
/// created on first use (cudaMemPoolCreate, release threshold scratch_pool_keep_bytes) and kept for the
/// process. Why not cudaMallocAsync: the device's default pool has release threshold 0, so each stream
/// synchronization with no allocation outstanding unmapped the freed scratch and the next call mapped it
/// again (2 x H200: reduce::dot of 1024 floats into a device slot plus cudaStreamSynchronize, 179 us per
/// call; 11 us with a workspace; 40 us for the same dot followed by an NCCL all-reduce whose slot stayed
/// allocated across the sync). A pool of its own leaves the application's default pool and its threshold
/// alone. Freed with cudaFreeAsync.
void* scratch_malloc_async(std::size_t bytes, cudaStream_t stream);

}  // namespace reduce::detail
