// spmv: command-line front end of libsparse.
#include <iostream>
#include <string>

#include "commands.hpp"
#include "run_main.hpp"

namespace {
const char* usage =
    "usage: spmv COMMAND ...\n"
    "  run FILE.h5|FILE.mtx [--algorithm NAME|all] [--check] [--repeat N] [--precision float|double]\n"
    "      [--device auto|cpu|cuda] [--json OUT]\n"
    "  bench [--quick] [--explore] [--classes a,b] [--out DIR]\n"
    "  convert IN OUT            (.mtx <-> .h5, by extension)\n"
    "  generate CLASS OUT [options] (see `spmv generate --help`)\n";
}

int main(int argc, char** argv) {
  return gpukit::run_main("spmv", usage, [&]() -> int {
    if (argc < 2) throw gpukit::cli::usage_error("missing command");
    const std::string cmd = argv[1];
    if (cmd == "-h" || cmd == "--help") {
      std::cout << usage;
      return 0;
    }
#ifdef SPMV_APP_HAVE_IO_COMMANDS
    if (cmd == "convert") return spmv_app::convert_command(argc, argv);
    if (cmd == "generate") return spmv_app::generate_command(argc, argv);
#endif
#ifdef SPMV_APP_HAVE_RUN_BENCH
    if (cmd == "run") return spmv_app::run_command(argc, argv);
    if (cmd == "bench") return spmv_app::bench_command(argc, argv);
#endif
    throw gpukit::cli::usage_error("unknown command '" + cmd + "'");
  });
}
