// apps/solve subcommands: main.cpp parses the command line (CLI11) into these options; each command returns
// its exit code and throws for errors (gpukit::run_app maps them, apps/common/app.hpp).
#pragma once
#include <string>

namespace solve_app {

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
};

int run_command(const run_options& opt);  // run_command.cpp

struct bench_options {
  bool quick = false;
  std::string matrix;  // the real SPD problem's pattern; empty: the bundled jagmesh7.mtx
  std::string json;
  bool quiet = false;
};

int bench_command(const bench_options& opt);  // bench_command.cu

}  // namespace solve_app
