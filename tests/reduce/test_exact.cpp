// reproducible_sum (correctly rounded, bitwise identical across launch shapes and backends),
// compensated_sum (Neumaier), IEEE NaN/Inf rules of every sum, and the default sum's determinism,
// forced launch shapes and misaligned views.
#include <boost/mpl/list.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "reduce/detail/exact_window.hpp"  // white-box: the GPU kernel's accumulator, run on the host
#include "libreduce/src/cuda/forced_shape.hpp"  // launch_config
#include "oracle.hpp"
#include "reduce_paths.hpp"

namespace {

using float_types = boost::mpl::list<float, double>;

#define REDUCE_PATH_LAMBDAS(NAME)                                                               \
  [](const T* in_, std::int64_t n_) { return reduce::reference::NAME(in_, n_); },              \
      [](const T* in_, std::int64_t n_) { return reduce::NAME(in_, n_); },                    \
      [](const T* in_, std::int64_t n_, auto* o_) { reduce::NAME(in_, n_, o_); },              \
      [](const T* in_, std::int64_t n_, auto* o_, reduce::workspace& ws_) { reduce::NAME(in_, n_, o_, ws_); }

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Cancellation-heavy input with an exactly known sum: `n` small values k * 2^-20 (|k| < 2^30, exact in
/// long double even summed a million times: < 2^30 * 2^20 needs 50 bits of the 64) hidden among pairs
/// of huge values +-big that cancel exactly, shuffled. A left-to-right float sum loses the small
/// values entirely whenever a huge one is pending.
template <class T>
std::vector<T> cancelling_input(std::int64_t n, std::uint64_t stream, long double& exact) {
  auto g = test::rng(stream);
  std::uniform_int_distribution<std::int64_t> k(-(std::int64_t{1} << 20), std::int64_t{1} << 20);
  std::uniform_real_distribution<double> big(1e20, 1e30);
  std::vector<T> x;
  exact = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const T v = static_cast<T>(std::ldexp(static_cast<double>(k(g)), -20));
    x.push_back(v);
    exact += static_cast<long double>(v);
    if (i % 2 == 0) {
      const T b = static_cast<T>(big(g));
      x.push_back(b);
      x.push_back(-b);
    }
  }
  std::shuffle(x.begin(), x.end(), g);
  return x;
}

template <class T>
void check_reproducible_random(test::path p) {
  std::uint64_t stream = 600;
  for (std::int64_t n : test::hostile_sizes()) {
    const std::vector<T> x = test::random_vector<T>(n, T(-1), T(1), ++stream);
    const T got = test::run_path<T>(p, x, REDUCE_PATH_LAMBDAS(reproducible_sum));
    BOOST_TEST_CONTEXT(test::to_string(p) << ", n = " << n) {
      // Correctly rounded: |s - exact| <= u |exact|. The long-double oracle itself carries up to
      // gamma_ld(n - 1) sum|x| (64-bit mantissa), added to the bound.
      const auto o = test::oracle::sum(x);
      const double oracle_err = static_cast<double>((n + 1) * std::numeric_limits<long double>::epsilon() * o.abs_sum);
      const double bound = test::unit_roundoff<T>() * std::fabs(static_cast<double>(o.sum)) + oracle_err;
      BOOST_TEST(test::within_bound(static_cast<double>(got), o.sum, bound));
      if (p != test::path::reference) {  // the same bits as the CPU twin
        BOOST_TEST(same_bits(got, reduce::reference::reproducible_sum(x.data(), n)));
      }
    }
  }
}

template <class T>
void check_reproducible_exact_cases(test::path p) {
  // Cancellation: the exact sum, rounded once (long double -> T rounds to nearest even).
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{100001}}) {
    long double exact = 0;
    const std::vector<T> x = cancelling_input<T>(n, 700 + static_cast<std::uint64_t>(n), exact);
    const T got = test::run_path<T>(p, x, REDUCE_PATH_LAMBDAS(reproducible_sum));
    BOOST_TEST_CONTEXT(test::to_string(p) << ", cancelling input of " << x.size()) {
      BOOST_TEST(same_bits(got, static_cast<T>(exact)));
    }
  }
  const T one = 1, ulp = std::numeric_limits<T>::epsilon();  // ulp(1)
  const T tiny = std::numeric_limits<T>::denorm_min(), huge = std::numeric_limits<T>::max();
  const T inf = std::numeric_limits<T>::infinity();
  struct sample {
    const char* what;
    std::vector<T> x;
    T expected;
  };
  const std::vector<sample> samples = {
      {"three quarter-ulps round up", {one, ulp / 4, ulp / 4, ulp / 4}, one + ulp},
      {"half ulp ties to even (down)", {one, ulp / 2}, one},
      {"half ulp ties to even (up)", {one + ulp, ulp / 2}, one + 2 * ulp},
      {"subnormals add exactly", {tiny, tiny, tiny}, 3 * tiny},
      {"max + max overflows to inf", {huge, huge}, inf},
      {"max + max - max is max", {huge, huge, -huge}, huge},
      {"exact zero", {one, -one, ulp, -ulp}, T(0)},
  };
  for (const auto& s : samples) {
    BOOST_TEST_CONTEXT(test::to_string(p) << ": " << s.what) {
      BOOST_TEST(same_bits(test::run_path<T>(p, s.x, REDUCE_PATH_LAMBDAS(reproducible_sum)), s.expected));
    }
  }
}

