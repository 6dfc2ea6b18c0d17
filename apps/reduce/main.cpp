// reduce: command-line front end of libreduce (`reduce --help`; exit codes in apps/README.md).
#include <CLI/CLI.hpp>

#include <functional>

#include "app.hpp"
#include "commands.hpp"

namespace {

void add_gpu_bench_options(CLI::App& cmd, reduce_app::gpu_bench_options& o) {
  cmd.add_flag("--quick", o.quick, "fewer timed calls per figure (same sizes)");
  cmd.add_option("--json", o.json, "write the report (apps/README.md, JSON reports) to FILE")->type_name("FILE");
  gpukit::add_quiet_flag(cmd, o.quiet);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"reduce: device-wide reductions of libreduce from the command line", "reduce"};
  gpukit::app_setup(app, "reduce");
  std::function<int()> action;

  reduce_app::sum_options sum;
  CLI::App* s = app.add_subcommand(
      "sum", "sum the whitespace-separated numbers of FILE ('#' starts a comment) on the chosen device and check "
             "the result against a long-double oracle on the CPU (exit 1 when outside its bound)");
  s->add_option("file", sum.file, "input file")->required()->type_name("FILE");
  s->add_option("--type", sum.type, "element type")
      ->check(CLI::IsMember({"float", "double", "int32", "int64", "uint32", "uint64"}))
      ->capture_default_str();
  gpukit::add_device_option(*s, sum.device);
  gpukit::add_allow_nonfinite_flag(*s, sum.allow_nonfinite);
  s->add_option("--json", sum.json, "write the report (apps/README.md, JSON reports) to FILE")->type_name("FILE");
  gpukit::add_quiet_flag(*s, sum.quiet);
  s->callback([&] { action = [&] { return reduce_app::sum_command(sum); }; });

  reduce_app::gpu_bench_options ladder;
  CLI::App* l = app.add_subcommand(
      "ladder", "the classic optimisation ladder (Harris 1-7, atomics, shuffles, two-pass, single-pass) timed on "
                "this GPU for 2^22 int32 and 2^28 float, against the measured ceilings (needs a GPU)");
  add_gpu_bench_options(*l, ladder);
  l->callback([&] { action = [&] { return reduce_app::ladder_command(ladder); }; });

  reduce_app::gpu_bench_options bench;
  CLI::App* b = app.add_subcommand(
      "bench", "libreduce's default paths against CUB for N = 2^10 .. 2^30 (CUDA events and CUDA Graphs), two "
               "segmented cases, the floor probe and the targets' PASS/MISS (needs a GPU)");
  add_gpu_bench_options(*b, bench);
  b->callback([&] { action = [&] { return reduce_app::bench_command(bench); }; });

#if defined(GPUKIT_DISTRIBUTED)
  reduce_app::gpu_bench_options bench_dist;
  CLI::App* bd = app.add_subcommand(
      "bench-dist", "under mpirun, one rank per GPU: libdist's dot and device all-reduce against the same work "
                    "written with raw NCCL, per call, the slowest rank's, and the target (within 10 %) as PASS/MISS "
                    "(needs NCCL)");
  add_gpu_bench_options(*bd, bench_dist);
  bd->callback([&] { action = [&] { return reduce_app::bench_dist_command(bench_dist); }; });
#endif

  return gpukit::run_app(app, argc, argv, action);
}
