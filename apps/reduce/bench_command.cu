// `reduce bench`: libreduce's device-wide reductions against CUB, timed in the same run, from 2^10 to
// 2^30 elements, plus two segmented cases; JSON, CSV and a table with the targets' PASS/MISS.
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

#include "atomic_file.hpp"
#include "bench_report.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "cub_peers.hpp"
#include "gpukit/cuda_timer.hpp"
#include "floor_probe.hpp"
#include "json_writer.hpp"
#include "gpukit/cuda_check.hpp"
#include "reduce/device.hpp"
#include "gpukit/device_buffer.hpp"
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
    throw std::runtime_error("bench: validation failed: " + what + " = " + rep::format("%.9g", got) + ", expected " +
                             rep::format("%.9g", expected) + " within " + rep::format("%.3g", bound));
}
void check_true(const std::string& what, bool ok) {
  if (!ok) throw std::runtime_error("bench: validation failed: " + what);
}

struct measured {
  std::optional<double> plain_same_us, plain_rotating_us, graph_us;
  int rotating_slices = 0;
};

struct result_row {
  std::string op, peer_name;
  std::int64_t n = 0;
  double bytes = 0;  // bytes the operation must read (and write, for segmented outputs)
  measured ours, cub;
};

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
  result_row run(const op_spec& op, std::int64_t n, const float* pool_x, const float* pool_y, std::int64_t pool_n,
                 const prefix_stats& stats) {
    result_row r;
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
  result_row run_segmented(const std::string& name, std::int64_t items, std::int64_t segments, Work&& ours,
                           const cub_peers::call& cub) {
    result_row r;
    r.op = name;
    r.peer_name = "cub::DeviceSegmentedReduce::Sum";
    r.n = items;
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

struct target {
  std::string name, value;
  bool pass = false;
};

// The floor probe (floor_probe.hpp) at one size, timed against CUB's sum in the same alternated samples.
struct floor_row {
  std::int64_t n = 0;
  int grid = 0;
  double probe_us = 0, cub_us = 0;
  double ratio() const { return probe_us / cub_us; }
};

const result_row* find_row(const std::vector<result_row>& rows, const std::string& op, std::int64_t n) {
  for (const auto& r : rows)
    if (r.op == op && r.n == n) return &r;
  return nullptr;
}

double ratio(const result_row& r) { return *r.ours.plain_same_us / *r.cub.plain_same_us; }

std::vector<target> check_targets(const std::vector<result_row>& rows, const std::vector<floor_row>& floors,
                                  const std::string& gpu) {
  std::vector<target> t;
  const bool h100 = gpu.find("H100") != std::string::npos;
  // sum vs CUB, plain same-buffer timings (as the ANCHORS figures)
  double worst_all = 0, worst_mid = 0;
  std::int64_t worst_all_n = 0, worst_mid_n = 0;
  for (const auto& r : rows) {
    if (r.op != "sum") continue;
    const double q = ratio(r);
    if (q > worst_all) worst_all = q, worst_all_n = r.n;
    if (r.n >= (1 << 14) && r.n <= (1 << 20) && q > worst_mid) worst_mid = q, worst_mid_n = r.n;
  }
  t.push_back({"sum <= 1.0x CUB time at every N", rep::format("worst %.3fx at ", worst_all) + rep::size_label(worst_all_n),
               worst_all > 0 && worst_all <= 1.0});
  std::string mid = worst_mid > 0 ? rep::format("worst %.3fx at ", worst_mid) + rep::size_label(worst_mid_n) : "not measured";
  for (const auto& f : floors)  // what the loads and block trees alone cost there (floor_probe.hpp)
    if (f.n == worst_mid_n) mid += rep::format(" (floor probe %.3fx)", f.ratio());
  t.push_back({"sum <= 0.65x CUB time for 2^14..2^20", mid, worst_mid > 0 && worst_mid <= 0.65});
  if (const auto* r = find_row(rows, "sum", std::int64_t{1} << 22))
    t.push_back({"sum <= 0.8x CUB time at 2^22", rep::format("%.3fx", ratio(*r)), ratio(*r) <= 0.8});
  const auto* s28 = find_row(rows, "sum", std::int64_t{1} << 28);
  if (s28) {
    const double gbps = gpukit::gb_per_s(s28->bytes, *s28->ours.plain_same_us);
    const double need = h100 ? 3100 : 4450;
    t.push_back({rep::format("sum >= %.2f TB/s at 2^28 (%s)", need / 1000, h100 ? "H100" : "H200"),
                 rep::format("%.2f TB/s", gbps / 1000), gbps >= need});
    for (const auto& [op, need_frac] : {std::pair<std::string, double>{"reproducible_sum", 0.90}, {"compensated_sum", 0.95}}) {
      if (const auto* r = find_row(rows, op, std::int64_t{1} << 28)) {
        const double frac = *s28->ours.plain_same_us / *r->ours.plain_same_us;
        t.push_back({op + rep::format(" >= %.0f%% of sum throughput at 2^28", 100 * need_frac),
                     rep::format("%.1f%%", 100 * frac), frac >= need_frac});
      }
    }
  }
  for (const auto& [op, need] : {std::pair<std::string, double>{"segmented_1M_tiny", 3.0}, {"segmented_1000x100k", 1.0}}) {
    for (const auto& r : rows)
      if (r.op == op) {
        const double speedup = *r.cub.plain_same_us / *r.ours.plain_same_us;
        t.push_back({op + rep::format(" >= %.0fx faster than CUB", need), rep::format("%.2fx", speedup), speedup >= need});
      }
  }
  return t;
}

std::string opt_str(const std::optional<double>& v, const char* fmt = "%.2f") {
  return v ? rep::format(fmt, *v) : std::string("-");
}

void write_json(const std::string& path, const std::string& gpu, const settings& s, double copy_gbps, double copy_us,
                double l2, const std::vector<result_row>& rows, const std::vector<floor_row>& floors,
                const std::vector<target>& targets) {
  gpukit::json_writer j;
  j.begin_object();
  j.field("command", "reduce bench").field("gpu", gpu).field("quick", s.quick).field("cub", cub_peers::version());
  j.field("type", "float");
  j.field("timing",
          "plain: CUDA events around one call, warm-up first, median, ours and CUB's samples alternated; graph: one "
          "CUDA Graph of 100 calls, time per call, median (sizes <= 2^24); workspace and CUB temporary storage "
          "allocated before timing");
  j.field("buffers",
          "plain_same_us reuses one input buffer for every call (as the ANCHORS figures: data up to ~L2 size stays "
          "in L2); plain_rotating_us cycles through disjoint slices of a 2^30-element pool (more than 4x L2 between "
          "two visits, so reads come from DRAM), measured where the input fits in L2; graph_us uses the same buffer");
  j.field("l2_bytes", l2);
  j.begin_object("ceiling")
      .field("memcpy_d2d_gbps_read_plus_write", copy_gbps)
      .field("memcpy_d2d_us_1GiB", copy_us)
      .end_object();
  j.begin_array("results");
  for (const auto& r : rows) {
    j.begin_object().field("op", r.op).field("peer", r.peer_name).field("n", static_cast<long long>(r.n));
    j.field("bytes", r.bytes);
    auto impl = [&](const char* key, const measured& m) {
      j.begin_object(key);
      auto opt = [&](const char* k, const std::optional<double>& v) {
        if (v) j.field(k, *v);
        else j.field(k, std::numeric_limits<double>::quiet_NaN());  // null
      };
      opt("plain_same_us", m.plain_same_us);
      opt("plain_rotating_us", m.plain_rotating_us);
      opt("graph_us", m.graph_us);
      j.field("rotating_slices", m.rotating_slices);
      j.field("gbps_plain_same", gpukit::gb_per_s(r.bytes, *m.plain_same_us));
      if (m.plain_rotating_us) j.field("gbps_plain_rotating", gpukit::gb_per_s(r.bytes, *m.plain_rotating_us));
      j.field("pct_of_copy_ceiling", 100.0 * gpukit::gb_per_s(r.bytes, *m.plain_same_us) / copy_gbps);
      j.end_object();
    };
    impl("ours", r.ours);
    impl("cub", r.cub);
    j.field("ratio_ours_over_cub_plain", ratio(r));
    if (r.ours.graph_us && r.cub.graph_us) j.field("ratio_ours_over_cub_graph", *r.ours.graph_us / *r.cub.graph_us);
    j.end_object();
  }
  j.end_array();
  j.field("floor_probe_about",
          "reduce::sum's medium grid, launch path, traversal and block tree at that size, each block storing its "
          "partial, no cross-block step (not a sum; the partials are checked to add up to the sum); plain timing "
          "alternated with CUB's sum");
  j.begin_array("floor_probe");
  for (const auto& f : floors)
    j.begin_object()
        .field("n", static_cast<long long>(f.n))
        .field("grid", f.grid)
        .field("probe_plain_us", f.probe_us)
        .field("cub_plain_us", f.cub_us)
        .field("ratio_probe_over_cub_plain", f.ratio())
        .end_object();
  j.end_array();
  j.begin_array("targets");
  for (const auto& t : targets) j.begin_object().field("target", t.name).field("value", t.value).field("pass", t.pass).end_object();
  j.end_array();
  j.end_object();
  j.commit(path);
}

void write_csv(const std::string& path, const std::vector<result_row>& rows) {
  std::ostringstream csv;
  csv << "op,n,bytes,impl,plain_same_us,plain_rotating_us,graph_us,gbps_plain_same,gbps_plain_rotating\n";
  for (const auto& r : rows)
    for (const auto& [impl, m] : {std::pair<const char*, const measured*>{"ours", &r.ours}, {"cub", &r.cub}})
      csv << r.op << ',' << r.n << ',' << rep::format("%.0f", r.bytes) << ',' << impl << ','
          << opt_str(m->plain_same_us, "%.4f") << ',' << opt_str(m->plain_rotating_us, "%.4f") << ','
          << opt_str(m->graph_us, "%.4f") << ',' << rep::format("%.3f", gpukit::gb_per_s(r.bytes, *m->plain_same_us))
          << ','
          << (m->plain_rotating_us ? rep::format("%.3f", gpukit::gb_per_s(r.bytes, *m->plain_rotating_us))
                                   : std::string("-"))
          << "\n";
  gpukit::write_file_atomically(path, csv.str());
}

}  // namespace

int bench_command(int argc, char** argv) {
  gpukit::cli::args a(argc, argv, 2, {"json", "csv", "out"}, {"quick"});
  if (!a.positional().empty()) throw gpukit::cli::usage_error("bench takes no positional arguments");
  settings s;
  s.quick = a.flag("quick");
  if (s.quick) {
    s.plain = {5, 61};  // cheap below 2^28, and the small sizes need the samples (launch jitter)
    s.slow_plain = {2, 7};
    s.graph = {1, 5};
  }
  std::string json_path = a.get("json", ""), csv_path = a.get("csv", "");
  if (a.has("out")) {
    if (json_path.empty()) json_path = a.get("out", "") + "/reduce-bench.json";
    if (csv_path.empty()) csv_path = a.get("out", "") + "/reduce-bench.csv";
  }
  if (!reduce::cuda_device_available())
    throw gpukit::no_cuda_device("reduce bench times GPU kernels: " + reduce::cuda_unavailable_reason());

  const std::string gpu = reduce::cuda_device_description();
  std::cout << "reduce bench on " << gpu << (s.quick ? "  [quick]" : "") << ", " << cub_peers::version() << "\n";
  const gpukit::owned_stream owned;
  const cudaStream_t stream = owned.get();
  bench b(s, stream);

  double copy_us = 0;
  const double copy_gbps = b.measure_copy_gbps(&copy_us);
  std::cout << rep::format("ceiling: device-to-device copy %.0f GB/s (read + write, 1 GiB in %.1f us); L2 %.0f MB\n",
                           copy_gbps, copy_us, b.l2_bytes() / 1e6);

  std::vector<int> exponents;  // every even exponent in both modes: the targets speak of every N
  for (int k = 10; k <= 30; k += 2) exponents.push_back(k);
  const std::int64_t pool_n = std::int64_t{1} << exponents.back();

  std::cerr << "bench: generating and uploading 2 x " << pool_n << " floats\n";
  const std::vector<float> hx = rep::uniform_floats(pool_n, -1.f, 1.f, 31);
  const std::vector<float> hy = rep::uniform_floats(pool_n, -1.f, 1.f, 32);
  const gpukit::device_buffer<float> dx(hx), dy(hy);

  // Segmented inputs (prefixes of the pool) and every workspace, before any timing.
  const std::vector<std::int64_t> off_tiny = random_offsets(1000000, 16, 41);
  const std::vector<std::int64_t> off_long = equal_offsets(1000, 100000);
  const gpukit::device_buffer<std::int64_t> d_off_tiny(off_tiny), d_off_long(off_long);
  gpukit::device_buffer<float> seg_ours(1000000), seg_cub(1000000);
  reduce::workspace ws;
  ws.reserve(std::max(reduce::workspace::segmented_bytes(1000000), reduce::workspace::segmented_bytes(1000)));
  outputs out;
  const std::vector<op_spec> ops = make_ops(ws, out);
  gpukit::device_synchronize();  // every setup memset/copy is done before the first timed call

  std::vector<result_row> rows;
  prefix_stats stats;
  for (int k : exponents) {
    const std::int64_t n = std::int64_t{1} << k;
    stats.extend(hx, hy, n);
    for (const auto& op : ops) {
      rows.push_back(b.run(op, n, dx.data(), dy.data(), pool_n, stats));
      const auto& r = rows.back();
      std::cerr << "  " << rep::format("%-17s", op.name.c_str()) << " 2^" << k << ": ours "
                << opt_str(r.ours.plain_same_us) << " us, CUB " << opt_str(r.cub.plain_same_us) << " us\n";
    }
  }

  auto segmented = [&](const std::string& name, const std::vector<std::int64_t>& off,
                       const gpukit::device_buffer<std::int64_t>& d_off) {
    const std::int64_t segments = static_cast<std::int64_t>(off.size()) - 1;
    const std::int64_t items = off.back();
    const cub_peers::call cub = cub_peers::segmented_sum(dx.data(), d_off.data(), segments, seg_cub.data());
    auto ours = [&] { reduce::segmented_sum(dx.data(), d_off.data(), segments, seg_ours.data(), ws, stream); };
    seg_ours.fill_bytes(0xFF);
    seg_cub.fill_bytes(0xFF);
    gpukit::device_synchronize();  // the poison (legacy stream) lands before the calls (non-blocking stream)
    ours();
    cub(stream);
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<float> o = seg_ours.download(), c = seg_cub.download();
    o.resize(static_cast<std::size_t>(segments));
    c.resize(static_cast<std::size_t>(segments));
    validate_segmented(name, hx, off, o, c);
    rows.push_back(b.run_segmented(name, items, segments, ours, cub));
    std::cerr << "  " << name << ": ours " << opt_str(rows.back().ours.plain_same_us) << " us, CUB "
              << opt_str(rows.back().cub.plain_same_us) << " us\n";
  };
  segmented("segmented_1M_tiny", off_tiny, d_off_tiny);
  segmented("segmented_1000x100k", off_long, d_off_long);

  // The floor probe at the multi-block sizes of the 0.65x target, validated first: its partials, poisoned
  // before the run, must add up to the sum (every element read once).
  std::vector<floor_row> floors;
  prefix_stats floor_stats;  // extended size by size, as the main loop's
  for (int k : {16, 18, 20}) {
    const std::int64_t n = std::int64_t{1} << k;
    const int grid = floor_probe::grid_for(n);
    if (grid == 0) continue;
    gpukit::device_buffer<float> partials(grid);
    partials.fill_bytes(0xFF);
    gpukit::device_synchronize();  // the poison (legacy stream) lands before the probe (non-blocking stream)
    floor_probe::run(dx.data(), n, partials.data(), stream);
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    double total = 0;
    for (const float v : partials.download()) total += v;
    floor_stats.extend(hx, hy, n);
    check_close("floor probe's partials at n = " + std::to_string(n), total, floor_stats.sum,
                reduction_bound(n, floor_stats.abs_sum));
    const cub_peers::call cub = cub_peers::sum(dx.data(), n, out.cub.data());
    const auto [probe_us, cub_us] =
        b.plain_pair([&] { floor_probe::run(dx.data(), n, partials.data(), stream); }, [&] { cub(stream); }, n);
    floors.push_back({n, grid, probe_us, cub_us});
  }

  const std::vector<target> targets = check_targets(rows, floors, gpu);
  if (!json_path.empty()) write_json(json_path, gpu, s, copy_gbps, copy_us, b.l2_bytes(), rows, floors, targets);
  if (!csv_path.empty()) write_csv(csv_path, rows);

  // The compact table, last.
  std::cout << "\n" << rep::format("%-20s %6s %11s %11s %7s %9s %9s %9s %9s %8s\n", "op", "N", "ours us", "CUB us",
                                   "ratio", "ours GB/s", "CUB GB/s", "ours grph", "CUB grph", "% ceil");
  for (const auto& r : rows) {
    const double g = gpukit::gb_per_s(r.bytes, *r.ours.plain_same_us);
    std::cout << rep::format("%-20s %6s %11.2f %11.2f %6.3fx %9.0f %9.0f %9s %9s %7.1f%%\n", r.op.c_str(),
                             r.op.rfind("segmented", 0) == 0 ? "-" : rep::size_label(r.n).c_str(), *r.ours.plain_same_us,
                             *r.cub.plain_same_us, ratio(r), g, gpukit::gb_per_s(r.bytes, *r.cub.plain_same_us),
                             opt_str(r.ours.graph_us).c_str(), opt_str(r.cub.graph_us).c_str(), 100 * g / copy_gbps);
  }
  std::cout << "ratio = ours / CUB time (plain, same buffer: as ANCHORS); grph = CUDA Graph of 100 calls, us per call; "
               "% ceil = our GB/s over the device-to-device copy's (read + write) GB/s. DRAM-honest rotating-buffer "
               "figures are in the JSON/CSV.\n\ntargets:\n";
  for (const auto& t : targets)
    std::cout << "  " << (t.pass ? "PASS " : "MISS ") << rep::format("%-52s", t.name.c_str()) << " " << t.value << "\n";
  std::cout << "\nfloor probe: reduce::sum's medium grid at that size, its loads and block trees only (no cross-block "
               "step, so not a sum); plain, alternated with CUB:\n";
  for (const auto& f : floors) {
    const result_row* r = find_row(rows, "sum", f.n);
    std::cout << rep::format("  %s: %d blocks, %.2f us vs CUB %.2f us = %.3fx", rep::size_label(f.n).c_str(), f.grid,
                             f.probe_us, f.cub_us, f.ratio())
              << (r ? rep::format("  (reduce::sum %.3fx in its own row)", ratio(*r)) : std::string()) << "\n";
  }
  return 0;
}

}  // namespace reduce_app
