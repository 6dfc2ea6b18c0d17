// `reduce bench`, the measuring half: libreduce's device-wide reductions against CUB, timed in the same
// run, from 2^10 to 2^30 elements, plus two segmented cases and the floor probe. gpu_commands.cpp checks
// the targets, prints the table and writes the report.
//
// Timing: CUDA events around one call, warm-up first, median of many ("plain"; ours and CUB's samples
// alternate, so that a drift of the host's launch cost during the run falls on both alike), and a CUDA
// Graph of 100 back-to-back calls, time per call ("graph", hides launch overhead; sizes up to 2^24).
// Plain timings are taken twice for sizes that fit in L2: on the same buffer every call (as the ANCHORS
// figures were measured, so the data sits in L2) and rotating over disjoint slices of a 2^30-element
// pool so that each call reads from DRAM. Workspace and CUB temporary storage are allocated before any
// timing. Every result is validated once (ours vs CUB vs a host double-precision pass) before timing.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "app_errors.hpp"
#include "bench_report.hpp"
#include "cub_peers.hpp"
#include "floor_probe.hpp"
#include "gpu_results.hpp"
#include "gpukit/cuda_check.hpp"
#include "gpukit/cuda_timer.hpp"
#include "gpukit/device_buffer.hpp"
#include "reduce/device.hpp"
#include "reduce/reduce.hpp"

namespace reduce_app {
namespace {

namespace rep = report;
using clock_us = double;

constexpr int graph_calls = 100;
constexpr std::int64_t graph_max_n = std::int64_t{1} << 24;

struct settings {
  bool quick = false;
  gpukit::repeats plain{5, 101};
  gpukit::repeats slow_plain{3, 20};  // n >= 2^28: a call takes ~0.25-1 ms, the spread is tiny
  gpukit::repeats graph{2, 20};
};

// Host statistics of the pool prefix x[0..n), y[0..n), in double: the validation oracle.
struct prefix_stats {
  std::int64_t n = 0;
  double sum = 0, abs_sum = 0, dot = 0, abs_dot = 0;
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
  std::int64_t argmax = -1;
  void extend(const std::vector<float>& x, const std::vector<float>& y, std::int64_t to) {
    for (std::int64_t i = n; i < to; ++i) {
      const float a = x[static_cast<std::size_t>(i)], b = y[static_cast<std::size_t>(i)];
      sum += a;
      abs_sum += std::fabs(a);
      dot += static_cast<double>(a) * b;
      abs_dot += std::fabs(static_cast<double>(a) * b);
      min = std::min(min, a);
      if (a > max) {  // strict: the first index of the maximum
        max = a;
        argmax = i;
      }
    }
    n = to;
  }
};

// A sound bound for a float reduction of n terms by any grid-stride kernel with at least 2^15 threads
// (CUB's and ours on any recent GPU): chains of at most n / 2^15 additions plus a tree of depth < 64,
// so |error| <= gamma(n / 2^15 + 64) * sum|x_i|.
double reduction_bound(std::int64_t n, double abs_sum) {
  return rep::gamma_float(static_cast<double>(n / (std::int64_t{1} << 15) + 64)) * abs_sum;
}

void check_close(const std::string& what, double got, double expected, double bound) {
  if (!(std::fabs(got - expected) <= bound))
    throw gpukit::check_failed("bench: validation failed: " + what + " = " + rep::format("%.9g", got) + ", expected " +
                             rep::format("%.9g", expected) + " within " + rep::format("%.3g", bound));
}
void check_true(const std::string& what, bool ok) {
  if (!ok) throw gpukit::check_failed("bench: validation failed: " + what);
}

// One operation: how we run it and how CUB runs it on inputs (x, y) of n elements.
struct op_spec {
  std::string name, peer_name;
  int inputs = 1;  // vectors read (dot: 2)
  // ours(x, y, n, stream): libreduce's workspace overload (no allocation)
  std::function<void(const float*, const float*, std::int64_t, cudaStream_t)> ours;
  // make_cub(x, y, n): the CUB call, temporary storage allocated now
  std::function<cub_peers::call(const float*, const float*, std::int64_t)> make_cub;
  // validate(x, y, n, stats, cub, stream): run both once on the pool prefix, check against the host
  std::function<void(const float*, const float*, std::int64_t, const prefix_stats&, const cub_peers::call&,
                     cudaStream_t)>
      validate;
};

class bench {
public:
  bench(const settings& s, cudaStream_t stream) : s_(s), stream_(stream), timer_(stream) {
    int device = 0;
    GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
    GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes_, cudaDevAttrL2CacheSize, device));
  }

