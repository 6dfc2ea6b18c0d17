// A scaling model of a distributed CG iteration: the partition and halo statistics of a matrix for P ranks
// (computed on one process from the global matrix, the same partition and halo as distributed_csr) and a
// per-iteration time from measured single-GPU rates and the links' bandwidths and latencies. For judging
// the design past one node on paper (`solve run --plan-only`). No CUDA syntax.
#pragma once
#include <cstddef>
#include <cstdint>

#include "sparse/csr.hpp"

namespace dist {

/// Per-rank maxima for a partition by nonzeros into `ranks` parts (what the slowest rank does).
struct partition_stats {
  int ranks = 1;
  std::int64_t max_rows = 0;       ///< rows (and vector entries) of the largest part
  std::int64_t max_nnz = 0;        ///< stored entries of the busiest part
  std::int64_t max_ghosts = 0;     ///< x entries one rank receives per SpMV
  std::int64_t max_send = 0;       ///< x entries one rank sends per SpMV (all destinations)
  int max_neighbors = 0;           ///< ranks one rank exchanges with (receives from or sends to)
  std::int64_t total_ghosts = 0;   ///< sum over ranks of the entries received: the total halo volume
};

/// The statistics of partition_by_nonzeros(row_ptr, ranks) and its halo plans, serially, O(nnz + rows).
template <class Value, class Index>
partition_stats partition_statistics(const sparse::host_csr<Value, Index>& a, int ranks);

/// The machine: single-GPU rates measured on the whole problem, and the links. Communication defaults
/// from two H200s over NVLink with NCCL 2.28 (2026-11-28, libsolve/README.md and libdist/README.md): an
/// all-reduce of 4-6 doubles 9.8 us (one step each way on 2 ranks: ~5 us per step), the cg halo of one
/// 256 KB plane 6.5 us (one neighbour: ~5 us + 0.6 us of transfer), not hidden behind the interior rows.
struct machine_model {
  double spmv_ns_per_nnz = 2.3;      ///< SpMV time / nnz (H100, float 3D Poisson 160^3: 65.0 us / 28.5M)
  double vector_ns_per_row = 0.0177; ///< rest of a CG iteration / rows (H100: (137.5 - 65.0) us / 4.1M)
  int allreduces_per_iteration = 1;  ///< cg: 1 (r.r rides with the SpMV's three dots); pcg 2; pipecg 1
  bool overlap_allreduce = false;    ///< pipecg: the all-reduce hides behind the SpMV
  bool hide_halo = false;            ///< the halo runs under the interior rows (host staging); NCCL's does not
  int gpus_per_node = 8;             ///< NVLink inside a node, InfiniBand across
  double nvlink_gb_per_s = 450;      ///< per GPU per direction (H100 SXM NVLink 4: 900 GB/s both ways)
  double ib_gb_per_s = 50;           ///< per GPU (one 400 Gb/s NDR adapter per GPU)
  double nvlink_latency_us = 5;      ///< one exchange step (NCCL send/recv or all-reduce stage), small messages
  double ib_latency_us = 8;          ///< not measured here: NVLink's plus ~3 us of NIC and switch
};

/// One iteration's predicted time on `stats.ranks` GPUs, in microseconds:
///   compute   = spmv_ns_per_nnz max_nnz + vector_ns_per_row max_rows
///   halo      = neighbours x latency + max(send, receive) bytes / bandwidth (IB once ranks > gpus_per_node)
///   allreduce = allreduces x 2 log2(P) x latency (a tree of 8-48-byte messages: latency bound)
///   total     = compute + halo + allreduce, where with hide_halo the interior SpMV hides the halo
///               (max(0, halo - interior share) exposed) and with overlap_allreduce the SpMV hides the
///               all-reduce (max(0, allreduce - compute) exposed).
/// The interior share is bounded by the rows without ghosts; the model takes it as compute x (1 - ghost
/// fraction), ghost fraction = max_ghosts / max_rows capped at 1. Left out: what a distributed iteration
/// adds without any communication (the boundary rows' launch, the finish of the sums on one thread):
/// measured on two H200s as 7.6 us at 161^3 and ~19 us at 256^3 (libsolve/README.md).
struct iteration_estimate {
  partition_stats stats;
  double compute_us = 0, halo_us = 0, allreduce_us = 0, total_us = 0;
  double speedup = 1;  ///< total_us(1 rank) / total_us
};
iteration_estimate predict_iteration(const partition_stats& stats, const machine_model& m, std::size_t value_bytes,
                                     double one_rank_total_us = 0);

}  // namespace dist
