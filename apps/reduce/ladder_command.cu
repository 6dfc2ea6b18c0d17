// `reduce ladder`, the measuring half: every rung of reduce::ladder_sum on the present GPU, for 2^22
// int32 and 2^28 float, with the ceilings measured in the same run and CUB's sum as the last row; each
// result validated before it is timed. gpu_commands.cpp prints the seeds' table (kernel, time, GB/s, step
// and cumulative speedup, % of the read ceiling) and writes the report.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "app_errors.hpp"
#include "bench_report.hpp"
#include "cub_peers.hpp"
#include "gpu_results.hpp"
#include "gpukit/cuda_check.hpp"
#include "gpukit/cuda_timer.hpp"
#include "gpukit/device_buffer.hpp"
#include "reduce/device.hpp"
#include "reduce/ladder.hpp"

namespace reduce_app {
namespace {

namespace rep = report;

// The serial rung reads ~1 element per ~20 ns on one thread and atomic_global does one same-address
// atomic per element (~1 per clock in L2): at 2^28 they would take seconds per call. They are timed on
// a prefix of at most these many elements and scaled linearly (both are linear in n), marked in the
// table.
std::int64_t timed_elements(reduce::ladder_kernel k, std::int64_t n) {
  if (k == reduce::ladder_kernel::serial) return std::min<std::int64_t>(n, std::int64_t{1} << 18);
  if (k == reduce::ladder_kernel::atomic_global) return std::min<std::int64_t>(n, std::int64_t{1} << 22);
  return n;
}

ladder_ceilings measure_ceilings(cudaStream_t stream, gpukit::cuda_timer& timer, bool quick) {
  ladder_ceilings c;
  {
    // Device-to-device copy of 1 GiB (2 GiB counting the write): far past L2, read + write streams.
    const auto copy = gpukit::measure_copy_ceiling(std::size_t{1} << 30, stream, {2, quick ? 5 : 20});
    c.copy_bytes = copy.bytes_moved;
    c.copy_us = copy.t.median_us;
    c.copy_gbps = copy.gb_per_s();
  }
  {
    const std::int64_t n = std::int64_t{1} << 28;
    const std::vector<float> x = rep::uniform_floats(n, -1.f, 1.f, 11);
    gpukit::device_buffer<float> d(x), out(1);
    const auto cub = cub_peers::sum(d.data(), n, out.data());
    const auto t = timer.time([&] { cub(stream); }, {3, quick ? 10 : 30});
    c.cub_n = n;
    c.cub_us = t.median_us;
    c.cub_read_gbps = gpukit::gb_per_s(static_cast<double>(n) * sizeof(float), t.median_us);
  }
  return c;
}

// Expected sum of x[0..m): long double (floats) or wrapped (ints), and sum|x| for the bound.
template <class T>
struct expected {
  long double sum = 0, abs_sum = 0;
  T wrapped{};
};
template <class T>
expected<T> expect(const std::vector<T>& x, std::int64_t m) {
  expected<T> e;
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    U s = 0;
    for (std::int64_t i = 0; i < m; ++i) s = static_cast<U>(s + static_cast<U>(x[static_cast<std::size_t>(i)]));
    e.wrapped = static_cast<T>(s);
  } else {
    for (std::int64_t i = 0; i < m; ++i) {
      e.sum += x[static_cast<std::size_t>(i)];
      e.abs_sum += std::fabs(static_cast<long double>(x[static_cast<std::size_t>(i)]));
    }
  }
  return e;
}

template <class T>
void validate(const std::string& what, std::int64_t m, T got, const expected<T>& e, double depth) {
  if constexpr (std::is_integral_v<T>) {
    if (got != e.wrapped)
      throw gpukit::check_failed("ladder: " + what + " on " + std::to_string(m) + " elements returned " +
                                 std::to_string(got) + ", expected " + std::to_string(e.wrapped));
  } else {
    // |error| <= gamma(depth) * sum|x| (see reduce::ladder_error_depth)
    const double bound = rep::gamma_float(depth) * static_cast<double>(e.abs_sum);
    const double err = std::fabs(static_cast<double>(got) - static_cast<double>(e.sum));
    if (!(err <= bound))
      throw gpukit::check_failed("ladder: " + what + " on " + std::to_string(m) + " elements returned " +
                                 rep::format("%.9g", static_cast<double>(got)) + ", expected " +
                                 rep::format("%.9g", static_cast<double>(e.sum)) + " (|error| " +
                                 rep::format("%.3g", err) + " > bound " + rep::format("%.3g", bound) + ")");
  }
}

// One table's inputs on the device and what every row needs.
template <class T>
struct table_run {
  std::string type;
  std::int64_t n;
  const std::vector<T>& x;
  cudaStream_t stream;
  gpukit::cuda_timer& timer;
  bool quick;
  gpukit::device_buffer<T> d{x}, out{1};
  expected<T> full = expect(x, n);

