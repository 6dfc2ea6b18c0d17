// Pieces of `mpirun -np N wsm5 run` shared by run_distributed.cpp (the flow, the CPU reference, rank 0's
// report) and run_distributed_gpu.cpp (the GPU variants on each rank's columns). Every function here is
// collective: every rank calls it, and a failure on any rank throws the same dist::rank_failure on all.
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "commands.hpp"
#include "dist/communicator.hpp"
#include "measure.hpp"
#include "wsm5/distributed.hpp"
#include "wsm5/wsm5.hpp"

namespace wsm5_app {

/// Runs f on this rank, then agrees: every rank returns, or every rank throws the same rank_failure. A
/// failure is bad input when `input` (options, reading, writing the files: exit 2, as on one rank), a
/// runtime failure otherwise or when out of memory (exit 3); std::invalid_argument is bad input either way.
void agreed(const dist::communicator& comm, bool input, const std::function<void()>& f);

/// The first NaN or Inf of rank r's part, named by its column in the whole domain.
std::optional<wsm5::nonfinite_value> in_whole(std::optional<wsm5::nonfinite_value> v,
                                              const wsm5::distributed::split& s, int r);

/// Whether the GPU variants run, the same answer on every rank (one-process rules: --device cpu or
/// --variant cpu never; --device auto with --variant all/automatic falls back to the CPU reference, said
/// once by rank 0, unless every rank has a GPU; a named variant or --device gpu without a GPU on some rank
/// is a runtime error on every rank). When true, each rank has selected its GPU
/// (dist::select_local_device: rank on the node modulo the node's devices); `gpus` receives the number
/// of distinct GPUs used (fewer than the ranks: ranks share, said once on stderr by rank 0).
bool choose_gpu_on_ranks(const dist::communicator& comm, const run_options& opt, bool wants_gpu, int& gpus);

/// What the GPU variants produced: on rank 0 the whole-domain results (each run's at_check state
/// gathered; `final_state` the first variant's state after --steps calls, gathered), on every rank the
/// combined diagnostics and the slowest rank's times.
struct gpu_ranks_run {
  gpu_ceilings ceilings;               ///< floors: the slowest rank's part; bytes: the whole domain's
  std::vector<variant_run> runs;       ///< one per variant, automatic resolved
  std::vector<bool> automatic;         ///< runs[i] was asked for as automatic
  wsm5::gpu_capacity capacity;         ///< rank 0's GPU (automatic's choice)
  wsm5::domain final_state;            ///< rank 0
};
/// Every variant on each rank's part. `d0`: the whole domain on rank 0 (empty elsewhere), `cpu_calls`: the
/// check's calls (0: no check state kept).
gpu_ranks_run run_gpu_on_ranks(const dist::communicator& comm, const run_options& opt, const wsm5::domain& d0,
                               const wsm5::domain& part, const wsm5::distributed::split& s,
                               const std::vector<wsm5::variant>& variants, int cpu_calls);

}  // namespace wsm5_app
