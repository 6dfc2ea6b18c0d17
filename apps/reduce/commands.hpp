// apps/reduce subcommands. Each takes the arguments after the command word and returns an exit code.
#pragma once
namespace reduce_app {
int sum_command(int argc, char** argv);
int ladder_command(int argc, char** argv);  // ladder_command.cu
int bench_command(int argc, char** argv);   // bench_command.cu
}
