// reduce: command-line front end of libreduce.
#include <cstring>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "run_main.hpp"

namespace {
const char* usage =
    "usage: reduce sum FILE [--type float|double|int32|int64|uint32|uint64] [--device auto|cpu|cuda]\n"
    "       reduce ladder [--quick] [--json FILE] [--csv FILE]\n"
    "       reduce bench [--quick] [--out DIR | --json FILE --csv FILE]\n"
    "  sum     reads whitespace-separated numbers from FILE, reduces them on the chosen backend and\n"
    "          checks the result against a long-double oracle on the CPU\n"
    "  ladder  the classic optimisation ladder (Harris 1-7, atomics, shuffles, two-pass, single-pass)\n"
    "          timed on this GPU for 2^22 int32 and 2^28 float, against the measured ceilings\n"
    "  bench   libreduce's default paths vs CUB for N = 2^10 .. 2^30 (events and CUDA Graphs)\n";
}

int main(int argc, char** argv) {
  return gpukit::run_main("reduce", usage, [&]() -> int {
    if (argc < 2) throw gpukit::cli::usage_error("missing command");
    const std::string cmd = argv[1];
    if (cmd == "-h" || cmd == "--help") {
      std::cout << usage;
      return 0;
    }
    if (cmd == "sum") return reduce_app::sum_command(argc, argv);
#ifdef REDUCE_APP_HAVE_LADDER_BENCH
    if (cmd == "ladder") return reduce_app::ladder_command(argc, argv);
    if (cmd == "bench") return reduce_app::bench_command(argc, argv);
#endif
    throw gpukit::cli::usage_error("unknown command '" + cmd + "'");
  });
}
