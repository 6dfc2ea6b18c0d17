// What `wsm5 run` measures: the CPU reference, the GPU ceilings, each GPU variant (measure.hpp).
#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "reduce/device.hpp"

namespace wsm5_app {
double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
int cpu_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

namespace {

/// "wsm5: WHAT call S/N" on stderr (carriage return, no newline) once a loop has run over 3 s; the loop
/// ends it with end_progress.
void progress(bool on, const char* what, int s, int n, clock_type::time_point t0) {
  if (on && seconds_since(t0) > 3.0) std::cerr << "wsm5: " << what << " call " << s << "/" << n << "\r" << std::flush;
}
void end_progress(bool on, clock_type::time_point t0) {
  if (on && seconds_since(t0) > 3.0) std::cerr << "\n";
}

/// Rows [0, rows) of d as a domain of their own (to time one CPU thread on part of a large domain).
wsm5::domain first_rows(const wsm5::domain& d, std::int64_t rows) {
  wsm5::domain s;
  s.resize(d.nx, rows, d.nz);
  s.dt = d.dt;
  for (const auto& n : wsm5::field_names_3d()) {
    const auto& f = wsm5::field(d, n);
    std::copy(f.begin(), f.begin() + rows * d.nz * d.nx, wsm5::field(s, n).begin());
  }
  for (const auto& n : wsm5::field_names_2d()) {
    const auto& f = wsm5::field(d, n);
    std::copy(f.begin(), f.begin() + rows * d.nx, wsm5::field(s, n).begin());
  }
  return s;
}

}  // namespace

void stop_on_nonfinite(const std::optional<wsm5::nonfinite_value>& v, int call, int calls, const char* variant) {
  if (!v) return;
  throw nonfinite_failure("call " + std::to_string(call) + " of " + std::to_string(calls) + " (" + variant +
                          ") produced a non-finite value: " + wsm5::to_string(*v) + "; stopped, nothing written");
}

double max_column_water(const wsm5::domain& d) {
  double w = 0;
  for (std::int64_t c = 0; c < d.columns(); ++c) w = std::max(w, wsm5::column_water(d, c));
  return w;
}

// The all-threads calls are the check's reference; one thread is timed on part of the domain when it is
// large (a CONUS call takes seconds on one core): at most ~2^20 cells of whole rows, scaled to ny rows.
cpu_run run_cpu_reference(const wsm5::domain& d0, int calls, bool show_progress) {
  cpu_run r;
  r.calls = calls;
  r.state = d0;
  std::vector<double> t;
  const auto tc = clock_type::now();
  for (int s = 0; s < calls; ++s) {
    const auto t0 = clock_type::now();
    r.diag = wsm5::reference::step(r.state, 0);
    t.push_back(seconds_since(t0));
    stop_on_nonfinite(wsm5::find_nonfinite(r.state), s + 1, calls, "cpu");  // outside the timing
    progress(show_progress, "cpu reference", s + 1, calls, tc);
  }
  end_progress(show_progress, tc);
  r.all_threads_s = median(t);
  r.rows_timed = std::max<std::int64_t>(
      1, std::min<std::int64_t>(d0.ny, (1 << 20) / std::max<std::int64_t>(d0.nx * d0.nz, 1)));
  {
    wsm5::domain part = first_rows(d0, r.rows_timed);
    const auto t0 = clock_type::now();
    (void)wsm5::reference::step(part, 1);
    r.one_thread_s = seconds_since(t0) * static_cast<double>(d0.ny) / static_cast<double>(r.rows_timed);
  }
  r.threads = cpu_threads();
  r.budget = wsm5::water_budget(d0, r.state, calls);
  return r;
}

gpu_ceilings measure_ceilings(const wsm5::domain& d0, const wsm5::gpu_domain& probe) {
  gpu_ceilings c;
  c.device = reduce::cuda_device_description();
  c.min_bytes = probe.min_bytes_per_call();
  // The ceiling: a device-to-device copy of half a call's bytes (read + write = one call's traffic), but
  // at least 128 MiB, well past the L2 (50-60 MB), so that a small domain still measures DRAM bandwidth.
  const std::int64_t copy_bytes = std::max<std::int64_t>(c.min_bytes / 2, std::int64_t{128} << 20);
  const double copy_s = wsm5::measure_d2d_copy_seconds(copy_bytes, 20);
  c.copy_bytes_per_s = 2.0 * static_cast<double>(copy_bytes) / copy_s;  // read + write
  c.memory_floor_s = static_cast<double>(c.min_bytes) / c.copy_bytes_per_s;
  c.flops_per_cell = 2400.0;  // ANCHORS.md estimate (plus exp/log/pow); not measured
  c.peak_flops = wsm5::peak_fp32_flops();
  c.arithmetic_floor_s = c.flops_per_cell * static_cast<double>(d0.cells()) / c.peak_flops;
  // Host link (pinned cudaMemcpy, 200 MB each way) and the floor of the with-transfers figure: the
  // call's upload and download, one copy each, both at once (measured; no compute, no dependency between
  // them). The rates alone give a lower floor, max(up / h2d, down / d2h, total / both-at-once), reachable
  // only where the link lets the upload keep its one-way rate while the download runs. On H200 boards
  // (50-55 GB/s each way, 84-101 GB/s both at once) it does not: CONUS 4.206 ms measured against 3.773
  // from the rates, 3.595 against 3.387 (libwsm5/README.md, "With transfers").
  c.link = wsm5::measure_host_link(200'000'000, 5);
  c.per_call = wsm5::transfer_bytes_per_call(d0.nx, d0.ny, d0.nz);
  c.both_GBps = 400e6 / c.link.both_seconds / 1e9;
  const double up = static_cast<double>(c.per_call.up), down = static_cast<double>(c.per_call.down);
  c.transfer_floor_rates_s = std::max({up / (c.link.h2d_GBps * 1e9), down / (c.link.d2h_GBps * 1e9),
                                       (up + down) / (c.both_GBps * 1e9)});
  c.transfer_floor_s = wsm5::measure_concurrent_transfer_seconds(c.per_call.up, c.per_call.down, 5);
  c.transfer_floor_serial_s = up / (c.link.h2d_GBps * 1e9) + down / (c.link.d2h_GBps * 1e9);
  return c;
}

variant_run run_variant(const wsm5::domain& d0, wsm5::variant v, wsm5::variant transfers_v, const variant_plan& plan,
                        wsm5::domain* final_state) {
  variant_run r;
  r.v = v;
  r.transfers_v = transfers_v;
  // The N-call run: diagnostics after each call (libreduce device-wide reductions). `g` stays allocated
  // through the timings below, as it always has (the timed figures are compared across commits).
  wsm5::gpu_domain g(d0);
  const auto tg = clock_type::now();
  for (int s = 0; s < plan.steps; ++s) {
    r.diag = g.step(v);
    stop_on_nonfinite(g.find_nonfinite(), s + 1, plan.steps, wsm5::to_string(v));
    if (s + 1 == plan.check_calls) {
      r.at_check = d0;
      g.download(r.at_check);
    }
    progress(plan.progress, wsm5::to_string(v), s + 1, plan.steps, tg);
  }
  end_progress(plan.progress, tg);
  if (final_state != nullptr) g.download(*final_state);
  // Timing without transfers: fresh state, 3 warm-up calls, median of the next `repeats` calls. The
  // domain evolves (the first calls need more sub-steps), so the first and last timed calls are
  // reported too: the median is of calls 4 .. 3 + repeats.
  wsm5::gpu_domain gt(d0);
  r.samples = wsm5::time_gpu_steps(gt, v, 3, plan.repeats);
  r.time_s = median(r.samples);
  // With transfers: the host state in one pinned allocation (wsm5::host_fields: 4 copies a chunk), copies
  // and compute overlapped across row chunks (automatic: each chunk's variant by its own columns).
  wsm5::host_fields host(d0);
  r.with_transfers_s =
      median(wsm5::time_gpu_steps_with_transfers(gt, host, transfers_v, plan.chunks, 2, std::max(3, plan.repeats / 2)));
  return r;
}

variant_check check_variant(const variant_run& r, const cpu_run& cpu, double max_water) {
  variant_check c;
  // Per-field bounds, derived in tests/wsm5/test_wsm5.cpp (wsm5::gpu_vs_reference_bounds), with rare
  // outlier columns within a branch's jump (wsm5::check_against_reference).
  c.fields = wsm5::check_against_reference(r.at_check, cpu.state, wsm5::gpu_vs_reference_bounds(cpu.calls));
  c.errors = c.fields.errors;
  c.fields_ok = c.fields.ok;
  // Budget of the last call (see wsm5::water_budget for the bound): 16 u (W_before + W_after).
  c.budget_bound = 32.0 * std::ldexp(1.0, -24) * max_water;
  c.budget_ok = r.diag.max_budget_residual <= c.budget_bound;
  return c;
}

}  // namespace wsm5_app