/// Sums of every kind with NaN and infinities: IEEE's rules.
template <class T>
void check_sum_nan_inf(test::path p) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  for (std::int64_t n : {std::int64_t{2}, std::int64_t{4097}, std::int64_t{100003}}) {
    const std::vector<T> x = test::random_vector<T>(n, T(-1), T(1), 800 + static_cast<std::uint64_t>(n));
    auto with = [&](std::initializer_list<std::pair<std::int64_t, T>> set) {
      std::vector<T> y = x;
      for (auto [i, v] : set) y[static_cast<std::size_t>(i)] = v;
      return y;
    };
    const auto has_nan = with({{n / 2, nan}});
    const auto pos_inf = with({{n - 1, inf}});
    const auto neg_inf = with({{0, -inf}});
    const auto both_inf = with({{0, inf}, {n - 1, -inf}});
    BOOST_TEST_CONTEXT(test::to_string(p) << ", n = " << n) {
      BOOST_TEST(std::isnan(test::run_path<T>(p, has_nan, REDUCE_PATH_LAMBDAS(sum))));
      BOOST_TEST(std::isnan(test::run_path<T>(p, has_nan, REDUCE_PATH_LAMBDAS(reproducible_sum))));
      BOOST_TEST(std::isnan(test::run_path<T>(p, has_nan, REDUCE_PATH_LAMBDAS(compensated_sum))));
      BOOST_TEST(test::run_path<T>(p, pos_inf, REDUCE_PATH_LAMBDAS(sum)) == inf);
      BOOST_TEST(test::run_path<T>(p, pos_inf, REDUCE_PATH_LAMBDAS(reproducible_sum)) == inf);
      BOOST_TEST(test::run_path<T>(p, pos_inf, REDUCE_PATH_LAMBDAS(compensated_sum)) == inf);
      BOOST_TEST(test::run_path<T>(p, neg_inf, REDUCE_PATH_LAMBDAS(reproducible_sum)) == -inf);
      BOOST_TEST(test::run_path<T>(p, neg_inf, REDUCE_PATH_LAMBDAS(compensated_sum)) == -inf);
      BOOST_TEST(std::isnan(test::run_path<T>(p, both_inf, REDUCE_PATH_LAMBDAS(sum))));
      BOOST_TEST(std::isnan(test::run_path<T>(p, both_inf, REDUCE_PATH_LAMBDAS(reproducible_sum))));
      BOOST_TEST(std::isnan(test::run_path<T>(p, both_inf, REDUCE_PATH_LAMBDAS(compensated_sum))));
    }
  }
}

/// Mixed magnitudes (|x| from 1e-4 to 1e4, random signs): a plain sum's error grows with the chain,
/// the compensated one's stays at about one rounding.
template <class T>
std::vector<T> mixed_magnitudes(std::int64_t n, std::uint64_t stream) {
  auto g = test::rng(stream);
  std::uniform_real_distribution<double> mant(-1, 1);
  std::uniform_int_distribution<int> dec(-4, 4);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = static_cast<T>(mant(g) * std::pow(10.0, dec(g)));
  return x;
}

