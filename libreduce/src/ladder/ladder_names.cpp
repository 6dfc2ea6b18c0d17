// The ladder's names and descriptions, and the CPU twin of the serial rung (plain C++, no CUDA).
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "reduce/ladder.hpp"
#include "serial_accumulate.hpp"

namespace reduce {
namespace {

struct rung_info {
  ladder_kernel kernel;
  const char* name;
  const char* description;
};

// Ladder order. The description says what the rung changes relative to the previous one.
constexpr std::array<rung_info, 16> rungs = {{
    {ladder_kernel::serial, "serial", "one thread walks the array (baseline)"},
    {ladder_kernel::atomic_global, "atomic_global", "one thread per element, atomicAdd on one global word"},
    {ladder_kernel::atomic_shared, "atomic_shared", "atomicAdd into shared memory, one global atomic per block"},
    {ladder_kernel::interleaved_divergent, "interleaved_divergent",
     "Harris 1: shared-memory tree, interleaved addressing, divergent tid % 2s"},
    {ladder_kernel::interleaved_strided, "interleaved_strided",
     "Harris 2: strided index, no divergence, bank conflicts"},
    {ladder_kernel::sequential_addressing, "sequential_addressing", "Harris 3: sequential addressing, no conflicts"},
    {ladder_kernel::first_add_during_load, "first_add_during_load", "Harris 4: two elements per thread at load"},
    {ladder_kernel::unroll_last_warp, "unroll_last_warp", "Harris 5: last warp unrolled (with __syncwarp)"},
    {ladder_kernel::complete_unroll, "complete_unroll", "Harris 6: block size as template, tree fully unrolled"},
    {ladder_kernel::multiple_per_thread, "multiple_per_thread", "Harris 7: grid-stride, many elements per thread"},
    {ladder_kernel::shuffle, "shuffle", "warp shuffles inside each warp, shared memory per warp only"},
    {ladder_kernel::warp_atomics, "warp_atomics", "shuffle per warp, one atomicAdd per warp, one launch"},
    {ladder_kernel::block_atomics, "block_atomics", "shuffle per block, one atomicAdd per block, one launch"},
    {ladder_kernel::two_pass_contiguous, "two_pass_contiguous", "two launches, contiguous chunk per thread"},
    {ladder_kernel::two_pass_interleaved, "two_pass_interleaved", "two launches, grid-stride (coalesced) loads"},
    {ladder_kernel::single_pass_last_block, "single_pass_last_block",
     "one launch, last block to finish combines the partials"},
}};

const rung_info& info(ladder_kernel k) {
  for (const auto& r : rungs)
    if (r.kernel == k) return r;
  throw std::invalid_argument("unknown ladder_kernel value " + std::to_string(static_cast<int>(k)));
}

}  // namespace

const char* to_string(ladder_kernel k) { return info(k).name; }
const char* describe(ladder_kernel k) { return info(k).description; }

ladder_kernel parse_ladder_kernel(std::string_view name) {
  for (const auto& r : rungs)
    if (name == r.name) return r.kernel;
  std::string valid;
  for (const auto& r : rungs) valid += (valid.empty() ? "" : ", ") + std::string(r.name);
  throw std::invalid_argument("unknown ladder kernel '" + std::string(name) + "' (expected one of: " + valid + ")");
}

std::vector<ladder_kernel> all_ladder_kernels() {
  std::vector<ladder_kernel> all;
  for (const auto& r : rungs) all.push_back(r.kernel);
  return all;
}

bool is_deterministic(ladder_kernel k) {
  return k != ladder_kernel::atomic_global && k != ladder_kernel::atomic_shared && k != ladder_kernel::warp_atomics &&
         k != ladder_kernel::block_atomics;
}

namespace reference {
template <class T>
T ladder_serial_sum(const T* in, std::int64_t n) {
  if (n < 0) throw std::invalid_argument("ladder_serial_sum: negative element count " + std::to_string(n));
  return detail::serial_accumulate(in, n);
}
template std::int32_t ladder_serial_sum(const std::int32_t*, std::int64_t);
template std::int64_t ladder_serial_sum(const std::int64_t*, std::int64_t);
template float ladder_serial_sum(const float*, std::int64_t);
template double ladder_serial_sum(const double*, std::int64_t);
}  // namespace reference

}  // namespace reduce
