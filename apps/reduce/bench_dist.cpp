// `mpirun -np N reduce bench-dist`: libdist's sums over ranks on device data against the same work written
// with raw NCCL, in the same run, one rank per GPU (NCCL only: host staging is refused, its peer would be
// itself). Two cases:
//   * dot: dist::dot (reduce::dot into a device slot, ncclAllReduce of that one element on the stream, the
//     copy to the host) against reduce::dot (with a workspace made once) + ncclAllReduce + cudaMemcpyAsync +
//     cudaStreamSynchronize written by hand, and that reduce::dot + sync alone (the local part; and without
//     the workspace, its scratch from libreduce's pool), per call, n entries per rank;
//   * device_allreduce: dist::device_allreduce::run (in stream order: cg's form) and start + finish (on the
//     NCCL side stream, overlappable: pipecg's form) of 6 doubles (the solvers' largest sum over ranks)
//     against ncclAllReduce of 6 doubles on the stream, per call in a loop of calls (no host sync between
//     calls, as inside a solver's iteration).
// Each figure: the mean of a batch of calls, median of 5 batches, the slowest rank's. The target of the
// scale-out issue: ours within 10 % of the raw form. Both dots must agree bitwise (same local kernel, same
// collective): a check, exit 1 otherwise.
#include <cuda_runtime_api.h>
#include <mpi.h>
#if defined(GPUKIT_HAVE_NCCL)
#include <nccl.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "app.hpp"
#include "bench_report.hpp"
#include "commands.hpp"
#include "dist/communicator.hpp"
#include "dist/reductions.hpp"
#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"
#include "mpi_app.hpp"
#include "reduce/reduce.hpp"
#include "report.hpp"

namespace reduce_app {
namespace {

namespace rep = report;

struct dist_row {
  std::string name, ours, raw;  // what is timed
  std::int64_t n = 0;           // entries per rank (dot) or elements all-reduced (device_allreduce)
  double ours_us = 0, raw_us = 0;
  double local_us = 0, local_pool_us = 0;  // dot only: reduce::dot + sync with a workspace, and without one
};

/// Seconds per call of `call`: `calls` calls per batch, 5 batches after `calls` warm-up calls, the median
/// batch's mean, then the slowest rank's (MPI_MAX). `sync` ends each batch (the loop's host sync).
double per_call_us(const dist::communicator& comm, int calls, const std::function<void()>& call,
                   const std::function<void()>& sync) {
  for (int k = 0; k < calls; ++k) call();
  sync();
  std::vector<double> batches;
  for (int b = 0; b < 5; ++b) {
    MPI_Barrier(comm.mpi());
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < calls; ++k) call();
    sync();
    batches.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls);
  }
  std::sort(batches.begin(), batches.end());
  double mine = batches[2], slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm.mpi());
  return slowest;
}

#if defined(GPUKIT_HAVE_NCCL)
void nccl_ok(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}

dist_row time_dot(const dist::communicator& comm, std::int64_t n, int calls, cudaStream_t stream) {
  std::vector<float> hx(static_cast<std::size_t>(n)), hy(hx.size());
  std::mt19937_64 rng(2026 + static_cast<std::uint64_t>(comm.rank()));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::size_t i = 0; i < hx.size(); ++i) {
    hx[i] = u(rng);
    hy[i] = u(rng);
  }
  const gpukit::device_buffer<float> x(hx), y(hy);
  gpukit::device_buffer<float> slot(1);
  auto* nc = static_cast<ncclComm_t>(comm.nccl_comm());
  float raw = 0, ours = 0;
  const auto sync = [&] { GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream)); };
  dist_row r{"dot", "dist::dot", "reduce::dot + ncclAllReduce(1 float) + copy + sync", n};
  // The raw form as its author would write it: the same kernel with a workspace made once (no allocation
  // per call), then the collective.
  reduce::workspace ws;
  r.local_us = per_call_us(
      comm, calls, [&] { reduce::dot(x.data(), y.data(), n, slot.data(), ws, stream); sync(); }, sync);
  // Without a workspace: scratch from libreduce's own pool, which must stay mapped across the syncs.
  r.local_pool_us =
      per_call_us(comm, calls, [&] { reduce::dot(x.data(), y.data(), n, slot.data(), stream); sync(); }, sync);
  r.raw_us = per_call_us(comm, calls, [&] {
    reduce::dot(x.data(), y.data(), n, slot.data(), ws, stream);
    nccl_ok(ncclAllReduce(slot.data(), slot.data(), 1, ncclFloat32, ncclSum, nc, stream), "ncclAllReduce");
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(&raw, slot.data(), sizeof(float), cudaMemcpyDeviceToHost, stream));
    sync();
  }, sync);
  r.ours_us = per_call_us(comm, calls, [&] { ours = dist::dot(comm, x.data(), y.data(), n, stream); }, sync);
  if (std::memcmp(&raw, &ours, sizeof(float)) != 0)
    throw gpukit::check_failed("reduce bench-dist: dist::dot gave " + std::to_string(ours) + " and the raw NCCL form " +
                               std::to_string(raw) + " for n = " + std::to_string(n) + " per rank (same kernel and "
                               "collective: the bits must agree)");
  return r;
}

