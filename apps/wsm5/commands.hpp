// apps/wsm5 subcommands: main.cpp parses the command line (CLI11) into these options; each command returns
// its exit code and throws for errors (gpukit::run_app maps them, apps/common/app.hpp).
#pragma once
#include <cstdint>
#include <string>

namespace wsm5_app {

struct run_options {
  std::string in;                 // HDF5 domain (data/README.md, "WSM5 columns")
  int steps = 1;                  // calls of the scheme on each GPU variant
  int cpu_steps = 0;              // calls of the CPU reference (the check's reference); 0: min(steps, ...) = steps
  std::string variant = "automatic";  // automatic | cpu | thread_per_column | warp_per_column | all
  bool check = false;
  std::string device = "auto";    // auto | cpu | gpu | cuda
  int repeats = 20;               // timed calls per variant (median)
  int chunks = 12;                // row chunks of the with-transfers timing (wsm5::transfer_chunk_rows)
  std::string output;             // HDF5 state after the run; empty: none
  std::string json;               // report; empty: none
  bool quiet = false;
};

struct bench_options {
  bool crossover = false;          // time both GPU variants over column counts
  std::int64_t nz = 35;
  double dt = 72.0;                // s
  int repeats = 10;                // timed calls per point (median), after 3 warm-up calls
  std::int64_t max_columns = 1 << 19;
  std::string json;
  bool quiet = false;
};

struct convert_options {
  std::string in, out;  // COLUMNS.txt -> OUT.h5
  std::string golden;   // WRF output text (wrf_v31_*step.txt); empty: none
  bool quiet = false;
};

struct generate_options {
  std::string out;
  std::int64_t nx = 433, ny = 308, nz = 35;  // CONUS 12 km
  std::uint64_t seed = 1;
  double dt = 72.0;  // s
  bool quiet = false;
};

/// Limits of the command line: at most this many cells in a generated domain (2^28, 57 CONUS domains,
/// ~11 GB of host fields), and the time step range.
inline constexpr std::int64_t max_cells = std::int64_t{1} << 28;
inline constexpr double max_dt_s = 3600.0;

int run_command(const run_options& opt);            // run_command.cpp
/// `wsm5 run` over MPI with several ranks: the CPU reference and the GPU variants on each rank's columns.
int run_distributed_command(const run_options& opt);  // run_distributed.cpp (GPUKIT_DISTRIBUTED)
int convert_command(const convert_options& opt);    // io_commands.cpp
int bench_command(const bench_options& opt);        // bench_command.cpp
int generate_command(const generate_options& opt);  // io_commands.cpp

}  // namespace wsm5_app