template <class T>
void check_compensated(test::path p) {
  std::uint64_t stream = 900;
  for (std::int64_t n : test::hostile_sizes()) {
    const std::vector<T> x = mixed_magnitudes<T>(n, ++stream);
    const T got = test::run_path<T>(p, x, REDUCE_PATH_LAMBDAS(compensated_sum));
    BOOST_TEST_CONTEXT(test::to_string(p) << ", n = " << n) {
      // reduce.hpp: |s - exact| <= 2u|exact| + 2 gamma(k)^2 sum|x| (Sum2's u|S| + gamma^2 bound, doubled
      // for the tree combine of (s, c) pairs), plus the long-double oracle's own error.
      const auto o = test::oracle::sum(x);
      const double g = test::gamma<T>(test::chain<T>(p, n));
      const double bound = 2 * test::unit_roundoff<T>() * std::fabs(static_cast<double>(o.sum)) +
                           2 * g * g * static_cast<double>(o.abs_sum) +
                           static_cast<double>((n + 1) * std::numeric_limits<long double>::epsilon() * o.abs_sum);
      BOOST_TEST(test::within_bound(static_cast<double>(got), o.sum, bound));
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(exact)

/// Limbs on the host for the exact pieces' sinks (every digit checked to land in range), rounded once.
template <class T>
struct host_limbs {
  static constexpr int L = reduce::detail::exact_traits<T>::limbs;
  std::vector<std::int64_t> limb = std::vector<std::int64_t>(L, 0);
  std::vector<std::uint32_t> digits = std::vector<std::uint32_t>(L);
  auto sink() {
    return [this](int k, long long d) {
      BOOST_REQUIRE(k >= 0 && k < L);
      limb[static_cast<std::size_t>(k)] += d;
    };
  }
  T round(unsigned flags) { return reduce::detail::exact_to_float<T>(limb.data(), flags, digits.data()); }
};

CPU_TEST_CASE_TEMPLATE(reference_reproducible_sum_is_correctly_rounded, T, float_types) {
  check_reproducible_random<T>(test::path::reference);
  check_reproducible_exact_cases<T>(test::path::reference);
}
// The GPU kernel's per-thread accumulator (exact_window.hpp), run here on the host: the elements are
// split into random "threads" (contiguous runs, as the kernel's head / tiles / tail), each fed through
// a random mix of whole tiles (16 floats / 8 doubles, the branch-free pass) and single elements, then
// flushed into one set of limbs and rounded once. The result must be the CPU twin's bits exactly, for
// data that keeps the window still (uniform), moves it all the time (random exponents over the whole
// range, subnormals, zeros), cancels (1e30-sized pairs) and holds inf/NaN.
template <class T, class Window = reduce::detail::exact_window<T>>
void check_window_against_twin(const std::vector<T>& x, std::uint64_t seed) {
  constexpr int N = 64 / static_cast<int>(sizeof(T));  // the kernel's tile: 4 x 16 bytes
  host_limbs<T> limbs;
  auto sink = limbs.sink();
  auto g = test::rng(seed);
  unsigned flags = 0;
  std::size_t i = 0;
  while (i < x.size()) {
    Window w;
    const std::size_t run = std::min<std::size_t>(x.size() - i, 1 + g() % 300);
    const std::size_t end = i + run;
    while (i < end) {
      if (end - i >= static_cast<std::size_t>(N) && g() % 4 != 0) {
        T tile[N];
        std::copy(x.begin() + static_cast<std::ptrdiff_t>(i), x.begin() + static_cast<std::ptrdiff_t>(i + N), tile);
        w.add_tile(tile, sink);
        i += N;
      } else {
        w.add(x[i++], sink);
      }
    }
    w.flush(sink);
    flags |= w.flags;
  }
  const T got = limbs.round(flags);
  const T twin = reduce::reference::reproducible_sum(x.data(), static_cast<std::int64_t>(x.size()));
  BOOST_TEST(same_bits(got, twin), "window " << got << " vs CPU twin " << twin);
}

/// Both float windows (the 25-exponent tile window and the wide one of reduce::exact::thread_sum<float,
/// true>), or double's one.
template <class T>
void check_windows_against_twin(const std::vector<T>& x, std::uint64_t seed) {
  check_window_against_twin<T>(x, seed);
  if constexpr (std::is_same_v<T, float>)
    check_window_against_twin<T, reduce::detail::exact_window<float, reduce::detail::wide_float_window>>(x, seed);
}

/// Random bit patterns of n elements: every exponent (subnormals, huge values; powers of two and zeros one
/// time in eight), the non-finite ones replaced by zeros; the same sorted by magnitude down and up (a window
/// moves down, then up); then with +inf, -inf and a NaN added in turn.
template <class T>
std::vector<std::vector<T>> every_exponent_sets(std::int64_t n, std::uint64_t stream) {
  using tr = reduce::detail::exact_traits<T>;
  auto g = test::rng(stream);
  std::vector<T> wide(static_cast<std::size_t>(n));
  for (auto& v : wide) {
    typename tr::bits_t b = static_cast<typename tr::bits_t>(g());
    if (((b >> tr::mant_bits) & tr::exp_mask) == static_cast<typename tr::bits_t>(tr::exp_mask)) b = 0;
    if (g() % 8 == 0) b &= ~(((typename tr::bits_t{1} << tr::mant_bits) - 1));
    std::memcpy(&v, &b, sizeof v);
  }
  std::vector<std::vector<T>> sets = {wide, wide};
  std::sort(sets[1].begin(), sets[1].end(), [](T a, T b) { return std::fabs(a) > std::fabs(b); });
  sets.push_back(std::vector<T>(sets[1].rbegin(), sets[1].rend()));
  wide[wide.size() / 2] = std::numeric_limits<T>::infinity();
  sets.push_back(wide);
  wide[0] = -std::numeric_limits<T>::infinity();
  sets.push_back(wide);
  wide[wide.size() - 1] = std::numeric_limits<T>::quiet_NaN();
  sets.push_back(wide);
  return sets;
}

CPU_TEST_CASE_TEMPLATE(gpu_window_accumulator_gives_the_twins_bits, T, float_types) {
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{17}, std::int64_t{1000}, std::int64_t{100003}}) {
    BOOST_TEST_CONTEXT("n = " << n) {
      check_windows_against_twin(test::random_vector<T>(n, T(-1), T(1), 900 + static_cast<std::uint64_t>(n)), 1);
      long double exact = 0;
      check_windows_against_twin(cancelling_input<T>(n, 950 + static_cast<std::uint64_t>(n), exact), 2);
      const auto sets = every_exponent_sets<T>(n, 990 + static_cast<std::uint64_t>(n));
      for (std::size_t k = 0; k < sets.size(); ++k) check_windows_against_twin(sets[k], 3 + k);
    }
  }
}

// The float tile pass sums a tile in a DOUBLE, exact only because the window is 25 exponents wide
// (16 terms < 2^48 units sum to < 2^52). Worst case: 15 full-mantissa terms at the window's top
// (t = 24) plus a one-ulp-odd term at its bottom (t = 0) need 52 bits; a second tile cancels the big
// ones, so any bit lost in the first tile's double changes the result (which must be that small term).
// The same with the terms one exponent higher (t = 25) leaves the window: they take the slow path.
CPU_TEST_CASE(gpu_float_window_tile_sum_is_exact_at_the_window_edges) {
  const int top = reduce::detail::window_traits<float>::width - 1;  // 24
  const int centre = reduce::detail::window_traits<float>::centre;
  const int base = 100;                        // the window x0 opens: p0 - centre
  auto make = [](std::uint32_t m, int p) {  // m * 2^(p - 149), m < 2^24, p >= 0
    return std::ldexp(static_cast<float>(m), p - 149);
  };
  const float x0 = make(1u << 23, base + centre);
  const float tiny = make((1u << 23) + 1u, base);
  for (int shift : {0, 1}) {
    BOOST_TEST_CONTEXT("big terms at t = " << top + shift) {
      const float big = make((1u << 24) - 1u, base + top + shift);
      host_limbs<float> limbs;
      auto sink = limbs.sink();
      reduce::detail::exact_window<float> w;
      w.add(x0, sink);
      BOOST_TEST(w.base() == base);
      float t1[16], t2[16];
      for (int i = 0; i < 15; ++i) {
        t1[i] = big;
        t2[i] = -big;
      }
      t1[15] = tiny;
      t2[15] = 0.0f;
      w.add_tile(t1, sink);
      w.add_tile(t2, sink);
      w.add(-x0, sink);
      w.flush(sink);
      const float got = limbs.round(w.flags);
      BOOST_TEST(same_bits(got, tiny), "got " << got << ", expected " << tiny);
    }
  }
}

// reduce::exact::add_staged and its end_block (the stencil SpMV's exact dots): float terms summed in a
// double RUN per thread while that stays exact, the limbs taking what would round (detail::spill_to_limbs,
// the device's slow path), then a block's 256 runs merged as the device merges them (detail::merge_runs:
// a shuffle-down tree per warp, then the 8 warps' runs in order) and the block's run added to the limbs.
// The same data sets as the windows above, split into random "threads"; the result must be the CPU
// twin's bits. `taken` / `spilled` count the runs' two outcomes and `merged_exactly` / `merge_spills`
// the merges': each data set must exercise both, else the check could not catch a run that rounds.
struct staged_counts {
  std::int64_t taken = 0, spilled = 0, merged_exactly = 0, merge_spills = 0;
};
template <class Sink>
reduce::detail::float_run merge_block(std::vector<reduce::detail::float_run> runs, Sink&& sink, staged_counts& c) {
  using reduce::detail::float_run;
  BOOST_REQUIRE(runs.size() <= 256);
  runs.resize(256);  // threads without rows hold zero
  auto merge = [&](float_run a, const float_run& b) {
    float_run probe = a;
    (probe.try_add(b.value) ? c.merged_exactly : c.merge_spills) += 1;
    return reduce::detail::merge_runs(a, b, sink);
  };
  std::vector<float_run> warp(8);
  for (int w = 0; w < 8; ++w) {
    float_run* r = &runs[static_cast<std::size_t>(w) * 32];
    for (int o = 16; o > 0; o >>= 1)
      for (int lane = 0; lane < o; ++lane) r[lane] = merge(r[lane], r[lane + o]);  // lane + o: its value before this step
    warp[static_cast<std::size_t>(w)] = r[0];
  }
  float_run b = warp[0];
  for (int w = 1; w < 8; ++w) b = merge(b, warp[static_cast<std::size_t>(w)]);
  return b;
}
staged_counts check_staged_against_twin(const std::vector<float>& x, std::uint64_t seed) {
  host_limbs<float> limbs;
  auto sink = limbs.sink();
  auto g = test::rng(seed);
  unsigned flags = 0;
  staged_counts c;
  std::vector<reduce::detail::float_run> block;
  std::size_t block_threads = 1 + g() % 256;  // blocks of 1..256 threads
  std::size_t i = 0;
  while (i < x.size()) {
    reduce::detail::float_run run;
    const std::size_t end = std::min<std::size_t>(x.size(), i + 1 + g() % 60);  // a thread's rows
    for (; i < end; ++i) {
      if (run.try_add(x[i])) {
        ++c.taken;
      } else {
        ++c.spilled;
        reduce::detail::spill_to_limbs(run, x[i], sink, flags);
      }
    }
    block.push_back(run);
    if (block.size() == block_threads || i == x.size()) {
      reduce::detail::emit_run(merge_block(block, sink, c), sink);
      block.clear();
      block_threads = 1 + g() % 256;
    }
  }
  const float got = limbs.round(flags);
  const float twin = reduce::reference::reproducible_sum(x.data(), static_cast<std::int64_t>(x.size()));
  BOOST_TEST(same_bits(got, twin), "staged " << got << " vs CPU twin " << twin);
  return c;
}

CPU_TEST_CASE(gpu_staged_float_sum_gives_the_twins_bits) {
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{17}, std::int64_t{1000}, std::int64_t{100003}}) {
    BOOST_TEST_CONTEXT("n = " << n) {
      const auto uniform = check_staged_against_twin(test::random_vector<float>(n, -1.0f, 1.0f, 1900 + static_cast<std::uint64_t>(n)), 1);
      long double exact = 0;
      const auto cancel = check_staged_against_twin(cancelling_input<float>(n, 1950 + static_cast<std::uint64_t>(n), exact), 2);
      const auto sets = every_exponent_sets<float>(n, 1990 + static_cast<std::uint64_t>(n));
      const auto spread = check_staged_against_twin(sets[0], 3);
      for (std::size_t k = 1; k < sets.size(); ++k) check_staged_against_twin(sets[k], 3 + k);
      if (n >= 1000) {  // both outcomes of the runs and the merges, so a rounded sum kept would show
        BOOST_TEST(uniform.taken > 0);
        BOOST_TEST(uniform.merged_exactly > 0);
        BOOST_TEST(spread.taken > 0);
        BOOST_TEST(spread.spilled > 0);
        BOOST_TEST(spread.merge_spills > 0);
        BOOST_TEST(cancel.spilled > 0);
      }
    }
  }
}

