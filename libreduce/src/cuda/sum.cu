// Dispatch for reduce::sum on CUDA: grid sizing, workspace, launch and error checks.
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "reduce/cuda/check.hpp"
#include "reduce/reduce.hpp"
#include "single_pass_reduce.cuh"
#include "workspace_layout.hpp"

namespace reduce {
namespace {

constexpr int block_threads = 256;

int sm_count() {
  int device = 0, sms = 0;
  REDUCE_CUDA_CHECK(cudaGetDevice(&device));
  REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

template <class T, class Op>
void launch_single_pass(const T* d_in, std::int64_t n, T identity, Op op, T* d_out, void* scratch,
                        stream_t stream) {
  if (n < 0) throw std::invalid_argument("reduce: negative element count " + std::to_string(n));
  static_assert(sizeof(T) <= detail::max_partial_bytes);
  // Enough blocks to fill the chip (8 resident blocks of 256 per SM), fewer for small n.
  const std::int64_t wanted = (n + block_threads - 1) / block_threads;
  const int grid = static_cast<int>(std::max<std::int64_t>(
      1, std::min<std::int64_t>({wanted, std::int64_t{8} * sm_count(), detail::max_blocks})));
  auto* counter = static_cast<unsigned int*>(scratch);
  auto* partials = reinterpret_cast<T*>(static_cast<char*>(scratch) + detail::partials_offset);
  detail::single_pass_reduce_kernel<block_threads><<<grid, block_threads, 0, stream>>>(
      d_in, n, identity, op, partials, counter, d_out);
  REDUCE_CHECK_LAUNCH();
}

}  // namespace

std::size_t workspace::required_bytes() noexcept { return detail::workspace_bytes; }

workspace::workspace() : bytes_(detail::workspace_bytes) {
  REDUCE_CUDA_CHECK(cudaMalloc(&data_, bytes_));
  REDUCE_CUDA_CHECK(cudaMemset(data_, 0, bytes_));
}
workspace::~workspace() {
  if (data_) cudaFree(data_);
}
workspace::workspace(workspace&& o) noexcept : data_(o.data_), bytes_(o.bytes_) { o.data_ = nullptr; o.bytes_ = 0; }
workspace& workspace::operator=(workspace&& o) noexcept {
  if (this != &o) {
    if (data_) cudaFree(data_);
    data_ = o.data_;
    bytes_ = o.bytes_;
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

template <class T>
void sum(const T* d_in, std::int64_t n, T* d_out, workspace& ws, stream_t stream) {
  launch_single_pass(d_in, n, T(0), plus{}, d_out, ws.data(), stream);
}

template <class T>
void sum(const T* d_in, std::int64_t n, T* d_out, stream_t stream) {
  // Pool-backed scratch: cudaMallocAsync reuses the stream's freed blocks, so no cudaMalloc per call.
  void* scratch = nullptr;
  REDUCE_CUDA_CHECK(cudaMallocAsync(&scratch, detail::workspace_bytes, stream));
  REDUCE_CUDA_CHECK(cudaMemsetAsync(scratch, 0, sizeof(unsigned int), stream));
  launch_single_pass(d_in, n, T(0), plus{}, d_out, scratch, stream);
  REDUCE_CUDA_CHECK(cudaFreeAsync(scratch, stream));
}

template <class T>
T sum(const T* d_in, std::int64_t n, stream_t stream) {
  T* d_out = nullptr;
  REDUCE_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&d_out), sizeof(T), stream));
  sum(d_in, n, d_out, stream);
  T result{};
  REDUCE_CUDA_CHECK(cudaMemcpyAsync(&result, d_out, sizeof(T), cudaMemcpyDeviceToHost, stream));
  REDUCE_CUDA_CHECK(cudaFreeAsync(d_out, stream));
  REDUCE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return result;
}

#define REDUCE_INSTANTIATE_SUM(T)                                               \
  template void sum<T>(const T*, std::int64_t, T*, stream_t);                   \
  template void sum<T>(const T*, std::int64_t, T*, workspace&, stream_t);       \
  template T sum<T>(const T*, std::int64_t, stream_t);
REDUCE_INSTANTIATE_SUM(std::int32_t)
REDUCE_INSTANTIATE_SUM(std::int64_t)
REDUCE_INSTANTIATE_SUM(std::uint32_t)
REDUCE_INSTANTIATE_SUM(std::uint64_t)
REDUCE_INSTANTIATE_SUM(float)
REDUCE_INSTANTIATE_SUM(double)
#undef REDUCE_INSTANTIATE_SUM

}  // namespace reduce
