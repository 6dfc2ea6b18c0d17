// Row-distributed CSR matrices: a partition of the rows by nonzeros, each rank's rows (read from an HDF5
// file by hyperslabs, or taken from a matrix every rank holds), a halo plan built once (which x entries
// each rank sends and receives), and y = A x with the halo exchange overlapped by the interior rows.
// Square matrices: x and y are partitioned like the rows. No CUDA syntax.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dist/communicator.hpp"
#include "reduce/device.hpp"
#include "sparse/csr.hpp"
#include "sparse/spmv.hpp"

namespace dist {

/// Rank r owns rows (and x, y entries) [offsets[r], offsets[r + 1]).
struct row_partition {
  std::vector<std::int64_t> offsets;  ///< P + 1 non-decreasing entries, offsets[0] = 0, offsets[P] = rows
  int parts() const noexcept { return static_cast<int>(offsets.size()) - 1; }
  std::int64_t begin(int r) const { return offsets[static_cast<std::size_t>(r)]; }
  std::int64_t end(int r) const { return offsets[static_cast<std::size_t>(r) + 1]; }
  /// The rank owning `row` (binary search; the LAST of equal offsets, so empty parts own nothing).
  int owner(std::int64_t row) const;
};

/// Contiguous row blocks of about equal nonzeros: part r starts at the first row i with
/// row_ptr[i] >= r * nnz / P (integer arithmetic in 128 bits: no overflow at any nnz). Rows are never
/// split, so a part can exceed nnz / P by its longest row. `row_ptr` holds rows + 1 global entries.
row_partition partition_by_nonzeros(const std::vector<std::int64_t>& row_ptr, int parts);

/// Which x entries travel for y = A x. Ghosts are the x entries this rank's rows read but another
/// rank owns, sorted by global index (so grouped by owner). Received ghosts land at local positions
/// local_rows + g, g = 0 .. ghosts - 1, after the owned entries.
struct halo_plan {
  std::int64_t local_rows = 0;
  std::vector<std::int64_t> ghost_global;  ///< global index of each ghost, ascending
  std::vector<int> recv_ranks;             ///< ranks this one receives from, ascending
  std::vector<std::int64_t> recv_offsets;  ///< ghosts [recv_offsets[k], recv_offsets[k + 1]) come from recv_ranks[k]
  std::vector<int> send_ranks;             ///< ranks this one sends to, ascending
  std::vector<std::int64_t> send_offsets;  ///< send_local[send_offsets[k] .. send_offsets[k + 1]) go to send_ranks[k]
  std::vector<std::int64_t> send_local;    ///< owned (local) indices to send, ascending per destination
};

/// This rank's rows of a square matrix distributed by rows, split for the overlapped SpMV into
///  * interior: rows whose columns are all owned, in local column numbering [0, local_rows);
///  * boundary: rows reading at least one ghost, columns [0, local_rows + ghosts) (owned, then ghosts);
/// each a plain sparse::host_csr (libsparse's kernels run on them unchanged), with the local row of each.
/// Entries keep their stored order within a row, so every row's product is computed from the same values
/// in the same order whatever the partition: SpMV results are bitwise independent of the rank count.
template <class Value, class Index>
class distributed_csr {
public:
  /// Collective. `local` holds rows [part.begin(rank), part.end(rank)) with GLOBAL column indices
  /// (cols() = the global size). Builds the halo plan (one all-to-all of counts, one of indices).
  /// Throws std::invalid_argument for a matrix that is not square or rows that do not match the partition;
  /// the failure is agreed among all ranks (rank_failure on every rank).
  distributed_csr(const communicator& comm, row_partition part, const sparse::host_csr<Value, Index>& local);

