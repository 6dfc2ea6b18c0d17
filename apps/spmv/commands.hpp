// apps/spmv subcommands: main.cpp parses the command line (CLI11) into these options; each command
// returns its exit code and throws for errors (gpukit::run_app maps them, apps/common/app.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sparse/generate.hpp"

namespace spmv_app {

/// --precision and --index of convert and generate.
struct storage_options {
  std::string precision = "double";  // float | double
  int index = 32;                    // 32 | 64
};

struct convert_options {
  std::string in, out;
  storage_options storage;
  bool allow_nonfinite = false;  // accept NaN/Inf values
  bool quiet = false;
};

struct generate_options {
  std::string class_name, out;
  sparse::generate_params params;  // sizes left 0 when not given
  storage_options storage;
  std::string description;  // written into the file: the command line that made it
  bool quiet = false;
};

struct run_options {
  std::string path;
  std::string algorithm = "automatic";  // a name or "all"
  bool check = false;
  int repeats = 50;
  std::string precision = "float";
  bool allow_nonfinite = false;  // accept NaN/Inf values
  std::string device = "auto";
  std::string json;
  std::string output;  // y = A x as text, one value per line; empty: not written
  bool quiet = false;
};

struct bench_options {
  bool quick = false;
  bool explore = false;
  std::vector<std::string> classes;  // empty: all
  std::vector<std::string> corpus;   // --corpus: directories and matrix files (corpus_command.cpp)
  bool corpus_generated = false;     // --corpus-generated: the generated cases of corpus.hpp
  bool list = false;                 // --list: print the corpus and stop (no GPU needed)
  std::string json;
  bool quiet = false;
};

int convert_command(const convert_options& opt);    // io_commands.cpp
int generate_command(const generate_options& opt);  // io_commands.cpp
int run_command(const run_options& opt);            // run_command.cpp
int bench_command(const bench_options& opt);        // bench_command.cpp
int corpus_command(const bench_options& opt);       // corpus_command.cpp: bench with --corpus / --corpus-generated

/// "spmv generate banded --rows 1000 --k 1 --seed 20261121": the command that makes the matrix of `p`.
std::string generate_command_line(const sparse::generate_params& p);  // io_commands.cpp

}  // namespace spmv_app
