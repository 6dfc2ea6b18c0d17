// gpukit::cuda_timer, the benchmarks' clock: the order in which time_interleaved takes its samples, that
// each call's samples are its own (two spin kernels of known cycle counts), and the summary statistics.
// Structure and attribution only: no case asserts how fast anything is.
#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "gpukit/cuda_check.hpp"
#include "gpukit/cuda_timer.hpp"
#include "test_support.hpp"

namespace {

/// Busy for `cycles` SM clock cycles: a call whose GPU time scales with its argument, on any clock.
__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

void launch_spin(long long cycles, cudaStream_t s) {
  spin<<<1, 1, 0, s>>>(cycles);
  GPUKIT_CUDA_CHECK(cudaGetLastError());
}

/// What a pair of medians must show when call b spins 4x as long as call a: a ratio near 4, with a window
/// wide enough for launch and event overhead (a few us on 33+ us spins at <= 2 GHz: 3.5-4) and clock
/// changes between samples, yet excluding a swap (1/4) or a mix of the two calls' samples (~1).
bool ratio_says_b_is_4x_a(double a_us, double b_us) { return a_us > 0 && b_us / a_us >= 2.0 && b_us / a_us <= 8.0; }

}  // namespace

BOOST_AUTO_TEST_SUITE(cuda_timer)

CPU_TEST_CASE(median_and_summary_are_exact) {
  BOOST_TEST(gpukit::median_of({}) == 0.0);
  BOOST_TEST(gpukit::median_of({3.0, 1.0, 2.0}) == 2.0);
  BOOST_TEST(gpukit::median_of({4.0, 1.0, 3.0, 2.0}) == 2.5);
  const gpukit::timing t = gpukit::summarize({5.0, 1.0, 3.0, 9.0});
  BOOST_TEST(t.runs == 4);
  BOOST_TEST(t.median_us == 4.0);
  BOOST_TEST(t.min_us == 1.0);
  BOOST_TEST(t.max_us == 9.0);
  BOOST_TEST(gpukit::summarize({}).runs == 0);
}

// Warm-up calls of every call in order, then rounds: round r starts at call r mod n and skips a call once
// it has its runs. For runs {3, 2, 3} and one warm-up: 0 1 2 | 0 1 2 | 1 2 0 | 2 0.
GPU_TEST_CASE(time_interleaved_takes_its_rounds_in_the_documented_order) {
  gpukit::owned_stream stream;
  gpukit::cuda_timer timer(stream.get());
  std::vector<int> order;
  std::vector<std::function<void()>> work;
  for (int i = 0; i < 3; ++i)
    work.push_back([&order, i, s = stream.get()] {
      order.push_back(i);
      launch_spin(1000, s);
    });
  const std::vector<gpukit::timing> t = timer.time_interleaved(work, {3, 2, 3}, 1);
  const std::vector<int> expected{0, 1, 2, 0, 1, 2, 1, 2, 0, 2, 0};
  BOOST_TEST(order == expected, boost::test_tools::per_element());
  BOOST_TEST_REQUIRE(t.size() == 3u);
  BOOST_TEST(t[0].runs == 3);
  BOOST_TEST(t[1].runs == 2);
  BOOST_TEST(t[2].runs == 3);
  for (const auto& x : t) BOOST_TEST((x.min_us > 0 && x.min_us <= x.median_us && x.median_us <= x.max_us));
}

// Each call gets its own samples: b spins 4x a's 2^16 cycles, and its median comes out near 4x a's, as
// time_paired's (time_interleaved of two) does in both argument orders. The predicate rejects the swapped
// medians, which is what samples attributed to the wrong call would give.
GPU_TEST_CASE(time_interleaved_gives_each_call_its_own_samples) {
  gpukit::owned_stream stream;
  gpukit::cuda_timer timer(stream.get());
  const cudaStream_t s = stream.get();
  constexpr long long cycles = 1LL << 16;
  const auto t = timer.time_interleaved({[&] { launch_spin(cycles, s); }, [&] { launch_spin(4 * cycles, s); }},
                                        {15, 15}, 2);
  BOOST_TEST(ratio_says_b_is_4x_a(t[0].median_us, t[1].median_us),
             "a " << t[0].median_us << " us, b " << t[1].median_us << " us");
  BOOST_TEST(!ratio_says_b_is_4x_a(t[1].median_us, t[0].median_us));  // the swap is caught
  const auto [long_one, short_one] =
      timer.time_paired([&] { launch_spin(4 * cycles, s); }, [&] { launch_spin(cycles, s); }, {2, 15});
  BOOST_TEST(ratio_says_b_is_4x_a(short_one.median_us, long_one.median_us),
             "short " << short_one.median_us << " us, long " << long_one.median_us << " us");
}

BOOST_AUTO_TEST_SUITE_END()
