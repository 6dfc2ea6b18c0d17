// `solve run FILE --plan-only`: the scaling model (dist/scaling.hpp) instead of a solve. For 1, 2, 4, ...
// --max-gpus ranks: the slowest rank's rows, entries, halo and neighbours for the partition by nonzeros,
// and the predicted time of one CG iteration from the single-GPU rates and the links given as options.
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "dist/scaling.hpp"
#include "report.hpp"
#include "sparse/io.hpp"

namespace solve_app {

int plan_command(const run_options& opt) {
  if (opt.method == "bicgstab")  // two SpMVs and four sums an iteration: not what the model counts
    throw gpukit::bad_input("--plan-only models cg, pcg and pipecg iterations, not bicgstab");
  sparse::host_csr<double, std::int64_t> a;
  try {
    a = sparse::read_matrix<double, std::int64_t>(opt.matrix);
  } catch (const std::exception& e) {
    throw gpukit::bad_input(e.what());
  }
  if (a.rows() != a.cols())
    throw gpukit::bad_input(opt.matrix + ": " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                            ", a distributed solve needs a square matrix");
  dist::machine_model m;
  m.spmv_ns_per_nnz = opt.plan.spmv_ns_per_nnz;
  m.vector_ns_per_row = opt.plan.vector_ns_per_row;
  // Sums over ranks per iteration: cg carries r.r with its SpMV's three dots (one), pipecg has one and
  // overlaps it with the SpMV, pcg two (its dots and its update).
  m.allreduces_per_iteration = opt.method == "pcg" ? 2 : 1;
  m.overlap_allreduce = opt.method == "pipecg";
  m.hide_halo = opt.plan.hide_halo;
  m.gpus_per_node = opt.plan.gpus_per_node;
  m.nvlink_gb_per_s = opt.plan.nvlink_gb_per_s;
  m.ib_gb_per_s = opt.plan.ib_gb_per_s;
  m.nvlink_latency_us = opt.plan.nvlink_latency_us;
  m.ib_latency_us = opt.plan.ib_latency_us;
  const std::size_t value_bytes = opt.precision == "float" ? 4 : 8;

  std::ostream& out = gpukit::output_stream(opt.quiet);
  out << "matrix     " << opt.matrix << ": " << a.rows() << " rows, " << a.nnz() << " entries, " << opt.precision
      << ", " << opt.method << "\n"
      << "model      " << m.spmv_ns_per_nnz << " ns/nnz SpMV, " << m.vector_ns_per_row << " ns/row vectors, "
      << m.gpus_per_node << " GPUs per node, NVLink " << m.nvlink_gb_per_s << " GB/s " << m.nvlink_latency_us
      << " us, InfiniBand " << m.ib_gb_per_s << " GB/s " << m.ib_latency_us << " us, " << m.allreduces_per_iteration
      << (m.overlap_allreduce ? " overlapped" : "") << " all-reduce(s) per iteration, halo "
      << (m.hide_halo ? "hidden behind the interior rows" : "exposed") << "\n"
      << "  GPUs   max rows    max nnz  max ghosts  neighbours  compute us  halo us  allreduce us  iteration us  speedup\n";
  nlohmann::json rows = nlohmann::json::array();
  double one = 0;
  for (int p = 1; p <= opt.plan.max_gpus; p *= 2) {
    const dist::partition_stats st = dist::partition_statistics(a, p);
    const dist::iteration_estimate e = dist::predict_iteration(st, m, value_bytes, one);
    if (p == 1) one = e.total_us;
    const double speedup = p == 1 ? 1.0 : e.speedup;
    out << std::setw(6) << p << std::setw(11) << st.max_rows << std::setw(11) << st.max_nnz << std::setw(12)
        << st.max_ghosts << std::setw(12) << st.max_neighbors << std::fixed << std::setprecision(1) << std::setw(12)
        << e.compute_us << std::setw(9) << e.halo_us << std::setw(14) << e.allreduce_us << std::setw(14) << e.total_us
        << std::setprecision(2) << std::setw(9) << speedup << "\n";
    out.unsetf(std::ios::fixed);
    rows.push_back({{"rank_count", p}, {"max_row_count", st.max_rows}, {"max_nnz_count", st.max_nnz},
                    {"max_ghost_count", st.max_ghosts}, {"max_send_count", st.max_send},
                    {"max_neighbor_count", st.max_neighbors}, {"total_ghost_count", st.total_ghosts},
                    {"compute_us", e.compute_us}, {"halo_us", e.halo_us}, {"allreduce_us", e.allreduce_us},
                    {"iteration_us", e.total_us}, {"speedup_ratio", speedup}});
  }
  if (!opt.json.empty()) {
    nlohmann::json j = gpukit::report::make("solve", "plan");
    j["inputs"] = {{"matrix", opt.matrix}, {"method", opt.method}, {"precision", opt.precision},
                   {"spmv_ns_per_nnz", m.spmv_ns_per_nnz}, {"vector_ns_per_row", m.vector_ns_per_row},
                   {"gpus_per_node", m.gpus_per_node}, {"nvlink_gb_per_s", m.nvlink_gb_per_s},
                   {"ib_gb_per_s", m.ib_gb_per_s}, {"nvlink_latency_us", m.nvlink_latency_us},
                   {"ib_latency_us", m.ib_latency_us}, {"allreduce_count", m.allreduces_per_iteration},
                   {"allreduce_overlapped", m.overlap_allreduce}, {"halo_hidden", m.hide_halo}};
    j["results"] = {{"rows", a.rows()}, {"nnz", a.nnz()}, {"predictions", rows}};
    gpukit::report::write(opt.json, j);
  }
  return gpukit::exit_ok;
}

}  // namespace solve_app
