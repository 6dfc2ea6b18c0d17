// `wsm5 run IN.h5`: the CPU reference, then each GPU variant (N calls, timings without and with
// transfers, the check against the reference), the output state and the JSON report. What is measured:
// measure.cpp; how it is printed and reported: run_report.cpp.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "file_guard.hpp"
#include "gpukit/error.hpp"
#include "measure.hpp"
#include "report.hpp"
#include "run_report.hpp"
#include "wsm5/wsm5.hpp"
#if defined(GPUKIT_DISTRIBUTED)
#include "dist/communicator.hpp"
#endif

namespace wsm5_app {

std::vector<wsm5::variant> requested_variants(const run_options& opt) {
  if (opt.variant == "cpu") return {};
  const bool any = opt.variant == "all" || opt.variant == "automatic";
  if (opt.device == "cpu" && !any)
    throw gpukit::bad_input("--variant " + opt.variant + " needs --device gpu or auto");
  if (opt.variant == "all") return {wsm5::variant::thread_per_column, wsm5::variant::warp_per_column};
  if (opt.variant == "automatic") return {wsm5::variant::automatic};
  return {wsm5::parse_variant(opt.variant)};
}

namespace {

/// Whether the GPU variants run. --device cpu, or no GPU with --device auto and --variant all or automatic, runs the
/// CPU reference only (auto says so on stderr); a GPU variant asked for by name, or --device gpu, without
/// a GPU is an error (exit 3), never a silent fallback.
bool choose_gpu(const run_options& opt, bool wants_gpu) {
  if (!wants_gpu || opt.device == "cpu") return false;
  if (opt.variant != "all" && opt.variant != "automatic" && !reduce::cuda_device_available())
    throw gpukit::no_cuda_device("--variant " + opt.variant + " needs a GPU: " + reduce::cuda_unavailable_reason());
  return gpukit::select_backend_announced("wsm5", opt.device) == reduce::backend::cuda;
}

/// Each GPU variant after the ceilings; the first variant's state after --steps calls goes to out_state.
void run_gpu_variants(const run_context& x, const std::vector<wsm5::variant>& variants, wsm5::domain& out_state) {
  wsm5::gpu_domain probe(x.d0);  // allocated through the variants' timings, as the app always has
  const gpu_ceilings c = measure_ceilings(x.d0, probe);
  print_ceilings(x.out, c);
  x.results["gpu"] = ceilings_json(c);
  const double max_water = x.opt.check ? max_column_water(x.d0) : 0.0;
  const variant_plan plan{x.opt.steps, x.opt.check ? x.cpu.calls : 0, x.opt.repeats, x.opt.chunks, !x.opt.quiet};
  for (std::size_t i = 0; i < variants.size(); ++i) {
    wsm5::variant chosen = variants[i];
    if (chosen == wsm5::variant::automatic) {
      const wsm5::gpu_capacity cap = wsm5::current_gpu_capacity();
      chosen = wsm5::choose_variant(x.d0.columns(), x.d0.nz, cap);
      report_automatic(x, chosen, cap);
    }
    const variant_run r = run_variant(x.d0, chosen, variants[i], plan, i == 0 ? &out_state : nullptr);
    report_variant(x, r, c, max_water);
  }
}

/// The run; a non-finite result throws nonfinite_failure (run_command turns it into exit 3).
int run_checked(const run_options& opt) {
  gpukit::check_output_paths({opt.in}, {opt.output, opt.json});
  const std::vector<wsm5::variant> variants = requested_variants(opt);
  const wsm5::domain d0 = wsm5::read_hdf5(opt.in);
  const bool gpu = choose_gpu(opt, !variants.empty());
  const int cpu_steps = opt.cpu_steps > 0 ? std::min(opt.cpu_steps, opt.steps) : opt.steps;
  std::ostream& out = gpukit::output_stream(opt.quiet);
  print_input(out, opt.in, d0);
  nlohmann::json report = make_run_report(opt, cpu_steps, d0, gpu);

  // The CPU reference: cpu_steps calls on all threads (the check's reference), one thread timed.
  const cpu_run cpu = run_cpu_reference(d0, cpu_steps, !opt.quiet);
  print_cpu(out, cpu);
  report["results"]["cpu"] = cpu_json(cpu, d0.cells());
  std::vector<std::string> failures;
  if (!cpu.budget.ok) failures.push_back("the CPU reference's water budget");

  const run_context x{opt, d0, cpu, out, report["results"], failures};
  wsm5::domain out_state = cpu.state;
  if (gpu) run_gpu_variants(x, variants, out_state);
  std::string failure;
  if (write_results(x, out_state, gpu, report, "", failure) == gpukit::exit_check_failed)
    throw gpukit::check_failed(failure);
  return gpukit::exit_ok;
}

}  // namespace

int run_command(const run_options& opt) {
#if defined(GPUKIT_DISTRIBUTED)
  // Under mpirun with several ranks: the domain split over the ranks (run_distributed.cpp); one rank runs
  // as always.
  if (dist::launched_world_size() > 1) return run_distributed_command(opt);
#endif
  try {
    return run_checked(opt);
  } catch (const nonfinite_failure& e) {  // a runtime failure, not bad input: exit 3, nothing written
    std::cerr << "wsm5: error: " << opt.in << ": " << e.what() << "\n";
    return gpukit::exit_runtime_error;
  }
}

}  // namespace wsm5_app
