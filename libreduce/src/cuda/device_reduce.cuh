// Generic device-wide reductions with user operators (like CUB's DeviceReduce):
//   reduce::device::reduce(d_in, n, op, identity, d_out, ws_or_stream)
//   reduce::device::transform_reduce(d_in, n, transform, op, identity, d_out, ws_or_stream)
//   reduce::device::count_if(d_in, n, pred, d_count, ws_or_stream)
//   reduce::device::segmented_reduce(d_in, d_offsets, num_segments, op, identity, d_out, ws_or_stream)
// PRIVATE to libreduce, not installed: a template over a user operator instantiates and launches its
// kernels in the caller's translation unit, so it cannot live in a public header that holds no
// kernels and no launches. The public API is the precompiled entry points of reduce/reduce.hpp
// (sum, min, max, argmin, argmax, sum_of_squares, norm2, dot, reproducible_sum, compensated_sum,
// count_nonzero, count_nan, segmented_sum/min/max), instantiated in libreduce/src/cuda/*.cu for the
// types listed there; these templates are the same dispatch for white-box tests (tests/reduce) and
// benchmarks (target reduce::internal).
// Every call is one single-pass launch (segmented: two launches, the second programmatic), stream-ordered, with
// 64-bit counts, and writes its result to device memory without synchronizing. `ws_or_stream` is
// either (reduce::workspace& ws, stream_t stream = nullptr) -- no allocation -- or
// (stream_t stream = nullptr) -- scratch from libreduce's stream-ordered pool (src/cuda/scratch_pool.hpp).
// Requirements: `op` associative and commutative (__host__ __device__ callable), `identity` its
// neutral element; the accumulator type (decltype(identity)) trivially copyable, at most 32 bytes, a
// multiple of 4 bytes. Determinism: run-to-run deterministic on one GPU model (fixed grid for
// (n, sizeof(T), SM count), partials combined in block order); exact for exact operators.
#pragma once
#include <cstdint>

#include "dispatch.cuh"
#include "reduce/operators.hpp"
#include "reduce/reduce.hpp"
#include "reducers.cuh"

namespace reduce::device {

/// op-reduction of d_in[0..n) into *d_out (identity for n = 0). See the header comment.
/// Example:
///   reduce::device::reduce(d_x, n, reduce::maximum{}, -INFINITY, d_max, ws, stream);
template <class T, class Op>
void reduce(const T* d_in, std::int64_t n, Op op, T identity, T* d_out, workspace& ws, stream_t stream = nullptr) {
  detail::run(d_in, d_in, n, detail::op_reducer<T, Op>{op, identity}, d_out, &ws, stream, "reduce::device::reduce");
}
template <class T, class Op>
void reduce(const T* d_in, std::int64_t n, Op op, T identity, T* d_out, stream_t stream = nullptr) {
  detail::run(d_in, d_in, n, detail::op_reducer<T, Op>{op, identity}, d_out, nullptr, stream,
              "reduce::device::reduce");
}

/// op-reduction of transform(d_in[i]) into *d_out, accumulated in Acc = decltype(identity).
/// Example:
///   reduce::device::transform_reduce(d_x, n, square{}, reduce::plus{}, 0.0, d_ss, stream);
template <class T, class Transform, class Op, class Acc>
void transform_reduce(const T* d_in, std::int64_t n, Transform transform, Op op, Acc identity, Acc* d_out,
                      workspace& ws, stream_t stream = nullptr) {
  detail::run(d_in, d_in, n, detail::transform_reducer<T, Acc, Acc, Transform, Op>{transform, op, identity},
              d_out, &ws, stream, "reduce::device::transform_reduce");
}
template <class T, class Transform, class Op, class Acc>
void transform_reduce(const T* d_in, std::int64_t n, Transform transform, Op op, Acc identity, Acc* d_out,
                      stream_t stream = nullptr) {
  detail::run(d_in, d_in, n, detail::transform_reducer<T, Acc, Acc, Transform, Op>{transform, op, identity},
              d_out, nullptr, stream, "reduce::device::transform_reduce");
}

namespace detail_count {
template <class Pred>
struct as_count {
  Pred pred;
  template <class T>
  __device__ __forceinline__ std::int64_t operator()(T x) const { return pred(x) ? 1 : 0; }
};
}  // namespace detail_count

/// Number of i with pred(d_in[i]) true, into *d_count. Exact, deterministic.
/// Example:
///   reduce::device::count_if(d_x, n, is_negative{}, d_count, stream);
template <class T, class Pred>
void count_if(const T* d_in, std::int64_t n, Pred pred, std::int64_t* d_count, workspace& ws,
              stream_t stream = nullptr) {
  transform_reduce(d_in, n, detail_count::as_count<Pred>{pred}, plus{}, std::int64_t{0}, d_count, ws, stream);
}
template <class T, class Pred>
void count_if(const T* d_in, std::int64_t n, Pred pred, std::int64_t* d_count, stream_t stream = nullptr) {
  transform_reduce(d_in, n, detail_count::as_count<Pred>{pred}, plus{}, std::int64_t{0}, d_count, stream);
}

/// d_out[s] = op-reduction of d_in[d_offsets[s] .. d_offsets[s+1]) (identity when empty): a block per
/// segment up to block_per_segment_max segments, else segments binned by length (thread / warp / block
/// per segment). The workspace needs workspace::segmented_bytes(num_segments). Deterministic; the order
/// within a segment depends only on its length and on which of the two paths runs.
/// Example:
///   reduce::device::segmented_reduce(d_vals, d_row_ptr, rows, reduce::plus{}, 0.0f, d_sums, stream);
template <class T, class Op>
void segmented_reduce(const T* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, Op op, T identity,
                      T* d_out, workspace& ws, stream_t stream = nullptr) {
  detail::run_segmented(d_in, d_offsets, num_segments, op, identity, d_out, &ws, stream,
                        "reduce::device::segmented_reduce");
}
template <class T, class Op>
void segmented_reduce(const T* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, Op op, T identity,
                      T* d_out, stream_t stream = nullptr) {
  detail::run_segmented(d_in, d_offsets, num_segments, op, identity, d_out, nullptr, stream,
                        "reduce::device::segmented_reduce");
}

}  // namespace reduce::device