  double l2_bytes() const { return l2_bytes_; }

  // Device-to-device copy of 1 GiB: (read + write bytes) / time.
  double measure_copy_gbps(double* us_out) {
    const auto c = gpukit::measure_copy_ceiling(std::size_t{1} << 30, stream_, {2, s_.quick ? 5 : 20});
    *us_out = c.t.median_us;
    return c.gb_per_s();
  }

  // Plain timings of ours and CUB's, their samples alternated (cuda_timer::time_paired): medians.
  template <class Ours, class Peer>
  std::pair<double, double> plain_pair(Ours&& ours, Peer&& peer, std::int64_t n) {
    const auto [a, b] = timer_.time_paired(ours, peer, n >= (std::int64_t{1} << 28) ? s_.slow_plain : s_.plain);
    return {a.median_us, b.median_us};
  }

  template <class Work>
  std::optional<double> graph(const std::string& what, Work&& w) {
    try {
      return timer_.time_graph(w, graph_calls, s_.graph).median_us;
    } catch (const gpukit::cuda_error& e) {
      (void)cudaGetLastError();
      std::cerr << "bench: warning: CUDA Graph timing of " << what << " failed, graph figure omitted: " << e.what()
                << "\n";
      return std::nullopt;
    }
  }

  // Times `op` at size n: plain same-buffer, plain rotating (when the inputs fit in L2), graph (n <= 2^24).
  bench_row run(const op_spec& op, std::int64_t n, const float* pool_x, const float* pool_y, std::int64_t pool_n,
                 const prefix_stats& stats) {
    bench_row r;
    r.op = op.name;
    r.peer_name = op.peer_name;
    r.n = n;
    r.bytes = static_cast<double>(n) * sizeof(float) * op.inputs;
    const cub_peers::call cub = op.make_cub(pool_x, pool_y, n);
    op.validate(pool_x, pool_y, n, stats, cub, stream_);

    auto ours_at = [&](std::int64_t slice) { op.ours(pool_x + slice * n, pool_y + slice * n, n, stream_); };
    auto cub_at = [&](std::int64_t slice) { cub(pool_x + slice * n, pool_y + slice * n, stream_); };
    std::tie(r.ours.plain_same_us, r.cub.plain_same_us) = plain_pair([&] { ours_at(0); }, [&] { cub_at(0); }, n);
    if (r.bytes <= l2_bytes_) {
      // Enough disjoint slices that the bytes read between two visits of one slice exceed 4x L2. Ours and
      // CUB's calls alternate, each on its own slice in turn: the slice a call reads was last read, by
      // either, 2 x slices - 1 calls before.
      const std::int64_t slices =
          std::min<std::int64_t>(pool_n / n, static_cast<std::int64_t>(std::ceil(4.0 * l2_bytes_ / r.bytes)) + 1);
      std::int64_t next_ours = 0, next_cub = 0;
      std::tie(r.ours.plain_rotating_us, r.cub.plain_rotating_us) =
          plain_pair([&] { ours_at(next_ours++ % slices); }, [&] { cub_at(next_cub++ % slices); }, n);
      r.ours.rotating_slices = r.cub.rotating_slices = static_cast<int>(slices);
    }
    if (n <= graph_max_n) {
      r.ours.graph_us = graph("ours " + op.name, [&] { ours_at(0); });
      r.cub.graph_us = graph("CUB " + op.name, [&] { cub_at(0); });
    }
    return r;
  }

