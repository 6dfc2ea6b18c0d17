// CPU backend of every libreduce operation: plain loops, OpenMP across threads (each thread reduces one
// contiguous chunk, chunks are combined in order: deterministic for a fixed thread count; sum and the
// counts use OpenMP's own reduction), wide accumulators (double for floats, unsigned wrap-around for
// integers).
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "reduce/detail/exact_sum.hpp"
#include "reduce/operators.hpp"
#include "reduce/reduce.hpp"

namespace reduce::reference {
namespace {

void check_count(std::int64_t n, const char* what) {
  if (n < 0) throw std::invalid_argument(std::string("reduce::reference::") + what + ": negative element count " +
                                         std::to_string(n));
}

/// Partials of f(begin, end) over one contiguous chunk per thread, in chunk order.
template <class A, class F>
std::vector<A> chunk_partials(std::int64_t n, F f) {
  int threads = 1;
#if defined(_OPENMP)
  if (n >= 1 << 16) threads = omp_get_max_threads();
#endif
  std::vector<A> partials(static_cast<std::size_t>(threads));
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int t = 0; t < threads; ++t) {
    const std::int64_t begin = n / threads * t + std::min<std::int64_t>(t, n % threads);
    const std::int64_t end = begin + n / threads + (t < n % threads ? 1 : 0);
    partials[static_cast<std::size_t>(t)] = f(begin, end);
  }
  return partials;
}

/// Accumulator type: double for floats, the unsigned type for integers (wraps modulo 2^bits).
template <class T>
using acc_t = std::conditional_t<std::is_floating_point_v<T>, double,
                                 std::make_unsigned_t<std::conditional_t<std::is_floating_point_v<T>, int, T>>>;

template <class T, class Transform>
T sum_transformed(const T* in, std::int64_t n, Transform tr) {
  using A = acc_t<T>;
  A total = 0;
  for (A p : chunk_partials<A>(n, [&](std::int64_t b, std::int64_t e) {
         A s = 0;
         for (std::int64_t i = b; i < e; ++i) s = static_cast<A>(s + tr(static_cast<A>(in[i])));
         return s;
       }))
    total = static_cast<A>(total + p);
  return static_cast<T>(total);
}

template <class T, class Op>
T fold(const T* in, std::int64_t n, Op op, T identity) {
  T total = identity;
  for (T p : chunk_partials<T>(n, [&](std::int64_t b, std::int64_t e) {
         T s = identity;
         for (std::int64_t i = b; i < e; ++i) s = op(s, in[i]);
         return s;
       }))
    total = op(total, p);
  return total;
}

/// (av, ai) before (bv, bi) in the order "NaN first, then best value, then lower index".
template <class T, bool IsMax>
bool better(T av, std::int64_t ai, T bv, std::int64_t bi) {
  const bool an = detail::is_nan(av), bn = detail::is_nan(bv);
  if (an || bn) return an && (!bn || ai < bi);
  if (av == bv) return ai < bi;
  return IsMax ? bv < av : av < bv;
}

template <class T, bool IsMax>
value_index<T> arg_extremum(const T* in, std::int64_t n) {
  const T identity = IsMax ? maximum::identity<T>() : minimum::identity<T>();
  value_index<T> best{identity, -1};
  for (const auto& p : chunk_partials<value_index<T>>(n, [&](std::int64_t b, std::int64_t e) {
         value_index<T> r{identity, -1};
         for (std::int64_t i = b; i < e; ++i)
           if (r.index < 0 || better<T, IsMax>(in[i], i, r.value, r.index)) r = {in[i], i};
         return r;
       }))
    if (p.index >= 0 && (best.index < 0 || better<T, IsMax>(p.value, p.index, best.value, best.index))) best = p;
  return best;
}

void check_offsets(const std::int64_t* offsets, std::int64_t num_segments, const char* what) {
  if (num_segments < 0)
    throw std::invalid_argument(std::string("reduce::reference::") + what + ": negative segment count");
  if (num_segments > 0 && offsets[0] < 0)
    throw std::invalid_argument(std::string("reduce::reference::") + what + ": offsets[0] is negative");
  for (std::int64_t s = 0; s < num_segments; ++s)
    if (offsets[s + 1] < offsets[s])
      throw std::invalid_argument(std::string("reduce::reference::") + what + ": offsets decrease at segment " +
                                  std::to_string(s) + " (" + std::to_string(offsets[s]) + " > " +
                                  std::to_string(offsets[s + 1]) + ")");
}

/// Number of i with pred(in[i]).
template <class T, class Pred>
std::int64_t count_where(const T* in, std::int64_t n, Pred pred) {
  std::int64_t c = 0;
#pragma omp parallel for reduction(+ : c) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) c += pred(in[i]) ? 1 : 0;
  return c;
}

/// out[s] = the fold of segment s in index order, accumulated in A from `identity`.
template <class A, class T, class Op>
void segmented_fold(const T* in, const std::int64_t* offsets, std::int64_t num_segments, T* out, A identity,
                    Op op) {
#pragma omp parallel for schedule(dynamic, 1024)
  for (std::int64_t s = 0; s < num_segments; ++s) {
    A a = identity;
    for (std::int64_t i = offsets[s]; i < offsets[s + 1]; ++i) a = op(a, in[i]);
    out[s] = static_cast<T>(a);
  }
}

}  // namespace

