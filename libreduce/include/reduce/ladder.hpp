// The teaching ladder: the classic sequence of CUDA sum reductions (a serial thread, atomics, Harris's
// seven kernels, shuffles, warp/block atomics, two-pass and single-pass), each kept as its own named,
// runnable and tested kernel so that `reduce ladder` can time one against the next. This is the one
// deliberate exception to "the shuffle loop exists once": every rung keeps its own code.
// For real work call reduce::sum (reduce.hpp); the ladder exists to be measured and read.
// No CUDA syntax: a plain C++ program can include this header.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "reduce/device.hpp"

namespace reduce {

/// The rungs, in ladder order (src/ladder/README.md tells the story; ladder_kernels.cuh has one
/// comment per rung saying what it fixes and why it is faster).
enum class ladder_kernel {
  serial,                  ///< one thread walks the whole array
  atomic_global,           ///< one atomicAdd per element on the single result
  atomic_shared,           ///< atomicAdd into a shared per-block total, one global atomic per block
  interleaved_divergent,   ///< Harris 1: interleaved addressing, tid % (2s) divergent branch
  interleaved_strided,     ///< Harris 2: strided index, no divergence, shared-memory bank conflicts
  sequential_addressing,   ///< Harris 3: sequential addressing, conflict free
  first_add_during_load,   ///< Harris 4: each thread adds two elements while loading
  unroll_last_warp,        ///< Harris 5: last 6 steps unrolled, warp-synchronous with __syncwarp()
  complete_unroll,         ///< Harris 6: block size a template parameter, tree fully unrolled
  multiple_per_thread,     ///< Harris 7: grid-stride loop, many elements per thread
  shuffle,                 ///< warp shuffles instead of shared memory inside each warp
  warp_atomics,            ///< shuffle per warp, one atomicAdd per warp, single launch
  block_atomics,           ///< shuffle per block, one atomicAdd per block, single launch
  two_pass_contiguous,     ///< two launches, each thread a contiguous chunk (uncoalesced)
  two_pass_interleaved,    ///< two launches, grid-stride (coalesced) per-thread loads
  single_pass_last_block,  ///< one launch; the last block to finish combines the partials
};

/// Stable short name, e.g. "sequential_addressing" (used on command lines and in JSON/CSV).
const char* to_string(ladder_kernel k);
/// One line: what the rung changes relative to the previous one.
const char* describe(ladder_kernel k);
/// Inverse of to_string; throws std::invalid_argument naming the bad value and listing the valid ones.
ladder_kernel parse_ladder_kernel(std::string_view name);
/// Every rung, in ladder order.
std::vector<ladder_kernel> all_ladder_kernels();
/// False for the rungs whose float result depends on the order in which atomics land (atomic_global,
/// atomic_shared, warp_atomics, block_atomics): run-to-run non-deterministic for float/double.
/// Integer results are exact for every rung.
bool is_deterministic(ladder_kernel k);

/// Device scratch for every rung, for inputs up to `max_n` elements of up to 8 bytes: per-block partials
/// for the multi-pass rungs (ping-pong buffers) and the completion counter of single_pass_last_block.
/// Allocated and zeroed once (cudaMalloc + cudaMemset, then a device synchronization so any stream may
/// use it at once); ladder_sum then allocates nothing. One stream at a time. Move-only.
class ladder_workspace {
public:
  explicit ladder_workspace(std::int64_t max_n);
  ~ladder_workspace();
  ladder_workspace(const ladder_workspace&) = delete;
  ladder_workspace& operator=(const ladder_workspace&) = delete;
  ladder_workspace(ladder_workspace&& o) noexcept;
  ladder_workspace& operator=(ladder_workspace&& o) noexcept;

  std::int64_t max_n() const noexcept { return max_n_; }
  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  /// Bytes a workspace for `max_n` elements allocates.
  static std::size_t required_bytes(std::int64_t max_n);

private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::int64_t max_n_ = 0;
};

/// Sum of d_in[0..n) with the chosen rung, written to *d_out (device); stream-ordered, no host
/// synchronization, no allocation. Every rung is correct for every n >= 0 (tails padded with the
/// identity) and on Volta and later (no warp-synchronous races). T: std::int32_t, std::int64_t, float,
/// double. Integers: exact, modulo 2^bits. Floats: |s - exact| <= gamma(k) * sum|x_i| with
/// k = ladder_error_depth(kernel, n); the atomic rungs are not deterministic (see is_deterministic).
/// Throws std::invalid_argument when n < 0 or n > ws.max_n(); gpukit::cuda_error on CUDA failures.
/// Example:
///   reduce::ladder_workspace ws(x.size());
///   reduce::ladder_sum(reduce::ladder_kernel::complete_unroll, x.data(), x.size(), d_out.data(), ws);
template <class T>
void ladder_sum(ladder_kernel kernel, const T* d_in, std::int64_t n, T* d_out, ladder_workspace& ws,
                stream_t stream = nullptr);

/// The most floating-point additions any input element goes through on the way to the result for this
/// rung and n on the current device (grid sizes depend on its SM count): the k of the error bound
/// gamma(k) * sum|x_i| (Higham, Accuracy and Stability, 4.2). The atomic rungs' atomic stages have no
/// fixed order and count as any-order sums of their terms (atomic_global: n - 1). Needs a CUDA device.
std::int64_t ladder_error_depth(ladder_kernel kernel, std::int64_t n);

namespace reference {
/// CPU twin of ladder_kernel::serial: the same loop (shared source), accumulating in T in index order,
/// so for floats it is bitwise identical to the GPU serial rung. Integers wrap modulo 2^bits.
template <class T>
T ladder_serial_sum(const T* in, std::int64_t n);
}  // namespace reference

}  // namespace reduce