  template <class Work>
  bench_row run_segmented(const std::string& name, std::int64_t items, std::int64_t segments, Work&& ours,
                           const cub_peers::call& cub) {
    bench_row r;
    r.op = name;
    r.peer_name = "cub::DeviceSegmentedReduce::Sum";
    r.n = items;
    r.segments = segments;
    r.bytes = static_cast<double>(items) * sizeof(float) + static_cast<double>(segments + 1) * sizeof(std::int64_t) +
              static_cast<double>(segments) * sizeof(float);
    std::tie(r.ours.plain_same_us, r.cub.plain_same_us) = plain_pair(ours, [&] { cub(stream_); }, items);
    r.ours.graph_us = graph("ours " + name, ours);
    r.cub.graph_us = graph("CUB " + name, [&] { cub(stream_); });
    return r;
  }

private:
  settings s_;
  cudaStream_t stream_;
  gpukit::cuda_timer timer_;
  int l2_bytes_ = 0;
};

float fetch(const float* d) {
  float v = 0;
  GPUKIT_CUDA_CHECK(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
  return v;
}

// Device outputs: ours and CUB's, poisoned before each validation run.
struct outputs {
  gpukit::device_buffer<float> ours{1}, cub{1};
  gpukit::device_buffer<reduce::value_index<float>> ours_vi{1};
  gpukit::device_buffer<std::int64_t> cub_index{1};
  void poison() {
    ours.fill_bytes(0xFF);
    cub.fill_bytes(0xFF);
    ours_vi.fill_bytes(0xFF);
    cub_index.fill_bytes(0xFF);
    // cudaMemset runs on the legacy default stream, which the benchmark's non-blocking stream does not
    // wait for: finish the poison before the calls under test run.
    gpukit::device_synchronize();
  }
};

std::vector<op_spec> make_ops(reduce::workspace& ws, outputs& out) {
  std::vector<op_spec> ops;
  // Every operation validates the same way: poison both outputs, run ours and CUB's once on the pool
  // prefix, wait, then `check(n, stats)` compares the results with the host pass.
  using check_fn = std::function<void(std::int64_t, const prefix_stats&)>;
  auto validated = [&out](const op_spec& op, check_fn check) {
    return [run = op.ours, check = std::move(check), &out](const float* x, const float* y, std::int64_t n,
                                                          const prefix_stats& st, const cub_peers::call& cub,
                                                          cudaStream_t s) {
      out.poison();
      run(x, y, n, s);
      cub(s);
      GPUKIT_CUDA_CHECK(cudaStreamSynchronize(s));
      check(n, st);
    };
  };
  using sum_fn = void (*)(const float*, std::int64_t, float*, reduce::workspace&, reduce::stream_t);
  // sum and its two variants against cub::DeviceReduce::Sum, checked against the host double sum.
  auto sum_like = [&](const std::string& name, sum_fn fn) {
    op_spec op;
    op.name = name;
    op.peer_name = "cub::DeviceReduce::Sum";
    op.ours = [fn, &ws, &out](const float* x, const float*, std::int64_t n, cudaStream_t s) {
      fn(x, n, out.ours.data(), ws, s);
    };
    op.make_cub = [&out](const float* x, const float*, std::int64_t n) { return cub_peers::sum(x, n, out.cub.data()); };
    op.validate = validated(op, [name, &out](std::int64_t n, const prefix_stats& st) {
      const double bound = reduction_bound(n, st.abs_sum);
      const std::string at = " at n = " + std::to_string(n);
      check_close("ours " + name + at, fetch(out.ours.data()), st.sum, bound);
      check_close("CUB sum" + at, fetch(out.cub.data()), st.sum, bound);
    });
    return op;
  };
  ops.push_back(sum_like("sum", &reduce::sum<float>));

  {
    op_spec op;
    op.name = "min";
    op.peer_name = "cub::DeviceReduce::Min";
    op.ours = [&ws, &out](const float* x, const float*, std::int64_t n, cudaStream_t s) {
      reduce::min(x, n, out.ours.data(), ws, s);
    };
    op.make_cub = [&out](const float* x, const float*, std::int64_t n) { return cub_peers::min(x, n, out.cub.data()); };
    op.validate = validated(op, [&out](std::int64_t n, const prefix_stats& st) {
      const std::string at = " at n = " + std::to_string(n);
      check_true("ours min" + at + " is exact", fetch(out.ours.data()) == st.min);  // min is exact
      check_true("CUB min" + at + " is exact", fetch(out.cub.data()) == st.min);
    });
    ops.push_back(op);
  }
  {
    op_spec op;
    op.name = "argmax";
    op.peer_name = "cub::DeviceReduce::ArgMax";
    op.ours = [&ws, &out](const float* x, const float*, std::int64_t n, cudaStream_t s) {
      reduce::argmax(x, n, out.ours_vi.data(), ws, s);
    };
    op.make_cub = [&out](const float* x, const float*, std::int64_t n) {
      return cub_peers::argmax(x, n, out.cub.data(), out.cub_index.data());
    };
    op.validate = validated(op, [&out](std::int64_t n, const prefix_stats& st) {
      const std::string at = " at n = " + std::to_string(n);
      const auto ours = out.ours_vi.download()[0];
      const std::int64_t cub_index = out.cub_index.download()[0];
      // Exact: the maximum and the FIRST index holding it (random floats repeat at 2^30 elements).
      check_true("ours argmax" + at + ": got (" + rep::format("%.9g", ours.value) + ", " + std::to_string(ours.index) +
                     "), expected (" + rep::format("%.9g", st.max) + ", " + std::to_string(st.argmax) + ")",
                 ours.value == st.max && ours.index == st.argmax);
      check_true("CUB argmax" + at + ": index " + std::to_string(cub_index) + " vs " + std::to_string(st.argmax),
                 fetch(out.cub.data()) == st.max && cub_index == st.argmax);
    });
    ops.push_back(op);
  }
  {
    op_spec op;
    op.name = "dot";
    op.peer_name = "cub::DeviceReduce::TransformReduce (x_i * y_i)";
    op.inputs = 2;
    op.ours = [&ws, &out](const float* x, const float* y, std::int64_t n, cudaStream_t s) {
      reduce::dot(x, y, n, out.ours.data(), ws, s);
    };
    op.make_cub = [&out](const float* x, const float* y, std::int64_t n) {
      return cub_peers::dot(x, y, n, out.cub.data());
    };
    op.validate = validated(op, [&out](std::int64_t n, const prefix_stats& st) {
      // one more rounding per term (the product): gamma(k + 1) * sum|x_i y_i|
      const double bound = rep::gamma_float(static_cast<double>(n / (std::int64_t{1} << 15) + 65)) * st.abs_dot;
      const std::string at = " at n = " + std::to_string(n);
      check_close("ours dot" + at, fetch(out.ours.data()), st.dot, bound);
      check_close("CUB dot" + at, fetch(out.cub.data()), st.dot, bound);
    });
    ops.push_back(op);
  }
  ops.push_back(sum_like("reproducible_sum", &reduce::reproducible_sum<float>));
  ops.push_back(sum_like("compensated_sum", &reduce::compensated_sum<float>));
  return ops;
}

// Segment offsets: (a) lengths uniform in 0..16, (b) equal lengths.
std::vector<std::int64_t> random_offsets(std::int64_t segments, int max_len, std::uint64_t seed) {
  std::vector<std::int64_t> off(static_cast<std::size_t>(segments + 1), 0);
  rep::splitmix64 g(seed);
  for (std::int64_t s = 0; s < segments; ++s)
    off[static_cast<std::size_t>(s + 1)] = off[static_cast<std::size_t>(s)] + static_cast<std::int64_t>(g.next() % (max_len + 1));
  return off;
}
std::vector<std::int64_t> equal_offsets(std::int64_t segments, std::int64_t len) {
  std::vector<std::int64_t> off(static_cast<std::size_t>(segments + 1));
  for (std::int64_t s = 0; s <= segments; ++s) off[static_cast<std::size_t>(s)] = s * len;
  return off;
}

// Every segment of ours and CUB's against host double sums: |error| <= gamma(len) * sum|x| (any order).
void validate_segmented(const std::string& name, const std::vector<float>& x, const std::vector<std::int64_t>& off,
                        const std::vector<float>& ours, const std::vector<float>& cub) {
  const std::int64_t segments = static_cast<std::int64_t>(off.size()) - 1;
  for (std::int64_t s = 0; s < segments; ++s) {
    const std::int64_t b = off[static_cast<std::size_t>(s)], e = off[static_cast<std::size_t>(s + 1)];
    double sum = 0, abs_sum = 0;
    for (std::int64_t i = b; i < e; ++i) {
      sum += x[static_cast<std::size_t>(i)];
      abs_sum += std::fabs(x[static_cast<std::size_t>(i)]);
    }
    const double bound = rep::gamma_float(static_cast<double>(e - b)) * abs_sum;
    check_close("ours " + name + " segment " + std::to_string(s), ours[static_cast<std::size_t>(s)], sum, bound);
    check_close("CUB " + name + " segment " + std::to_string(s), cub[static_cast<std::size_t>(s)], sum, bound);
  }
}


std::string us_text(const std::optional<double>& v) { return v ? rep::format("%.2f", *v) : std::string("-"); }

settings make_settings(bool quick) {
  settings s;
  s.quick = quick;
  if (quick) {
    s.plain = {5, 61};  // cheap below 2^28, and the small sizes need the samples (launch jitter)
    s.slow_plain = {2, 7};
    s.graph = {1, 5};
  }
  return s;
}

// The inputs every case reads: prefixes of a 2^30-element pool of x and y, kept on the host for the oracle.
struct pool {
  std::int64_t n;
  std::vector<float> hx, hy;
  gpukit::device_buffer<float> dx{hx}, dy{hy};
};

std::vector<bench_row> time_sizes(bench& b, const std::vector<op_spec>& ops, const pool& p,
                                  const std::vector<int>& exponents, std::ostream& log) {
  std::vector<bench_row> rows;
  prefix_stats stats;
  for (int k : exponents) {
    const std::int64_t n = std::int64_t{1} << k;
    stats.extend(p.hx, p.hy, n);
    for (const auto& op : ops) {
      rows.push_back(b.run(op, n, p.dx.data(), p.dy.data(), p.n, stats));
      const auto& r = rows.back();
      log << "  " << rep::format("%-17s", op.name.c_str()) << " 2^" << k << ": ours " << us_text(r.ours.plain_same_us)
          << " us, CUB " << us_text(r.cub.plain_same_us) << " us\n";
    }
  }
  return rows;
}

// One segmented case: offsets on the host (for the oracle) and on the device.
struct segmented_case {
  std::string name;
  std::vector<std::int64_t> off;
  gpukit::device_buffer<std::int64_t> d_off{off};
};

// Output buffers of the segmented cases and the workspace, sized for the largest case before any timing.
struct segmented_outputs {
  gpukit::device_buffer<float> ours, cub;
  reduce::workspace& ws;
};

bench_row time_segmented(bench& b, const segmented_case& sc, const pool& p, segmented_outputs& o,
                         cudaStream_t stream, std::ostream& log) {
  const std::int64_t segments = static_cast<std::int64_t>(sc.off.size()) - 1;
  const cub_peers::call cub = cub_peers::segmented_sum(p.dx.data(), sc.d_off.data(), segments, o.cub.data());
  auto ours = [&] { reduce::segmented_sum(p.dx.data(), sc.d_off.data(), segments, o.ours.data(), o.ws, stream); };
  o.ours.fill_bytes(0xFF);
  o.cub.fill_bytes(0xFF);
  gpukit::device_synchronize();  // the poison (legacy stream) lands before the calls (non-blocking stream)
  ours();
  cub(stream);
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> got_ours = o.ours.download(), got_cub = o.cub.download();
  got_ours.resize(static_cast<std::size_t>(segments));
  got_cub.resize(static_cast<std::size_t>(segments));
  validate_segmented(sc.name, p.hx, sc.off, got_ours, got_cub);
  bench_row r = b.run_segmented(sc.name, sc.off.back(), segments, ours, cub);
  log << "  " << sc.name << ": ours " << us_text(r.ours.plain_same_us) << " us, CUB " << us_text(r.cub.plain_same_us)
      << " us\n";
  return r;
}

// The floor probe at the multi-block sizes of the 0.65x target, validated first: its partials, poisoned
// before the run, must add up to the sum (every element read once).
std::vector<floor_row> time_floor_probe(bench& b, const pool& p, outputs& out, cudaStream_t stream) {
  std::vector<floor_row> floors;
  prefix_stats floor_stats;  // extended size by size, as the main loop's
  for (int k : {16, 18, 20}) {
    const std::int64_t n = std::int64_t{1} << k;
    const int grid = floor_probe::grid_for(n);
    if (grid == 0) continue;
    gpukit::device_buffer<float> partials(grid);
    partials.fill_bytes(0xFF);
    gpukit::device_synchronize();  // the poison (legacy stream) lands before the probe (non-blocking stream)
    floor_probe::run(p.dx.data(), n, partials.data(), stream);
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    double total = 0;
    for (const float v : partials.download()) total += v;
    floor_stats.extend(p.hx, p.hy, n);
    check_close("floor probe's partials at n = " + std::to_string(n), total, floor_stats.sum,
                reduction_bound(n, floor_stats.abs_sum));
    const cub_peers::call cub = cub_peers::sum(p.dx.data(), n, out.cub.data());
    const auto [probe_us, cub_us] =
        b.plain_pair([&] { floor_probe::run(p.dx.data(), n, partials.data(), stream); }, [&] { cub(stream); }, n);
    floors.push_back({n, grid, probe_us, cub_us});
  }
  return floors;
}

}  // namespace

