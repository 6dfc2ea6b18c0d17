// CUB, the peer `reduce ladder` and `reduce bench` time against. All CUB code lives in cub_peers.cu (one
// translation unit: CUB is slow to compile). Each factory sizes and allocates CUB's temporary storage
// once, up front; the returned call then only enqueues the CUB algorithm (no allocation), so timing it
// is fair to both sides.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "reduce/device.hpp"

namespace reduce_app::cub_peers {

/// One CUB algorithm for a fixed size and output, with its temporary storage. CUB's temporary size
/// depends on the size and types only, so the same call may run on other inputs of that size (the
/// benchmark rotates input buffers that way).
class call {
public:
  using runner = std::function<void(const void* in0, const void* in1, reduce::stream_t)>;
  call() = default;
  call(runner run, const void* in0, const void* in1, std::shared_ptr<void> storage, std::size_t temp_bytes)
      : run_(std::move(run)), in0_(in0), in1_(in1), storage_(std::move(storage)), temp_bytes_(temp_bytes) {}
  /// Enqueues the CUB call on the inputs given at creation; throws gpukit::cuda_error on CUB errors.
  void operator()(reduce::stream_t stream) const { run_(in0_, in1_, stream); }
  /// As above on other inputs of the same size (in1: the second vector of dot, else ignored).
  void operator()(const void* in0, const void* in1, reduce::stream_t stream) const { run_(in0, in1, stream); }
  std::size_t temp_bytes() const { return temp_bytes_; }

private:
  runner run_;
  const void* in0_ = nullptr;
  const void* in1_ = nullptr;
  std::shared_ptr<void> storage_;  // CUB's temporary storage, alive as long as the call
  std::size_t temp_bytes_ = 0;
};

/// "CUB 3.0.1" (from CUB_VERSION).
const char* version();
/// cub::DeviceReduce::Sum.
call sum(const float* d_in, std::int64_t n, float* d_out);
call sum(const std::int32_t* d_in, std::int64_t n, std::int32_t* d_out);
/// cub::DeviceReduce::Min.
call min(const float* d_in, std::int64_t n, float* d_out);
/// cub::DeviceReduce::ArgMax (value and the first index of the maximum).
call argmax(const float* d_in, std::int64_t n, float* d_value, std::int64_t* d_index);
/// sum x_i y_i by cub::DeviceReduce::TransformReduce over a counting iterator (product transform).
call dot(const float* d_x, const float* d_y, std::int64_t n, float* d_out);
/// cub::DeviceSegmentedReduce::Sum with begin = d_offsets, end = d_offsets + 1 (int64 offsets).
call segmented_sum(const float* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, float* d_out);

}  // namespace reduce_app::cub_peers
