// `wsm5 run`, `wsm5 convert`, `wsm5 generate`.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cli.hpp"
#include "commands.hpp"
#include "json_writer.hpp"
#include "reduce/device.hpp"
#include "wsm5/wsm5.hpp"

namespace wsm5_app {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}
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

void print_diag(std::ostream& os, const wsm5::diagnostics& g) {
  os << "rain " << std::setprecision(6) << g.rain_total << " mm, snow " << g.snow_total << " mm (domain sums of the"
     << " last call), max sub-steps " << g.max_substeps << ", max |budget residual| " << std::scientific
     << std::setprecision(2) << g.max_budget_residual << std::defaultfloat << " kg m-2";
}
void json_diag(gpukit::json_writer& j, const wsm5::diagnostics& g) {
  j.begin_object("diagnostics")
      .field("rain_total_mm", g.rain_total)
      .field("snow_total_mm", g.snow_total)
      .field("max_substeps", static_cast<long long>(g.max_substeps))
      .field("max_budget_residual_kg_m2", static_cast<double>(g.max_budget_residual))
      .end_object();
}

struct check_result {
  std::vector<wsm5::field_error> errors;
  bool fields_ok = true, budget_ok = true;
  double budget_bound = 0;
};

check_result check_against(const wsm5::domain& gpu, const wsm5::domain& ref, const wsm5::diagnostics& last,
                           double max_water, int calls) {
  check_result r;
  // Per-field bounds, derived in tests/wsm5/test_wsm5.cpp (wsm5::gpu_vs_reference_bounds).
  r.errors = wsm5::compare_with_bounds(gpu, ref, wsm5::gpu_vs_reference_bounds(calls), r.fields_ok);
  // Budget of the last call (see wsm5::water_budget for the bound): 16 u (W_before + W_after).
  r.budget_bound = 32.0 * std::ldexp(1.0, -24) * max_water;
  r.budget_ok = last.max_budget_residual <= r.budget_bound;
  return r;
}

}  // namespace

int convert_command(int argc, char** argv) {
  gpukit::cli::args a(argc, argv, 2, {"golden"}, {});
  if (a.positional().size() != 2) throw gpukit::cli::usage_error("convert needs COLUMNS.txt and OUT.h5");
  wsm5::domain d = wsm5::read_columns_text(a.positional()[0]);
  if (a.has("golden")) {
    // The WRF output after N calls, in the output schema: the input's static fields, the golden state.
    const std::string gpath = a.get("golden", "");
    const wsm5::golden_file g = wsm5::read_golden_text(gpath);
    if (g.ncol != d.nx || g.nz != d.nz) throw std::runtime_error(gpath + ": shape differs from " + a.positional()[0]);
    for (std::int64_t c = 0; c < d.nx; ++c) {
      const auto& gc = g.cols[static_cast<std::size_t>(c)];
      for (std::int64_t k = 0; k < d.nz; ++k) {
        const auto x = static_cast<std::size_t>(d.at(c, k, 0));
        const auto kk = static_cast<std::size_t>(k);
        d.th[x] = static_cast<float>(gc.th[kk]); d.qv[x] = static_cast<float>(gc.qv[kk]);
        d.qc[x] = static_cast<float>(gc.qc[kk]); d.qr[x] = static_cast<float>(gc.qr[kk]);
        d.qi[x] = static_cast<float>(gc.qi[kk]); d.qs[x] = static_cast<float>(gc.qs[kk]);
      }
      const auto cc = static_cast<std::size_t>(c);
      d.rain[cc] = static_cast<float>(gc.rain); d.rainncv[cc] = static_cast<float>(gc.rainncv);
      d.snow[cc] = static_cast<float>(gc.snow); d.snowncv[cc] = static_cast<float>(gc.snowncv);
      d.sr[cc] = static_cast<float>(gc.sr);
    }
  }
  wsm5::write_hdf5(d, a.positional()[1], a.has("golden"));
  std::cout << "wrote " << a.positional()[1] << ": " << d.nx << " columns x " << d.nz << " levels, dt = " << d.dt
            << " s\n";
  return 0;
}