// The run's exactness test at its edge: 2^29 + 2^-23 needs 53 bits (a double's), 2^29 + 2^-24 needs 54.
// A run that took the second would hold 2^29 and lose the small term: {2^29, 2^-24, -2^29} must sum to
// 2^-24 exactly. A run of 2^126 or more is refused (split() must stay in float range). And split():
// three floats whose sum is exactly the run, for random runs of up to 53 bits from the subnormal range
// to 2^123.
CPU_TEST_CASE(gpu_staged_float_run_refuses_what_a_double_would_round) {
  reduce::detail::float_run run;
  BOOST_TEST(run.try_add(0x1p29f));
  BOOST_TEST(run.try_add(0x1p-23f));
  BOOST_TEST(run.value == 0x1p29 + 0x1p-23);
  BOOST_TEST(!run.try_add(0x1p-24f));
  BOOST_TEST(run.value == 0x1p29 + 0x1p-23, "a refused term leaves the run as it was");
  BOOST_TEST(run.spill_term(0x1p-24f), "the smaller term goes to the limbs");
  BOOST_TEST(!run.spill_term(0x1p60f), "a larger term takes the run's place");
  BOOST_TEST(run.spill_term(std::numeric_limits<float>::infinity()));
  BOOST_TEST(!run.try_add(std::numeric_limits<float>::quiet_NaN()));

  const std::vector<float> edge = {0x1p29f, 0x1p-24f, -0x1p29f};
  check_staged_against_twin(edge, 11);
  host_limbs<float> limbs;
  auto sink = limbs.sink();
  reduce::detail::float_run r;
  unsigned f = 0;
  for (float t : edge)
    if (!r.try_add(t)) reduce::detail::spill_to_limbs(r, t, sink, f);
  reduce::detail::emit_run(r, sink);
  const float got = limbs.round(f);
  BOOST_TEST(same_bits(got, 0x1p-24f), "got " << got);

  reduce::detail::float_run big;
  BOOST_TEST(big.try_add(0x1.8p125f));
  BOOST_TEST(!big.try_add(0x1.8p125f), "3 * 2^125 >= 2^126");

  auto g = test::rng(1999);
  std::uniform_int_distribution<int> expo(-149, 100);
  for (int k = 0; k < 20000; ++k) {
    reduce::detail::float_run s;
    const int e = expo(g);
    for (int j = 0; j < 8; ++j) {  // terms over 29 exponents: runs of up to 53 bits
      const float t = std::ldexp(static_cast<float>(static_cast<std::int32_t>(g() % (1u << 24)) - (1 << 23)),
                                 std::max(e - static_cast<int>(g() % 30), -149));
      s.try_add(t);
    }
    float part[3];
    s.split(part);
    const long double back = static_cast<long double>(part[0]) + part[1] + part[2];  // <= 53 bits: exact
    BOOST_TEST(back == static_cast<long double>(s.value), "split of " << s.value);
    BOOST_TEST(std::isfinite(part[0]));
  }
}

