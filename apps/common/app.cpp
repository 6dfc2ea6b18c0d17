#include "app.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <sstream>
#include <new>
#include <stdexcept>

#include "gpukit/error.hpp"
#include "gpukit_version.hpp"

namespace gpukit {
namespace {

/// "13.0" from CUDA's 1000 * major + 10 * minor encoding; "none" for 0 (no driver).
std::string cuda_version_string(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

int report_error(const std::string& tool, const char* what, int code) {
  std::cerr << tool << ": error: " << what << "\n";
  return code;
}

}  // namespace

std::string version_text(const std::string& tool) {
  int runtime = 0, driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  (void)cudaGetLastError();
  return tool + " " + version::number + " (git " + version::git_commit + "), CUDA runtime " +
         cuda_version_string(runtime) + ", driver " + cuda_version_string(driver);
}

void app_setup(CLI::App& app, const std::string& tool) {
  app.require_subcommand(1);
  app.set_version_flag("--version", [tool] { return version_text(tool); }, "print version, git commit and CUDA versions");
  app.failure_message(CLI::FailureMessage::simple);
}

int run_app(CLI::App& app, int argc, char** argv, const std::function<int()>& action) {
  const std::string tool = app.get_name();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << tool << ": usage error: " << e.what() << " (see " << tool << " --help)\n";
    return exit_bad_input;
  }
  if (!action) return report_error(tool, "no command given", exit_bad_input);
  try {
    return action();
  } catch (const check_failed& e) {
    return report_error(tool, e.what(), exit_check_failed);
  } catch (const no_cuda_device& e) {
    return report_error(tool, e.what(), exit_runtime_error);
  } catch (const cuda_error& e) {
    return report_error(tool, e.what(), exit_runtime_error);
  } catch (const std::bad_alloc&) {
    return report_error(tool, "out of host memory", exit_runtime_error);
  } catch (const std::length_error&) {
    // std::vector's "cannot create std::vector larger than max_size()": a size no allocation can meet.
    return report_error(tool, "out of host memory (a size larger than any allocation)", exit_runtime_error);
  } catch (const std::exception& e) {
    // Everything else the libraries and apps throw is about the input: a file, a value, an option.
    return report_error(tool, e.what(), exit_bad_input);
  }
}

CLI::Option* add_device_option(CLI::App& cmd, std::string& device) {
  device = "auto";
  return cmd.add_option("--device", device, "where to run: auto (GPU when present), cpu or gpu")
      ->check(CLI::IsMember({"auto", "cpu", "gpu", "cuda"}))
      ->capture_default_str();
}

CLI::Option* add_allow_nonfinite_flag(CLI::App& cmd, bool& allow) {
  allow = false;
  return cmd.add_flag("--allow-nonfinite", allow, "accept NaN and Inf values in the input (refused by default)");
}

CLI::Validator finite_number(double lo, double hi) {
  std::ostringstream range;
  range << "[" << lo << ", ";
  if (std::isinf(hi)) range << "inf)";
  else range << hi << "]";
  const std::string where = range.str();
  return CLI::Validator(
      [lo, hi, where](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v) || v < lo || v > hi)
          return text + " is not a finite number in " + where;
        return {};
      },
      "FINITE in " + where);
}

CLI::Option* add_quiet_flag(CLI::App& cmd, bool& quiet) {
  quiet = false;
  return cmd.add_flag("--quiet", quiet, "print only errors");
}

std::ostream& output_stream(bool quiet) {
  static std::ostream discard(nullptr);  // no buffer: every write is dropped
  return quiet ? discard : std::cout;
}

reduce::backend select_backend_announced(const std::string& tool, const std::string& device) {
  const reduce::device_choice choice = device == "cpu"   ? reduce::device_choice::cpu
                                       : device == "auto" ? reduce::device_choice::automatic
                                                          : reduce::device_choice::cuda;
  const reduce::backend b = reduce::select_backend(choice);
  if (choice == reduce::device_choice::automatic && b == reduce::backend::cpu)
    std::cerr << tool << ": note: " << reduce::cuda_unavailable_reason() << "; running on the CPU backend\n";
  return b;
}

}  // namespace gpukit