template <class T>
T sum(const T* in, std::int64_t n) {
  check_count(n, "sum");
  acc_t<T> total = 0;
#pragma omp parallel for reduction(+ : total) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) total += static_cast<acc_t<T>>(in[i]);
  return static_cast<T>(total);
}
template <class T>
T min(const T* in, std::int64_t n) {
  check_count(n, "min");
  return fold(in, n, minimum{}, minimum::identity<T>());
}
template <class T>
T max(const T* in, std::int64_t n) {
  check_count(n, "max");
  return fold(in, n, maximum{}, maximum::identity<T>());
}
template <class T>
value_index<T> argmin(const T* in, std::int64_t n) {
  check_count(n, "argmin");
  return arg_extremum<T, false>(in, n);
}
template <class T>
value_index<T> argmax(const T* in, std::int64_t n) {
  check_count(n, "argmax");
  return arg_extremum<T, true>(in, n);
}
template <class T>
T sum_of_squares(const T* in, std::int64_t n) {
  check_count(n, "sum_of_squares");
  return sum_transformed(in, n, [](auto v) { return static_cast<decltype(v)>(v * v); });
}
template <class T>
T norm2(const T* in, std::int64_t n) {
  check_count(n, "norm2");
  double total = 0;
  for (double p : chunk_partials<double>(n, [&](std::int64_t b, std::int64_t e) {
         double s = 0;
         for (std::int64_t i = b; i < e; ++i) s += static_cast<double>(in[i]) * static_cast<double>(in[i]);
         return s;
       }))
    total += p;
  return static_cast<T>(std::sqrt(total));
}
template <class T>
T dot(const T* x, const T* y, std::int64_t n) {
  check_count(n, "dot");
  using A = acc_t<T>;
  A total = 0;
  for (A p : chunk_partials<A>(n, [&](std::int64_t b, std::int64_t e) {
         A s = 0;
         for (std::int64_t i = b; i < e; ++i) s = static_cast<A>(s + static_cast<A>(x[i]) * static_cast<A>(y[i]));
         return s;
       }))
    total = static_cast<A>(total + p);
  return static_cast<T>(total);
}

template <class T>
void multi_dot(const T* const* x, const T* const* y, int m, std::int64_t n, T* out) {
  if (m < 0 || m > multi_dot_max)
    throw std::invalid_argument("reduce::reference::multi_dot: " + std::to_string(m) +
                                " dot products, expected 0 to " + std::to_string(multi_dot_max));
  check_count(n, "multi_dot");
  if (m == 0) return;
  if (x == nullptr || y == nullptr || out == nullptr)
    throw std::invalid_argument("reduce::reference::multi_dot: null pointer array or output");
  using A = acc_t<T>;
  using sums = std::array<A, multi_dot_max>;
  // One pass in dot's chunks (chunk_partials' chunks depend on n and the thread count only): each chunk
  // accumulates the m sums over its range, each in index order from 0, and the chunks' sums are added in
  // chunk order from 0: for each j, dot's operations in dot's order, hence dot's bits.
  sums total{};
  for (const sums& p : chunk_partials<sums>(n, [&](std::int64_t b, std::int64_t e) {
         sums s{};
         for (std::int64_t i = b; i < e; ++i)
           for (int j = 0; j < m; ++j) s[j] = static_cast<A>(s[j] + static_cast<A>(x[j][i]) * static_cast<A>(y[j][i]));
         return s;
       }))
    for (int j = 0; j < m; ++j) total[j] = static_cast<A>(total[j] + p[j]);
  for (int j = 0; j < m; ++j) out[j] = static_cast<T>(total[j]);
}

template <class T>
exact_accumulator<T> reproducible_sum_state(const T* in, std::int64_t n) {
  check_count(n, "reproducible_sum_state");
  using tr = detail::exact_traits<T>;
  static_assert(tr::limbs == exact_accumulator<T>::limbs, "the public state holds the private limbs");
  struct exact {
    std::int64_t limbs[tr::limbs] = {};
    unsigned flags = 0;
  };
  exact_accumulator<T> total;
  for (const exact& p : chunk_partials<exact>(n, [&](std::int64_t b, std::int64_t e) {
         exact a;
         std::int64_t since_normalize = 0;
         for (std::int64_t i = b; i < e; ++i) {
           std::uint64_t m;
           int p2;
           bool neg;
           if (!detail::decompose(in[i], m, p2, neg, a.flags)) continue;
           // m << (p2 % 32) spans three 32-bit limbs from p2 / 32 (m < 2^53, shift < 32).
           const unsigned __int128 v = static_cast<unsigned __int128>(m) << (p2 & 31);
           const int k = p2 >> 5;
           for (int j = 0; j < 3; ++j) {
             const auto piece = static_cast<std::int64_t>(static_cast<std::uint32_t>(v >> (32 * j)));
             a.limbs[k + j] += neg ? -piece : piece;
           }
           if (++since_normalize == (std::int64_t{1} << 30)) {  // limbs gain < 2^32 per addition
             detail::normalize_limbs(a.limbs, tr::limbs);
             since_normalize = 0;
           }
         }
         detail::normalize_limbs(a.limbs, tr::limbs);
         return a;
       })) {
    // Normalized partials: each lower limb < 2^32, so one addition per thread chunk cannot overflow.
    for (int i = 0; i < tr::limbs; ++i) total.limb[i] += p.limbs[i];
    total.nan |= (p.flags & detail::exact_nan) ? 1 : 0;
    total.pos_inf |= (p.flags & detail::exact_pos_inf) ? 1 : 0;
    total.neg_inf |= (p.flags & detail::exact_neg_inf) ? 1 : 0;
  }
  normalize(total);
  return total;
}

