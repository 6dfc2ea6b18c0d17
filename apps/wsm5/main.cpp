// wsm5: WSM5 (WRF V3.1 classic) column microphysics of libwsm5 on the CPU reference and the CUDA variants
// (`wsm5 --help`; exit codes in apps/README.md).
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

#include "app.hpp"
#include "commands.hpp"
#include "wsm5/wsm5.hpp"

namespace {

using action_t = std::function<int()>;

/// A time step in seconds: finite and in (0, max_dt_s] (CLI11 validator: the message, or empty when valid).
std::string check_dt(const std::string& text) {
  double v = 0;
  if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v) || !(v > 0) || v > wsm5_app::max_dt_s)
    return text + " is not a finite number of seconds in (0, 3600]";
  return {};
}

/// A seed: digits only (CLI11 would take "-1" as 2^64 - 1).
std::string check_seed(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return text + " is not a non-negative integer";
  return {};
}

void add_run(CLI::App& app, wsm5_app::run_options& o, action_t& action) {
  CLI::App* r = app.add_subcommand(
      "run", "N calls of the scheme on each variant: time per call (without / with host-device transfers), "
             "cells/s, GB/s and GFLOP/s against the measured ceilings, speed-up over the CPU reference, domain "
             "diagnostics; --check compares every GPU variant with the CPU reference field by field and checks "
             "the per-column water budget (exit 1 when a check fails)");
  r->add_option("in", o.in, "input domain (HDF5, data/README.md \"WSM5 columns\")")->required()->type_name("IN.h5");
  r->add_option("--steps", o.steps, "calls of the scheme on each GPU variant")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  r->add_option("--cpu-steps", o.cpu_steps, "calls of the CPU reference, the check's reference (default and at "
                                            "most: --steps)")
      ->check(CLI::Range(1, 10'000'000));
  r->add_option("--variant", o.variant, "variant(s) to run: automatic (thread_per_column or warp_per_column by the "
                                        "column count and depth against the GPU's capacity), all (both); cpu or no GPU: the "
                                        "CPU reference only")
      ->check(CLI::IsMember({"automatic", "cpu", "thread_per_column", "warp_per_column", "all"}))
      ->capture_default_str();
  r->add_flag("--check", o.check, "compare each GPU variant with the CPU reference; exit 1 when out of bounds");
  gpukit::add_device_option(*r, o.device);
  r->add_option("--repeats", o.repeats, "timed calls per variant (median), after 3 warm-up calls")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  r->add_option("--chunks", o.chunks, "row chunks of the with-transfers timing (copies overlap compute; each 0.7 of the one before)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  r->add_option("--output", o.output, "write the state after the run (HDF5, with the outputs) to FILE")
      ->type_name("FILE");
  r->add_option("--json", o.json, "write the report (apps/README.md, JSON reports) to FILE")->type_name("FILE");
  gpukit::add_quiet_flag(*r, o.quiet);
  r->callback([&] { action = [&] { return wsm5_app::run_command(o); }; });
}

void add_bench(CLI::App& app, wsm5_app::bench_options& o, action_t& action) {
  CLI::App* b = app.add_subcommand(
      "bench", "--crossover: thread_per_column and warp_per_column timed on generated domains of 64, 128, ... "
               "columns (median ms per call without transfers), the measured crossover and what --variant "
               "automatic picks at each size; needs a GPU (exit 3 without)");
  b->add_flag("--crossover", o.crossover, "time both GPU variants over column counts")->required();
  b->add_option("--nz", o.nz, "levels")->check(CLI::Range(std::int64_t{2}, wsm5::gpu_max_levels))->capture_default_str();
  b->add_option("--dt", o.dt, "model time step [s]")->check(CLI::Validator(check_dt, "SECONDS in (0, 3600]"))->capture_default_str();
  b->add_option("--repeats", o.repeats, "timed calls per point (median), after 3 warm-up calls")
      ->check(CLI::Range(1, 10'000))
      ->capture_default_str();
  b->add_option("--max-columns", o.max_columns, "largest column count (the sizes double from 64)")
      ->check(CLI::Range(std::int64_t{64}, std::int64_t{1} << 22))
      ->capture_default_str();
  b->add_option("--json", o.json, "write the report (apps/README.md, JSON reports) to FILE")->type_name("FILE");
  gpukit::add_quiet_flag(*b, o.quiet);
  b->callback([&] { action = [&] { return wsm5_app::bench_command(o); }; });
}

void add_convert(CLI::App& app, wsm5_app::convert_options& o, action_t& action) {
  CLI::App* c = app.add_subcommand(
      "convert", "the text columns of data/wsm5/columns.txt -> the HDF5 schema of data/README.md; with --golden, "
                 "the WRF output after N calls (wrf_v31_*step.txt) in the output schema");
  c->add_option("in", o.in, "text columns (data/wsm5/columns.txt format)")->required()->type_name("COLUMNS.txt");
  c->add_option("out,--output", o.out, "output domain (HDF5)")->required()->type_name("OUT.h5");
  c->add_option("--golden", o.golden, "WRF output after N calls (text) to store as the state")->type_name("FILE");
  gpukit::add_quiet_flag(*c, o.quiet);
  c->callback([&] { action = [&] { return wsm5_app::convert_command(o); }; });
}

void add_generate(CLI::App& app, wsm5_app::generate_options& o, action_t& action) {
  CLI::App* g = app.add_subcommand(
      "generate", "a deterministic synthetic domain (default: CONUS 12 km, 433 x 308 x 35, dt = 72 s); same "
                  "sizes and seed, same domain everywhere. Example: wsm5 generate --nx 433 --ny 308 conus.h5");
  g->add_option("out,--output", o.out, "output domain (HDF5)")->required()->type_name("OUT.h5");
  g->add_option("--nx", o.nx, "columns along x")->check(CLI::Range(std::int64_t{1}, std::int64_t{100'000}))->capture_default_str();
  g->add_option("--ny", o.ny, "columns along y")->check(CLI::Range(std::int64_t{1}, std::int64_t{100'000}))->capture_default_str();
  g->add_option("--nz", o.nz, "levels (the GPU variants take at most " + std::to_string(wsm5::gpu_max_levels) + ")")
      ->check(CLI::Range(std::int64_t{2}, std::int64_t{1000}))
      ->capture_default_str();
  g->add_option("--seed", o.seed, "random seed")->check(CLI::Validator(check_seed, "UINT64"))->capture_default_str();
  g->add_option("--dt", o.dt, "model time step [s]")->check(CLI::Validator(check_dt, "SECONDS in (0, 3600]"))->capture_default_str();
  gpukit::add_quiet_flag(*g, o.quiet);
  g->callback([&] { action = [&] { return wsm5_app::generate_command(o); }; });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"wsm5: WSM5 (WRF V3.1 classic) column microphysics on the CPU reference and the CUDA variants",
               "wsm5"};
  gpukit::app_setup(app, "wsm5");
  action_t action;
  wsm5_app::run_options run;
  wsm5_app::convert_options convert;
  wsm5_app::generate_options generate;
  wsm5_app::bench_options bench;
  add_run(app, run, action);
  add_bench(app, bench, action);
  add_convert(app, convert, action);
  add_generate(app, generate, action);
  return gpukit::run_app(app, argc, argv, action);
}
