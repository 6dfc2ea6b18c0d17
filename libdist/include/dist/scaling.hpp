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

/// The machine: single-GPU rates measured on the whole problem, and the links.
struct machine_model {
  double spmv_ns_per_nnz = 2.3;      ///< SpMV time / nnz (H100, float 3D Poisson 160^3: 65.0 us / 28.5M)
  double vector_ns_per_row = 0.0177; ///< rest of a CG iteration / rows (H100: (137.5 - 65.0) us / 4.1M)
  int allreduces_per_iteration = 2;  ///< cg: 2; pipecg: 1 (and overlapped with the SpMV: see predict)
  bool overlap_allreduce = false;    ///< pipecg: the all-reduce hides behind the SpMV
  int gpus_per_node = 8;             ///< NVLink inside a node, InfiniBand across
  double nvlink_gb_per_s = 450;      ///< per GPU per direction (H100 SXM NVLink 4: 900 GB/s both ways)
  double ib_gb_per_s = 50;           ///< per GPU (one 400 Gb/s NDR adapter per GPU)
  double nvlink_latency_us = 3;      ///< one exchange step (NCCL send/recv or all-reduce stage), small messages
  double ib_latency_us = 6;
};

/// One iteration's predicted time on `stats.ranks` GPUs, in microseconds:
///   compute   = spmv_ns_per_nnz max_nnz + vector_ns_per_row max_rows
///   halo      = neighbours x latency + max(send, receive) bytes / bandwidth (IB once ranks > gpus_per_node)
///   allreduce = allreduces x 2 log2(P) x latency (a tree of 8-24-byte messages: latency bound)
///   total     = the interior SpMV overlaps the halo: compute + max(0, halo - interior share) + allreduce
///               (the all-reduce hidden behind the SpMV when overlap_allreduce).
/// The interior share is bounded by the rows without ghosts; the model takes it as compute x (1 - ghost
/// fraction), ghost fraction = max_ghosts / max_rows capped at 1.
struct iteration_estimate {
  partition_stats stats;
  double compute_us = 0, halo_us = 0, allreduce_us = 0, total_us = 0;
  double speedup = 1;  ///< total_us(1 rank) / total_us
};
iteration_estimate predict_iteration(const partition_stats& stats, const machine_model& m, std::size_t value_bytes,
                                     double one_rank_total_us = 0);

}  // namespace dist
