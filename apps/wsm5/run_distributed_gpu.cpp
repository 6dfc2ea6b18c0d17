// `mpirun -np N wsm5 run` with the GPU variants (run_distributed.hpp): one rank per GPU, each stepping its
// part of the domain with wsm5::gpu_domain. Columns are independent and every rank launches the same kernel
// as one process (the variant resolved from the WHOLE domain's column count, W of warp_per_column from nz),
// so each column's result is bitwise the one-process GPU run's on the same GPU. Each call is checked for
// NaN/Inf on every rank and agreed; the state the report needs is gathered to rank 0.
#include <mpi.h>

#include <algorithm>
#include <iostream>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpukit/error.hpp"
#include "reduce/device.hpp"
#include "run_distributed.hpp"

namespace wsm5_app {
namespace {

/// `samples` and `with_transfers_s` of this rank's part: the one-process timings (3 warm-up calls, then
/// `repeats` calls without transfers; with transfers from host_fields, `chunks` row chunks). An empty part:
/// zeros.
void time_part(const wsm5::domain& part, wsm5::variant v, const variant_plan& plan, variant_run& r) {
  r.samples.assign(static_cast<std::size_t>(plan.repeats), 0.0);
  if (part.columns() == 0) return;
  wsm5::gpu_domain gt(part);
  r.samples = wsm5::time_gpu_steps(gt, v, 3, plan.repeats);
  r.samples.resize(static_cast<std::size_t>(plan.repeats), 0.0);
  wsm5::host_fields host(part);
  r.with_transfers_s =
      median(wsm5::time_gpu_steps_with_transfers(gt, host, v, plan.chunks, 2, std::max(3, plan.repeats / 2)));
}

/// The timings on every rank at once (a barrier first: ranks that share a GPU share it while timed, as in
/// the run), reported as the slowest rank's: the median is the max over ranks of each rank's median,
/// the first and last timed calls the max over ranks of each.
void time_on_ranks(const dist::communicator& comm, const wsm5::domain& part, const variant_plan& plan,
                   variant_run& r) {
  MPI_Barrier(comm.mpi());
  agreed(comm, false, [&] { time_part(part, r.v, plan, r); });
  double local[2] = {median(r.samples), r.with_transfers_s}, slowest[2] = {0, 0};
  MPI_Allreduce(local, slowest, 2, MPI_DOUBLE, MPI_MAX, comm.mpi());
  MPI_Allreduce(MPI_IN_PLACE, r.samples.data(), plan.repeats, MPI_DOUBLE, MPI_MAX, comm.mpi());
  r.time_s = slowest[0];
  r.with_transfers_s = slowest[1];
}

/// This rank's part after the calls so far (the part itself when it is empty).
wsm5::domain downloaded(const dist::communicator& comm, const std::optional<wsm5::gpu_domain>& g,
                        const wsm5::domain& part) {
  wsm5::domain d = part;
  agreed(comm, false, [&] {
    if (g) g->download(d);
  });
  return d;
}

/// The parts' states gathered into a copy of rank 0's d0 (an empty domain on the other ranks).
wsm5::domain gathered(const dist::communicator& comm, const wsm5::domain& d0, const wsm5::domain& state,
                      const wsm5::distributed::split& s) {
  wsm5::domain whole;
  if (comm.rank() == 0) whole = d0;
  wsm5::distributed::gather(comm, state, s, whole);
  return whole;
}

/// One variant on this rank's part: `plan.steps` calls, each checked for NaN/Inf and agreed (a failure
/// names the column in the whole domain), the check state and the final state gathered to rank 0, the
/// last call's diagnostics combined (wsm5::distributed::combine on the downloaded part), then the timings.
variant_run run_variant_on_ranks(const dist::communicator& comm, const wsm5::domain& d0, const wsm5::domain& part,
                                 const wsm5::distributed::split& s, wsm5::variant v, const variant_plan& plan,
                                 wsm5::domain* final_state) {
  variant_run r;
  r.v = v;
  r.transfers_v = v;  // every rank times its part in the variant resolved for the whole domain
  std::optional<wsm5::gpu_domain> g;
  agreed(comm, false, [&] {
    if (part.columns() > 0) g.emplace(part);
  });
  wsm5::diagnostics local;
  for (int c = 0; c < plan.steps; ++c) {
    agreed(comm, false, [&] {
      if (!g) return;
      local = g->step(v);
      stop_on_nonfinite(in_whole(g->find_nonfinite(), s, comm.rank()), c + 1, plan.steps, wsm5::to_string(v));
    });
    if (c + 1 == plan.check_calls) r.at_check = gathered(comm, d0, downloaded(comm, g, part), s);
  }
  const wsm5::domain last = downloaded(comm, g, part);
  r.diag = wsm5::distributed::combine(comm, last, local);
  if (final_state != nullptr) *final_state = gathered(comm, d0, last, s);
  g.reset();  // the timings allocate their own domain
  time_on_ranks(comm, part, plan, r);
  return r;
}

/// Each value replaced by its reduction (`op`) over the ranks, in one all-reduce.
template <class T>
void reduce_over_ranks(const dist::communicator& comm, MPI_Op op, std::initializer_list<T*> values) {
  std::vector<T> v;
  for (T* p : values) v.push_back(*p);
  const MPI_Datatype type = std::is_same_v<T, double> ? MPI_DOUBLE : MPI_INT64_T;
  MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), type, op, comm.mpi());
  std::size_t i = 0;
  for (T* p : values) *p = v[i++];
}

