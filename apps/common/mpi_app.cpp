#include "mpi_app.hpp"

#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>

#include "app_errors.hpp"

namespace gpukit {
namespace {

/// One line on stderr in ONE write: mpiexec forwards a rank's stderr in the pieces it was written in, and
/// prints its own MPI_Abort banner between them (seen in CI: "rank_fault", the banner, then ": error: ...").
void say_line(const std::string& line) {
  const std::string whole = line + "\n";
  std::cerr.write(whole.data(), static_cast<std::streamsize>(whole.size()));
  std::cerr.flush();
}

}  // namespace

int run_on_mpi_world(const std::string& tool, const std::function<int(dist::communicator&)>& command) {
  int argc = 0;
  char** argv = nullptr;
  const dist::environment env(argc, argv);
  dist::communicator comm(MPI_COMM_WORLD);
  int code = exit_ok;
  std::string message;  // an agreed failure, or rank 0's failed check: said once, by rank 0
  try {
    code = command(comm);
  } catch (const dist::rank_failure& e) {
    code = e.bad_input ? exit_bad_input : exit_runtime_error;
    message = e.what();  // the libraries name the file
  } catch (const check_failed& e) {
    code = exit_check_failed;  // rank 0 only: the result is the same on every rank, the others returned 1
    message = e.what();
  } catch (const std::exception& e) {
    // A failure on this rank alone, outside any agreement: the others may wait in a collective, so the
    // whole job is stopped (MPI_Abort) after this rank's one line; no rank hangs.
    say_line(tool + ": error: rank " + std::to_string(comm.rank()) + ": " + e.what());
    MPI_Abort(MPI_COMM_WORLD, exit_runtime_error);
  }
  // Rank 0 says it while every rank still runs, and no rank leaves before: mpiexec ends the whole job as
  // soon as one rank exits non-zero, which would otherwise cut rank 0's line (seen under -np 2).
  if (comm.rank() == 0 && !message.empty()) say_line(tool + ": error: " + message);
  MPI_Barrier(comm.mpi());
  return code;
}

void all_or_none(const dist::communicator& comm, const std::function<void()>& f) {
  dist::all_or_none(comm, [&] {
    try {
      f();
    } catch (const bad_input& e) {
      throw std::invalid_argument(e.what());  // dist's bad-input kind
    }
  });
}

}  // namespace gpukit
