// apps/spmv subcommands. Each takes the full argv (the command word is argv[1]) and returns an exit code.
#pragma once
namespace spmv_app {
int convert_command(int argc, char** argv);   // io_commands.cpp
int generate_command(int argc, char** argv);  // io_commands.cpp
int run_command(int argc, char** argv);       // run_command.cpp / .cu
int bench_command(int argc, char** argv);     // bench_command.cpp / .cu
}  // namespace spmv_app