/// Every rank measures its part's ceilings at the same time. The parts run at once, so the floors of the
/// run are the slowest part's (MPI_MAX) while the bytes are the whole domain's (MPI_SUM). The rates are the
/// maxima over the ranks (a rank with no columns measures none: 5 golden columns on 6 ranks leave rank 0
/// empty); the device name is rank 0's.
gpu_ceilings ceilings_on_ranks(const dist::communicator& comm, const wsm5::domain& part) {
  gpu_ceilings c;
  agreed(comm, false, [&] {
    if (part.columns() == 0) {
      c.device = reduce::cuda_device_description();
      return;
    }
    const wsm5::gpu_domain probe(part);
    c = measure_ceilings(part, probe);
  });
  // The parts run at once: the floors of the run are the slowest part's, the bytes the whole domain's.
  reduce_over_ranks(comm, MPI_MAX, {&c.memory_floor_s, &c.arithmetic_floor_s, &c.transfer_floor_s,
                                    &c.transfer_floor_rates_s, &c.transfer_floor_serial_s, &c.copy_bytes_per_s,
                                    &c.peak_flops, &c.flops_per_cell, &c.link.h2d_GBps, &c.link.d2h_GBps,
                                    &c.both_GBps});
  reduce_over_ranks(comm, MPI_SUM, {&c.min_bytes, &c.per_call.up, &c.per_call.down});
  return c;
}

/// automatic resolved as one process resolves it: from the whole domain's column count and rank 0's GPU,
/// broadcast so that every rank launches the same kernel.
wsm5::variant resolve_on_ranks(const dist::communicator& comm, wsm5::variant v, const wsm5::distributed::split& s,
                               const wsm5::gpu_capacity& cap) {
  if (v != wsm5::variant::automatic) return v;
  int chosen = static_cast<int>(wsm5::choose_variant(s.nx * s.ny, s.nz, cap));
  MPI_Bcast(&chosen, 1, MPI_INT, 0, comm.mpi());
  return static_cast<wsm5::variant>(chosen);
}

}  // namespace

bool choose_gpu_on_ranks(const dist::communicator& comm, const run_options& opt, bool wants_gpu, int& gpus) {
  if (!wants_gpu || opt.device == "cpu") return false;
  const bool required = opt.device != "auto" || (opt.variant != "all" && opt.variant != "automatic");
  const int here = reduce::cuda_device_available() ? 1 : 0;
  int everywhere = 0;
  MPI_Allreduce(&here, &everywhere, 1, MPI_INT, MPI_MIN, comm.mpi());
  if (everywhere == 0 && !required) {
    if (comm.rank() == 0)
      std::cerr << "wsm5: note: "
                << (here ? std::string("a rank has no usable GPU") : reduce::cuda_unavailable_reason())
                << "; running the CPU reference on every rank\n";
    return false;
  }
  agreed(comm, false, [&] {
    if (!here)
      throw gpukit::no_cuda_device("--variant " + opt.variant + " --device " + opt.device +
                                   " needs a GPU on every rank: " + reduce::cuda_unavailable_reason());
  });
  agreed(comm, false, [&] {
    (void)dist::select_local_device(comm);
    gpus = dist::distinct_gpus(comm);
  });
  if (comm.rank() == 0 && gpus < comm.size())
    std::cerr << "wsm5: note: " << comm.size() << " ranks share " << gpus
              << " GPU(s): each GPU runs several ranks' columns, and the timings share it too\n";
  return true;
}

gpu_ranks_run run_gpu_on_ranks(const dist::communicator& comm, const run_options& opt, const wsm5::domain& d0,
                               const wsm5::domain& part, const wsm5::distributed::split& s,
                               const std::vector<wsm5::variant>& variants, int cpu_calls) {
  gpu_ranks_run g;
  g.ceilings = ceilings_on_ranks(comm, part);
  agreed(comm, false, [&] { g.capacity = wsm5::current_gpu_capacity(); });
  const variant_plan plan{opt.steps, opt.check ? cpu_calls : 0, opt.repeats, opt.chunks, false};
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const wsm5::variant v = resolve_on_ranks(comm, variants[i], s, g.capacity);
    g.automatic.push_back(variants[i] == wsm5::variant::automatic);
    g.runs.push_back(run_variant_on_ranks(comm, d0, part, s, v, plan, i == 0 ? &g.final_state : nullptr));
  }
  return g;
}

}  // namespace wsm5_app