GPU_TEST_CASE_TEMPLATE(cuda_reproducible_sum_is_correctly_rounded, T, float_types) {
  for (auto p : test::cuda_paths) {
    check_reproducible_random<T>(p);
    check_reproducible_exact_cases<T>(p);
  }
}

GPU_TEST_CASE_TEMPLATE(cuda_reproducible_sum_is_bitwise_identical_across_launch_shapes, T, float_types) {
  const std::vector<reduce::detail::launch_config> shapes = {{0, 0}, {1, 128}, {7, 256}, {1000, 512}, {2048, 128}};
  reduce::workspace ws;
  std::uint64_t stream = 1000;
  // The sanitizers' pass (test::reduced_sizes()): up to 17011 elements (racecheck did not finish the 3M ones in
  // 400 s); the shapes still range from one block striding 133 times over 17011 elements to grids with empty blocks.
  std::vector<std::int64_t> sizes = {1, 33, 4097, 1000003, 3000017};
  if (test::reduced_sizes()) sizes = {1, 33, 4097, 17011};
  for (std::int64_t n : sizes) {
    long double exact = 0;
    for (bool cancelling : {false, true}) {
      const std::vector<T> x = cancelling ? cancelling_input<T>(n / 3 + 1, ++stream, exact)
                                          : test::random_vector<T>(n, T(-1), T(1), ++stream);
      gpukit::device_buffer<T> d(x);
      gpukit::device_buffer<T> out(1);
      const T expected = reduce::reference::reproducible_sum(x.data(), static_cast<std::int64_t>(x.size()));
      for (const auto& s : shapes) {
        out.fill_bytes(test::poison_byte);
        reduce::detail::reproducible_sum(d.data(), d.size(), out.data(), ws, s);
        BOOST_TEST_CONTEXT("n = " << x.size() << (cancelling ? " cancelling" : "") << ", grid " << s.grid
                                  << ", block " << s.block) {
          BOOST_TEST(same_bits(out.download()[0], expected));
        }
      }
    }
  }
}
CPU_TEST_CASE_TEMPLATE(reference_reproducible_sum_ignores_order, T, float_types) {
  // The CPU twin's chunking changes with the thread count; permuting the input must not change the bits.
  long double exact = 0;
  std::vector<T> x = cancelling_input<T>(100001, 1100, exact);
  const T first = reduce::reference::reproducible_sum(x.data(), static_cast<std::int64_t>(x.size()));
  auto g = test::rng(1101);
  for (int round = 0; round < 3; ++round) {
    std::shuffle(x.begin(), x.end(), g);
    BOOST_TEST(same_bits(reduce::reference::reproducible_sum(x.data(), static_cast<std::int64_t>(x.size())), first));
  }
}