template <class T>
T reproducible_sum(const T* in, std::int64_t n) {
  return round_exact(reproducible_sum_state(in, n));
}

template <class T>
T compensated_sum(const T* in, std::int64_t n) {
  check_count(n, "compensated_sum");
  // Neumaier in double: for float inputs the double sum is already far inside the float rounding; for
  // double inputs the compensation gives the same ~2u|S| guarantee as the GPU.
  struct pair {
    double s = 0, c = 0;
  };
  auto add = [](pair& a, double x) {
    const double t = a.s + x;
    a.c += std::fabs(a.s) >= std::fabs(x) ? (a.s - t) + x : (x - t) + a.s;
    a.s = t;
  };
  pair total;
  for (const pair& p : chunk_partials<pair>(n, [&](std::int64_t b, std::int64_t e) {
         pair a;
         for (std::int64_t i = b; i < e; ++i) add(a, static_cast<double>(in[i]));
         return a;
       })) {
    add(total, p.s);
    total.c += p.c;
  }
  if (!std::isfinite(total.s)) return static_cast<T>(total.s);
  return static_cast<T>(total.s + total.c);
}

template <class T>
std::int64_t count_nonzero(const T* in, std::int64_t n) {
  check_count(n, "count_nonzero");
  return count_where(in, n, [](T x) { return x != T(0); });
}
template <class T>
std::int64_t count_nan(const T* in, std::int64_t n) {
  check_count(n, "count_nan");
  return count_where(in, n, [](T x) { return std::isnan(x); });
}

template <class T>
void segmented_sum(const T* in, const std::int64_t* offsets, std::int64_t num_segments, T* out) {
  check_offsets(offsets, num_segments, "segmented_sum");
  using A = acc_t<T>;
  segmented_fold(in, offsets, num_segments, out, A{0}, [](A a, T x) { return static_cast<A>(a + static_cast<A>(x)); });
}
template <class T>
void segmented_min(const T* in, const std::int64_t* offsets, std::int64_t num_segments, T* out) {
  check_offsets(offsets, num_segments, "segmented_min");
  segmented_fold(in, offsets, num_segments, out, minimum::identity<T>(), minimum{});
}
template <class T>
void segmented_max(const T* in, const std::int64_t* offsets, std::int64_t num_segments, T* out) {
  check_offsets(offsets, num_segments, "segmented_max");
  segmented_fold(in, offsets, num_segments, out, maximum::identity<T>(), maximum{});
}

#define REDUCE_REFERENCE_ALL(T)                                                        \
  template T sum(const T*, std::int64_t);                                              \
  template T min(const T*, std::int64_t);                                              \
  template T max(const T*, std::int64_t);                                              \
  template value_index<T> argmin(const T*, std::int64_t);                              \
  template value_index<T> argmax(const T*, std::int64_t);                              \
  template T sum_of_squares(const T*, std::int64_t);                                   \
  template T dot(const T*, const T*, std::int64_t);                                    \
  template void multi_dot(const T* const*, const T* const*, int, std::int64_t, T*);    \
  template std::int64_t count_nonzero(const T*, std::int64_t);                         \
  template void segmented_sum(const T*, const std::int64_t*, std::int64_t, T*);        \
  template void segmented_min(const T*, const std::int64_t*, std::int64_t, T*);        \
  template void segmented_max(const T*, const std::int64_t*, std::int64_t, T*);
REDUCE_REFERENCE_ALL(std::int32_t)
REDUCE_REFERENCE_ALL(std::int64_t)
REDUCE_REFERENCE_ALL(std::uint32_t)
REDUCE_REFERENCE_ALL(std::uint64_t)
REDUCE_REFERENCE_ALL(float)
REDUCE_REFERENCE_ALL(double)
#define REDUCE_REFERENCE_FLOAT(T)                          \
  template T norm2(const T*, std::int64_t);                \
  template T reproducible_sum(const T*, std::int64_t);     \
  template exact_accumulator<T> reproducible_sum_state(const T*, std::int64_t); \
  template T compensated_sum(const T*, std::int64_t);      \
  template std::int64_t count_nan(const T*, std::int64_t);
REDUCE_REFERENCE_FLOAT(float)
REDUCE_REFERENCE_FLOAT(double)

}  // namespace reduce::reference