  // Poisons the output, runs `call` once, returns its result (legacy-stream poison done first).
  template <class Call>
  T run_once(Call&& call) {
    out.fill_bytes(0xFF);
    gpukit::device_synchronize();  // poison (legacy stream) done before the call (non-blocking stream)
    call();
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    return out.download()[0];
  }
};

template <class T>
ladder_row time_rung(table_run<T>& t, reduce::ladder_kernel k, reduce::ladder_workspace& ws) {
  ladder_row r;
  r.kernel = reduce::to_string(k);
  r.description = reduce::describe(k);
  r.deterministic = reduce::is_deterministic(k);
  r.n_timed = timed_elements(k, t.n);
  r.scaled = r.n_timed < t.n;
  auto call = [&] { reduce::ladder_sum(k, t.d.data(), r.n_timed, t.out.data(), ws, t.stream); };
  // Validate once before timing; fail loudly.
  validate(r.kernel, r.n_timed, t.run_once(call), r.scaled ? expect(t.x, r.n_timed) : t.full,
           static_cast<double>(reduce::ladder_error_depth(k, r.n_timed)));
  const bool slow = k == reduce::ladder_kernel::serial || k == reduce::ladder_kernel::atomic_global;
  r.t = t.timer.time(call, slow ? gpukit::repeats{1, t.quick ? 3 : 5} : gpukit::repeats{3, t.quick ? 10 : 30});
  r.time_us = r.t.median_us * static_cast<double>(t.n) / static_cast<double>(r.n_timed);
  return r;
}

template <class T>
ladder_row time_cub(table_run<T>& t) {
  ladder_row r;
  r.kernel = "cub_device_reduce_sum";
  r.description = std::string("reference: ") + cub_peers::version() + " DeviceReduce::Sum";
  r.n_timed = t.n;
  const auto cub = cub_peers::sum(t.d.data(), t.n, t.out.data());
  // CUB: chains of at most n / 2^15 additions (it runs far more than 2^15 threads) plus a tree < 64 deep
  validate(r.kernel, t.n, t.run_once([&] { cub(t.stream); }), t.full, static_cast<double>(t.n / 32768 + 64));
  r.t = t.timer.time([&] { cub(t.stream); }, {3, t.quick ? 10 : 30});
  r.time_us = r.t.median_us;
  return r;
}

template <class T>
ladder_table run_table(const std::string& type, std::int64_t n, const std::vector<T>& x, cudaStream_t stream,
                       gpukit::cuda_timer& timer, const ladder_ceilings& c, bool quick, std::ostream& log) {
  table_run<T> t{type, n, x, stream, timer, quick};
  reduce::ladder_workspace ws(n);
  ladder_table tab;
  tab.type = type;
  tab.n = n;
  const double bytes = static_cast<double>(n) * sizeof(T);
  double first_us = 0, prev_us = 0;
  auto finish = [&](ladder_row r) {
    r.gbps = gpukit::gb_per_s(bytes, r.time_us);
    r.step = prev_us > 0 ? prev_us / r.time_us : 1.0;
    if (first_us == 0) first_us = r.time_us;
    r.cumulative = first_us / r.time_us;
    r.pct_ceiling = 100.0 * r.gbps / c.cub_read_gbps;
    prev_us = r.time_us;
    tab.rows.push_back(r);
    log << "  " << type << " " << rep::size_label(n) << "  " << r.kernel << ": " << rep::format("%.2f us", r.time_us)
        << (r.scaled ? " (scaled)" : "") << "\n";
  };
  for (reduce::ladder_kernel k : reduce::all_ladder_kernels()) finish(time_rung(t, k, ws));
  finish(time_cub(t));
  return tab;
}

}  // namespace

ladder_data measure_ladder(bool quick, std::ostream& log) {
  if (!reduce::cuda_device_available())
    throw gpukit::no_cuda_device("reduce ladder times GPU kernels: " + reduce::cuda_unavailable_reason());
  ladder_data d;
  d.gpu = reduce::cuda_device_description();
  log << "reduce ladder on " << d.gpu << (quick ? "  [quick]" : "") << "\n";
  const gpukit::owned_stream owned;
  const cudaStream_t stream = owned.get();
  gpukit::cuda_timer timer(stream);
  d.ceilings = measure_ceilings(stream, timer, quick);
  const ladder_ceilings& c = d.ceilings;
  log << rep::format("ceilings: device-to-device copy %.0f GB/s (read + write of 2 x 1 GiB, %.1f us); "
                     "%s sum of 2^28 floats %.1f us = %.0f GB/s read (practical read ceiling)\n",
                     c.copy_gbps, c.copy_us, cub_peers::version(), c.cub_us, c.cub_read_gbps);
  {
    const std::int64_t n = std::int64_t{1} << 22;
    d.tables.push_back(
        run_table<std::int32_t>("int32", n, rep::uniform_ints(n, -100, 100, 21), stream, timer, c, quick, log));
  }
  {
    const std::int64_t n = std::int64_t{1} << 28;
    d.tables.push_back(run_table<float>("float", n, rep::uniform_floats(n, -1.f, 1.f, 22), stream, timer, c, quick, log));
  }
  return d;
}

}  // namespace reduce_app
