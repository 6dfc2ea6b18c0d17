#include "mpi_app.hpp"

#include <exception>
#include <iostream>
#include <stdexcept>

#include "app_errors.hpp"

namespace gpukit {

int run_on_mpi_world(const std::string& tool, const std::function<int(dist::communicator&)>& command) {
  int code = exit_ok;
  std::string message;  // rank 0's agreed failure, said after MPI_Finalize
  bool bad = false;
  {
    int argc = 0;
    char** argv = nullptr;
    const dist::environment env(argc, argv);
    dist::communicator comm(MPI_COMM_WORLD);
    try {
      code = command(comm);
    } catch (const dist::rank_failure& e) {
      bad = e.bad_input;
      code = bad ? exit_bad_input : exit_runtime_error;
      if (comm.rank() == 0) message = e.what();  // the libraries name the file; said once, by rank 0
    } catch (const check_failed&) {
      throw;  // rank 0 only: the result is the same on every rank, the others returned exit_check_failed
    } catch (const std::exception& e) {
      std::cerr << tool << ": error: rank " << comm.rank() << ": " << e.what() << std::endl;
      MPI_Abort(MPI_COMM_WORLD, exit_runtime_error);
    }
  }
  if (message.empty()) return code;
  if (bad) throw bad_input(message);
  std::cerr << tool << ": error: " << message << std::endl;  // a runtime failure: exit 3, as run_app would
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
