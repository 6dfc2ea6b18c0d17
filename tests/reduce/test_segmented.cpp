// segmented_sum / segmented_min / segmented_max through both backends against a per-segment oracle,
// on length mixes that exercise every bin (thread <= 16, warp <= 4096, block beyond).
#include <boost/mpl/list.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "oracle.hpp"
#include "reduce_paths.hpp"

namespace {

using all_types = boost::mpl::list<std::int32_t, std::int64_t, std::uint32_t, std::uint64_t, float, double>;

struct layout {
  std::string what;
  std::vector<std::int64_t> offsets;  // num_segments + 1 entries
};

/// Offsets from segment lengths, starting at `first` (offsets need not start at 0).
std::vector<std::int64_t> offsets_of(const std::vector<std::int64_t>& lengths, std::int64_t first = 0) {
  std::vector<std::int64_t> o{first};
  for (auto l : lengths) o.push_back(o.back() + l);
  return o;
}

/// The sanitizers' pass (test::reduced_sizes()) keeps every bin and path with a tenth of the elements: 20011
/// short segments (still past the 8192 of the binned path), one segment of 100003 (block per segment) and 301
/// of 0..12000 instead of 3001 of 0..40000 (60M elements, which racecheck did not finish in 400 s).
std::vector<layout> layouts() {
  const bool reduced = test::reduced_sizes();
  std::vector<layout> all;
  all.push_back({"no segments", {0}});
  all.push_back({"one empty segment", {0, 0}});
  const std::int64_t short_count = reduced ? 20011 : 100003;
  auto uniform = test::random_vector<std::int64_t>(short_count, 0, 16, 1500);
  all.push_back({std::to_string(short_count) + " segments of 0..16", offsets_of(uniform)});
  std::vector<std::int64_t> edges;  // every bin edge, shuffled by a fixed pattern
  for (int r = 0; r < 40; ++r)
    for (std::int64_t l : {0, 1, 15, 16, 17, 31, 32, 33, 127, 128, 129, 4095, 4096, 4097, 10007})
      edges.push_back(l);
  all.push_back({"bin edges 0..10007 (block per segment)", offsets_of(edges, 5)});
  // More than 8192 segments take the binned path (thread / warp / block bins): every bin edge again,
  // one segment in ten, among short segments.
  std::vector<std::int64_t> binned;
  for (std::int64_t i = 0; i < 9001; ++i) binned.push_back(i % 10 == 0 ? edges[static_cast<std::size_t>(i / 10) % 15] : i % 17);
  all.push_back({"9001 segments, bin edges among short ones (binned)", offsets_of(binned, 7)});
  const std::int64_t long_length = reduced ? 100003 : 1000003;
  all.push_back({"one segment of " + std::to_string(long_length), {0, long_length}});
  const std::int64_t mixed_count = reduced ? 301 : 3001, mixed_max = reduced ? 12000 : 40000;
  auto mixed = test::random_vector<std::int64_t>(mixed_count, 0, mixed_max, 1501);
  all.push_back({std::to_string(mixed_count) + " segments of 0.." + std::to_string(mixed_max), offsets_of(mixed, 3)});
  return all;
}

template <class T>
std::vector<T> values(std::int64_t n, std::uint64_t stream) {
  // Floats: mean 1/2 (test::offset_vector), so a segment's |sum| ~ m/2 stays above its bound (zero-mean
  // segments of m ~ 1e5 met gamma_T(m) sum|x| with 0).
  if constexpr (std::is_floating_point_v<T>) return test::offset_vector<T>(n, stream);
  else if constexpr (std::is_signed_v<T>) return test::random_vector<T>(n, T(-1000), T(1000), stream);
  else return test::random_vector<T>(n, T(0), T(1000), stream);
}

enum class seg_op { sum, min, max };

template <class T>
std::vector<T> run_segmented(test::path p, seg_op op, const std::vector<T>& x, const std::vector<std::int64_t>& off) {
  const auto segs = static_cast<std::int64_t>(off.size()) - 1;
  std::vector<T> out(static_cast<std::size_t>(segs), test::poison_value<T>());
  if (p == test::path::reference) {
    if (op == seg_op::sum) reduce::reference::segmented_sum(x.data(), off.data(), segs, out.data());
    if (op == seg_op::min) reduce::reference::segmented_min(x.data(), off.data(), segs, out.data());
    if (op == seg_op::max) reduce::reference::segmented_max(x.data(), off.data(), segs, out.data());
    return out;
  }
  gpukit::device_buffer<T> d(x), d_out(out);
  gpukit::device_buffer<std::int64_t> d_off(off);
  if (p == test::path::cuda_workspace) {
    reduce::workspace ws(reduce::workspace::segmented_bytes(segs));
    for (int twice = 0; twice < 2; ++twice) {  // the workspace must be reusable
      d_out.fill_bytes(test::poison_byte);
      if (op == seg_op::sum) reduce::segmented_sum(d.data(), d_off.data(), segs, d_out.data(), ws);
      if (op == seg_op::min) reduce::segmented_min(d.data(), d_off.data(), segs, d_out.data(), ws);
      if (op == seg_op::max) reduce::segmented_max(d.data(), d_off.data(), segs, d_out.data(), ws);
    }
  } else {
    if (op == seg_op::sum) reduce::segmented_sum(d.data(), d_off.data(), segs, d_out.data());
    if (op == seg_op::min) reduce::segmented_min(d.data(), d_off.data(), segs, d_out.data());
    if (op == seg_op::max) reduce::segmented_max(d.data(), d_off.data(), segs, d_out.data());
  }
  return d_out.download();
}

template <class T>
void check_segmented(test::path p) {
  std::uint64_t stream = 1600;
  for (const auto& l : layouts()) {
    const std::vector<T> x = values<T>(l.offsets.back(), ++stream);
    const auto segs = static_cast<std::int64_t>(l.offsets.size()) - 1;
    const auto sums = run_segmented(p, seg_op::sum, x, l.offsets);
    const auto mins = run_segmented(p, seg_op::min, x, l.offsets);
    const auto maxs = run_segmented(p, seg_op::max, x, l.offsets);
    int failures = 0;  // report the first few bad segments, not a million
    for (std::int64_t s = 0; s < segs && failures < 5; ++s) {
      const std::vector<T> seg(x.begin() + l.offsets[s], x.begin() + l.offsets[s + 1]);
      const auto m = static_cast<std::int64_t>(seg.size());
      BOOST_TEST_CONTEXT(test::to_string(p) << ", " << l.what << ", segment " << s << " of length " << m) {
        bool ok = true;
        if constexpr (std::is_floating_point_v<T>) {
          // CUDA, any order within a segment: |error| <= gamma_T(m - 1) sum|x|; the reference sums a segment
          // in double and rounds once: gamma_double(m - 1) sum|x| + u_T (|exact| + that) (reduce_paths.hpp).
          const auto o = test::oracle::sum(seg);
          const double bound = p == test::path::reference
                                   ? test::reference_bound<T>(m, o.abs_sum, o.sum)
                                   : test::gamma<T>(static_cast<double>(m > 1 ? m - 1 : 0)) * static_cast<double>(o.abs_sum);
          const auto r = test::within_bound(static_cast<double>(sums[s]), o.sum, bound);
          BOOST_TEST(r);
          ok = ok && static_cast<bool>(r);
        } else {
          ok = ok && sums[s] == test::oracle::wrapped_sum(seg);
          BOOST_TEST(sums[s] == test::oracle::wrapped_sum(seg));
        }
        const T lo = test::oracle::arg_extremum<T, false>(seg).value, hi = test::oracle::arg_extremum<T, true>(seg).value;
        BOOST_TEST(mins[s] == lo);
        BOOST_TEST(maxs[s] == hi);
        ok = ok && mins[s] == lo && maxs[s] == hi;
        failures += !ok;
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(segmented)

CPU_TEST_CASE_TEMPLATE(reference_segmented_matches_oracle, T, all_types) { check_segmented<T>(test::path::reference); }
GPU_TEST_CASE_TEMPLATE(cuda_segmented_matches_oracle, T, all_types) {
  check_segmented<T>(test::path::cuda_device_result);
  check_segmented<T>(test::path::cuda_workspace);
}

CPU_TEST_CASE(reference_rejects_decreasing_offsets) {
  const std::vector<float> x(10, 1.f);
  const std::vector<std::int64_t> off = {0, 5, 3, 10};
  std::vector<float> out(3);
  BOOST_CHECK_THROW(reduce::reference::segmented_sum(x.data(), off.data(), 3, out.data()), std::invalid_argument);
  BOOST_CHECK_THROW(reduce::reference::segmented_sum(x.data(), off.data(), -1, out.data()), std::invalid_argument);
}

// The GPU calls leave their queue counters at zero for the next call (no memset per call): one
// workspace alternating between layouts with many, no and few long segments must stay exact.
GPU_TEST_CASE(cuda_segmented_workspace_serves_alternating_layouts) {
  const auto all = layouts();
  std::int64_t most = 0;
  for (const auto& l : all) most = std::max<std::int64_t>(most, static_cast<std::int64_t>(l.offsets.size()) - 1);
  reduce::workspace ws(reduce::workspace::segmented_bytes(most));
  std::uint64_t stream = 1700;
  for (int round = 0; round < 3; ++round) {
    for (const auto& l : all) {
      const auto segs = static_cast<std::int64_t>(l.offsets.size()) - 1;
      const std::vector<std::int64_t> x = values<std::int64_t>(l.offsets.back(), ++stream);
      gpukit::device_buffer<std::int64_t> d(x), d_off(l.offsets), d_out(std::max<std::int64_t>(segs, 1));
      d_out.fill_bytes(test::poison_byte);
      reduce::segmented_max(d.data(), d_off.data(), segs, d_out.data(), ws);
      const auto got = d_out.download();
      int failures = 0;
      for (std::int64_t s = 0; s < segs && failures < 5; ++s) {
        const std::vector<std::int64_t> seg(x.begin() + l.offsets[s], x.begin() + l.offsets[s + 1]);
        const auto want = test::oracle::arg_extremum<std::int64_t, true>(seg).value;
        BOOST_TEST_CONTEXT("round " << round << ", " << l.what << ", segment " << s) {
          BOOST_TEST(got[static_cast<std::size_t>(s)] == want);
        }
        failures += got[static_cast<std::size_t>(s)] != want;
      }
    }
  }
}

GPU_TEST_CASE(cuda_segmented_rejects_a_small_workspace) {
  gpukit::device_buffer<float> x(std::vector<float>(100, 1.f));
  std::vector<std::int64_t> off(100001, 0);
  gpukit::device_buffer<std::int64_t> d_off(off);
  gpukit::device_buffer<float> out(100000);
  reduce::workspace ws;  // default size: too small for 100000 segments
  BOOST_CHECK_THROW(reduce::segmented_sum(x.data(), d_off.data(), 100000, out.data(), ws), std::invalid_argument);
  ws.reserve(reduce::workspace::segmented_bytes(100000));
  reduce::segmented_sum(x.data(), d_off.data(), 100000, out.data(), ws);
  for (float v : out.download()) BOOST_TEST(v == 0.f);  // every segment empty
}

BOOST_AUTO_TEST_SUITE_END()
