#include "gpukit/host_memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace gpukit {
namespace {

std::string bytes_text(std::uint64_t b) {
  if (b == UINT64_MAX) return "more than 2^64 bytes";
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.1f", static_cast<double>(b) / (1024.0 * 1024.0 * 1024.0));
  return std::to_string(b) + " bytes (" + gib + " GiB)";
}

}  // namespace

std::uint64_t host_memory_limit_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  std::uint64_t limit = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
                                              : UINT64_MAX;
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit r{};
    if (::getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
      limit = std::min<std::uint64_t>(limit, static_cast<std::uint64_t>(r.rlim_cur));
  }
  return limit;
}

std::optional<std::string> host_memory_shortfall(std::uint64_t bytes, const std::string& what) {
  const std::uint64_t limit = host_memory_limit_bytes();
  if (bytes <= limit) return std::nullopt;
  return "needs " + bytes_text(bytes) + " of host memory for " + what + ", more than the " + bytes_text(limit) +
         " this process may use";
}

}  // namespace gpukit
