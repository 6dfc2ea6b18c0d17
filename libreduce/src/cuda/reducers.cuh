// Reducers: what the single-pass kernels (single_pass.cuh) accumulate, one struct per kind of
// reduction (sum and user operators, tile-tree min/max, transforms, dot, argmin/argmax, Kahan-Neumaier).
// Device code; private to libreduce. The concept is described at the top of single_pass.cuh.
#pragma once
#include <cstdint>
#include <type_traits>

#include "reduce/operators.hpp"
#include "reduce/reduce.hpp"
#include "single_pass.cuh"

namespace reduce::detail {

/// acc = op(acc, x): sum, min, max and user operators.
template <class T, class Op>
struct op_reducer {
  using value_type = T;
  using acc_type = T;
  using out_type = T;
  static constexpr bool two_inputs = false;
  Op op;
  T id;
  __device__ __forceinline__ T identity() const { return id; }
  __device__ __forceinline__ void add(T& acc, T x, T, std::int64_t) const { acc = op(acc, x); }
  __device__ __forceinline__ T combine(T a, T b) const { return op(a, b); }
  __device__ __forceinline__ T finish(T a) const { return a; }
};

/// op_reducer for exact, order-free operators (min, max): a thread's share of each full tile is
/// combined as a tree (depth log2(N) instead of a chain of N dependent compare-selects), then once
/// with the accumulator. Not for sums: their rounding chain (and bound) assumes op_reducer's order.
template <class T, class Op>
struct exact_op_reducer : op_reducer<T, Op> {
  template <int N>
  __device__ __forceinline__ void add_tile(T& acc, const T (&v)[N], std::int64_t, std::int64_t) const {
    T t[N];
#pragma unroll
    for (int j = 0; j < N; ++j) t[j] = v[j];
#pragma unroll
    for (int s = 1; s < N; s *= 2)
#pragma unroll
      for (int j = 0; j + s < N; j += 2 * s) t[j] = this->op(t[j], t[j + s]);
    acc = this->op(acc, t[0]);
  }
};

struct no_finish {
  template <class A>
  __host__ __device__ __forceinline__ A operator()(A a) const { return a; }
};

/// acc = op(acc, transform(x)), result finish(acc) converted to Out: sum_of_squares, norm2, counts.
template <class T, class Acc, class Out, class Transform, class Op, class Finish = no_finish>
struct transform_reducer {
  using value_type = T;
  using acc_type = Acc;
  using out_type = Out;
  static constexpr bool two_inputs = false;
  Transform transform;
  Op op;
  Acc id;
  Finish fin{};
  __device__ __forceinline__ Acc identity() const { return id; }
  __device__ __forceinline__ void add(Acc& acc, T x, T, std::int64_t) const {
    acc = op(acc, static_cast<Acc>(transform(x)));
  }
  __device__ __forceinline__ Acc combine(Acc a, Acc b) const { return op(a, b); }
  __device__ __forceinline__ Out finish(Acc a) const { return static_cast<Out>(fin(a)); }
};

/// sum x_i y_i; floats with one fused multiply-add per element.
template <class T>
struct dot_reducer {
  using value_type = T;
  using acc_type = T;
  using out_type = T;
  static constexpr bool two_inputs = true;
  __device__ __forceinline__ T identity() const { return T(0); }
  __device__ __forceinline__ void add(T& acc, T x, T y, std::int64_t) const {
    if constexpr (std::is_floating_point_v<T>) acc = fma(x, y, acc);
    else acc = static_cast<T>(acc + x * y);
  }
  __device__ __forceinline__ T combine(T a, T b) const { return static_cast<T>(a + b); }
  __device__ __forceinline__ T finish(T a) const { return a; }
};

/// {value, first index} of the minimum (IsMax = false) or maximum; the first NaN wins over numbers.
/// The index breaks every tie, so combine is associative and commutative: exact in any order.
template <class T, bool IsMax>
struct arg_reducer {
  using value_type = T;
  using acc_type = value_index<T>;
  using out_type = value_index<T>;
  static constexpr bool two_inputs = false;
  static constexpr std::int64_t none = INT64_MAX;  // identity's index; finish maps it to -1
  __device__ __forceinline__ acc_type identity() const {
    return {IsMax ? maximum::identity<T>() : minimum::identity<T>(), none};
  }
  // True when a (value, index) comes before b in the order "NaN first, then best value, then index".
  __device__ __forceinline__ static bool better(T av, std::int64_t ai, T bv, std::int64_t bi) {
    const bool an = detail::is_nan(av), bn = detail::is_nan(bv);
    if (an || bn) return an && (!bn || ai < bi);
    if (av == bv) return ai < bi;
    return IsMax ? bv < av : av < bv;
  }
  __device__ __forceinline__ void add(acc_type& acc, T x, T, std::int64_t i) const {
    if (better(x, i, acc.value, acc.index)) acc = {x, i};
  }
  // b, which comes after a in the input, replaces a: strictly better, or the first NaN after numbers.
  __device__ __forceinline__ static bool later_wins(T b, T a) {
    if constexpr (std::is_floating_point_v<T>) return (IsMax ? a < b : b < a) || (b != b && a == a);
    else return IsMax ? a < b : b < a;
  }
  /// A thread's share of one full tile (traverse): v[j] is element i0 + (j / V) * stride + j % V, so
  /// positions increase with j. A tree whose left operand always holds the lower positions (later_wins
  /// on plain values and 32-bit positions: depth log2(N) instead of a chain of N 64-bit compares),
  /// then one full compare with the accumulator: the same first-NaN / first-index result as add().
  template <int N>
  __device__ __forceinline__ void add_tile(acc_type& acc, const T (&v)[N], std::int64_t i0, std::int64_t stride) const {
    constexpr int V = vec_elems<T> > 0 ? vec_elems<T> : 1;
    T bv[N];
    int bp[N];
#pragma unroll
    for (int j = 0; j < N; ++j) {
      bv[j] = v[j];
      bp[j] = j;
    }
#pragma unroll
    for (int s = 1; s < N; s *= 2)
#pragma unroll
      for (int j = 0; j + s < N; j += 2 * s) {
        const bool take = later_wins(bv[j + s], bv[j]);
        bv[j] = take ? bv[j + s] : bv[j];
        bp[j] = take ? bp[j + s] : bp[j];
      }
    const std::int64_t i = i0 + static_cast<std::int64_t>(bp[0] / V) * stride + bp[0] % V;
    if (better(bv[0], i, acc.value, acc.index)) acc = {bv[0], i};
  }
  __device__ __forceinline__ acc_type combine(acc_type a, acc_type b) const {
    return better(b.value, b.index, a.value, a.index) ? b : a;
  }
  __device__ __forceinline__ out_type finish(acc_type a) const {
    if (a.index == none) a.index = -1;
    return a;
  }
};

/// Kahan-Babuska-Neumaier: {s, c} with s + c the running sum; every addition's rounding error is
/// captured exactly (Fast2Sum with the larger operand first) and accumulated in c.
template <class T>
struct kahan_pair {
  T s;
  T c;
};
template <class T>
struct neumaier_reducer {
  using value_type = T;
  using acc_type = kahan_pair<T>;
  using out_type = T;
  static constexpr bool two_inputs = false;
  __device__ __forceinline__ static void two_sum_into(T& s, T& c, T x) {
    const T t = s + x;
    // |s| >= |x|: (s - t) + x is the exact error of t; otherwise (x - t) + s. Inf/NaN: c becomes NaN
    // (inf - inf); finish() then returns s itself so that IEEE's inf and NaN come out unchanged.
    c += fabs(s) >= fabs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  __device__ __forceinline__ acc_type identity() const { return {T(0), T(0)}; }
  __device__ __forceinline__ void add(acc_type& a, T x, T, std::int64_t) const { two_sum_into(a.s, a.c, x); }
  __device__ __forceinline__ acc_type combine(acc_type a, acc_type b) const {
    two_sum_into(a.s, a.c, b.s);
    a.c += b.c;
    return a;
  }
  __device__ __forceinline__ T finish(acc_type a) const {
    const T r = a.s + a.c;
    return isfinite(a.s) ? r : a.s;
  }
};

}  // namespace reduce::detail
