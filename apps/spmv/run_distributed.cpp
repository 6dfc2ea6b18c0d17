// `mpirun -np N spmv run FILE` (N > 1): y = A x on a matrix distributed by rows. Each rank reads only its
// rows (dist::read_matrix: a Matrix Market file is converted once by rank 0 into a temporary HDF5 file)
// and holds the same x as the one-process run; the product is dist::host_spmv on the CPU (bitwise the
// one-process reference backend) or dist::device_spmv on the GPU (one rank per GPU). --check compares each
// rank's rows with the reference and Eigen products of those rows under the one-process per-row bound. y is
// gathered to rank 0, which alone prints and writes --output and --json; failures are said once
// (gpukit::run_on_mpi_world).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "dist/communicator.hpp"
#include "dist/csr.hpp"
#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"
#include "mpi_app.hpp"
#include "reduce/device.hpp"
#include "run_command.hpp"
#include "sparse/reference.hpp"

namespace spmv_app {
namespace {

using I = std::int32_t;

/// The backend every rank uses: the GPU only when every rank has one (auto), an agreed failure when
/// --device gpu finds none; rank 0 alone says when auto falls back to the CPU.
reduce::backend agreed_backend(const dist::communicator& comm, const std::string& device) {
  const reduce::device_choice choice = device == "cpu"   ? reduce::device_choice::cpu
                                       : device == "auto" ? reduce::device_choice::automatic
                                                          : reduce::device_choice::cuda;
  int gpu = 0;
  gpukit::all_or_none(comm, [&] { gpu = reduce::select_backend(choice) == reduce::backend::cuda ? 1 : 0; });
  MPI_Allreduce(MPI_IN_PLACE, &gpu, 1, MPI_INT, MPI_MIN, comm.mpi());
  if (!gpu && choice == reduce::device_choice::automatic && comm.rank() == 0)
    std::cerr << "spmv: note: " << reduce::cuda_unavailable_reason() << " on some rank; running on the CPU backend\n";
  return gpu ? reduce::backend::cuda : reduce::backend::cpu;
}

/// Median over `reps` collective calls of the slowest rank's time, in microseconds, after one warm-up.
double median_slowest_us(const dist::communicator& comm, const std::function<void()>& f, int reps) {
  f();
  std::vector<double> us;
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(comm.mpi());
    const auto t0 = std::chrono::steady_clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  MPI_Allreduce(MPI_IN_PLACE, us.data(), reps, MPI_DOUBLE, MPI_MAX, comm.mpi());
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

/// y_local = (A x)_local timed: host_spmv (CPU) or device_spmv (GPU, one rank per GPU).
template <class V>
row_result timed_spmv(dist::communicator& comm, const dist::distributed_csr<V, I>& a, const std::vector<V>& x_local,
                      std::vector<V>& y_local, reduce::backend be, int repeats) {
  row_result r;
  if (be == reduce::backend::cpu) {
    dist::host_spmv<V, I> spmv(comm, a);
    r.name = "dist_host_spmv";
    r.detail = "dist::host_spmv (reference rows, halo overlapped)";
    r.us = median_slowest_us(comm, [&] { spmv.apply(x_local.data(), y_local.data()); }, repeats);
    return r;
  }
  dist::select_local_device(comm);
  comm.enable_device();
  gpukit::device_buffer<V> dx(x_local), dy(a.local_rows());
  dist::device_spmv<V, I> spmv(comm, a);
  r.name = "dist_device_spmv";
  r.detail = std::string("dist::device_spmv, halo over ") + dist::to_string(comm.transport());
  r.us = median_slowest_us(comm, [&] {
    spmv.apply(dx.data(), dy.data());
    GPUKIT_CUDA_CHECK(cudaDeviceSynchronize());
  }, repeats);
  y_local = dy.download();
  return r;
}

/// The reference and Eigen products of this rank's rows and their per-row bounds (the same rows, values
/// and x as on one process, so the same bound), compared with y_local; the largest errors over all ranks.
template <class V>
void check_local_rows(const dist::communicator& comm, const dist::distributed_csr<V, I>& a, const std::vector<V>& x,
                      const std::vector<V>& y_local, row_result& r) {
  const auto n = static_cast<std::size_t>(a.local_rows());
  std::vector<V> x_ext(x.begin() + a.first_row(), x.begin() + a.first_row() + a.local_rows());
  for (const std::int64_t g : a.halo().ghost_global) x_ext.push_back(x[static_cast<std::size_t>(g)]);
  std::vector<V> y_ref(n), y_eigen(n);
  std::vector<double> bound(n);
  for (const auto* block : {&a.interior(), &a.boundary()}) {
    const auto& rows = block == &a.interior() ? a.interior_rows() : a.boundary_rows();
    std::vector<V> yr(rows.size()), ye(rows.size()), poison(rows.size(), V(NAN));
    sparse::reference::spmv_reference(*block, V(1), x_ext.data(), V(0), yr.data());
    sparse::reference::spmv_eigen(*block, V(1), x_ext.data(), V(0), ye.data());
    const auto b = sparse::reference::row_error_bounds(*block, V(1), x_ext.data(), V(0), poison.data());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto k = static_cast<std::size_t>(rows[i]);
      y_ref[k] = yr[i];
      y_eigen[k] = ye[i];
      bound[k] = b[i];
    }
  }
  r.vs_ref = compare_rows(y_local, y_ref, bound);
  r.vs_eigen = compare_rows(y_local, y_eigen, bound);
  double e[4] = {r.vs_ref.max_abs, r.vs_ref.max_ratio, r.vs_eigen.max_abs, r.vs_eigen.max_ratio};
  MPI_Allreduce(MPI_IN_PLACE, e, 4, MPI_DOUBLE, MPI_MAX, comm.mpi());
  r.vs_ref = {e[0], e[1]};
  r.vs_eigen = {e[2], e[3]};
}

/// The whole y on rank 0 (MPI_Gatherv in row order); empty on the other ranks.
template <class V>
std::vector<V> gather_y(const dist::communicator& comm, const dist::distributed_csr<V, I>& a, const std::vector<V>& y_local) {
  const auto& off = a.partition().offsets;
  if (off.back() > INT32_MAX) throw std::invalid_argument("spmv run: more than 2^31 - 1 rows to gather under MPI");
  std::vector<int> counts(static_cast<std::size_t>(comm.size())), displs(counts.size());
  for (int r = 0; r < comm.size(); ++r) {
    displs[static_cast<std::size_t>(r)] = static_cast<int>(a.partition().begin(r));
    counts[static_cast<std::size_t>(r)] = static_cast<int>(a.partition().end(r) - a.partition().begin(r));
  }
  std::vector<V> y(comm.rank() == 0 ? static_cast<std::size_t>(off.back()) : 0);
  const MPI_Datatype type = sizeof(V) == sizeof(float) ? MPI_FLOAT : MPI_DOUBLE;
  MPI_Gatherv(y_local.data(), static_cast<int>(y_local.size()), type, y.data(), counts.data(), displs.data(), type, 0,
              comm.mpi());
  return y;
}

template <class V>
int run_distributed_typed(dist::communicator& comm, const run_options& opt) {
  gpukit::all_or_none(comm, [&] {
    if (comm.rank() == 0) check_run_paths(opt);
  });
  const reduce::backend be = agreed_backend(comm, opt.device);
  sparse::read_options ro;
  ro.allow_nonfinite = opt.allow_nonfinite;
  const auto a = dist::read_matrix<V, I>(comm, opt.path, ro);
  run_summary m;
  std::vector<V> x;  // the whole x on every rank (n entries; the matrix is each rank's rows alone)
  gpukit::all_or_none(comm, [&] { x = input_x<V>(opt.path, a.global_rows(), ro, m.x_origin); });
  const std::vector<V> x_local(x.begin() + a.first_row(), x.begin() + a.first_row() + a.local_rows());
  std::vector<V> y_local(static_cast<std::size_t>(a.local_rows()), V(NAN));
  row_result r = timed_spmv(comm, a, x_local, y_local, be, opt.repeats);
  check_local_rows(comm, a, x, y_local, r);
  const std::vector<V> y = gather_y(comm, a, y_local);
  std::int64_t nnz = a.local_nnz();
  MPI_Allreduce(MPI_IN_PLACE, &nnz, 1, MPI_INT64_T, MPI_SUM, comm.mpi());
  std::int64_t longest = std::max(longest_row(a.interior()), longest_row(a.boundary()));
  MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_INT64_T, MPI_MAX, comm.mpi());
  if (comm.rank() != 0) return r.worst() <= 1.0 || !opt.check ? gpukit::exit_ok : gpukit::exit_check_failed;

  m.rows = m.cols = a.global_rows();
  m.nnz = nnz;
  m.bytes = minimum_bytes<V, I>(m.rows, m.cols, nnz, false);
  m.stencil_bytes = stencil_bytes<V, I>(m.rows, m.cols, nnz, longest, false);
  m.flops = 2.0 * static_cast<double>(nnz);
  m.ranks = comm.size();
  std::ostream& out = gpukit::output_stream(opt.quiet);
  print_header(opt, m, out);
  out << "device     " << reduce::to_string(be) << ": " << comm.size() << " MPI ranks, rows partitioned by nonzeros, "
      << r.detail << "\n";
  if (!opt.output.empty()) write_y(opt.output, y);
  return finish_run(opt, be, m, {{r}, std::nullopt, std::nullopt}, out);
}

}  // namespace

int run_distributed_command(const run_options& opt) {
  return gpukit::run_on_mpi_world("spmv", [&](dist::communicator& comm) {
    return opt.precision == "float" ? run_distributed_typed<float>(comm, opt) : run_distributed_typed<double>(comm, opt);
  });
}

}  // namespace spmv_app
