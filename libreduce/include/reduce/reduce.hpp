// libreduce public API: device-wide reductions (CUDA backend) and their CPU twins (reduce::reference).
// No CUDA syntax: a plain C++ program can include this header and link reduce::reduce.
//
// Conventions for every entry point:
//  * Element counts are 64-bit (std::int64_t); n = 0 gives the operator's identity.
//  * CUDA entry points take DEVICE pointers and a stream. The overload with `T* d_out` writes the result
//    to device memory and returns without synchronizing; the overload returning T copies the result
//    back and synchronizes `stream`.
//  * Supported T: std::int32_t, std::int64_t, std::uint32_t, std::uint64_t, float, double.
//  * Errors throw reduce::cuda_error (see error.hpp); n < 0 throws std::invalid_argument.
#pragma once
#include <cstddef>
#include <cstdint>

#include "reduce/device.hpp"
#include "reduce/error.hpp"

namespace reduce {

/// Device scratch memory for the CUDA reductions, reusable across calls on one stream at a time.
/// Constructing one allocates and zero-initialises it once (cudaMalloc + cudaMemset); calls that take a
/// workspace then do no allocation and no memset (the last block of a single-pass reduction leaves the
/// completion counter at zero again). Calls without one draw scratch from the stream-ordered pool
/// (cudaMallocAsync), which reuses freed blocks instead of calling cudaMalloc.
class workspace {
public:
  workspace();
  ~workspace();
  workspace(const workspace&) = delete;
  workspace& operator=(const workspace&) = delete;
  workspace(workspace&& o) noexcept;
  workspace& operator=(workspace&& o) noexcept;

  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  /// Bytes that every single reduction call needs; also the size each workspace allocates.
  static std::size_t required_bytes() noexcept;

private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Sum of d_in[0..n). Written to *d_out (device), stream-ordered, no host synchronization.
/// Determinism: run-to-run deterministic on one GPU model (fixed grid for a given n and SM count; the
/// partials are combined in a fixed order). Not bitwise identical across GPUs with different SM counts.
/// Error bound (float/double): |s - exact| <= gamma(k) * sum|x_i| with k = n / (grid threads) + log2(grid
/// threads) + 1 terms on the longest accumulation path, gamma(k) = k u / (1 - k u). Integers: exact
/// modulo 2^bits.
/// Example:
///   reduce::device_buffer<float> x(host_vector);
///   float s = reduce::sum(x.data(), x.size());
template <class T>
void sum(const T* d_in, std::int64_t n, T* d_out, stream_t stream = nullptr);
/// As above, using a caller-provided workspace (no allocation at all).
template <class T>
void sum(const T* d_in, std::int64_t n, T* d_out, workspace& ws, stream_t stream = nullptr);
/// As above, result copied back to the host; synchronizes `stream`.
template <class T>
T sum(const T* d_in, std::int64_t n, stream_t stream = nullptr);

namespace reference {
/// CPU backend of reduce::sum, on host memory (OpenMP when available). Floats accumulate in double and
/// are rounded once at the end; integers wrap modulo 2^bits. Deterministic for a fixed thread count.
template <class T>
T sum(const T* in, std::int64_t n);
}  // namespace reference

}  // namespace reduce
