// Row-distributed CSR: partition by nonzeros, the halo plan, the interior / boundary split, HDF5 reading
// by hyperslabs and the overlapped CPU SpMV.
#include "dist/csr.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "dist_check.hpp"
#include "sparse/hdf5_io.hpp"
#include "sparse/io.hpp"
#include "sparse/reference.hpp"

namespace dist {

int row_partition::owner(std::int64_t row) const {
  // The last r with offsets[r] <= row: upper_bound - 1 skips the empty parts that start at `row`.
  const auto it = std::upper_bound(offsets.begin(), offsets.end() - 1, row);
  return static_cast<int>(it - offsets.begin()) - 1;
}

row_partition partition_by_nonzeros(const std::vector<std::int64_t>& row_ptr, int parts) {
  if (parts < 1) throw std::invalid_argument("dist::partition_by_nonzeros: " + std::to_string(parts) + " parts");
  if (row_ptr.empty()) throw std::invalid_argument("dist::partition_by_nonzeros: empty row_ptr");
  const auto rows = static_cast<std::int64_t>(row_ptr.size()) - 1;
  const std::int64_t nnz = row_ptr.back();
  row_partition p;
  p.offsets.assign(static_cast<std::size_t>(parts) + 1, rows);
  p.offsets[0] = 0;
  for (int r = 1; r < parts; ++r) {
    // r * nnz can pass 2^63 for nnz > 2^61 / P: computed in 128 bits.
    const auto target = static_cast<std::int64_t>(static_cast<__int128>(r) * nnz / parts);
    const auto it = std::lower_bound(row_ptr.begin() + p.offsets[static_cast<std::size_t>(r) - 1], row_ptr.end() - 1, target);
    p.offsets[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(it - row_ptr.begin());
  }
  return p;
}

namespace {

/// Builds the halo plan of rows with global columns `cols` (the ghost set, grouped by owner; the send
/// lists learnt from the owners' requests: one MPI_Alltoall of counts, one MPI_Alltoallv of indices).
halo_plan build_halo(const communicator& comm, const row_partition& part, std::vector<std::int64_t> ghosts) {
  const int p = comm.size(), me = comm.rank();
  halo_plan h;
  h.local_rows = part.end(me) - part.begin(me);
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  h.ghost_global = std::move(ghosts);
  std::vector<std::int64_t> want(static_cast<std::size_t>(p), 0);  // ghosts wanted from each rank
  for (std::int64_t g : h.ghost_global) ++want[static_cast<std::size_t>(part.owner(g))];
  h.recv_offsets.push_back(0);
  for (int r = 0; r < p; ++r)
    if (want[static_cast<std::size_t>(r)] > 0) {
      h.recv_ranks.push_back(r);
      h.recv_offsets.push_back(h.recv_offsets.back() + want[static_cast<std::size_t>(r)]);
    }
  std::vector<std::int64_t> asked(static_cast<std::size_t>(p), 0);  // entries each rank wants from me
  detail::mpi_check(MPI_Alltoall(want.data(), 1, MPI_INT64_T, asked.data(), 1, MPI_INT64_T, comm.mpi()), "MPI_Alltoall");
  std::vector<int> scount(static_cast<std::size_t>(p)), sdispl(static_cast<std::size_t>(p)),
      rcount(static_cast<std::size_t>(p)), rdispl(static_cast<std::size_t>(p));
  std::int64_t stotal = 0, rtotal = 0;
  for (int r = 0; r < p; ++r) {
    const auto k = static_cast<std::size_t>(r);
    scount[k] = detail::mpi_count(want[k], "dist halo plan");
    sdispl[k] = detail::mpi_count(stotal, "dist halo plan");
    rcount[k] = detail::mpi_count(asked[k], "dist halo plan");
    rdispl[k] = detail::mpi_count(rtotal, "dist halo plan");
    stotal += want[k];
    rtotal += asked[k];
  }
  std::vector<std::int64_t> requested(static_cast<std::size_t>(rtotal));
  detail::mpi_check(MPI_Alltoallv(h.ghost_global.data(), scount.data(), sdispl.data(), MPI_INT64_T, requested.data(),
                                  rcount.data(), rdispl.data(), MPI_INT64_T, comm.mpi()),
                    "MPI_Alltoallv");
  const std::int64_t first = part.begin(me);
  h.send_offsets.push_back(0);
  for (int r = 0; r < p; ++r) {
    const auto k = static_cast<std::size_t>(r);
    if (asked[k] == 0) continue;
    h.send_ranks.push_back(r);
    for (int i = 0; i < rcount[k]; ++i) h.send_local.push_back(requested[static_cast<std::size_t>(rdispl[k] + i)] - first);
    h.send_offsets.push_back(static_cast<std::int64_t>(h.send_local.size()));
  }
  return h;
}

template <class Index>
Index checked_index(std::int64_t v, const char* what) {
  if (v > std::numeric_limits<Index>::max())
    throw std::invalid_argument(std::string("dist::distributed_csr: ") + what + " " + std::to_string(v) +
                                " does not fit the " + std::to_string(8 * sizeof(Index)) + "-bit index type");
  return static_cast<Index>(v);
}

}  // namespace

template <class Value, class Index>
distributed_csr<Value, Index>::distributed_csr(const communicator& comm, row_partition part,
                                               const sparse::host_csr<Value, Index>& local)
    : part_(std::move(part)) {
  const int me = comm.rank();
  all_or_none(comm, [&] {
    if (part_.parts() != comm.size())
      throw std::invalid_argument("dist::distributed_csr: a partition of " + std::to_string(part_.parts()) +
                                  " parts for " + std::to_string(comm.size()) + " ranks");
    if (local.cols() != part_.offsets.back())
      throw std::invalid_argument("dist::distributed_csr: the matrix is not square (" +
                                  std::to_string(part_.offsets.back()) + " rows, " + std::to_string(local.cols()) +
                                  " columns)");
    if (local.rows() != part_.end(me) - part_.begin(me))
      throw std::invalid_argument("dist::distributed_csr: " + std::to_string(local.rows()) + " local rows, the partition gives " +
                                  std::to_string(part_.end(me) - part_.begin(me)));
  });
  first_row_ = part_.begin(me);
  const std::int64_t n = local.rows(), first = first_row_, last = part_.end(me);
  const auto& rp = local.row_ptr();
  const auto& ci = local.col_idx();
  const auto& v = local.values();
  std::vector<std::int64_t> ghosts;
  for (std::int64_t e = 0; e < local.nnz(); ++e) {
    const std::int64_t c = ci[static_cast<std::size_t>(e)];
    if (c < first || c >= last) ghosts.push_back(c);
  }
  halo_ = build_halo(comm, part_, std::move(ghosts));
  // Local numbering: owned column c -> c - first; ghost -> n + its position in ghost_global.
  auto local_col = [&](std::int64_t c) -> std::int64_t {
    if (c >= first && c < last) return c - first;
    const auto it = std::lower_bound(halo_.ghost_global.begin(), halo_.ghost_global.end(), c);
    return n + (it - halo_.ghost_global.begin());
  };
  all_or_none(comm, [&] {
    (void)checked_index<Index>(n + static_cast<std::int64_t>(halo_.ghost_global.size()), "local columns");
  });
  std::vector<Index> irp{0}, brp{0}, ici, bci;
  std::vector<Value> iv, bv;
  diagonal_.assign(static_cast<std::size_t>(n), Value(0));
  for (std::int64_t i = 0; i < n; ++i) {
    bool boundary = false;
    for (Index e = rp[static_cast<std::size_t>(i)]; e < rp[static_cast<std::size_t>(i) + 1]; ++e) {
      const std::int64_t c = ci[static_cast<std::size_t>(e)];
      boundary |= c < first || c >= last;
      if (c == first + i) diagonal_[static_cast<std::size_t>(i)] += v[static_cast<std::size_t>(e)];
    }
    auto& cols = boundary ? bci : ici;
    auto& vals = boundary ? bv : iv;
    for (Index e = rp[static_cast<std::size_t>(i)]; e < rp[static_cast<std::size_t>(i) + 1]; ++e) {
      cols.push_back(static_cast<Index>(local_col(ci[static_cast<std::size_t>(e)])));
      vals.push_back(v[static_cast<std::size_t>(e)]);
    }
    (boundary ? brp : irp).push_back(static_cast<Index>(cols.size()));
    (boundary ? boundary_rows_ : interior_rows_).push_back(i);
  }
  const std::int64_t ext = n + static_cast<std::int64_t>(halo_.ghost_global.size());
  interior_ = sparse::host_csr<Value, Index>(static_cast<std::int64_t>(interior_rows_.size()), n, std::move(irp),
                                             std::move(ici), std::move(iv));
  boundary_ = sparse::host_csr<Value, Index>(static_cast<std::int64_t>(boundary_rows_.size()), ext, std::move(brp),
                                             std::move(bci), std::move(bv));
}

template <class Value, class Index>
distributed_csr<Value, Index> read_hdf5(const communicator& comm, const std::string& path, const std::string& group,
                                        const sparse::read_options& options) {
  row_partition part;
  part.offsets.resize(static_cast<std::size_t>(comm.size()) + 1);
  all_or_none(comm, [&] {
    if (comm.rank() == 0) {
      const auto info = sparse::read_hdf5_info(path, group);
      if (info.rows != info.cols)
        throw sparse::io_error(path + ": " + group + " is " + std::to_string(info.rows) + " x " +
                               std::to_string(info.cols) + ", a distributed matrix must be square");
      part = partition_by_nonzeros(sparse::read_hdf5_row_ptr(path, group, 0, info.rows), comm.size());
    }
  });
  detail::mpi_check(MPI_Bcast(part.offsets.data(), comm.size() + 1, MPI_INT64_T, 0, comm.mpi()), "MPI_Bcast");
  sparse::host_csr<Value, Index> local;
  all_or_none(comm, [&] {
    local = sparse::read_hdf5_rows<Value, Index>(path, group, part.begin(comm.rank()), part.end(comm.rank()), options);
  });
  return distributed_csr<Value, Index>(comm, std::move(part), local);
}

namespace {

/// Rank 0's path broadcast to every rank.
std::string broadcast_string(const communicator& comm, std::string s) {
  int length = static_cast<int>(s.size());
  detail::mpi_check(MPI_Bcast(&length, 1, MPI_INT, 0, comm.mpi()), "MPI_Bcast");
  s.resize(static_cast<std::size_t>(length));
  detail::mpi_check(MPI_Bcast(s.data(), length, MPI_CHAR, 0, comm.mpi()), "MPI_Bcast");
  return s;
}

/// Rank 0 removes the temporary HDF5 file of read_matrix once every rank is past reading it.
struct temporary_file {
  const communicator& comm;
  std::string path;
  ~temporary_file() {
    if (path.empty()) return;
    MPI_Barrier(comm.mpi());
    if (comm.rank() == 0) std::remove(path.c_str());
  }
};

}  // namespace

template <class Value, class Index>
distributed_csr<Value, Index> read_matrix(const communicator& comm, const std::string& path,
                                          const sparse::read_options& options) {
  bool hdf5 = false;
  std::string converted;
  all_or_none(comm, [&] {
    hdf5 = sparse::format_of(path) == sparse::file_format::hdf5;  // the same answer on every rank
    if (hdf5 || comm.rank() != 0) return;
    const auto a = sparse::read_matrix<Value, std::int64_t>(path, options);
    converted = (std::filesystem::temp_directory_path() /
                 ("gpukit_" + std::to_string(::getpid()) + "_" + std::filesystem::path(path).stem().string() + ".h5"))
                    .string();
    sparse::write_hdf5(converted, a);
  });
  if (hdf5) return read_hdf5<Value, Index>(comm, path, "/matrix", options);
  const temporary_file cleanup{comm, broadcast_string(comm, converted)};
  return read_hdf5<Value, Index>(comm, cleanup.path, "/matrix", options);
}

template <class Value, class Index>
distributed_csr<Value, Index> distribute(const communicator& comm, const sparse::host_csr<Value, Index>& global) {
  const auto& grp = global.row_ptr();
  const std::vector<std::int64_t> rp(grp.begin(), grp.end());
  row_partition part = partition_by_nonzeros(rp, comm.size());
  const std::int64_t b = part.begin(comm.rank()), e = part.end(comm.rank());
  const Index first = grp[static_cast<std::size_t>(b)], last = grp[static_cast<std::size_t>(e)];
  std::vector<Index> row_ptr(static_cast<std::size_t>(e - b + 1));
  for (std::int64_t i = b; i <= e; ++i) row_ptr[static_cast<std::size_t>(i - b)] = grp[static_cast<std::size_t>(i)] - first;
  std::vector<Index> col_idx(global.col_idx().begin() + first, global.col_idx().begin() + last);
  std::vector<Value> values(global.values().begin() + first, global.values().begin() + last);
  sparse::host_csr<Value, Index> local(e - b, global.cols(), std::move(row_ptr), std::move(col_idx), std::move(values));
  return distributed_csr<Value, Index>(comm, std::move(part), local);
}

template <class Value, class Index>
host_spmv<Value, Index>::host_spmv(const communicator& comm, const distributed_csr<Value, Index>& a)
    : comm_(&comm),
      a_(&a),
      x_ext_(static_cast<std::size_t>(a.local_rows()) + a.halo().ghost_global.size()),
      send_(a.halo().send_local.size()),
      y_interior_(a.interior_rows().size()),
      y_boundary_(a.boundary_rows().size()) {
  requests_.reserve(a.halo().recv_ranks.size() + a.halo().send_ranks.size());
}

template <class Value, class Index>
void host_spmv<Value, Index>::apply(const Value* x_local, Value* y_local) {
  const halo_plan& h = a_->halo();
  const MPI_Datatype type = detail::mpi_type<Value>();
  constexpr int tag = 21;
  std::vector<MPI_Request>& requests = requests_;
  requests.clear();  // capacity reserved at construction: no allocation per apply
  const std::int64_t n = h.local_rows;
  for (std::size_t k = 0; k < h.recv_ranks.size(); ++k) {
    requests.emplace_back();
    const std::int64_t off = h.recv_offsets[k], cnt = h.recv_offsets[k + 1] - off;
    detail::mpi_check(MPI_Irecv(x_ext_.data() + n + off, detail::mpi_count(cnt, "dist halo"), type, h.recv_ranks[k], tag,
                                comm_->mpi(), &requests.back()),
                      "MPI_Irecv");
  }
  for (std::size_t i = 0; i < h.send_local.size(); ++i) send_[i] = x_local[h.send_local[i]];
  for (std::size_t k = 0; k < h.send_ranks.size(); ++k) {
    requests.emplace_back();
    const std::int64_t off = h.send_offsets[k], cnt = h.send_offsets[k + 1] - off;
    detail::mpi_check(MPI_Isend(send_.data() + off, detail::mpi_count(cnt, "dist halo"), type, h.send_ranks[k], tag,
                                comm_->mpi(), &requests.back()),
                      "MPI_Isend");
  }
  // Interior rows while the halo travels: they read owned entries only.
  sparse::reference::spmv_reference(a_->interior(), Value(1), x_local, Value(0), y_interior_.data());
  std::copy(x_local, x_local + n, x_ext_.begin());  // the boundary rows read [owned, ghosts] contiguously
  detail::mpi_check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  sparse::reference::spmv_reference(a_->boundary(), Value(1), x_ext_.data(), Value(0), y_boundary_.data());
  const auto& ir = a_->interior_rows();
  const auto& br = a_->boundary_rows();
  for (std::size_t i = 0; i < ir.size(); ++i) y_local[ir[i]] = y_interior_[i];
  for (std::size_t i = 0; i < br.size(); ++i) y_local[br[i]] = y_boundary_[i];
}

#define DIST_CSR_INSTANTIATE(V, I)                                                                             \
  template class distributed_csr<V, I>;                                                                        \
  template class host_spmv<V, I>;                                                                              \
  template distributed_csr<V, I> read_hdf5<V, I>(const communicator&, const std::string&, const std::string&,  \
                                                 const sparse::read_options&);                                \
  template distributed_csr<V, I> read_matrix<V, I>(const communicator&, const std::string&,                  \
                                                   const sparse::read_options&);                              \
  template distributed_csr<V, I> distribute<V, I>(const communicator&, const sparse::host_csr<V, I>&);
DIST_CSR_INSTANTIATE(float, std::int32_t)
DIST_CSR_INSTANTIATE(float, std::int64_t)
DIST_CSR_INSTANTIATE(double, std::int32_t)
DIST_CSR_INSTANTIATE(double, std::int64_t)
#undef DIST_CSR_INSTANTIATE

}  // namespace dist