bench_data measure_bench(bool quick, std::ostream& log) {
  if (!reduce::cuda_device_available())
    throw gpukit::no_cuda_device("reduce bench times GPU kernels: " + reduce::cuda_unavailable_reason());
  bench_data d;
  d.gpu = reduce::cuda_device_description();
  log << "reduce bench on " << d.gpu << (quick ? "  [quick]" : "") << ", " << cub_peers::version() << "\n";
  const gpukit::owned_stream owned;
  const cudaStream_t stream = owned.get();
  bench b(make_settings(quick), stream);
  d.copy_gbps = b.measure_copy_gbps(&d.copy_us);
  d.l2_bytes = b.l2_bytes();
  log << rep::format("ceiling: device-to-device copy %.0f GB/s (read + write, 1 GiB in %.1f us); L2 %.0f MB\n",
                     d.copy_gbps, d.copy_us, d.l2_bytes / 1e6);

  std::vector<int> exponents;  // every even exponent in both modes: the targets speak of every N
  for (int k = 10; k <= 30; k += 2) exponents.push_back(k);
  const std::int64_t pool_n = std::int64_t{1} << exponents.back();
  log << "bench: generating and uploading 2 x " << pool_n << " floats\n";
  const pool p{pool_n, rep::uniform_floats(pool_n, -1.f, 1.f, 31), rep::uniform_floats(pool_n, -1.f, 1.f, 32)};

  // Segmented inputs (prefixes of the pool) and every workspace, before any timing.
  const segmented_case tiny{"segmented_1M_tiny", random_offsets(1000000, 16, 41)};
  const segmented_case equal{"segmented_1000x100k", equal_offsets(1000, 100000)};
  reduce::workspace ws;
  ws.reserve(std::max(reduce::workspace::segmented_bytes(1000000), reduce::workspace::segmented_bytes(1000)));
  segmented_outputs seg{gpukit::device_buffer<float>(1000000), gpukit::device_buffer<float>(1000000), ws};
  outputs out;
  const std::vector<op_spec> ops = make_ops(ws, out);
  gpukit::device_synchronize();  // every setup memset/copy is done before the first timed call

  d.rows = time_sizes(b, ops, p, exponents, log);
  for (const segmented_case* sc : {&tiny, &equal}) d.segmented.push_back(time_segmented(b, *sc, p, seg, stream, log));
  d.floors = time_floor_probe(b, p, out, stream);
  return d;
}

}  // namespace reduce_app
