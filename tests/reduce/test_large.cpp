// More than 2^31 elements: 64-bit index math in every kernel and in the CPU twin. Guarded by the free
// memory (device: cudaMemGetInfo; host: /proc/meminfo), skipped with the reason when it is short.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gpukit/device_buffer.hpp"
#include "reduce/reduce.hpp"
#include "test_support.hpp"

namespace {

constexpr std::int64_t big_n = (std::int64_t{1} << 31) + 7;
constexpr std::size_t big_bytes = static_cast<std::size_t>(big_n) * 4;  // 8.6 GB of 4-byte elements
constexpr std::size_t margin = std::size_t{512} << 20;
constexpr std::int64_t marked = (std::int64_t{1} << 31) + 5;  // an index past 2^31

boost::test_tools::assertion_result device_memory_for_big(boost::unit_test::test_unit_id id) {
  auto r = test::cuda_device_present(id);
  if (!r) return r;
  if (test::reduced_sizes()) {  // the sanitizers' pass: 2^31 elements under memcheck take minutes per call
    boost::test_tools::assertion_result skip(false);
    skip.message() << "GPUKIT_TEST_REDUCED is set (sizes past 70,000 are left out)";
    return skip;
  }
  std::size_t free_bytes = 0, total = 0;
  const bool ok = cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes >= big_bytes + margin;
  boost::test_tools::assertion_result m(ok);
  if (!ok) m.message() << "needs " << (big_bytes + margin) / 1e9 << " GB of free device memory, has " << free_bytes / 1e9;
  return m;
}

boost::test_tools::assertion_result host_memory_for_big(boost::unit_test::test_unit_id) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t kb = 0;
  while (meminfo >> key >> kb) {
    if (key == "MemAvailable:") break;
    meminfo.ignore(256, '\n');
  }
  const bool ok = kb * 1024 >= big_bytes + (std::size_t{2} << 30);
  boost::test_tools::assertion_result m(ok);
  if (!ok) m.message() << "needs " << (big_bytes + (std::size_t{2} << 30)) / 1e9 << " GB of available host memory, has "
                       << kb * 1024 / 1e9;
  return m;
}

// Every element 0x01010101 = 16843009 (a byte fill), one element 0x7f7f7f7f at index 2^31 + 5.
constexpr std::uint32_t fill_u = 0x01010101u;
constexpr std::uint32_t mark_u = 0x7f7f7f7fu;
std::uint32_t expected_wrapped_sum() {
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(big_n - 1) * fill_u + mark_u);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(large)

BOOST_AUTO_TEST_CASE(cuda_more_than_2_pow_31_elements,
                     *boost::unit_test::label("gpu") * boost::unit_test::precondition(device_memory_for_big)) {
  gpukit::device_buffer<std::uint32_t> d(big_n);
  d.fill_bytes(0x01);
  gpukit::copy_to_device(d.data() + marked, &mark_u, sizeof mark_u);
  BOOST_TEST(reduce::sum(d.data(), big_n) == expected_wrapped_sum());  // exact modulo 2^32
  const auto hi = reduce::argmax(d.data(), big_n);
  BOOST_TEST(hi.value == mark_u);
  BOOST_TEST(hi.index == marked);
  const auto lo = reduce::argmin(d.data(), big_n);
  BOOST_TEST(lo.index == 0);
  BOOST_TEST(reduce::count_nonzero(d.data(), big_n) == big_n);
  // The same bytes as floats: 0x01010101 = 2.369e-38, 0x7f7f7f7f = 3.3961e38 (the max), the rest is
  // negligible; the reproducible sum is the exact sum rounded once, computed here in long double.
  const auto* f = reinterpret_cast<const float*>(d.data());
  float small_f, mark_f;
  std::memcpy(&small_f, &fill_u, 4);
  std::memcpy(&mark_f, &mark_u, 4);
  const long double exact = static_cast<long double>(small_f) * (big_n - 1) + mark_f;
  BOOST_TEST(reduce::reproducible_sum(f, big_n) == static_cast<float>(exact));
  BOOST_TEST(reduce::max(f, big_n) == mark_f);
}

BOOST_AUTO_TEST_CASE(reference_more_than_2_pow_31_elements,
                     *boost::unit_test::label("cpu") * boost::unit_test::precondition(host_memory_for_big)) {
  std::vector<std::uint32_t> x(static_cast<std::size_t>(big_n), fill_u);
  x[static_cast<std::size_t>(marked)] = mark_u;
  BOOST_TEST(reduce::reference::sum(x.data(), big_n) == expected_wrapped_sum());
  const auto hi = reduce::reference::argmax(x.data(), big_n);
  BOOST_TEST(hi.value == mark_u);
  BOOST_TEST(hi.index == marked);
  BOOST_TEST(reduce::reference::count_nonzero(x.data(), big_n) == big_n);
}

BOOST_AUTO_TEST_SUITE_END()
