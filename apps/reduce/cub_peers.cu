// The only translation unit of the apps that includes CUB (see cub_peers.hpp).
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <string>

#include "cub_peers.hpp"
#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"

namespace reduce_app::cub_peers {
namespace {

// `f(temp, bytes, in0, in1, stream)` is a CUB call: with temp == nullptr it only sizes the temporary
// storage.
template <class F>
call make(F f, const void* in0, const void* in1 = nullptr) {
  std::size_t bytes = 0;
  GPUKIT_CUDA_CHECK(f(nullptr, bytes, in0, in1, cudaStream_t{}));
  // At least one byte: a null temp pointer would make CUB size again instead of running.
  auto storage = std::make_shared<gpukit::device_buffer<unsigned char>>(
      static_cast<std::int64_t>(std::max<std::size_t>(bytes, 1)));
  unsigned char* temp = storage->data();
  auto run = [f, temp, bytes](const void* a, const void* b, reduce::stream_t stream) {
    std::size_t size = bytes;
    GPUKIT_CUDA_CHECK(f(temp, size, a, b, stream));
  };
  return call(run, in0, in1, storage, bytes);
}

struct product {
  const float* x;
  const float* y;
  __device__ float operator()(std::int64_t i) const { return x[i] * y[i]; }
};

}  // namespace

const char* version() {
  static const std::string v = "CUB " + std::to_string(CUB_VERSION / 100000) + "." +
                               std::to_string(CUB_VERSION / 100 % 1000) + "." + std::to_string(CUB_VERSION % 100);
  return v.c_str();
}

template <class T>
const T* as(const void* p) {
  return static_cast<const T*>(p);
}

call sum(const float* d_in, std::int64_t n, float* d_out) {
  return make([=](void* t, std::size_t& b, const void* in, const void*, cudaStream_t s) {
    return cub::DeviceReduce::Sum(t, b, as<float>(in), d_out, n, s);
  }, d_in);
}
call sum(const std::int32_t* d_in, std::int64_t n, std::int32_t* d_out) {
  return make([=](void* t, std::size_t& b, const void* in, const void*, cudaStream_t s) {
    return cub::DeviceReduce::Sum(t, b, as<std::int32_t>(in), d_out, n, s);
  }, d_in);
}
call min(const float* d_in, std::int64_t n, float* d_out) {
  return make([=](void* t, std::size_t& b, const void* in, const void*, cudaStream_t s) {
    return cub::DeviceReduce::Min(t, b, as<float>(in), d_out, n, s);
  }, d_in);
}
call argmax(const float* d_in, std::int64_t n, float* d_value, std::int64_t* d_index) {
  return make([=](void* t, std::size_t& b, const void* in, const void*, cudaStream_t s) {
    return cub::DeviceReduce::ArgMax(t, b, as<float>(in), d_value, d_index, n, s);
  }, d_in);
}
call dot(const float* d_x, const float* d_y, std::int64_t n, float* d_out) {
  return make([=](void* t, std::size_t& b, const void* x, const void* y, cudaStream_t s) {
    return cub::DeviceReduce::TransformReduce(t, b, thrust::counting_iterator<std::int64_t>(0), d_out, n,
                                              cuda::std::plus<float>{}, product{as<float>(x), as<float>(y)}, 0.0f, s);
  }, d_x, d_y);
}
call segmented_sum(const float* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, float* d_out) {
  return make([=](void* t, std::size_t& b, const void* in, const void*, cudaStream_t s) {
    return cub::DeviceSegmentedReduce::Sum(t, b, as<float>(in), d_out, num_segments, d_offsets, d_offsets + 1, s);
  }, d_in);
}

}  // namespace reduce_app::cub_peers
