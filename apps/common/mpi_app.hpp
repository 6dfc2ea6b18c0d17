// The distributed form of an app command (`mpirun -np N APP run ...`, built with GPUKIT_DISTRIBUTED): MPI
// started and finished around the command, and its failures said once. A failure agreed among the ranks
// (dist::rank_failure: dist::all_or_none / dist::agree) is reported by rank 0 alone, every rank exiting
// with the same code (2 bad input, 3 runtime); a failure on one rank outside any agreement ends the job
// with MPI_Abort after that rank's one line, so no rank waits forever in a collective.
#pragma once
#include <functional>
#include <string>

#include "dist/communicator.hpp"

namespace gpukit {

/// Runs `command` on every rank of MPI_COMM_WORLD and returns its exit code, the same on every rank. Rank 0
/// alone prints and writes; an agreed failure (2 bad input, 3 runtime) or a gpukit::check_failed that
/// rank 0 throws (1) is said once, by rank 0, before any rank leaves.
int run_on_mpi_world(const std::string& tool, const std::function<int(dist::communicator&)>& command);

/// dist::all_or_none for app code: a gpukit::bad_input that `f` throws counts as bad input (exit 2), as
/// on one process.
void all_or_none(const dist::communicator& comm, const std::function<void()>& f);

}  // namespace gpukit
