// `reduce ladder`: the seeds' table (kernel, time, GB/s, step and cumulative speedup, % of the read
// ceiling) for every rung of reduce::ladder_sum on the present GPU, for 2^22 int32 and 2^28 float, with
// the ceilings measured in the same run and CUB's sum as the last row.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "atomic_file.hpp"
#include "bench_report.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "cub_peers.hpp"
#include "gpukit/cuda_timer.hpp"
#include "json_writer.hpp"
#include "gpukit/cuda_check.hpp"
#include "reduce/device.hpp"
#include "gpukit/device_buffer.hpp"
#include "reduce/ladder.hpp"

namespace reduce_app {
namespace {

namespace rep = report;

struct ceilings {
  double copy_bytes = 0;  // read + write
  double copy_us = 0;
  double copy_gbps = 0;
  double cub_n = 0;
  double cub_us = 0;
  double cub_read_gbps = 0;  // CUB float sum at 2^28: the practical read ceiling
};

struct row {
  std::string kernel, description;
  std::int64_t n_timed = 0;
  bool scaled = false;
  bool deterministic = true;
  gpukit::timing t;
  double time_us = 0;  // for the full n (scaled when n_timed < n)
  double gbps = 0, step = 0, cumulative = 0, pct_ceiling = 0;
};

struct table {
  std::string type;
  std::int64_t n = 0;
  std::vector<row> rows;
};

// The serial rung reads ~1 element per ~20 ns on one thread and atomic_global does one same-address
// atomic per element (~1 per clock in L2): at 2^28 they would take seconds per call. They are timed on
// a prefix of at most these many elements and scaled linearly (both are linear in n), marked in the
// table.
std::int64_t timed_elements(reduce::ladder_kernel k, std::int64_t n) {
  if (k == reduce::ladder_kernel::serial) return std::min<std::int64_t>(n, std::int64_t{1} << 18);
  if (k == reduce::ladder_kernel::atomic_global) return std::min<std::int64_t>(n, std::int64_t{1} << 22);
  return n;
}

ceilings measure_ceilings(cudaStream_t stream, gpukit::cuda_timer& timer, bool quick) {
  ceilings c;
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
    c.cub_n = static_cast<double>(n);
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
      throw std::runtime_error("ladder: " + what + " on " + std::to_string(m) + " elements returned " +
                               std::to_string(got) + ", expected " + std::to_string(e.wrapped));
  } else {
    // |error| <= gamma(depth) * sum|x| (see reduce::ladder_error_depth)
    const double bound = rep::gamma_float(depth) * static_cast<double>(e.abs_sum);
    const double err = std::fabs(static_cast<double>(got) - static_cast<double>(e.sum));
    if (!(err <= bound))
      throw std::runtime_error("ladder: " + what + " on " + std::to_string(m) + " elements returned " +
                               rep::format("%.9g", static_cast<double>(got)) + ", expected " +
                               rep::format("%.9g", static_cast<double>(e.sum)) + " (|error| " +
                               rep::format("%.3g", err) + " > bound " + rep::format("%.3g", bound) + ")");
  }
}

template <class T>
table run_table(const std::string& type, std::int64_t n, const std::vector<T>& x, cudaStream_t stream,
                gpukit::cuda_timer& timer, const ceilings& c, bool quick) {
  table tab;
  tab.type = type;
  tab.n = n;
  gpukit::device_buffer<T> d(x), out(1);
  reduce::ladder_workspace ws(n);
  const expected<T> full = expect(x, n);
  const double bytes = static_cast<double>(n) * sizeof(T);
  double first_us = 0, prev_us = 0;
  auto finish = [&](row& r) {
    r.gbps = gpukit::gb_per_s(bytes, r.time_us);
    r.step = prev_us > 0 ? prev_us / r.time_us : 1.0;
    if (first_us == 0) first_us = r.time_us;
    r.cumulative = first_us / r.time_us;
    r.pct_ceiling = 100.0 * r.gbps / c.cub_read_gbps;
    prev_us = r.time_us;
    tab.rows.push_back(r);
    std::cerr << "  " << type << " " << rep::size_label(n) << "  " << r.kernel << ": "
              << rep::format("%.2f us", r.time_us) << (r.scaled ? " (scaled)" : "") << "\n";
  };

  for (reduce::ladder_kernel k : reduce::all_ladder_kernels()) {
    row r;
    r.kernel = reduce::to_string(k);
    r.description = reduce::describe(k);
    r.deterministic = reduce::is_deterministic(k);
    r.n_timed = timed_elements(k, n);
    r.scaled = r.n_timed < n;
    // Validate once before timing; fail loudly.
    out.fill_bytes(0xFF);
    gpukit::device_synchronize();  // poison (legacy stream) done before the call (non-blocking stream)
    reduce::ladder_sum(k, d.data(), r.n_timed, out.data(), ws, stream);
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    const T got = out.download()[0];
    validate(r.kernel, r.n_timed, got, r.scaled ? expect(x, r.n_timed) : full,
             static_cast<double>(reduce::ladder_error_depth(k, r.n_timed)));
    const bool slow = k == reduce::ladder_kernel::serial || k == reduce::ladder_kernel::atomic_global;
    const gpukit::repeats reps = slow ? gpukit::repeats{1, quick ? 3 : 5} : gpukit::repeats{3, quick ? 10 : 30};
    r.t = timer.time([&] { reduce::ladder_sum(k, d.data(), r.n_timed, out.data(), ws, stream); }, reps);
    r.time_us = r.t.median_us * static_cast<double>(n) / static_cast<double>(r.n_timed);
    finish(r);
  }
  {
    row r;
    r.kernel = "cub_device_reduce_sum";
    r.description = std::string("reference: ") + cub_peers::version() + " DeviceReduce::Sum";
    r.n_timed = n;
    const auto cub = cub_peers::sum(d.data(), n, out.data());
    out.fill_bytes(0xFF);
    gpukit::device_synchronize();  // poison (legacy stream) done before the call (non-blocking stream)
    cub(stream);
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    // CUB: chains of at most n / 2^15 additions (it runs far more than 2^15 threads) plus a tree < 64 deep
    validate(r.kernel, n, out.download()[0], full, static_cast<double>(n / 32768 + 64));
    r.t = timer.time([&] { cub(stream); }, {3, quick ? 10 : 30});
    r.time_us = r.t.median_us;
    finish(r);
  }
  return tab;
}

void print_table(const table& t) {
  std::cout << "\n" << t.type << " sum, n = " << rep::size_label(t.n) << " (" << t.n << " elements of 4 bytes, "
            << rep::format("%.1f", static_cast<double>(t.n) * 4 / 1e6) << " MB)\n";
  std::cout << rep::format("%-24s %12s %10s %8s %8s %8s\n", "kernel", "time (us)", "GB/s", "step", "cumul.",
                           "% ceil");
  for (const row& r : t.rows)
    std::cout << rep::format("%-24s %12.2f %10.1f %7.2fx %7.1fx %7.1f%%%s\n", r.kernel.c_str(), r.time_us, r.gbps,
                             r.step, r.cumulative, r.pct_ceiling,
                             r.scaled ? ("  * timed on " + rep::size_label(r.n_timed) + ", scaled").c_str() : "");
}

}  // namespace

