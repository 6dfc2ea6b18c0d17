// spmv: command-line front end of libsparse (`spmv --help`; exit codes in apps/README.md).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "sparse/spmv.hpp"

namespace {

using action_t = std::function<int()>;
constexpr std::int64_t max_size = std::int64_t{1} << 40;  // rows, columns, lengths: the library checks Index fit

void add_storage_options(CLI::App& cmd, spmv_app::storage_options& s) {
  cmd.add_option("--precision", s.precision, "value type stored")
      ->check(CLI::IsMember({"float", "double"}))
      ->capture_default_str();
  cmd.add_option("--index", s.index, "index width in bits")->check(CLI::IsMember({32, 64}))->capture_default_str();
}

void add_convert(CLI::App& app, spmv_app::convert_options& o, action_t& action) {
  CLI::App* c = app.add_subcommand(
      "convert", "convert between Matrix Market (.mtx) and HDF5 (.h5, .hdf5), by extension; values stored as double "
                 "and indices as int32 unless --precision/--index say otherwise; never leaves a partial file");
  c->add_option("in", o.in, "input matrix (.mtx, .h5, .hdf5)")->required()->type_name("IN");
  c->add_option("out,--output", o.out, "output matrix (.mtx, .h5, .hdf5)")->required()->type_name("OUT");
  add_storage_options(*c, o.storage);
  gpukit::add_allow_nonfinite_flag(*c, o.allow_nonfinite);
  gpukit::add_quiet_flag(*c, o.quiet);
  c->callback([&] { action = [&] { return spmv_app::convert_command(o); }; });
}

void add_generate(CLI::App& app, spmv_app::generate_options& o, action_t& action) {
  CLI::App* g = app.add_subcommand(
      "generate", "generate a benchmark matrix class: laplace2d (--n: n x n grid, 5-point), laplace3d (--n: n^3 "
                  "grid, 7-point), random (--rows --cols --k: k columns per row drawn with replacement, deduplicated), "
                  "powerlaw (--rows --cols: length min(L, floor(2 u^-0.7)), L = --max-length), denserow (--rows "
                  "--cols --k: short rows plus row rows/2 with --dense-length distinct entries), banded (--rows --cols "
                  "--k: columns r-k .. r+k), blockdiag (--rows --cols --k: dense k x k diagonal blocks), arrow (--rows "
                  "--cols --k: k dense rows, k dense columns and the diagonal). Same seed, same matrix everywhere. "
                  "Example: spmv generate laplace2d lap.h5 --n 2048");
  g->add_option("class", o.class_name, "matrix class")
      ->required()
      ->check(CLI::IsMember({"laplace2d", "laplace3d", "random", "powerlaw", "denserow", "banded", "blockdiag", "arrow"}));
  g->add_option("out,--output", o.out, "output matrix (.mtx, .h5, .hdf5)")->required()->type_name("OUT");
  sparse::generate_params& p = o.params;
  g->add_option("--n", p.n, "grid side (laplace2d, laplace3d)")->check(CLI::Range(std::int64_t{1}, std::int64_t{1000000}));
  g->add_option("--rows", p.rows, "rows (every class but the Laplacians)")->check(CLI::Range(std::int64_t{1}, max_size));
  g->add_option("--cols", p.cols, "columns (default: --rows)")->check(CLI::Range(std::int64_t{1}, max_size));
  g->add_option("--k", p.k, "entries drawn per row (random, denserow), half-bandwidth (banded), block size (blockdiag), width (arrow)")->check(CLI::Range(std::int64_t{1}, std::int64_t{1000000}));
  g->add_option("--seed", p.seed, "random seed")->check(CLI::NonNegativeNumber)->capture_default_str();
  g->add_option("--max-length", p.max_length, "powerlaw: cap on the row length")
      ->check(CLI::Range(std::int64_t{1}, max_size))
      ->capture_default_str();
  g->add_option("--dense-length", p.dense_length, "denserow: entries of the dense row")
      ->check(CLI::Range(std::int64_t{1}, max_size))
      ->capture_default_str();
  add_storage_options(*g, o.storage);
  gpukit::add_quiet_flag(*g, o.quiet);
  g->callback([&] { action = [&] { return spmv_app::generate_command(o); }; });
}

// "NAME|all": a name sparse::parse_spmv_algorithm knows, checked when parsed (CLI11 validator: the
// message, or empty when valid).
std::string check_algorithm(const std::string& name) {
  if (name == "all") return {};
  try {
    sparse::parse_spmv_algorithm(name);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

void add_run(CLI::App& app, spmv_app::run_options& o, action_t& action) {
  CLI::App* r = app.add_subcommand(
      "run", "y = A x with the chosen algorithm(s), timed against cuSPARSE ALG1/ALG2 in the same run and compared "
             "with the double-accumulating reference, Eigen and cuSPARSE (--device cpu: the reference backend alone)");
  r->add_option("file", o.path, "matrix (.mtx, .h5, .hdf5)")->required()->type_name("FILE");
  r->add_option("--algorithm", o.algorithm, "an SpMV algorithm of libsparse, or all")
      ->check(check_algorithm, "NAME|all")
      ->capture_default_str();
  r->add_flag("--check", o.check, "exit 1 when a result is outside its derived per-row error bound");
  r->add_option("--repeats,--repeat", o.repeats, "timed calls per figure (median)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  r->add_option("--precision", o.precision, "value type")->check(CLI::IsMember({"float", "double"}))->capture_default_str();
  gpukit::add_allow_nonfinite_flag(*r, o.allow_nonfinite);
  gpukit::add_device_option(*r, o.device);
  r->add_option("--json", o.json, "write the report (apps/README.md, JSON reports) to FILE")->type_name("FILE");
  r->add_option("--output", o.output, "write y = A x to FILE, one value per line with the digits that round-trip "
                                      "(--device cpu: the reference backend's y; GPU: the last algorithm's, automatic "
                                      "under all)")
      ->type_name("FILE");
  gpukit::add_quiet_flag(*r, o.quiet);
  r->callback([&] { action = [&] { return spmv_app::run_command(o); }; });
}

void add_bench(CLI::App& app, spmv_app::bench_options& o, action_t& action) {
  CLI::App* b = app.add_subcommand(
      "bench", "the ANCHORS matrix classes generated in-process (or a corpus: --corpus, --corpus-generated; float "
               "values, int32 indices), every algorithm and cuSPARSE ALG1/ALG2 timed in the same run, the copy "
               "ceiling beside them, the targets' PASS/MISS (needs a GPU)");
  b->add_flag("--quick", o.quick, "fewer timed calls (same sizes)");
  auto* explore = b->add_flag("--explore", o.explore, "also time the vector kernel at every forced width (vector_w2 .. vector_w32)");
  auto* classes = b->add_option("--classes", o.classes, "keep only these classes (comma-separated); targets apply to those alone")
      ->delimiter(',')
      ->check(CLI::IsMember({"laplace2d", "laplace3d", "random16", "powerlaw", "random2", "random1000", "denserow"}));
  auto* corpus = b->add_option("--corpus", o.corpus,
                               "time a corpus instead of the classes: a directory (its .mtx, .h5 and .hdf5 files) or a "
                               "matrix file; repeatable. Per matrix: chosen and best algorithm, ALG1, automatic/ALG1 "
                               "and automatic/best, and the targets' PASS/MISS (automatic never slower than ALG1, "
                               "within 10% of our best)")
      ->type_name("DIR|FILE");
  auto* generated = b->add_flag("--corpus-generated", o.corpus_generated,
                                "add the generated corpus cases (banded, block-diagonal, power-law, arrow, random, one "
                                "dense row, rectangular, Laplacians; 1,000 to 10,000,000 rows) to the corpus");
  b->add_flag("--list", o.list, "with --corpus / --corpus-generated: print the corpus (every file read and checked) "
                                "and stop, without a GPU");
  for (auto* c : {corpus, generated}) c->excludes(classes)->excludes(explore);
  b->add_option("--json", o.json, "write the report (apps/README.md, JSON reports) to FILE")->type_name("FILE");
  gpukit::add_quiet_flag(*b, o.quiet);
  b->callback([&] { action = [&] { return spmv_app::bench_command(o); }; });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"spmv: CSR sparse matrix-vector products of libsparse from the command line", "spmv"};
  gpukit::app_setup(app, "spmv");
  action_t action;
  spmv_app::convert_options convert;
  spmv_app::generate_options generate;
  spmv_app::run_options run;
  spmv_app::bench_options bench;
  add_convert(app, convert, action);
  add_generate(app, generate, action);
  add_run(app, run, action);
  add_bench(app, bench, action);
  return gpukit::run_app(app, argc, argv, action);
}
