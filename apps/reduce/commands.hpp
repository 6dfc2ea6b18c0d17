// apps/reduce subcommands: main.cpp parses the command line (CLI11) into these options; each command
// returns its exit code and throws for errors (gpukit::run_app maps them, apps/common/app.hpp).
#pragma once
#include <string>

namespace reduce_app {

struct sum_options {
  std::string file;
  std::string type = "float";  // float double int32 int64 uint32 uint64
  std::string device = "auto";
  bool allow_nonfinite = false;  // accept NaN/Inf values (floating-point types)
  std::string json;  // report path; empty: none
  bool quiet = false;
};

/// `reduce ladder` and `reduce bench`: GPU timings, no input file.
struct gpu_bench_options {
  bool quick = false;
  std::string json;
  bool quiet = false;
};

int sum_command(const sum_options& opt);           // sum_command.cpp
int ladder_command(const gpu_bench_options& opt);  // gpu_commands.cpp (timings: ladder_command.cu)
int bench_command(const gpu_bench_options& opt);   // gpu_commands.cpp (timings: bench_command.cu)
int bench_dist_command(const gpu_bench_options& opt);  // bench_dist.cpp (builds with GPUKIT_DISTRIBUTED)

}  // namespace reduce_app
