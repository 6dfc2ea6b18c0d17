// The scaling model of dist/scaling.hpp: serial partition and halo statistics, and the time formula.
#include "dist/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "dist/csr.hpp"

namespace dist {

template <class Value, class Index>
partition_stats partition_statistics(const sparse::host_csr<Value, Index>& a, int ranks) {
  const std::vector<std::int64_t> rp(a.row_ptr().begin(), a.row_ptr().end());
  const row_partition part = partition_by_nonzeros(rp, ranks);
  partition_stats s;
  s.ranks = ranks;
  // stamp[c] = the last rank that counted column c as its ghost: each (rank, ghost) pair counted once.
  std::vector<int> stamp(static_cast<std::size_t>(a.cols()), -1);
  std::vector<std::int64_t> sends(static_cast<std::size_t>(ranks), 0);
  std::vector<std::vector<char>> talks(static_cast<std::size_t>(ranks), std::vector<char>(static_cast<std::size_t>(ranks), 0));
  for (int r = 0; r < ranks; ++r) {
    const std::int64_t b = part.begin(r), e = part.end(r);
    s.max_rows = std::max(s.max_rows, e - b);
    s.max_nnz = std::max(s.max_nnz, rp[static_cast<std::size_t>(e)] - rp[static_cast<std::size_t>(b)]);
    std::int64_t ghosts = 0;
    for (std::int64_t k = rp[static_cast<std::size_t>(b)]; k < rp[static_cast<std::size_t>(e)]; ++k) {
      const std::int64_t c = a.col_idx()[static_cast<std::size_t>(k)];
      if ((c >= b && c < e) || stamp[static_cast<std::size_t>(c)] == r) continue;
      stamp[static_cast<std::size_t>(c)] = r;
      ++ghosts;
      const int owner = part.owner(c);
      ++sends[static_cast<std::size_t>(owner)];
      talks[static_cast<std::size_t>(r)][static_cast<std::size_t>(owner)] = 1;
      talks[static_cast<std::size_t>(owner)][static_cast<std::size_t>(r)] = 1;
    }
    s.max_ghosts = std::max(s.max_ghosts, ghosts);
    s.total_ghosts += ghosts;
  }
  for (int r = 0; r < ranks; ++r) {
    s.max_send = std::max(s.max_send, sends[static_cast<std::size_t>(r)]);
    int n = 0;
    for (char t : talks[static_cast<std::size_t>(r)]) n += t;
    s.max_neighbors = std::max(s.max_neighbors, n);
  }
  return s;
}

iteration_estimate predict_iteration(const partition_stats& st, const machine_model& m, std::size_t value_bytes,
                                     double one_rank_total_us) {
  iteration_estimate e;
  e.stats = st;
  e.compute_us = 1e-3 * (m.spmv_ns_per_nnz * static_cast<double>(st.max_nnz) + m.vector_ns_per_row * static_cast<double>(st.max_rows));
  if (st.ranks > 1) {
    const bool across_nodes = st.ranks > m.gpus_per_node;
    const double bw = across_nodes ? m.ib_gb_per_s : m.nvlink_gb_per_s;  // GB/s = 1e3 bytes per us
    const double lat = across_nodes ? m.ib_latency_us : m.nvlink_latency_us;
    const double bytes = static_cast<double>(std::max(st.max_send, st.max_ghosts)) * static_cast<double>(value_bytes);
    e.halo_us = st.max_neighbors * lat + bytes / (bw * 1e3);
    e.allreduce_us = m.allreduces_per_iteration * 2 * std::log2(static_cast<double>(st.ranks)) * lat;
  }
  const double ghost_fraction =
      st.max_rows > 0 ? std::min(1.0, static_cast<double>(st.max_ghosts) / static_cast<double>(st.max_rows)) : 0.0;
  const double interior_us = e.compute_us * (1 - ghost_fraction);
  const double exposed_halo = m.hide_halo ? std::max(0.0, e.halo_us - interior_us) : e.halo_us;
  const double exposed_allreduce = m.overlap_allreduce ? std::max(0.0, e.allreduce_us - e.compute_us) : e.allreduce_us;
  e.total_us = e.compute_us + exposed_halo + exposed_allreduce;
  e.speedup = one_rank_total_us > 0 && e.total_us > 0 ? one_rank_total_us / e.total_us : 1.0;
  return e;
}

template partition_stats partition_statistics(const sparse::host_csr<float, std::int32_t>&, int);
template partition_stats partition_statistics(const sparse::host_csr<float, std::int64_t>&, int);
template partition_stats partition_statistics(const sparse::host_csr<double, std::int32_t>&, int);
template partition_stats partition_statistics(const sparse::host_csr<double, std::int64_t>&, int);

}  // namespace dist
