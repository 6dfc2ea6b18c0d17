#include "plot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "gpukit/atomic_file.hpp"
#include "gpukit_paths.hpp"

namespace gpukit {
namespace {

/// Runs argv[0] with argv (searched on PATH) and returns its exit status; -1 when it could not start or
/// ended on a signal. Its stdout goes to our stderr, so the app's stdout stays its own result.
int run_program(const char* const argv[]) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(STDERR_FILENO, STDOUT_FILENO);
    execvp(argv[0], const_cast<char* const*>(argv));
    _exit(127);  // exec failed: the conventional "command not found"
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

void plot_report(const nlohmann::json& report, const std::string& png, const std::string& y_suffix) {
  const std::string tmp = png + "." + std::to_string(getpid()) + ".plot.json";
  write_file_atomically(tmp, report.dump(1) + "\n");
  const char* argv[] = {"python3", plot_script, tmp.c_str(), "--out", png.c_str(), "--y", y_suffix.c_str(), nullptr};
  const int rc = run_program(argv);
  std::remove(tmp.c_str());
  if (rc == 127) throw std::runtime_error(png + ": --plot: python3 could not be started");
  if (rc != 0)
    throw std::runtime_error(png + ": --plot: bench/plot.py failed (exit " + std::to_string(rc) +
                             "; it needs python3 with matplotlib, see its message above)");
}

}  // namespace gpukit