int ladder_command(int argc, char** argv) {
  gpukit::cli::args a(argc, argv, 2, {"json", "csv"}, {"quick"});
  if (!a.positional().empty()) throw gpukit::cli::usage_error("ladder takes no positional arguments");
  const bool quick = a.flag("quick");
  if (!reduce::cuda_device_available())
    throw gpukit::no_cuda_device("reduce ladder times GPU kernels: " + reduce::cuda_unavailable_reason());

  const std::string gpu = reduce::cuda_device_description();
  std::cout << "reduce ladder on " << gpu << (quick ? "  [quick]" : "") << "\n";
  const gpukit::owned_stream owned;
  const cudaStream_t stream = owned.get();
  gpukit::cuda_timer timer(stream);

  const ceilings c = measure_ceilings(stream, timer, quick);
  std::cout << rep::format("ceilings: device-to-device copy %.0f GB/s (read + write of 2 x 1 GiB, %.1f us); "
                           "%s sum of 2^28 floats %.1f us = %.0f GB/s read (practical read ceiling)\n",
                           c.copy_gbps, c.copy_us, cub_peers::version(), c.cub_us, c.cub_read_gbps);

  std::vector<table> tables;
  {
    const std::int64_t n = std::int64_t{1} << 22;
    tables.push_back(run_table<std::int32_t>("int32", n, rep::uniform_ints(n, -100, 100, 21), stream, timer, c, quick));
  }
  {
    const std::int64_t n = std::int64_t{1} << 28;
    tables.push_back(run_table<float>("float", n, rep::uniform_floats(n, -1.f, 1.f, 22), stream, timer, c, quick));
  }
  for (const table& t : tables) print_table(t);
  std::cout << "\nGB/s = input bytes / median time (CUDA events around one call, warm-up first, median of "
            << (quick ? 10 : 30) << " calls; 3-5 for the slow rungs). % ceil = GB/s / the CUB 2^28 read figure; "
            << "2^22 int32 (16 MB) sits in L2, so it can exceed 100 %. Atomic rungs: float results are not "
            << "deterministic. Block size 256 for every rung.\n";

  if (a.has("json")) {
    gpukit::json_writer j;
    j.begin_object();
    j.field("command", "reduce ladder").field("gpu", gpu).field("quick", quick).field("cub", cub_peers::version());
    j.field("block_threads", 256);
    j.field("timing", "CUDA events around one call, warm-up first, median; same input buffer reused");
    j.begin_object("ceilings")
        .field("memcpy_d2d_bytes_read_plus_write", c.copy_bytes)
        .field("memcpy_d2d_us", c.copy_us)
        .field("memcpy_d2d_gbps", c.copy_gbps)
        .field("cub_sum_float_n", c.cub_n)
        .field("cub_sum_float_us", c.cub_us)
        .field("cub_sum_float_read_gbps", c.cub_read_gbps)
        .end_object();
    j.begin_array("tables");
    for (const table& t : tables) {
      j.begin_object().field("type", t.type).field("n", static_cast<long long>(t.n));
      j.begin_array("rows");
      for (const row& r : t.rows) {
        j.begin_object()
            .field("kernel", r.kernel)
            .field("description", r.description)
            .field("n_timed", static_cast<long long>(r.n_timed))
            .field("scaled", r.scaled)
            .field("deterministic_float", r.deterministic)
            .field("time_us", r.time_us)
            .field("median_us_timed", r.t.median_us)
            .field("min_us_timed", r.t.min_us)
            .field("runs", r.t.runs)
            .field("gbps", r.gbps)
            .field("step_speedup", r.step)
            .field("cumulative_speedup", r.cumulative)
            .field("pct_of_read_ceiling", r.pct_ceiling)
            .end_object();
      }
      j.end_array().end_object();
    }
    j.end_array().end_object();
    j.commit(a.get("json", ""));
  }
  if (a.has("csv")) {
    std::ostringstream csv;
    csv << "type,n,kernel,n_timed,scaled,time_us,gbps,step_speedup,cumulative_speedup,pct_of_read_ceiling\n";
    for (const table& t : tables)
      for (const row& r : t.rows)
        csv << t.type << ',' << t.n << ',' << r.kernel << ',' << r.n_timed << ',' << (r.scaled ? 1 : 0) << ','
            << rep::format("%.4f,%.3f,%.4f,%.4f,%.3f", r.time_us, r.gbps, r.step, r.cumulative, r.pct_ceiling) << "\n";
    gpukit::write_file_atomically(a.get("csv", ""), csv.str());
  }
  return 0;
}

}  // namespace reduce_app
