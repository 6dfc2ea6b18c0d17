// apps/wsm5 subcommands; each takes the full argv and returns an exit code.
#pragma once
namespace wsm5_app {
int run_command(int argc, char** argv);
int convert_command(int argc, char** argv);
int generate_command(int argc, char** argv);
}
