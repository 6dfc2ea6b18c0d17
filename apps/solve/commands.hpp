// apps/solve subcommands: main.cpp parses the command line (CLI11) into these options; each command returns
// its exit code and throws for errors (gpukit::run_app maps them, apps/common/app.hpp).
#pragma once
#include <string>

namespace solve_app {

/// --plan-only: the scaling model's parameters (defaults: dist::machine_model's: H100 float CG on 3D Poisson
/// 160^3, NVLink 4 and NCCL latencies measured on two H200s, NDR).
struct plan_options {
  bool only = false;
  int max_gpus = 64;
  double spmv_ns_per_nnz = 2.3;
  double vector_ns_per_row = 0.0177;
  int gpus_per_node = 8;
  double nvlink_gb_per_s = 450;
  double ib_gb_per_s = 50;
  double nvlink_latency_us = 5;
  double ib_latency_us = 8;
  bool hide_halo = false;
};

struct run_options {
  std::string matrix;             // .mtx or .h5
  std::string rhs = "ones";       // FILE | ones | random
  std::string method = "cg";
  double tol = 1e-8;
  double atol = 0;
  int max_iterations = 1000;
  int check_every = 8;
  std::string precision = "double";
  bool reproducible = false;
  bool graph = false;  // solve::options::graph
  std::string device = "auto";
  std::string json;     // report; empty: none
  std::string history;  // CSV of the residual history; empty: none
  std::string plot;     // PNG of the residual curve (bench/plot.py); empty: none
  bool check = false;  // also require the recomputed true residual to meet the tolerance
  bool quiet = false;
  plan_options plan;
};

int run_command(const run_options& opt);  // run_command.cpp

}  // namespace solve_app

// Shared by `run` on one process and its distributed form (run_command.cpp, run_distributed.cpp).
#include <cstdint>
#include <vector>

#include "solve/types.hpp"

namespace solve_app {

/// The right-hand side of --rhs for `rows` rows: ones, random (seed 2026) or a file (gpukit::bad_input naming it).
template <class V>
std::vector<V> make_rhs(const std::string& spec, std::int64_t rows);
/// --check: the recomputed true relative residual must meet max(tol, atol / ||b||) (gpukit::check_failed).
void check_true_residual(const run_options& opt, const solve::result& r, double b_norm);
/// The iterations' time per iteration in us (solve::result::iteration_seconds; 0 without iterations).
double per_iteration_us(const solve::result& r);
/// The report's "time" line: the whole run's `seconds`, the iterations' time and its per-iteration share.
std::string time_line(double seconds, const solve::result& r);
/// --history CSV and --json report of a finished solve (nnz < 0: not reported; ranks > 1: reported).
void write_outputs(const run_options& opt, const solve::result& r, std::int64_t rows, std::int64_t nnz, double seconds,
                   int ranks);
/// `solve run --plan-only` (run_plan.cpp; built with GPUKIT_DISTRIBUTED).
int plan_command(const run_options& opt);
/// `solve run` over MPI (run_distributed.cpp; built with GPUKIT_DISTRIBUTED).
int run_distributed_command(const run_options& opt);

struct bench_options {
  bool quick = false;
  std::string matrix;  // the real SPD problem's pattern; empty: the bundled jagmesh7.mtx
  std::string json;
  bool quiet = false;
};

int bench_command(const bench_options& opt);  // bench_command.cu

}  // namespace solve_app
