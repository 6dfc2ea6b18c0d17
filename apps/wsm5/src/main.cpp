// wsm5: WSM5 (WRF V3.1 classic) column microphysics on the CPU reference and the CUDA variants.
#include <iostream>
#include <string>

#include "commands.hpp"
#include "run_main.hpp"

namespace {
const char* usage =
    "usage: wsm5 run IN.h5 [--steps N] [--variant cpu|thread_per_column|warp_per_column|all] [--check]\n"
    "                [--output OUT.h5] [--json OUT.json] [--device auto|cpu|cuda] [--cpu-steps N]\n"
    "                [--repeats N] [--chunks N]\n"
    "       wsm5 convert COLUMNS.txt OUT.h5 [--golden WRF_OUTPUT.txt]\n"
    "       wsm5 generate [--nx 433] [--ny 308] [--nz 35] [--seed 1] [--dt 72] OUT.h5\n"
    "  run       N calls of the scheme on each variant: time per call (without / with host-device\n"
    "            transfers), cells/s, GB/s and GFLOP/s against the measured ceilings, speed-up over the\n"
    "            CPU reference, domain diagnostics; --check compares every GPU variant with the CPU\n"
    "            reference field by field and checks the per-column water budget\n"
    "  convert   the text columns of data/wsm5/columns.txt -> the HDF5 schema of data/README.md; with\n"
    "            --golden, the WRF output after N calls (wrf_v31_*step.txt) in the output schema\n"
    "  generate  a deterministic synthetic domain (default: CONUS 12 km, 433 x 308 x 35, dt = 72 s)\n";
}

int main(int argc, char** argv) {
  return gpukit::run_main("wsm5", usage, [&]() -> int {
    if (argc < 2) throw gpukit::cli::usage_error("missing command");
    const std::string cmd = argv[1];
    if (cmd == "-h" || cmd == "--help") {
      std::cout << usage;
      return 0;
    }
    if (cmd == "run") return wsm5_app::run_command(argc, argv);
    if (cmd == "convert") return wsm5_app::convert_command(argc, argv);
    if (cmd == "generate") return wsm5_app::generate_command(argc, argv);
    throw gpukit::cli::usage_error("unknown command '" + cmd + "'");
  });
}
