// What `reduce ladder` and `reduce bench` measure on the GPU (ladder_command.cu, bench_command.cu) and
// hand to gpu_commands.cpp, which checks the targets, prints the tables and writes the JSON reports.
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gpukit/cuda_timer.hpp"

namespace reduce_app {

// ---- reduce ladder ------------------------------------------------------------------------------

struct ladder_ceilings {
  double copy_bytes = 0;  // read + write
  double copy_us = 0;
  double copy_gbps = 0;
  std::int64_t cub_n = 0;
  double cub_us = 0;
  double cub_read_gbps = 0;  // CUB float sum at 2^28: the practical read ceiling
};

struct ladder_row {
  std::string kernel, description;
  std::int64_t n_timed = 0;
  bool scaled = false;
  bool deterministic = true;
  gpukit::timing t;
  double time_us = 0;  // for the full n (scaled when n_timed < n)
  double gbps = 0, step = 0, cumulative = 0, pct_ceiling = 0;
};

struct ladder_table {
  std::string type;
  std::int64_t n = 0;
  std::vector<ladder_row> rows;
};

struct ladder_data {
  std::string gpu;
  ladder_ceilings ceilings;
  std::vector<ladder_table> tables;
};

/// Times every rung of reduce::ladder_sum and CUB's sum for 2^22 int32 and 2^28 float, each validated
/// first (gpukit::check_failed when one is wrong); progress lines go to `log`.
ladder_data measure_ladder(bool quick, std::ostream& log);

// ---- reduce bench -------------------------------------------------------------------------------

struct bench_measured {
  std::optional<double> plain_same_us, plain_rotating_us, graph_us;
  int rotating_slices = 0;
};

struct bench_row {
  std::string op, peer_name;
  std::int64_t n = 0;         // elements (segmented: items)
  std::int64_t segments = 0;  // segmented cases only
  double bytes = 0;           // bytes the operation must read (and write, for segmented outputs)
  bench_measured ours, cub;
  double ratio() const { return *ours.plain_same_us / *cub.plain_same_us; }  // ours / CUB, plain same-buffer
};

/// The floor probe (floor_probe.hpp) at one size, timed against CUB's sum in the same alternated samples.
struct floor_row {
  std::int64_t n = 0;
  int grid = 0;
  double probe_us = 0, cub_us = 0;
  double ratio() const { return probe_us / cub_us; }
};

struct bench_data {
  std::string gpu;
  double copy_gbps = 0, copy_us = 0, l2_bytes = 0;
  std::vector<bench_row> rows;       // sum, min, argmax, dot, reproducible_sum, compensated_sum by size
  std::vector<bench_row> segmented;  // segmented_1M_tiny, segmented_1000x100k
  std::vector<floor_row> floors;
};

/// Times libreduce against CUB (bench_command.cu's header says how), every result validated first
/// (gpukit::check_failed when one is wrong); progress lines go to `log`.
bench_data measure_bench(bool quick, std::ostream& log);

}  // namespace reduce_app
