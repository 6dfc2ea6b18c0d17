// solve: command-line front end of libsolve (`solve --help`; exit codes in apps/README.md).
#include <CLI/CLI.hpp>

#include <functional>
#include <limits>

#include "app.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"solve: Krylov solvers (cg, pcg, bicgstab, pipelined cg) of libsolve from the command line", "solve"};
  gpukit::app_setup(app, "solve");
  std::function<int()> action;

  solve_app::run_options run;
  CLI::App* r = app.add_subcommand(
      "run", "solve A x = b for the matrix of FILE (.mtx or .h5) and report the iterations, the true relative "
             "residual ||b - A x|| / ||b|| and why it stopped (exit 0 converged, 1 not converged or breakdown)");
  r->add_option("matrix", run.matrix, "matrix file (.mtx or .h5)")->required()->type_name("FILE");
  r->add_option("--rhs", run.rhs, "right-hand side: ones, random (uniform in [-1, 1), seed 2026) or a FILE of "
                                  "whitespace-separated numbers, one per row ('#' starts a comment)")
      ->capture_default_str();
  r->add_option("--method", run.method, "Krylov method")
      ->check(CLI::IsMember({"cg", "pcg", "bicgstab", "pipecg"}))
      ->capture_default_str();
  r->add_option("--tol", run.tol, "relative tolerance: stop when ||r|| <= tol ||b||")
      ->check(gpukit::finite_number(0.0, 1.0))
      ->capture_default_str();
  r->add_option("--atol", run.atol, "absolute tolerance floor")->check(gpukit::finite_number(0.0, std::numeric_limits<double>::infinity()))
      ->capture_default_str();
  r->add_option("--max-iterations", run.max_iterations, "iteration limit")
      ->check(CLI::Range(0, 100000000))
      ->capture_default_str();
  r->add_option("--check-every", run.check_every, "iterations between the host's convergence checks (GPU)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  r->add_option("--precision", run.precision, "value type")
      ->check(CLI::IsMember({"float", "double"}))
      ->capture_default_str();
  r->add_flag("--reproducible", run.reproducible,
              "every dot through libreduce's reproducible sum: bitwise identical history across runs and GPUs");
  r->add_flag("--graph", run.graph,
              "GPU: run the iterations as one CUDA graph launch with a device-side stopping test (cg, pcg, "
              "bicgstab; same results bitwise, no host round trip until the stop)");
  gpukit::add_device_option(*r, run.device);
  r->add_option("--json", run.json, "write the report (apps/README.md, JSON reports) to FILE")->type_name("FILE");
  r->add_option("--history", run.history, "write the residual history (iteration, ||r||, ||r|| / ||b||) as CSV")
      ->type_name("FILE");
  r->add_option("--plot", run.plot, "draw the residual curve (||r|| / ||b|| per iteration, log scale) to PNG through "
                                    "bench/plot.py (python3 with matplotlib)")
      ->type_name("PNG");
  r->add_flag("--check", run.check,
               "also require the true relative residual ||b - A x|| / ||b||, recomputed after the solve, to be at most "
               "max(tol, atol / ||b||) (the recurrence's residual decides convergence; rounding can leave the true one "
               "above it): exit 1 otherwise");
  r->add_flag("--plan-only", run.plan.only,
              "print the scaling model instead of solving: for 1, 2, 4, ... --max-gpus GPUs, the slowest rank's rows, "
              "entries, halo and neighbours (partition by nonzeros) and the predicted time of one iteration of "
              "--method (cg or pipecg) from the rates and links below (needs a build with MPI)");
  r->add_option("--max-gpus", run.plan.max_gpus, "--plan-only: largest GPU count")->check(CLI::Range(1, 65536))
      ->capture_default_str();
  r->add_option("--spmv-ns-per-nnz", run.plan.spmv_ns_per_nnz, "--plan-only: measured single-GPU SpMV time per entry")
      ->check(CLI::PositiveNumber)->capture_default_str();
  r->add_option("--vector-ns-per-row", run.plan.vector_ns_per_row,
                "--plan-only: measured single-GPU time of the rest of an iteration per row")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  r->add_option("--gpus-per-node", run.plan.gpus_per_node, "--plan-only: GPUs joined by NVLink")
      ->check(CLI::Range(1, 1024))->capture_default_str();
  r->add_option("--nvlink-gb-per-s", run.plan.nvlink_gb_per_s, "--plan-only: NVLink bandwidth per GPU and direction")
      ->check(CLI::PositiveNumber)->capture_default_str();
  r->add_option("--ib-gb-per-s", run.plan.ib_gb_per_s, "--plan-only: InfiniBand bandwidth per GPU")
      ->check(CLI::PositiveNumber)->capture_default_str();
  r->add_option("--nvlink-latency-us", run.plan.nvlink_latency_us, "--plan-only: NVLink message latency")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  r->add_option("--ib-latency-us", run.plan.ib_latency_us, "--plan-only: InfiniBand message latency")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  r->add_flag("--hide-halo", run.plan.hide_halo,
              "--plan-only: the halo runs under the interior rows (host staging; NCCL's measured exposed)");
  gpukit::add_quiet_flag(*r, run.quiet);
  r->callback([&] { action = [&] { return solve_app::run_command(run); }; });

  solve_app::bench_options bench;
  CLI::App* bc = app.add_subcommand(
      "bench", "GPU only: our cg, pcg, pipecg (and cg's reproducible mode) against the textbook cuSPARSE + cuBLAS CG "
               "of the CUDA samples, its device-scalar form and Eigen's CG on all CPU threads, on 3D Poisson 160^3 "
               "and 64^3, 2D Poisson 2048^2 and the Laplacian of jagmesh7 plus I (float): per-iteration time, time "
               "to solution at rtol 1e-5 (2D: 1e-4), bytes per iteration and the bandwidth floor; PASS/MISS lines "
               "for the targets");
  bc->add_flag("--quick", bench.quick, "3 repeats instead of 7 (same problems)");
  bc->add_option("--matrix", bench.matrix, "pattern of the real SPD problem (graph Laplacian + I of it); default: "
                                           "the bundled jagmesh7.mtx")
      ->type_name("FILE");
  bc->add_option("--json", bench.json, "write the report (apps/README.md, JSON reports) to FILE")->type_name("FILE");
  gpukit::add_quiet_flag(*bc, bench.quiet);
  bc->callback([&] { action = [&] { return solve_app::bench_command(bench); }; });

  return gpukit::run_app(app, argc, argv, action);
}
