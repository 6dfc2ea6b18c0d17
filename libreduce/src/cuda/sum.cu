// Dispatch of the sum-like reductions: sum, sum_of_squares, norm2, dot, compensated_sum,
// count_nonzero, count_nan; and the workspace.
#include <cmath>
#include <cstdint>

#include "entry_points.hpp"

namespace reduce {
namespace detail {
namespace {

template <class T>
op_reducer<T, plus> make_sum() { return {plus{}, T(0)}; }

struct square {
  template <class T>
  __device__ __forceinline__ T operator()(T x) const { return static_cast<T>(x * x); }
};
template <class T>
transform_reducer<T, T, T, square, plus> make_sum_of_squares() { return {square{}, plus{}, T(0)}; }

struct to_double_square {
  template <class T>
  __device__ __forceinline__ double operator()(T x) const { return static_cast<double>(x) * static_cast<double>(x); }
};
struct square_root {
  __device__ __forceinline__ double operator()(double s) const { return sqrt(s); }
};
// norm2: float accumulates in double (no overflow/underflow for any float), double in double.
template <class T>
transform_reducer<T, double, T, to_double_square, plus, square_root> make_norm2() {
  return {to_double_square{}, plus{}, 0.0, square_root{}};
}

template <class T>
neumaier_reducer<T> make_compensated() { return {}; }

struct nonzero {
  template <class T>
  __device__ __forceinline__ std::int64_t operator()(T x) const { return x != T(0) ? 1 : 0; }
};
template <class T>
transform_reducer<T, std::int64_t, std::int64_t, nonzero, plus> make_count_nonzero() {
  return {nonzero{}, plus{}, 0};
}
struct nan_test {
  template <class T>
  __device__ __forceinline__ std::int64_t operator()(T x) const { return x != x ? 1 : 0; }
};
template <class T>
transform_reducer<T, std::int64_t, std::int64_t, nan_test, plus> make_count_nan() {
  return {nan_test{}, plus{}, 0};
}

}  // namespace


template <class T>
void sum(const T* d_in, std::int64_t n, T* d_out, workspace& ws, launch_config config, stream_t stream) {
  check_count(n, "reduce::detail::sum");
  require_workspace(ws, workspace_bytes, "reduce::detail::sum");
  const auto r = make_sum<T>();
  using R = decltype(r);
  void* s = ws.data();
  const int g = config.grid;
  const int unroll = config.unroll == 0 ? default_unroll : config.unroll;
  if (config.block == 0 && config.grid == 0 && config.unroll == 0) {
    launch_default(d_in, d_in, n, r, d_out, s, stream);
    return;
  }
  if (unroll == 4) {
    switch (config.block) {
      case 0:
      case 256: launch_single_pass<256, R, 4>(d_in, d_in, n, r, d_out, s, stream, g); return;
      case 128: launch_single_pass<128, R, 4>(d_in, d_in, n, r, d_out, s, stream, g); return;
      case 512: launch_single_pass<512, R, 4>(d_in, d_in, n, r, d_out, s, stream, g); return;
      case 1024: launch_single_pass<1024, R, 4>(d_in, d_in, n, r, d_out, s, stream, g); return;
      default: break;
    }
  } else if (unroll == 8) {
    switch (config.block) {
      case 0:
      case 256: launch_single_pass<256, R, 8>(d_in, d_in, n, r, d_out, s, stream, g); return;
      case 512: launch_single_pass<512, R, 8>(d_in, d_in, n, r, d_out, s, stream, g); return;
      default: break;
    }
  }
  throw std::invalid_argument(
      "reduce::detail::sum: block must be 128, 256, 512 or 1024 with unroll 4, or 256 or 512 with unroll 8");
}

}  // namespace detail

std::int64_t single_pass_chain_length(std::int64_t n, std::size_t element_bytes) {
  using namespace detail;  // the launch-shape constants and chain_length
  const int vec = element_bytes <= 16 && 16 % element_bytes == 0 ? static_cast<int>(16 / element_bytes) : 4;
  // The usual shapes (launch_default): one block (default_threads x default_unroll vectors up to
  // small_block_bytes, single_block_threads x single_block_unroll up to single_block_bytes), else blocks
  // of medium_threads or default_threads, one per medium_block_bytes (at most one per SM) or one per
  // block_min_bytes (up to a wave): either grid is at least min(policy_grid's block count at
  // block_min_bytes, SMs), since every kernel has at least one resident block per SM. The chain is longest
  // for the smallest grid and the fewest threads (so both block sizes are bounded), plus at most
  // max_grid / threads partials per thread at the end.
  if (n * static_cast<std::int64_t>(element_bytes) <= small_block_bytes)
    return chain_length(n, 1, default_threads, default_unroll, vec);
  if (n * static_cast<std::int64_t>(element_bytes) <= single_block_bytes)
    return chain_length(n, 1, single_block_threads, single_block_unroll, vec);
  const int grid = std::min(policy_grid(n, element_bytes, max_grid), sm_count());
  const int fewest_threads = std::min(default_threads, medium_threads);
  // The larger unroll (large_unroll) bounds both: the chain differs only by the rounding of whole tiles.
  return chain_length(n, grid, fewest_threads, 8, vec) + max_grid / fewest_threads;
}

// ---- workspace ----
std::size_t workspace::required_bytes() noexcept { return detail::workspace_bytes; }
std::size_t workspace::segmented_bytes(std::int64_t num_segments) noexcept {
  return detail::workspace_bytes + static_cast<std::size_t>(num_segments > 0 ? num_segments : 0) * sizeof(std::int64_t);
}
workspace::workspace() : workspace(detail::workspace_bytes) {}
workspace::workspace(std::size_t bytes) : bytes_(std::max(bytes, detail::workspace_bytes)) {
  GPUKIT_CUDA_CHECK(cudaMalloc(&data_, bytes_));
  GPUKIT_CUDA_CHECK(cudaMemset(data_, 0, bytes_));
}
workspace::~workspace() {
  if (data_) (void)cudaFree(data_);
}
workspace::workspace(workspace&& o) noexcept : data_(o.data_), bytes_(o.bytes_) {
  o.data_ = nullptr;
  o.bytes_ = 0;
}
workspace& workspace::operator=(workspace&& o) noexcept {
  if (this != &o) {
    if (data_) (void)cudaFree(data_);
    data_ = o.data_;
    bytes_ = o.bytes_;
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}
void workspace::reserve(std::size_t bytes) {
  if (data_ && bytes <= bytes_) return;
  workspace bigger(bytes);
  GPUKIT_CUDA_CHECK(cudaDeviceSynchronize());  // the old block may still be in use by queued work
  *this = std::move(bigger);
}

// ---- entry points ----
REDUCE_DEFINE_UNARY(sum, T, detail::make_sum)
REDUCE_DEFINE_UNARY(sum_of_squares, T, detail::make_sum_of_squares)
REDUCE_DEFINE_UNARY(norm2, T, detail::make_norm2)
REDUCE_DEFINE_UNARY(compensated_sum, T, detail::make_compensated)
REDUCE_DEFINE_UNARY(count_nonzero, std::int64_t, detail::make_count_nonzero)
REDUCE_DEFINE_UNARY(count_nan, std::int64_t, detail::make_count_nan)

template <class T>
void dot(const T* d_x, const T* d_y, std::int64_t n, T* d_out, stream_t stream) {
  detail::run(d_x, d_y, n, detail::dot_reducer<T>{}, d_out, nullptr, stream, "reduce::dot");
}
template <class T>
void dot(const T* d_x, const T* d_y, std::int64_t n, T* d_out, workspace& ws, stream_t stream) {
  detail::run(d_x, d_y, n, detail::dot_reducer<T>{}, d_out, &ws, stream, "reduce::dot");
}
template <class T>
T dot(const T* d_x, const T* d_y, std::int64_t n, stream_t stream) {
  return detail::to_host<T>(stream, [&](T* d_out) { dot(d_x, d_y, n, d_out, stream); });
}

#define REDUCE_INSTANTIATE_ALL(T)                                                       \
  REDUCE_INSTANTIATE_UNARY(sum, T, T)                                                   \
  REDUCE_INSTANTIATE_UNARY(sum_of_squares, T, T)                                        \
  REDUCE_INSTANTIATE_UNARY(count_nonzero, std::int64_t, T)                              \
  template void dot<T>(const T*, const T*, std::int64_t, T*, stream_t);                 \
  template void dot<T>(const T*, const T*, std::int64_t, T*, workspace&, stream_t);     \
  template T dot<T>(const T*, const T*, std::int64_t, stream_t);                        \
  template void detail::sum<T>(const T*, std::int64_t, T*, workspace&, detail::launch_config, stream_t);
REDUCE_INSTANTIATE_ALL(std::int32_t)
REDUCE_INSTANTIATE_ALL(std::int64_t)
REDUCE_INSTANTIATE_ALL(std::uint32_t)
REDUCE_INSTANTIATE_ALL(std::uint64_t)
REDUCE_INSTANTIATE_ALL(float)
REDUCE_INSTANTIATE_ALL(double)
#define REDUCE_INSTANTIATE_FLOAT(T)                    \
  REDUCE_INSTANTIATE_UNARY(norm2, T, T)                \
  REDUCE_INSTANTIATE_UNARY(compensated_sum, T, T)      \
  REDUCE_INSTANTIATE_UNARY(count_nan, std::int64_t, T)
REDUCE_INSTANTIATE_FLOAT(float)
REDUCE_INSTANTIATE_FLOAT(double)

}  // namespace reduce
