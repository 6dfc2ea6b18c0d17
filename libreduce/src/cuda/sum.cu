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

std::int64_t single_pass_chain_length(std::int64_t n, std::size_t element_bytes) {
  const int vec = element_bytes <= 16 && 16 % element_bytes == 0 ? static_cast<int>(16 / element_bytes) : 4;
  const std::int64_t per_tile = std::int64_t{default_threads} * default_unroll * vec;
  const std::int64_t tiles = (n + per_tile - 1) / per_tile;
  // Every kernel gets at least one resident block per SM, so its grid is >= min(tiles, SMs): the chain
  // is longest for the smallest grid, plus at most max_grid / threads partials per thread at the end.
  const int grid = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(tiles, sm_count())));
  return chain_length(n, grid, default_threads, default_unroll, vec) + max_grid / default_threads;
}

template <class T>
void sum(const T* d_in, std::int64_t n, T* d_out, workspace& ws, launch_config config, stream_t stream) {
  check_count(n, "reduce::detail::sum");
  require_workspace(ws, workspace_bytes, "reduce::detail::sum");
  const auto r = make_sum<T>();
  switch (config.block) {
    case 0:
    case 256: launch_single_pass<256>(d_in, d_in, n, r, d_out, ws.data(), stream, config.grid); break;
    case 128: launch_single_pass<128>(d_in, d_in, n, r, d_out, ws.data(), stream, config.grid); break;
    case 512: launch_single_pass<512>(d_in, d_in, n, r, d_out, ws.data(), stream, config.grid); break;
    default: throw std::invalid_argument("reduce::detail::sum: block must be 128, 256 or 512");
  }
}

}  // namespace detail

// ---- workspace ----
std::size_t workspace::required_bytes() noexcept { return detail::workspace_bytes; }
std::size_t workspace::segmented_bytes(std::int64_t num_segments) noexcept {
  return detail::workspace_bytes + static_cast<std::size_t>(num_segments > 0 ? num_segments : 0) * sizeof(std::int64_t);
}
workspace::workspace() : workspace(detail::workspace_bytes) {}
workspace::workspace(std::size_t bytes) : bytes_(std::max(bytes, detail::workspace_bytes)) {
  REDUCE_CUDA_CHECK(cudaMalloc(&data_, bytes_));
  REDUCE_CUDA_CHECK(cudaMemset(data_, 0, bytes_));
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
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());  // the old block may still be in use by queued work
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
