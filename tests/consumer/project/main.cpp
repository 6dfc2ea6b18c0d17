// Uses the installed libreduce, libsparse and libwsm5: the CPU backends everywhere, the CUDA backends of
// libreduce and libsparse too when a device exists. Usage: consumer <data/wsm5 directory>.
#include <gpukit/device_buffer.hpp>
#include <reduce/device.hpp>
#include <reduce/reduce.hpp>
#include <sparse/csr.hpp>
#include <sparse/spmv.hpp>
#include <wsm5/wsm5.hpp>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

namespace {

bool reduce_and_spmv() {
  std::vector<std::int64_t> x(1000);
  std::iota(x.begin(), x.end(), 1);
  const std::int64_t cpu = reduce::reference::sum(x.data(), static_cast<std::int64_t>(x.size()));
  std::cout << "consumer: sum of 1..1000 = " << cpu << " (cpu)\n";
  if (cpu != 500500) return false;

  // y = A v for the 3x3 tridiagonal [2 -1 0; -1 2 -1; 0 -1 2] and v = (1, 2, 3): y = (0, 0, 4).
  const sparse::host_csr<double, std::int32_t> a(3, 3, {0, 2, 5, 7}, {0, 1, 0, 1, 2, 1, 2},
                                                 {2, -1, -1, 2, -1, -1, 2});
  const std::vector<double> v = {1, 2, 3};
  std::vector<double> y(3, -1);
  sparse::reference::spmv(a, 1.0, v.data(), 0.0, y.data());
  std::cout << "consumer: A v = (" << y[0] << ", " << y[1] << ", " << y[2] << ") (cpu)\n";
  if (y != std::vector<double>{0, 0, 4}) return false;

  if (!reduce::cuda_device_available()) return true;
  gpukit::device_buffer<std::int64_t> d(x);
  const std::int64_t gpu = reduce::sum(d.data(), d.size());
  std::cout << "consumer: sum of 1..1000 = " << gpu << " (cuda)\n";
  if (gpu != 500500) return false;
  const sparse::device_csr<double, std::int32_t> da(a);
  const sparse::spmv_plan<double, std::int32_t> plan(da);
  gpukit::device_buffer<double> dv(v), dy(3);
  sparse::spmv(plan, 1.0, dv.data(), 0.0, dy.data());
  if (dy.download() != std::vector<double>{0, 0, 4}) return false;
  std::cout << "consumer: A v matches on cuda\n";
  return true;
}

// One call of the WSM5 CPU reference on the five bundled golden columns (read through HDF5), against
// WRF's own output: precipitation within tests/wsm5's one-call bound, 1e-6 mm + (5e-7 + 5e-9) |value|.
bool wsm5_golden_columns(const std::string& dir) {
  wsm5::domain d = wsm5::read_hdf5(dir + "/golden_columns.h5");
  const wsm5::diagnostics diag = wsm5::reference::step(d);
  const wsm5::golden_file g = wsm5::read_golden_text(dir + "/wrf_v31_1step.txt");
  if (g.ncol != d.nx || d.ny != 1) return false;
  double rain = 0;
  for (std::int64_t c = 0; c < d.nx; ++c) {
    const double got = d.rainncv[static_cast<std::size_t>(c)];
    const double want = g.cols[static_cast<std::size_t>(c)].rainncv;
    if (std::fabs(got - want) > 1e-6 + 5.05e-7 * std::fabs(want)) {
      std::cout << "consumer: wsm5 column " << c + 1 << " rainncv " << got << " vs WRF " << want << "\n";
      return false;
    }
    rain += got;
  }
  std::cout << "consumer: wsm5 golden columns, one call: rain " << diag.rain_total << " mm (cpu)\n";
  return std::fabs(diag.rain_total - rain) <= 1e-9 * (1 + rain);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer <data/wsm5 directory>\n";
    return 2;
  }
  return reduce_and_spmv() && wsm5_golden_columns(argv[1]) ? 0 : 1;
}
