// The exit codes and the app-level error types of apps/common/app.hpp, without CLI11: CUDA sources of
// the apps (.cu) include this one rather than app.hpp.
#pragma once
#include <stdexcept>

namespace gpukit {

enum exit_code : int { exit_ok = 0, exit_check_failed = 1, exit_bad_input = 2, exit_runtime_error = 3 };

/// Bad input found by an app (a file, a value, a combination of options): exit 2, one line.
struct bad_input : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The command ran and a check of its result failed (validation against a reference): exit 1, one line.
struct check_failed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace gpukit
