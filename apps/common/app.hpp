// What every gpukit command-line app shares: CLI11 set-up (--help on the app and every subcommand,
// --version), the exit codes, and the mapping from exceptions to one line on stderr.
//
//   int main(int argc, char** argv) {
//     CLI::App app{"reduce: device-wide reductions", "reduce"};
//     gpukit::app_setup(app, "reduce");
//     std::function<int()> action;
//     auto* sum = app.add_subcommand("sum", "sum the numbers of FILE");
//     ... sum->add_option(...); sum->callback([&] { action = [&] { return run_sum(opts); }; });
//     return gpukit::run_app(app, argc, argv, action);
//   }
//
// Exit codes (documented in apps/README.md, tested for each app):
//   0 ok; 1 a check failed (the command ran and its result failed validation); 2 usage error or bad input
//   (unknown flag, missing value, malformed file, impossible value); 3 runtime or CUDA error.
#pragma once
#include <CLI/CLI.hpp>

#include <chrono>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>

#include "app_errors.hpp"  // exit_code, bad_input, check_failed
#include "reduce/device.hpp"

namespace gpukit {

/// "TOOL 0.1.0 (git 1e92958), CUDA runtime 13.0, driver 13.0" (driver "none" without one).
std::string version_text(const std::string& tool);

/// Requires a subcommand, adds --version (printing version_text) and CLI11's --help to `app`; every
/// subcommand added later gets --help from CLI11 as well.
void app_setup(CLI::App& app, const std::string& tool);

/// Parses argv into `app` (whose subcommand callbacks set `action`), runs `action` and maps what it
/// throws to one line on stderr and an exit code: gpukit::check_failed -> 1; CLI11 parse errors, gpukit::bad_input,
/// std::invalid_argument, std::out_of_range and library input errors -> 2; gpukit::cuda_error,
/// gpukit::no_cuda_device, std::bad_alloc, std::length_error -> 3 ("out of host memory", never
/// the standard library's own text). --help and --version exit 0.
int run_app(CLI::App& app, int argc, char** argv, const std::function<int()>& action);

/// The --device option every app takes: auto | cpu | gpu ("cuda" is accepted as a synonym of gpu).
CLI::Option* add_device_option(CLI::App& cmd, std::string& device);

/// The --allow-nonfinite flag of every command that reads matrix or vector values: NaN/Inf are refused
/// at load without it (sparse::read_options::allow_nonfinite).
CLI::Option* add_allow_nonfinite_flag(CLI::App& cmd, bool& allow);

/// A CLI11 check for a real-valued option: a finite number in [lo, hi] (hi may be infinity: no upper
/// bound). NaN, inf and out-of-range values are usage errors naming the value, never CLI::Range's
/// 300-digit DBL_MAX.
CLI::Validator finite_number(double lo, double hi);

/// The --quiet flag (print only errors) every app takes.
CLI::Option* add_quiet_flag(CLI::App& cmd, bool& quiet);

/// Where a command prints its normal output: std::cout, or a stream that discards everything when
/// `quiet` (errors still go to stderr through run_app).
std::ostream& output_stream(bool quiet);

/// Wall seconds from t0 (steady clock) to now: the apps' host-side timings.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// reduce::select_backend for a --device value, saying on stderr when `auto` falls back to the CPU
/// (libraries never print; a fallback is never silent).
reduce::backend select_backend_announced(const std::string& tool, const std::string& device);

}  // namespace gpukit
