// Every app's main() goes through run_main: exceptions become one clear line on stderr and a non-zero
// exit code (2 for usage errors, 1 for everything else), never a crash or a stack trace.
#pragma once
#include <exception>
#include <iostream>

#include "cli.hpp"

namespace gpukit {

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