int generate_command(int argc, char** argv) {
  gpukit::cli::args a(argc, argv, 2, {"nx", "ny", "nz", "seed", "dt"}, {});
  if (a.positional().size() != 1) throw gpukit::cli::usage_error("generate needs OUT.h5");
  const std::int64_t nx = a.get_int("nx", 433), ny = a.get_int("ny", 308), nz = a.get_int("nz", 35);
  const auto seed = static_cast<std::uint64_t>(a.get_int("seed", 1));
  const double dt = a.get_double("dt", 72.0);
  if (nx < 1 || ny < 1 || nz < 2) throw gpukit::cli::usage_error("need --nx >= 1, --ny >= 1, --nz >= 2");
  if (!(dt > 0)) throw gpukit::cli::usage_error("--dt must be positive");
  const wsm5::domain d = wsm5::generate(nx, ny, nz, seed, static_cast<float>(dt));
  wsm5::write_hdf5(d, a.positional()[0], false);
  std::cout << "wrote " << a.positional()[0] << ": " << nx << " x " << ny << " columns x " << nz << " levels, dt = "
            << dt << " s, seed " << seed << "\n";
  return 0;
}

int run_command(int argc, char** argv) {
  gpukit::cli::args a(argc, argv, 2,
                      {"steps", "variant", "output", "json", "device", "cpu-steps", "repeats", "chunks"}, {"check"});
  if (a.positional().size() != 1) throw gpukit::cli::usage_error("run needs exactly one IN.h5");
  const std::string in = a.positional()[0];
  const int steps = static_cast<int>(a.get_int("steps", 1));
  if (steps < 1) throw gpukit::cli::usage_error("--steps must be >= 1");
  const int cpu_steps = static_cast<int>(std::min<std::int64_t>(a.get_int("cpu-steps", steps), steps));
  if (cpu_steps < 1) throw gpukit::cli::usage_error("--cpu-steps must be >= 1");
  const int repeats = static_cast<int>(a.get_int("repeats", 20));
  const int chunks = static_cast<int>(a.get_int("chunks", 8));
  if (repeats < 1 || chunks < 1) throw gpukit::cli::usage_error("--repeats and --chunks must be >= 1");
  const bool check = a.flag("check");
  const std::string variant_arg = a.get("variant", "all");
  reduce::device_choice choice;
  try {
    choice = reduce::parse_device_choice(a.get("device", "auto"));
  } catch (const std::invalid_argument& e) {
    throw gpukit::cli::usage_error(e.what());
  }

  std::vector<wsm5::variant> gpu_variants;
  if (variant_arg == "all") {
    gpu_variants = {wsm5::variant::thread_per_column, wsm5::variant::warp_per_column};
  } else if (variant_arg != "cpu") {
    try {
      gpu_variants = {wsm5::parse_variant(variant_arg)};
    } catch (const std::invalid_argument& e) {
      throw gpukit::cli::usage_error(e.what());
    }
  }
  // Backend: --device cpu, or no GPU with --device auto and --variant all, runs the CPU reference only
  // (said on stderr). Asking for a GPU variant by name without a GPU is an error, never a silent fallback.
  bool use_gpu = !gpu_variants.empty();
  if (use_gpu) {
    if (choice == reduce::device_choice::cpu) {
      if (variant_arg != "all") throw gpukit::cli::usage_error("--variant " + variant_arg + " needs --device cuda or auto");
      use_gpu = false;
    } else if (variant_arg == "all" && choice == reduce::device_choice::automatic && !reduce::cuda_device_available()) {
      std::cerr << "wsm5: " << reduce::cuda_unavailable_reason() << "; --variant all runs the CPU reference only\n";
      use_gpu = false;
    } else {
      (void)reduce::select_backend(reduce::device_choice::cuda);  // throws no_cuda_device with the reason
    }
  }
  if (!use_gpu) gpu_variants.clear();

  const wsm5::domain d0 = wsm5::read_hdf5(in);
  const std::int64_t cells = d0.cells();
  double max_water = 0;
  for (std::int64_t c = 0; c < d0.columns(); ++c) max_water = std::max(max_water, wsm5::column_water(d0, c));
  std::cout << "input     " << in << ": " << d0.nx << " x " << d0.ny << " columns x " << d0.nz << " levels ("
            << cells << " cells), dt = " << d0.dt << " s\n";

  gpukit::json_writer j;
  j.begin_object();
  j.field("input", in).field("nx", static_cast<long long>(d0.nx)).field("ny", static_cast<long long>(d0.ny));
  j.field("nz", static_cast<long long>(d0.nz)).field("dt", static_cast<double>(d0.dt));
  j.field("steps", steps).field("cpu_steps", cpu_steps).field("check", check);

  // ---- CPU reference: cpu_steps calls on all threads (the check's reference), and one thread timed on
  //      a part of the domain when it is large (a CONUS call takes seconds on one core).
  const auto progress = [&](const char* what, int s, int n, clock_type::time_point t0) {
    if (seconds_since(t0) > 3.0) std::cerr << "wsm5: " << what << " call " << s << "/" << n << "\r" << std::flush;
  };
  wsm5::domain ref = d0;
  std::vector<double> cpu_t;
  wsm5::diagnostics cpu_diag;
  const auto tc = clock_type::now();
  for (int s = 0; s < cpu_steps; ++s) {
    const auto t0 = clock_type::now();
    cpu_diag = wsm5::reference::step(ref, 0);
    cpu_t.push_back(seconds_since(t0));
    progress("cpu reference", s + 1, cpu_steps, tc);
  }
  if (seconds_since(tc) > 3.0) std::cerr << "\n";
  const double cpu_all = median(cpu_t);
  const std::int64_t rows1 = std::max<std::int64_t>(1, std::min<std::int64_t>(d0.ny, (1 << 20) / std::max<std::int64_t>(d0.nx * d0.nz, 1)));
  double cpu_one = 0;
  {
    wsm5::domain part = first_rows(d0, rows1);
    const auto t0 = clock_type::now();
    (void)wsm5::reference::step(part, 1);
    cpu_one = seconds_since(t0) * static_cast<double>(d0.ny) / static_cast<double>(rows1);
  }
  const int threads = cpu_threads();
  std::cout << "cpu       reference, " << threads << " threads: " << std::setprecision(4) << cpu_all * 1e3
            << " ms per call (median of " << cpu_steps << "); one thread: " << cpu_one * 1e3 << " ms per call"
            << (rows1 < d0.ny ? " (timed on " + std::to_string(rows1) + " of " + std::to_string(d0.ny) + " rows, scaled)" : "")
            << "\n          ";
  print_diag(std::cout, cpu_diag);
  std::cout << "\n";
  const wsm5::budget_result cpu_budget = wsm5::water_budget(d0, ref, cpu_steps);
  std::cout << "          water budget after " << cpu_steps << " calls: max |residual| " << std::scientific
            << std::setprecision(2) << cpu_budget.max_abs_residual << " <= " << cpu_budget.bound << std::defaultfloat
            << (cpu_budget.ok ? "  [ok]" : "  [FAILED]") << "\n";
  bool all_ok = cpu_budget.ok;
  j.begin_object("cpu")
      .field("threads", threads)
      .field("ms_per_call_all_threads", cpu_all * 1e3)
      .field("ms_per_call_one_thread", cpu_one * 1e3)
      .field("one_thread_rows_timed", static_cast<long long>(rows1))
      .field("cells_per_s", static_cast<double>(cells) / cpu_all)
      .field("budget_max_residual_kg_m2", cpu_budget.max_abs_residual)
      .field("budget_bound_kg_m2", cpu_budget.bound)
      .field("budget_ok", cpu_budget.ok);
  json_diag(j, cpu_diag);
  j.end_object();

  wsm5::domain out_state = ref;
  bool have_gpu_output = false;
  if (use_gpu) {
    const std::string dev = reduce::cuda_device_description();
    std::cout << "device    " << dev << "\n";
    j.field("device", dev);
    wsm5::gpu_domain probe(d0);
    const std::int64_t bytes = probe.min_bytes_per_call();
    // The ceiling: a device-to-device copy of half a call's bytes (read + write = one call's traffic), but
    // at least 128 MiB, well past the L2 (50-60 MB), so that a small domain still measures DRAM bandwidth.
    const std::int64_t copy_bytes = std::max<std::int64_t>(bytes / 2, std::int64_t{128} << 20);
    const double copy_s = wsm5::measure_d2d_copy_seconds(copy_bytes, 20);
    const double copy_bw = 2.0 * static_cast<double>(copy_bytes) / copy_s;  // read + write
    const double mem_floor = static_cast<double>(bytes) / copy_bw;
    const double flops_per_cell = 2400.0;  // ANCHORS.md estimate (plus exp/log/pow); not measured
    const double peak = wsm5::peak_fp32_flops();
    const double flop_floor = flops_per_cell * static_cast<double>(cells) / peak;
    std::cout << "ceilings  device-to-device copy " << std::setprecision(4) << copy_bw / 1e9 << " GB/s -> memory floor "
              << mem_floor * 1e3 << " ms per call (" << bytes / 1e6 << " MB); FP32 peak " << peak / 1e12
              << " TFLOP/s -> arithmetic floor " << flop_floor * 1e3 << " ms (at ~" << flops_per_cell
              << " flop/cell)\n";
    j.field("min_bytes_per_call", static_cast<long long>(bytes)).field("d2d_copy_GBps", copy_bw / 1e9);
    j.field("memory_floor_ms", mem_floor * 1e3).field("fp32_peak_TFLOPs", peak / 1e12);
    j.field("flops_per_cell_estimate", flops_per_cell).field("arithmetic_floor_ms", flop_floor * 1e3);
    // Host link (pinned cudaMemcpy, 200 MB each way): the floor of the with-transfers figure is the
    // upload and the download at the measured rates, overlapped (both directions at once) or not.
    const wsm5::host_link link = wsm5::measure_host_link(200'000'000, 5);
    const wsm5::transfer_bytes tb = wsm5::transfer_bytes_per_call(d0.nx, d0.ny, d0.nz);
    const double both_GBps = 400e6 / link.both_seconds / 1e9;  // bytes up + down per second, at once
    const double link_floor_overlapped =
        std::max({static_cast<double>(tb.up) / (link.h2d_GBps * 1e9), static_cast<double>(tb.down) / (link.d2h_GBps * 1e9),
                  static_cast<double>(tb.up + tb.down) / (both_GBps * 1e9)});
    const double link_floor_serial =
        static_cast<double>(tb.up) / (link.h2d_GBps * 1e9) + static_cast<double>(tb.down) / (link.d2h_GBps * 1e9);
    std::cout << "host link pinned cudaMemcpy 200 MB: host->device " << link.h2d_GBps << " GB/s, device->host "
              << link.d2h_GBps << " GB/s, both at once " << both_GBps << " GB/s total; one call moves "
              << tb.up / 1e6 << " MB up, " << tb.down / 1e6 << " MB down -> transfer floor " << link_floor_overlapped * 1e3
              << " ms (directions overlapped), " << link_floor_serial * 1e3 << " ms (one after the other)\n";
    j.field("h2d_GBps", link.h2d_GBps).field("d2h_GBps", link.d2h_GBps).field("bidirectional_GBps", both_GBps);
    j.field("bytes_up_per_call", static_cast<long long>(tb.up)).field("bytes_down_per_call", static_cast<long long>(tb.down));
    j.field("transfer_floor_ms", link_floor_overlapped * 1e3).field("transfer_floor_serial_ms", link_floor_serial * 1e3);
    j.begin_array("variants");
    for (const auto v : gpu_variants) {
      // The N-call run: diagnostics after each call (libreduce device-wide reductions).
      wsm5::gpu_domain g(d0);
      wsm5::diagnostics diag;
      const auto tg = clock_type::now();
      wsm5::domain at_check;
      for (int s = 0; s < steps; ++s) {
        diag = g.step(v);
        if (s + 1 == cpu_steps && check) {
          at_check = d0;
          g.download(at_check);
        }
        progress(wsm5::to_string(v), s + 1, steps, tg);
      }
      if (seconds_since(tg) > 3.0) std::cerr << "\n";
      if (!have_gpu_output) {
        g.download(out_state);
        have_gpu_output = true;
      }
      // Timing without transfers: fresh state, 3 warm-up calls, median of the next `repeats` calls. The
      // domain evolves (the first calls need more sub-steps), so the first and last timed calls are
      // reported too: the median is of calls 4 .. 3 + repeats.
      wsm5::gpu_domain gt(d0);
      const std::vector<double> samples = wsm5::time_gpu_steps(gt, v, 3, repeats);
      const double t = median(samples);
      // With transfers: pinned host state, copies and compute overlapped across row chunks.
      wsm5::domain host = d0;
      double tx = 0;
      {
        wsm5::host_pin pin(host);
        tx = median(wsm5::time_gpu_steps_with_transfers(gt, host, v, chunks, 2, std::max(3, repeats / 2)));
      }
      const double gbs = static_cast<double>(bytes) / t / 1e9;
      std::cout << std::defaultfloat << std::setprecision(4) << wsm5::to_string(v) << ": " << t * 1e3
                << " ms per call (median of calls 4-" << 3 + repeats << ": first " << samples.front() * 1e3 << ", last "
                << samples.back() * 1e3 << "), " << tx * 1e3 << " ms with transfers (" << chunks << " chunks, pinned); "
                << static_cast<double>(cells) / t / 1e9 << " Gcells/s, " << gbs << " GB/s (" << 100.0 * mem_floor / t
                << " % of the memory floor), ~" << flops_per_cell * static_cast<double>(cells) / t / 1e9
                << " GFLOP/s (" << 100.0 * flop_floor / t << " % of FP32 peak); speed-up " << cpu_one / t
                << "x over one CPU thread, " << cpu_all / t << "x over " << threads << " threads\n          ";
      print_diag(std::cout, diag);
      std::cout << "\n";
      j.begin_object();
      j.field("name", wsm5::to_string(v)).field("ms_per_call", t * 1e3).field("ms_per_call_with_transfers", tx * 1e3);
      j.field("warmup_calls", 3).field("timed_calls", repeats);
      j.field("ms_first_timed_call", samples.front() * 1e3).field("ms_last_timed_call", samples.back() * 1e3);
      j.field("chunks", chunks).field("cells_per_s", static_cast<double>(cells) / t).field("GBps", gbs);
      j.field("fraction_of_memory_floor", mem_floor / t).field("GFLOPs_estimate", flops_per_cell * cells / t / 1e9);
      j.field("fraction_of_arithmetic_floor", flop_floor / t);
      j.field("speedup_vs_cpu_one_thread", cpu_one / t).field("speedup_vs_cpu_all_threads", cpu_all / t);
      json_diag(j, diag);
      if (check) {
        const check_result cr = check_against(at_check, ref, diag, max_water, cpu_steps);
        const bool ok = cr.fields_ok && cr.budget_ok;
        all_ok = all_ok && ok;
        std::cout << "          check vs CPU reference after " << cpu_steps << " calls:";
        j.begin_object("check").field("calls", cpu_steps).begin_array("fields");
        for (const auto& e : cr.errors) {
          std::cout << " " << e.name << " " << std::scientific << std::setprecision(1) << e.max_abs;
          j.begin_object().field("name", e.name).field("max_abs", e.max_abs).field("max_rel", e.max_rel).end_object();
        }
        j.end_array();
        std::cout << std::defaultfloat << (cr.fields_ok ? "  [ok]" : "  [FAILED]") << "; budget "
                  << std::scientific << std::setprecision(2) << static_cast<double>(diag.max_budget_residual)
                  << " <= " << cr.budget_bound << std::defaultfloat << (cr.budget_ok ? "  [ok]" : "  [FAILED]")
                  << "\n";
        j.field("fields_ok", cr.fields_ok).field("budget_ok", cr.budget_ok).field("budget_bound_kg_m2", cr.budget_bound);
        j.field("ok", ok).end_object();
      }
      j.end_object();
    }
    j.end_array();
  } else {
    j.field("device", "none (CPU reference only)");
  }
  j.field("ok", all_ok);
  j.end_object();

  if (a.has("output")) {
    // Without a GPU the output is the CPU reference after cpu_steps calls; with one, the first GPU
    // variant after `steps` calls.
    wsm5::write_hdf5(out_state, a.get("output", ""), true);
    std::cout << "output    " << a.get("output", "") << " (" << (have_gpu_output ? "first GPU variant" : "CPU reference")
              << " after " << (have_gpu_output ? steps : cpu_steps) << " calls)\n";
  }
  if (a.has("json")) j.commit(a.get("json", ""));
  if (check) std::cout << "check     " << (all_ok ? "ok" : "FAILED") << "\n";
  return (!check || all_ok) ? 0 : 1;
}

}  // namespace wsm5_app