CPU_TEST_CASE_TEMPLATE(reference_compensated_sum_within_bound, T, float_types) {
  check_compensated<T>(test::path::reference);
}
GPU_TEST_CASE_TEMPLATE(cuda_compensated_sum_within_bound, T, float_types) {
  for (auto p : test::cuda_paths) check_compensated<T>(p);
}

CPU_TEST_CASE_TEMPLATE(reference_sums_follow_ieee_for_nan_and_inf, T, float_types) {
  check_sum_nan_inf<T>(test::path::reference);
}
GPU_TEST_CASE_TEMPLATE(cuda_sums_follow_ieee_for_nan_and_inf, T, float_types) {
  for (auto p : test::cuda_paths) check_sum_nan_inf<T>(p);
}

// Regression: the reproducible sum's accumulator once shared bytes with the single-pass partials, so
// a sum followed by a reproducible sum on the same workspace read garbage limbs.
GPU_TEST_CASE(cuda_one_workspace_serves_every_kind_of_call) {
  const std::vector<double> x = test::random_vector<double>(1000003, -1, 1, 1250);
  gpukit::device_buffer<double> d(x);
  gpukit::device_buffer<double> out(1);
  gpukit::device_buffer<reduce::value_index<double>> arg(1);
  reduce::workspace ws;
  const double expected = reduce::reference::reproducible_sum(x.data(), d.size());
  for (int round = 0; round < 3; ++round) {
    reduce::sum(d.data(), d.size(), out.data(), ws);
    reduce::argmin(d.data(), d.size(), arg.data(), ws);
    reduce::compensated_sum(d.data(), d.size(), out.data(), ws);
    out.fill_bytes(test::poison_byte);
    reduce::reproducible_sum(d.data(), d.size(), out.data(), ws);
    BOOST_TEST(same_bits(out.download()[0], expected));
  }
}

GPU_TEST_CASE(cuda_float_sum_is_bitwise_deterministic_with_workspace) {
  const std::vector<float> x = test::random_vector<float>((1 << 24) + 5, -1.f, 1.f, 1200);
  gpukit::device_buffer<float> d(x);
  gpukit::device_buffer<float> out(1);
  reduce::workspace ws;
  reduce::sum(d.data(), d.size(), out.data(), ws);
  const float first = out.download()[0];
  for (int run = 0; run < 20; ++run) {
    out.fill_bytes(test::poison_byte);
    reduce::sum(d.data(), d.size(), out.data(), ws);
    BOOST_TEST(same_bits(out.download()[0], first));
  }
}

GPU_TEST_CASE(cuda_sum_with_forced_launch_shapes_within_bound) {
  reduce::workspace ws;
  const std::vector<reduce::detail::launch_config> shapes = {{1, 128}, {3, 256}, {1000, 512}, {4096, 256}};
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{4097}, std::int64_t{1000003}}) {
    const std::vector<double> x = test::random_vector<double>(n, -1, 1, 1300 + static_cast<std::uint64_t>(n));
    gpukit::device_buffer<double> d(x);
    gpukit::device_buffer<double> out(1);
    const auto o = test::oracle::sum(x);
    for (const auto& s : shapes) {
      out.fill_bytes(test::poison_byte);
      reduce::detail::sum(d.data(), n, out.data(), ws, s);
      // Chain for a forced shape: per thread ceil(n / (grid block)) elements rounded up to a whole
      // tile (4 vectors of 2 doubles: + 8) plus head and tail (+ 2), the block tree (log2 block),
      // ceil(grid / block) partials and the last block's tree (log2 block).
      const double lg = std::log2(static_cast<double>(s.block));
      const double k = std::ceil(static_cast<double>(n) / (static_cast<double>(s.grid) * s.block)) + 10 +
                       std::ceil(static_cast<double>(s.grid) / s.block) + 2 * lg;
      BOOST_TEST_CONTEXT("n = " << n << ", grid " << s.grid << ", block " << s.block) {
        BOOST_TEST(test::within_bound(out.download()[0], o.sum, test::gamma<double>(k) * static_cast<double>(o.abs_sum)));
      }
    }
  }
}

