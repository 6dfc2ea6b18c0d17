// Every app's main() goes through run_main: exceptions become one clear line on stderr and a non-zero
// exit code (2 for usage errors, 1 for everything else), never a crash or a stack trace.
#pragma once
#include <exception>
#include <iostream>

#include "cli.hpp"
#include "reduce/device.hpp"

namespace gpukit {

/// reduce::select_backend, saying on stderr when `automatic` falls back to the CPU (the library does
/// not print: the app decides what its user sees, and a fallback is never silent).
inline reduce::backend select_backend_announced(const char* app, reduce::device_choice choice) {
  const reduce::backend b = reduce::select_backend(choice);
  if (choice == reduce::device_choice::automatic && b == reduce::backend::cpu)
    std::cerr << app << ": note: " << reduce::cuda_unavailable_reason() << "; running on the CPU backend\n";
  return b;
}

template <class Body>
int run_main(const char* app, const char* usage, Body&& body) {
  try {
    return body();
  } catch (const cli::usage_error& e) {
    std::cerr << app << ": " << e.what() << "\n" << usage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << app << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gpukit
