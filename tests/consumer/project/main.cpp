// Uses the installed libreduce and libsparse: the CPU backends everywhere, the CUDA backends too when a
// device exists.
#include <reduce/device.hpp>
#include <gpukit/device_buffer.hpp>
#include <reduce/reduce.hpp>
#include <sparse/csr.hpp>
#include <sparse/spmv.hpp>

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

  // y = A v for the 3x3 tridiagonal [2 -1 0; -1 2 -1; 0 -1 2] and v = (1, 2, 3): y = (0, 0, 4).
  const sparse::host_csr<double, std::int32_t> a(3, 3, {0, 2, 5, 7}, {0, 1, 0, 1, 2, 1, 2},
                                                 {2, -1, -1, 2, -1, -1, 2});
  const std::vector<double> v = {1, 2, 3};
  std::vector<double> y(3, -1);
  sparse::reference::spmv(a, 1.0, v.data(), 0.0, y.data());
  std::cout << "consumer: A v = (" << y[0] << ", " << y[1] << ", " << y[2] << ") (cpu)\n";
  if (y != std::vector<double>{0, 0, 4}) return 1;

  if (reduce::cuda_device_available()) {
    gpukit::device_buffer<std::int64_t> d(x);
    const std::int64_t gpu = reduce::sum(d.data(), d.size());
    std::cout << "consumer: sum of 1..1000 = " << gpu << " (cuda)\n";
    if (gpu != 500500) return 1;
    const sparse::device_csr<double, std::int32_t> da(a);
    const sparse::spmv_plan<double, std::int32_t> plan(da);
    gpukit::device_buffer<double> dv(v), dy(3);
    sparse::spmv(plan, 1.0, dv.data(), 0.0, dy.data());
    if (dy.download() != std::vector<double>{0, 0, 4}) return 1;
    std::cout << "consumer: A v matches on cuda\n";
  }
  return 0;
}
