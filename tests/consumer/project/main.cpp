// Uses the installed libreduce: the CPU backend everywhere, the CUDA backend too when a device exists.
#include <reduce/device.hpp>
#include <reduce/device_buffer.hpp>
#include <reduce/reduce.hpp>

#include <cstdint>
#include <iostream>
#include <numeric>
#include <vector>

int main() {
  std::vector<std::int64_t> x(1000);
  std::iota(x.begin(), x.end(), 1);
  const std::int64_t cpu = reduce::reference::sum(x.data(), static_cast<std::int64_t>(x.size()));
  std::cout << "consumer: sum of 1..1000 = " << cpu << " (cpu)\n";
  if (cpu != 500500) return 1;
  if (reduce::cuda_device_available()) {
    reduce::device_buffer<std::int64_t> d(x);
    const std::int64_t gpu = reduce::sum(d.data(), d.size());
    std::cout << "consumer: sum of 1..1000 = " << gpu << " (cuda)\n";
    if (gpu != 500500) return 1;
  }
  return 0;
}