/// Views that start 1..3 elements past a 16-byte boundary take the head path of the vector loads.
template <class T>
void check_misaligned(test::path p) {
  // Mean 1/2 (test::offset_vector): |sum| ~ n/2 stays above the sum's bound; zero-mean inputs and the old
  // gamma_T(n - 1) sum|x| on the reference let 0 pass at n = 100000 (~ 300 against |sum| ~ 180).
  const std::vector<T> x = test::offset_vector<T>(100003, 1400);
  gpukit::device_buffer<T> d(p == test::path::reference ? std::vector<T>{} : x);
  for (std::int64_t off : {1, 2, 3}) {
    for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{2}, std::int64_t{5}, std::int64_t{4096},
                           std::int64_t{4097}, std::int64_t{16384}, std::int64_t{100000}}) {
      const std::vector<T> v(x.begin() + off, x.begin() + off + n);
      const auto o = test::oracle::sum(v);
      T got{}, lo{}, rep{};
      if (p == test::path::reference) {
        got = reduce::reference::sum(x.data() + off, n);
        lo = reduce::reference::min(x.data() + off, n);
        rep = reduce::reference::reproducible_sum(x.data() + off, n);
      } else {
        got = reduce::sum(d.data() + off, n);
        lo = reduce::min(d.data() + off, n);
        rep = reduce::reproducible_sum(d.data() + off, n);
      }
      BOOST_TEST_CONTEXT(test::to_string(p) << ", offset " << off << ", n = " << n) {
        // reference: gamma_double(n - 1) sum|x| + one rounding to T; CUDA: gamma_T(k) sum|x| (reduce_paths.hpp)
        BOOST_TEST(test::within_bound(static_cast<double>(got), o.sum, test::reduction_bound<T>(p, n, o.abs_sum, o.sum)));
        const T expected_lo = test::oracle::arg_extremum<T, false>(v).value;
        BOOST_TEST(lo == expected_lo);
        BOOST_TEST(same_bits(rep, reduce::reference::reproducible_sum(v.data(), n)));
      }
    }
  }
}
CPU_TEST_CASE_TEMPLATE(reference_misaligned_views_match_oracle, T, float_types) {
  check_misaligned<T>(test::path::reference);
}
GPU_TEST_CASE_TEMPLATE(cuda_misaligned_views_match_oracle, T, float_types) {
  check_misaligned<T>(test::path::cuda_host_result);
}

/// A pointer that is not a multiple of its element's alignment (not a valid T*) is refused with
/// std::invalid_argument, never loaded as 16-byte vectors.
GPU_TEST_CASE_TEMPLATE(cuda_pointer_not_aligned_to_its_type_is_refused, T, float_types) {
  gpukit::device_buffer<T> d(std::vector<T>(64, T(1)));
  const T* bad = reinterpret_cast<const T*>(reinterpret_cast<const char*>(d.data()) + 1);
  BOOST_CHECK_THROW(reduce::sum(bad, 16), std::invalid_argument);
  BOOST_CHECK_THROW(reduce::dot(d.data(), bad, 16), std::invalid_argument);
  BOOST_TEST(reduce::sum(d.data() + 1, 16) == T(16));  // whole-element offsets are fine
}

// The public exact state (reduce/exact_accumulator.hpp): the states of any partition, merged and rounded
// once, give the bits of reproducible_sum on the whole vector. The cancelling input makes the check able
// to fail: rounding each part first and adding the rounded parts (what a plain distributed sum does)
// differs from the whole's bits for at least one of these partitions (asserted too).
template <class T>
std::vector<std::int64_t> random_cuts(std::int64_t n, int parts, std::uint64_t seed) {
  auto g = test::rng(seed);
  std::vector<std::int64_t> cuts = {0, n};
  for (int k = 1; k < parts; ++k) cuts.push_back(static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(n + 1)));
  std::sort(cuts.begin(), cuts.end());  // repeated cuts give empty parts, on purpose
  return cuts;
}

CPU_TEST_CASE_TEMPLATE(exact_states_of_any_partition_merge_to_the_whole_sums_bits, T, float_types) {
  long double exact = 0;
  const std::vector<T> x = cancelling_input<T>(20001, 1200, exact);
  const auto n = static_cast<std::int64_t>(x.size());
  const T whole = reduce::reference::reproducible_sum(x.data(), n);
  BOOST_TEST(same_bits(reduce::round_exact(reduce::reference::reproducible_sum_state(x.data(), n)), whole));
  bool rounded_parts_differ = false;
  for (int parts : {1, 2, 3, 4, 7}) {
    for (std::uint64_t seed = 0; seed < 8; ++seed) {
      const auto cuts = random_cuts<T>(n, parts, 1300 + seed);
      reduce::exact_accumulator<T> merged;
      T rounded_parts = 0;
      for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
        const auto part = reduce::reference::reproducible_sum_state(x.data() + cuts[k], cuts[k + 1] - cuts[k]);
        reduce::merge(merged, part);
        rounded_parts += reduce::round_exact(part);
      }
      BOOST_TEST_CONTEXT(parts << " parts, seed " << seed) {
        BOOST_TEST(same_bits(reduce::round_exact(merged), whole));
      }
      rounded_parts_differ |= !same_bits(rounded_parts, whole);
    }
  }
  BOOST_TEST(rounded_parts_differ, "the input does not tell an exact merge from adding rounded parts");
}

