// What `wsm5 run` measures (measure.cpp): the CPU reference, the GPU's ceilings (memory, arithmetic,
// host link), each GPU variant's calls and timings, and the check of a variant against the reference.
// run_report.cpp prints and reports these; run_command.cpp puts them in order.
#pragma once
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

#include "app.hpp"
#include "wsm5/wsm5.hpp"

namespace wsm5_app {

using clock_type = std::chrono::steady_clock;
using gpukit::seconds_since;
/// The median of v (the upper one for an even count; NaN for none).
double median(std::vector<double> v);
/// The CPU reference's threads (OpenMP's maximum; 1 without OpenMP).
int cpu_threads();

/// A call produced NaN or Inf: the run stops before writing anything (run_command: exit 3, one line).
struct nonfinite_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Throws nonfinite_failure naming the call, the variant and the first non-finite value.
void stop_on_nonfinite(const std::optional<wsm5::nonfinite_value>& v, int call, int calls, const char* variant);

/// The CPU reference: `calls` calls on all threads (their median time; the state is the check's
/// reference), and one thread timed on the first rows of the domain, scaled to all of them.
struct cpu_run {
  wsm5::domain state;          ///< after `calls` calls
  wsm5::diagnostics diag;      ///< of the last call
  wsm5::budget_result budget;  ///< water budget over the `calls` calls
  int calls = 0, threads = 0;
  double all_threads_s = 0;    ///< median per call
  double one_thread_s = 0;     ///< per call, scaled from rows_timed rows to ny
  std::int64_t rows_timed = 0;
};
cpu_run run_cpu_reference(const wsm5::domain& d0, int calls, bool progress);

/// The ceilings of the current GPU, measured in the same run.
struct gpu_ceilings {
  std::string device;                  ///< reduce::cuda_device_description()
  std::int64_t min_bytes = 0;          ///< per call: every field read once, every output written once
  double copy_bytes_per_s = 0;         ///< device-to-device copy, read + write
  double memory_floor_s = 0;           ///< min_bytes at copy_bytes_per_s
  double flops_per_cell = 0;           ///< estimate (ANCHORS.md), not measured
  double peak_flops = 0;               ///< FP32 peak from the device properties
  double arithmetic_floor_s = 0;       ///< flops_per_cell * cells at peak_flops
  wsm5::host_link link;                ///< pinned cudaMemcpy, 200 MB each way
  double both_GBps = 0;                ///< bytes up + down per second, both directions at once
  wsm5::transfer_bytes per_call;       ///< bytes a with-transfers call moves up and down
  double transfer_floor_s = 0;         ///< per_call's bytes copied both ways at once, measured
  double transfer_floor_rates_s = 0;   ///< per_call at the link's rates, directions overlapped
  double transfer_floor_serial_s = 0;  ///< one direction after the other
};
/// `probe`: d0 on the device (its bytes per call); the caller keeps it allocated through the variants'
/// timings, as the app always has.
gpu_ceilings measure_ceilings(const wsm5::domain& d0, const wsm5::gpu_domain& probe);

/// One GPU variant: `steps` calls from d0 (diagnostics of the last; the state after `check_calls`
/// calls when checking), then the timings on a fresh copy of d0.
struct variant_run {
  wsm5::variant v = wsm5::variant::thread_per_column;
  wsm5::diagnostics diag;        ///< of the last of `steps` calls
  wsm5::domain at_check;         ///< state after check_calls calls (empty when not checking)
  std::vector<double> samples;   ///< per-call times without transfers, calls 4 .. 3 + repeats [s]
  double time_s = 0;             ///< median of samples
  double with_transfers_s = 0;   ///< median per call with transfers (host_fields, chunked, overlapped)
  /// The variant of the with-transfers timing: v, or automatic (chosen per row chunk by its columns) when
  /// automatic was asked for.
  wsm5::variant transfers_v = wsm5::variant::thread_per_column;
};
struct variant_plan {
  int steps = 1, check_calls = 0;  ///< check_calls 0: no check state kept
  int repeats = 20, chunks = 12;
  bool progress = true;
};
/// Runs `v` (with transfers: `transfers_v`); when `final_state` is not null, downloads the state after
/// `steps` calls into it.
variant_run run_variant(const wsm5::domain& d0, wsm5::variant v, wsm5::variant transfers_v, const variant_plan& plan,
                        wsm5::domain* final_state);

/// A GPU variant's state against the CPU reference after the same calls: per-field bounds
/// (wsm5::gpu_vs_reference_bounds) with rare outlier columns within a branch's jump
/// (wsm5::check_against_reference), and the water budget of its last call.
struct variant_check {
  std::vector<wsm5::field_error> errors;
  wsm5::check_result fields;
  bool fields_ok = true, budget_ok = true;
  double budget_bound = 0;  ///< [kg m-2]
  bool ok() const { return fields_ok && budget_ok; }
};
variant_check check_variant(const variant_run& r, const cpu_run& cpu, double max_water);

/// Largest column water of the domain [kg m-2] (scales the budget bound).
double max_column_water(const wsm5::domain& d);

}  // namespace wsm5_app