  std::int64_t global_rows() const noexcept { return part_.offsets.back(); }
  std::int64_t local_rows() const noexcept { return halo_.local_rows; }
  std::int64_t first_row() const noexcept { return first_row_; }
  std::int64_t local_nnz() const noexcept { return interior_.nnz() + boundary_.nnz(); }
  const row_partition& partition() const noexcept { return part_; }
  const halo_plan& halo() const noexcept { return halo_; }
  const sparse::host_csr<Value, Index>& interior() const noexcept { return interior_; }
  const sparse::host_csr<Value, Index>& boundary() const noexcept { return boundary_; }
  const std::vector<std::int64_t>& interior_rows() const noexcept { return interior_rows_; }
  const std::vector<std::int64_t>& boundary_rows() const noexcept { return boundary_rows_; }
  /// The stored diagonal entries of the local rows (0 where none), for Jacobi preconditioning.
  const std::vector<Value>& diagonal() const noexcept { return diagonal_; }

private:
  row_partition part_;
  std::int64_t first_row_ = 0;
  halo_plan halo_;
  sparse::host_csr<Value, Index> interior_, boundary_;
  std::vector<std::int64_t> interior_rows_, boundary_rows_;
  std::vector<Value> diagonal_;
};

/// Collective: reads the CSR matrix in `group` of the HDF5 file `path` (libsparse's schema), each rank only
/// its rows. Rank 0 reads row_ptr (8 bytes per row) and partitions by nonzeros; the offsets are broadcast;
/// every rank then reads its rows' part of row_ptr, col_idx and values as hyperslabs
/// (sparse::read_hdf5_rows, with `options`: NaN/Inf refused unless allowed). A bad file on any rank throws
/// the same rank_failure on every rank.
///
/// Example:
///   dist::communicator comm;
///   auto a = dist::read_hdf5<double, std::int32_t>(comm, "a.h5");
///   dist::host_spmv<double, std::int32_t> spmv(comm, a);   spmv.apply(x_local.data(), y_local.data());
template <class Value, class Index>
distributed_csr<Value, Index> read_hdf5(const communicator& comm, const std::string& path,
                                        const std::string& group = "/matrix", const sparse::read_options& options = {});

/// Collective: any matrix file sparse::read_matrix reads, each rank keeping its rows. An HDF5 file (.h5,
/// .hdf5) is read_hdf5's (group /matrix); a Matrix Market file is read once, by rank 0 (as Value, so the
/// values are those of sparse::read_matrix<Value, Index> on one process), written to a temporary HDF5 file
/// in the temporary directory that every rank reads its rows of, and removed before returning (also on
/// failure). A bad file throws the same rank_failure on every rank.
template <class Value, class Index>
distributed_csr<Value, Index> read_matrix(const communicator& comm, const std::string& path,
                                          const sparse::read_options& options = {});

/// Collective: every rank holds the same global matrix (tests, generated problems); each keeps its rows of
/// a partition by nonzeros.
template <class Value, class Index>
distributed_csr<Value, Index> distribute(const communicator& comm, const sparse::host_csr<Value, Index>& global);

/// y = A x on the CPU for a distributed_csr, with the halo exchange in flight (MPI_Isend / MPI_Irecv) while
/// the interior rows are computed (libsparse's reference SpMV: double accumulation, one rounding per row),
/// the boundary rows after MPI_Waitall. Holds the exchange buffers (allocated once). Collective per apply.
template <class Value, class Index>
class host_spmv {
public:
  host_spmv(const communicator& comm, const distributed_csr<Value, Index>& a);
  /// y_local = (A x)_local; x_local and y_local hold local_rows() entries and must not overlap.
  void apply(const Value* x_local, Value* y_local);

private:
  const communicator* comm_;
  const distributed_csr<Value, Index>* a_;
  std::vector<Value> x_ext_, send_, y_interior_, y_boundary_;
  std::vector<MPI_Request> requests_;  // one per neighbour and direction, reused by every apply
};

/// device_spmv's layout (below): `automatic` takes the room layout where the rank's rows are banded.
enum class spmv_layout { automatic, room, copy };

/// y = A x on the GPU for a distributed_csr, in one of two layouts chosen per rank at construction.
///  * The room layout, for banded rows (the ghosts span at most local_rows() + 4096 entries: a grid split
///    into slabs): x keeps room around this rank's entries (input_room(): the ghosts of lower ranks before
///    them, of higher ranks after, at their global distance), the halo is received there, and the rows
///    are three libsparse plans over columns numbered around the room (sparse::x_halo): the longest run of
///    rows that read no ghost, computed while the halo travels, then the rows before and after it, each
///    writing its rows of y in place. apply_in_room() and apply_in_room_with_dots() take a vector with that
///    room and copy nothing; apply() copies x into a vector of its own with room first.
///  * The copy layout, otherwise: the interior and boundary rows as libsparse plans
/// (sparse::spmv_plan, algorithm chosen per block), the x entries to send gathered on the device, the
/// halo carried by the communicator's device transport (enable_device() first): NCCL send/receive on the
/// communicator's NCCL stream (communicator::nccl_stream()), or a copy to pinned host memory and
/// MPI_Isend / MPI_Irecv; the interior rows run on `stream` meanwhile, the boundary rows after the halo
/// arrived, then both blocks' results are scattered into y (x copied once, y once more).
/// Results per row are within libsparse's
/// SpMV bound (gamma_k sum_j |a_ij x_j|, k the row length); not bitwise the CPU path. Collective per apply.
/// `algorithm` is both blocks' libsparse algorithm; automatic chooses per block from its row statistics,
/// which change with the partition, so a row's bits may change with the rank count. With
/// spmv_algorithm::scalar every row is one thread's sum in stored order, the order the partition keeps:
/// y is then BITWISE the same for any rank count and equal to a one-GPU scalar plan's y (the
/// distributed GPU solver's reproducible mode uses it).
template <class Value, class Index>
class device_spmv {
public:
  /// `layout`: room forces the room layout (std::invalid_argument for a rank without rows or whose room
  /// numbering does not fit Index), copy the copy layout (tests run both).
  device_spmv(const communicator& comm, const distributed_csr<Value, Index>& a,
              sparse::spmv_algorithm algorithm = sparse::spmv_algorithm::automatic,
              spmv_layout layout = spmv_layout::automatic);
  ~device_spmv();
  device_spmv(const device_spmv&) = delete;
  device_spmv& operator=(const device_spmv&) = delete;
  /// d_y_local = (A x)_local on `stream` (device memory, local_rows() entries each, not overlapping);
  /// returns when the halo has been exchanged (the boundary rows may still run on `stream`).
  void apply(const Value* d_x_local, Value* d_y_local, reduce::stream_t stream = nullptr);
  /// The room apply_in_room() needs around x: x_halo::before entries ahead of d_x_local and after past its
  /// local_rows(), which the halo overwrites. Empty ({0, 0}) in the copy layout.
  sparse::x_halo input_room() const;
  /// apply() of a d_x_local with input_room() around it (device memory, written there by the halo, the
  /// entries themselves unchanged): no copy of x, no scatter of y. std::logic_error in the copy layout.
  void apply_in_room(Value* d_x_local, Value* d_y_local, reduce::stream_t stream = nullptr);
  /// apply_in_room(), and this rank's x.y, y.w, y.y into d_sums (3 doubles, device memory; NOT summed over
  /// ranks): each block's sparse::spmv_dots (fast sums; d_w_local: local_rows() entries), the first block
  /// writing the sums and the others adding theirs.
  void apply_in_room_with_dots(Value* d_x_local, Value* d_y_local, const Value* d_w_local, double* d_sums,
                               reduce::stream_t stream = nullptr);
  /// Whether apply_in_room_with_dots takes the sums in the SpMV's own pass (every block's plan is
  /// `stencil`); false in the copy layout.
  bool dots_fused() const;
  /// Exchanges the halo once (zeros), so that the transport connects the neighbours now and not inside the
  /// first apply: NCCL connects peers at their first exchange (measured on 2 H100s over NVLink: 0.2-0.5 s,
  /// which a solver's first iteration would otherwise carry). Collective; returns when the exchange is
  /// done. A no-op on host staging.
  void connect(reduce::stream_t stream = nullptr);

private:
  struct state;
  Value* ghosts_of(std::size_t k, Value* x_own) const;
  void exchange_halo_nccl(const Value* x_send, Value* x_own);
  void pack(const Value* x_own, reduce::stream_t stream);
  void exchange(const Value* x_send, Value* x_own, reduce::stream_t stream);
  void run_in_room(Value* x, Value* y, const Value* w, double* sums, reduce::stream_t stream);
  void check_room(const char* what) const;
  const communicator* comm_;
  const distributed_csr<Value, Index>* a_;
  std::unique_ptr<state> s_;
};

}  // namespace dist