/// `overlappable`: start + finish (the side stream and its event waits), else run().
dist_row time_device_allreduce(const dist::communicator& comm, int calls, cudaStream_t stream, bool overlappable) {
  constexpr int count = 6;
  gpukit::device_buffer<double> a(std::vector<double>(count, 0.0)), b(std::vector<double>(count, 0.0));
  dist::device_allreduce ar(comm, count * sizeof(double));
  ar.connect(stream);
  auto* nc = static_cast<ncclComm_t>(comm.nccl_comm());
  const auto sync = [&] { GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream)); };
  dist_row r{overlappable ? "allreduce_overlap" : "device_allreduce",
             overlappable ? "dist::device_allreduce start + finish" : "dist::device_allreduce::run",
             "ncclAllReduce(6 doubles) on the stream", count};
  r.raw_us = per_call_us(comm, calls, [&] {
    nccl_ok(ncclAllReduce(b.data(), b.data(), count, ncclFloat64, ncclSum, nc, stream), "ncclAllReduce");
  }, sync);
  r.ours_us = per_call_us(comm, calls, [&] {
    if (!overlappable) {
      ar.run(a.data(), count, stream);
      return;
    }
    ar.start(a.data(), count, stream);
    ar.finish(stream);
  }, sync);
  return r;
}
#endif

void print_rows(const std::vector<dist_row>& rows, int ranks, std::ostream& out) {
  out << rep::format("\n%-18s %12s %12s %12s %10s\n", "case", "n per rank", "ours (us)", "raw (us)", "ours/raw");
  for (const dist_row& r : rows) {
    out << rep::format("%-18s %12lld %12.1f %12.1f %9.3fx", r.name.c_str(), static_cast<long long>(r.n), r.ours_us,
                       r.raw_us, r.ours_us / r.raw_us);
    if (r.name == "dot")
      out << rep::format("   (local reduce::dot %.1f us, %.1f without a workspace)", r.local_us, r.local_pool_us);
    out << "\n";
  }
  out << "(" << ranks << " ranks; per call: mean of a batch, median of 5 batches, the slowest rank's)\n";
}

nlohmann::json rows_json(const std::vector<dist_row>& rows, bool quick, int ranks, int calls) {
  nlohmann::json j = gpukit::report::make("reduce", "bench-dist");
  j["inputs"] = {{"quick", quick},
                 {"mpi_rank_count", ranks},
                 {"calls_per_batch_count", calls},
                 {"timing", "host wall clock around a batch of calls (with its host sync), mean per call, median "
                            "of 5 batches, maximum over ranks"}};
  nlohmann::json out = nlohmann::json::array(), targets = nlohmann::json::array();
  for (const dist_row& r : rows) {
    nlohmann::json row = {{"case", r.name}, {"ours", r.ours},          {"raw", r.raw},
                          {"n", r.n},       {"ours_time_us", r.ours_us}, {"raw_time_us", r.raw_us},
                          {"ours_over_raw_ratio", r.ours_us / r.raw_us}};
    if (r.name == "dot") {
      row["local_dot_time_us"] = r.local_us;
      row["local_dot_without_workspace_time_us"] = r.local_pool_us;
    }
    out.push_back(row);
    targets.push_back({{"target", r.name + " n=" + std::to_string(r.n) + " within 10 % of raw NCCL (ours / raw)"},
                       {"value", rep::format("%.3f", r.ours_us / r.raw_us)},
                       {"pass", r.ours_us <= 1.10 * r.raw_us}});
  }
  j["results"]["rows"] = out;
  j["results"]["targets"] = targets;
  return j;
}

int bench_dist_on(dist::communicator& comm, const gpu_bench_options& opt) {
  gpukit::all_or_none(comm, [&] { (void)dist::select_local_device(comm); });
  comm.enable_device();
  if (comm.transport() != dist::device_transport::nccl)
    throw std::runtime_error("reduce bench-dist: needs NCCL with one GPU per rank (" + comm.transport_reason() +
                             "): with host staging the raw peer would be the same code");
#if defined(GPUKIT_HAVE_NCCL)
  const int calls = opt.quick ? 50 : 200;
  const std::vector<std::int64_t> sizes = {1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 26};
  cudaStream_t stream = nullptr;
  GPUKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<dist_row> rows;
  try {
    for (std::int64_t n : sizes) rows.push_back(time_dot(comm, n, calls, stream));
    rows.push_back(time_device_allreduce(comm, calls, stream, false));
    rows.push_back(time_device_allreduce(comm, calls, stream, true));
  } catch (...) {
    (void)cudaStreamDestroy(stream);
    throw;
  }
  GPUKIT_CUDA_CHECK(cudaStreamDestroy(stream));
  if (comm.rank() != 0) return gpukit::exit_ok;
  std::ostream& out = gpukit::output_stream(opt.quiet);
  out << "reduce bench-dist: libdist's sums over ranks against raw NCCL, float dots and 6-double all-reduces\n";
  print_rows(rows, comm.size(), out);
  const nlohmann::json j = rows_json(rows, opt.quick, comm.size(), calls);
  for (const auto& t : j["results"]["targets"])
    out << (t["pass"].get<bool>() ? "PASS " : "MISS ") << t["target"].get<std::string>() << ": "
        << t["value"].get<std::string>() << "\n";
  if (!opt.json.empty()) gpukit::report::write(opt.json, j);
  return gpukit::exit_ok;
#else
  (void)opt;
  return gpukit::exit_runtime_error;
#endif
}

}  // namespace

int bench_dist_command(const gpu_bench_options& opt) {
  return gpukit::run_on_mpi_world("reduce", [&](dist::communicator& comm) { return bench_dist_on(comm, opt); });
}

}  // namespace reduce_app