CPU_TEST_CASE_TEMPLATE(exact_states_merge_limb_sums_and_nonfinite_flags, T, float_types) {
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<T> a = {T(1), inf}, b = {-inf, T(2)}, c = {T(3), std::numeric_limits<T>::quiet_NaN()};
  auto sa = reduce::reference::reproducible_sum_state(a.data(), 2);
  BOOST_TEST(reduce::round_exact(sa) == inf);
  reduce::merge(sa, reduce::reference::reproducible_sum_state(b.data(), 2));
  BOOST_TEST(std::isnan(reduce::round_exact(sa)));  // +inf and -inf met in different parts
  auto sc = reduce::reference::reproducible_sum_state(c.data(), 2);
  BOOST_TEST(std::isnan(reduce::round_exact(sc)));
  // Limb-wise int64 addition of normalized states (what an MPI_SUM all-reduce does), normalized after.
  const std::vector<T> x = test::random_vector<T>(1000, T(-1), T(1), 1400);
  auto s1 = reduce::reference::reproducible_sum_state(x.data(), 600);
  const auto s2 = reduce::reference::reproducible_sum_state(x.data() + 600, 400);
  for (int i = 0; i < reduce::exact_accumulator<T>::limbs; ++i) s1.limb[i] += s2.limb[i];
  BOOST_TEST(same_bits(reduce::round_exact(s1), reduce::reference::reproducible_sum(x.data(), 1000)));
  reduce::normalize(s1);
  for (int i = 0; i + 1 < reduce::exact_accumulator<T>::limbs; ++i)
    BOOST_TEST((s1.limb[i] >= 0 && s1.limb[i] < (std::int64_t{1} << 32)), "limb " << i << " = " << s1.limb[i]);
}

GPU_TEST_CASE_TEMPLATE(cuda_exact_state_equals_the_cpu_twins_state, T, float_types) {
  std::uint64_t stream = 1500;
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{4097}, std::int64_t{3000017}}) {
    long double exact = 0;
    for (bool cancelling : {false, true}) {
      const std::vector<T> x = cancelling ? cancelling_input<T>(n / 3 + 1, ++stream, exact)
                                          : test::random_vector<T>(n, T(-1), T(1), ++stream);
      gpukit::device_buffer<T> d(x);
      const auto twin = reduce::reference::reproducible_sum_state(x.data(), static_cast<std::int64_t>(x.size()));
      const auto got = reduce::reproducible_sum_state(d.data(), d.size());
      BOOST_TEST_CONTEXT("n = " << x.size() << (cancelling ? " cancelling" : "")) {
        BOOST_TEST(std::memcmp(&got, &twin, sizeof got) == 0, "device state differs from the CPU twin's");
        BOOST_TEST(same_bits(reduce::round_exact(got), reduce::reproducible_sum(d.data(), d.size())));
      }
    }
  }
}

// reduce::round_exact on device states (a distributed solver's rounding, its scalars on the device) against
// the host round_exact, its CPU twin: bitwise, for normalized states, states merely limb-summed as an
// ncclSum leaves them (three copies added limb by limb), and the non-finite flags (NaN, +inf, -inf, both).
GPU_TEST_CASE_TEMPLATE(cuda_round_exact_equals_the_host_rounding, T, float_types) {
  using state = reduce::exact_accumulator<T>;
  std::vector<state> states;
  std::uint64_t stream = 1600;
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{4097}}) {
    long double exact = 0;
    const std::vector<T> plain = test::random_vector<T>(n, T(-1), T(1), ++stream);
    const std::vector<T> cancel = cancelling_input<T>(n / 3 + 1, ++stream, exact);
    for (const auto* x : {&plain, &cancel}) {
      const state s = reduce::reference::reproducible_sum_state(x->data(), static_cast<std::int64_t>(x->size()));
      states.push_back(s);
      state summed = s;  // not normalized: what an integer all-reduce of 3 ranks' states gives
      for (int i = 0; i < state::limbs; ++i) summed.limb[i] = 3 * s.limb[i];
      states.push_back(summed);
    }
  }
  for (int flags = 1; flags < 8; ++flags) {
    state s = states.back();
    s.nan = flags & 1;
    s.pos_inf = (flags >> 1) & 1;
    s.neg_inf = (flags >> 2) & 1;
    states.push_back(s);
  }
  gpukit::device_buffer<state> d_states(states);
  gpukit::device_buffer<T> d_out(static_cast<std::int64_t>(states.size()));
  reduce::round_exact(d_states.data(), static_cast<int>(states.size()), d_out.data());
  const std::vector<T> got = d_out.download();
  for (std::size_t j = 0; j < states.size(); ++j)
    BOOST_TEST(same_bits(got[j], reduce::round_exact(states[j])), "state " << j);
}

BOOST_AUTO_TEST_SUITE_END()
