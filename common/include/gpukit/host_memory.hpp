// Sizes declared by files and options, checked before anything is allocated for them (common layer):
// products that overflow, and byte counts beyond what this process can hold. Libraries call these and
// throw their own error type with the text, so a 68-byte file declaring 5e8 rows fails in microseconds
// with one line naming the bytes, not after minutes of paging or with std::bad_alloc.
//
//   std::int64_t cells = 0;
//   if (!gpukit::checked_mul(nx, ny, cells) || !gpukit::checked_mul(cells, nz, cells)) throw ...;
//   if (auto why = gpukit::host_memory_shortfall(cells * 40, "the domain's fields")) throw my_error(path + ": " + *why);
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace gpukit {

/// r = a * b for non-negative a, b; false (r unchanged) when the product does not fit int64.
inline bool checked_mul(std::int64_t a, std::int64_t b, std::int64_t& r) {
  std::int64_t p = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &p)) return false;
  r = p;
  return true;
}

/// The bytes this process may allocate at most: physical memory, lowered by `ulimit -v` / `ulimit -d`
/// when they are set.
std::uint64_t host_memory_limit_bytes();

/// "needs 6000000012 bytes (5.6 GiB) of host memory for WHAT, more than the 4294967296 bytes (4.0 GiB)
/// this process may use" when `bytes` exceeds host_memory_limit_bytes(), nothing otherwise. A size whose
/// byte count overflowed is passed as UINT64_MAX.
std::optional<std::string> host_memory_shortfall(std::uint64_t bytes, const std::string& what);

/// bytes = count * per_item saturated at UINT64_MAX (for host_memory_shortfall).
inline std::uint64_t saturating_bytes(std::int64_t count, std::uint64_t per_item) {
  std::uint64_t r = 0;
  if (count < 0 || __builtin_mul_overflow(static_cast<std::uint64_t>(count), per_item, &r)) return UINT64_MAX;
  return r;
}

}  // namespace gpukit
