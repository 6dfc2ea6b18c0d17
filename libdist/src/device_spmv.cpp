// dist::device_spmv: the GPU SpMV of a distributed_csr (libsparse plans for the interior and boundary
// rows, the halo through NCCL or MPI with host staging, overlapped with the interior rows).
#include <cuda_runtime.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <stdexcept>
#include <vector>

#include "cuda/halo.hpp"
#include "dist/csr.hpp"
#include "dist_check.hpp"
#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"
#include "sparse/spmv.hpp"

#if defined(GPUKIT_HAVE_NCCL)
#include <nccl.h>
#endif

namespace dist {

/// The rows of the room layout (see device_spmv in dist/csr.hpp): local rows [first, first + rows), their
/// columns numbered around the room (owned column c at before + c, a ghost of global index G at
/// G - first_row + before), as a matrix of its own with its x_halo.
template <class Value, class Index>
struct room_block {
  std::int64_t first = 0;
  sparse::device_csr<Value, Index> a;
  std::optional<sparse::spmv_plan<Value, Index>> plan;  // none for an empty block
};

template <class Value, class Index>
struct device_spmv<Value, Index>::state {
  // Room layout: blocks[0] the interior rows (the longest run of rows reading no ghost), run while the
  // halo travels; blocks[1], blocks[2] the rows before and after it, run once it arrived.
  bool in_room = false;
  sparse::x_halo room{};
  room_block<Value, Index> blocks[3];
  bool recv_in_place = false;  // every neighbour's ghosts are one contiguous range: received into x's room
  bool send_in_place = false;  // NCCL, and what each neighbour needs is one range of x: sent from x, no gather
  gpukit::device_buffer<std::int64_t> ghost_at;  // otherwise: each ghost's position relative to x (G - first_row)
  gpukit::device_buffer<Value> x_room;  // apply() of a vector without room: copied here (room.before entries in)
  // Copy layout: interior and boundary blocks of distributed_csr, x copied into x_ext, results scattered.
  sparse::device_csr<Value, Index> interior, boundary;
  std::optional<sparse::spmv_plan<Value, Index>> interior_plan, boundary_plan;  // none for an empty block
  gpukit::device_buffer<std::int64_t> interior_rows, boundary_rows;
  gpukit::device_buffer<Value> x_ext, y_interior, y_boundary;
  // Both layouts.
  gpukit::device_buffer<std::int64_t> send_index;
  gpukit::device_buffer<Value> send, ghosts;  // ghosts: the received entries where they are not received in place
  Value* h_send = nullptr;  // pinned staging buffers (host-staging transport)
  Value* h_recv = nullptr;
  cudaEvent_t packed = nullptr, arrived = nullptr;
  std::vector<MPI_Request> requests;  // host staging: one per neighbour and direction, reused
  ~state() {
    if (h_send) cudaFreeHost(h_send);
    if (h_recv) cudaFreeHost(h_recv);
    if (packed) cudaEventDestroy(packed);
    if (arrived) cudaEventDestroy(arrived);
  }
};

namespace {

/// The room a rank's rows need around x: ghosts below its rows to the lowest, above to the highest.
sparse::x_halo room_of(const halo_plan& h, std::int64_t first_row) {
  sparse::x_halo room;
  const std::int64_t last_row = first_row + h.local_rows;
  for (std::int64_t g : h.ghost_global) {
    if (g < first_row) room.before = std::max(room.before, first_row - g);
    else room.after = std::max(room.after, g - last_row + 1);
  }
  return room;
}

/// The room layout's rule: the ghosts span at most the rank's own rows plus 4096 entries (banded rows: a
/// 3D grid split into slabs needs one plane each side), so the solver's vectors with room stay within
/// twice their size; the room numbering must fit Index.
template <class Index>
bool room_fits(const sparse::x_halo& room, std::int64_t rows) {
  return rows > 0 && room.before + rows + room.after <= static_cast<std::int64_t>(std::numeric_limits<Index>::max());
}
template <class Index>
bool room_pays(const sparse::x_halo& room, std::int64_t rows) {
  return room_fits<Index>(room, rows) && room.before + room.after <= rows + 4096;
}

/// The longest run [first, end) of consecutive local rows among the ascending `interior_rows`.
std::pair<std::int64_t, std::int64_t> longest_run(const std::vector<std::int64_t>& interior_rows) {
  std::pair<std::int64_t, std::int64_t> best{0, 0};
  for (std::size_t i = 0; i < interior_rows.size();) {
    std::size_t j = i + 1;
    while (j < interior_rows.size() && interior_rows[j] == interior_rows[j - 1] + 1) ++j;
    if (interior_rows[j - 1] + 1 - interior_rows[i] > best.second - best.first)
      best = {interior_rows[i], interior_rows[j - 1] + 1};
    i = j;
  }
  return best;
}

/// Local rows [first, end) of `a` with their columns numbered around `room`, entries in stored order.
template <class Value, class Index>
sparse::host_csr<Value, Index> rows_in_room(const distributed_csr<Value, Index>& a, const sparse::x_halo& room,
                                            std::int64_t first, std::int64_t end,
                                            const std::vector<std::int64_t>& where) {
  const std::int64_t n = a.local_rows(), lo = a.first_row();
  const auto& ghosts = a.halo().ghost_global;
  std::vector<Index> rp{0}, ci;
  std::vector<Value> v;
  for (std::int64_t i = first; i < end; ++i) {
    const std::int64_t k = where[static_cast<std::size_t>(i)];  // >= 0: interior row k; < 0: boundary row -k - 1
    const auto& m = k >= 0 ? a.interior() : a.boundary();
    const auto row = static_cast<std::size_t>(k >= 0 ? k : -k - 1);
    for (auto e = m.row_ptr()[row]; e < m.row_ptr()[row + 1]; ++e) {
      const std::int64_t c = m.col_idx()[static_cast<std::size_t>(e)];
      ci.push_back(static_cast<Index>(c < n ? room.before + c : ghosts[static_cast<std::size_t>(c - n)] - lo + room.before));
      v.push_back(m.values()[static_cast<std::size_t>(e)]);
    }
    rp.push_back(static_cast<Index>(ci.size()));
  }
  return sparse::host_csr<Value, Index>(end - first, room.before + n + room.after, std::move(rp), std::move(ci),
                                        std::move(v));
}

/// Whether each part [offsets[k], offsets[k + 1]) of the ascending `v` is one range of consecutive values.
bool parts_are_ranges(const std::vector<std::int64_t>& v, const std::vector<std::int64_t>& offsets) {
  for (std::size_t k = 0; k + 1 < offsets.size(); ++k)
    for (auto i = static_cast<std::size_t>(offsets[k]) + 1; i < static_cast<std::size_t>(offsets[k + 1]); ++i)
      if (v[i] != v[i - 1] + 1) return false;
  return true;
}

/// The room layout's blocks, receive buffers and vector (State: device_spmv's state).
template <class State, class Value, class Index>
void build_room_layout(State& s, const distributed_csr<Value, Index>& a, sparse::spmv_algorithm algorithm, bool nccl) {
  const halo_plan& h = a.halo();
  const std::int64_t n = h.local_rows;
  std::vector<std::int64_t> where(static_cast<std::size_t>(n));  // >= 0: interior row k; < 0: boundary row -k - 1
  for (std::size_t k = 0; k < a.interior_rows().size(); ++k)
    where[static_cast<std::size_t>(a.interior_rows()[k])] = static_cast<std::int64_t>(k);
  for (std::size_t k = 0; k < a.boundary_rows().size(); ++k)
    where[static_cast<std::size_t>(a.boundary_rows()[k])] = -static_cast<std::int64_t>(k) - 1;
  const auto [r0, r1] = longest_run(a.interior_rows());
  const std::int64_t bounds[3][2] = {{r0, r1}, {0, r0}, {r1, n}};
  for (int b = 0; b < 3; ++b) {
    auto& blk = s.blocks[b];
    blk.first = bounds[b][0];
    blk.a = sparse::device_csr<Value, Index>(rows_in_room(a, s.room, bounds[b][0], bounds[b][1], where));
    if (blk.a.rows() > 0)
      blk.plan.emplace(blk.a, sparse::x_halo{s.room.before + bounds[b][0], s.room.after + n - bounds[b][1]}, algorithm);
  }
  // Each neighbour's ghosts received where they belong when they are one range; else staged and scattered.
  s.recv_in_place = parts_are_ranges(h.ghost_global, h.recv_offsets);
  s.x_room = gpukit::device_buffer<Value>(s.room.before + n + s.room.after);
  GPUKIT_CUDA_CHECK(cudaMemset(s.x_room.data(), 0, s.x_room.bytes()));  // connect() sends from it: defined values
  if (!s.recv_in_place || !nccl) {
    std::vector<std::int64_t> at(h.ghost_global.size());
    for (std::size_t g = 0; g < at.size(); ++g) at[g] = h.ghost_global[g] - a.first_row();
    s.ghost_at = gpukit::device_buffer<std::int64_t>(at);
    s.ghosts = gpukit::device_buffer<Value>(static_cast<std::int64_t>(at.size()));
  }
}

/// The copy layout's blocks and buffers (State: device_spmv's state).
template <class State, class Value, class Index>
void build_copy_layout(State& s, const distributed_csr<Value, Index>& a, sparse::spmv_algorithm algorithm) {
  s.interior = sparse::device_csr<Value, Index>(a.interior());
  s.boundary = sparse::device_csr<Value, Index>(a.boundary());
  if (a.interior().rows() > 0) s.interior_plan.emplace(s.interior, algorithm);
  if (a.boundary().rows() > 0) s.boundary_plan.emplace(s.boundary, algorithm);
  s.interior_rows = gpukit::device_buffer<std::int64_t>(a.interior_rows());
  s.boundary_rows = gpukit::device_buffer<std::int64_t>(a.boundary_rows());
  s.x_ext = gpukit::device_buffer<Value>(a.local_rows() + static_cast<std::int64_t>(a.halo().ghost_global.size()));
  s.y_interior = gpukit::device_buffer<Value>(static_cast<std::int64_t>(a.interior_rows().size()));
  s.y_boundary = gpukit::device_buffer<Value>(static_cast<std::int64_t>(a.boundary_rows().size()));
}

}  // namespace

template <class Value, class Index>
device_spmv<Value, Index>::device_spmv(const communicator& comm, const distributed_csr<Value, Index>& a,
                                       sparse::spmv_algorithm algorithm, spmv_layout layout)
    : comm_(&comm), a_(&a), s_(std::make_unique<state>()) {
  if (comm.transport() == device_transport::none)
    throw std::logic_error("dist::device_spmv: the communicator has no device transport (call enable_device())");
  const halo_plan& h = a.halo();
  state& s = *s_;
  const std::int64_t n = h.local_rows;
  const auto ghosts = static_cast<std::int64_t>(h.ghost_global.size());
  const bool nccl = comm.transport() == device_transport::nccl;
  s.room = room_of(h, a.first_row());
  if (layout == spmv_layout::room && !room_fits<Index>(s.room, n))
    throw std::invalid_argument("dist::device_spmv: no room layout for rank " + std::to_string(comm.rank()) + " (" +
                                std::to_string(n) + " rows, room " + std::to_string(s.room.before) + " + " +
                                std::to_string(s.room.after) + ")");
  s.in_room = layout == spmv_layout::room || (layout == spmv_layout::automatic && room_pays<Index>(s.room, n));
  if (s.in_room) build_room_layout(s, a, algorithm, nccl);
  else build_copy_layout(s, a, algorithm);
  s.send_in_place = nccl && parts_are_ranges(h.send_local, h.send_offsets);
  s.send_index = gpukit::device_buffer<std::int64_t>(h.send_local);
  s.send = gpukit::device_buffer<Value>(static_cast<std::int64_t>(h.send_local.size()));
  GPUKIT_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&s.h_send), sizeof(Value) * (h.send_local.size() + 1)));
  GPUKIT_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&s.h_recv), sizeof(Value) * static_cast<std::size_t>(ghosts + 1)));
  GPUKIT_CUDA_CHECK(cudaEventCreateWithFlags(&s.packed, cudaEventDisableTiming));
  GPUKIT_CUDA_CHECK(cudaEventCreateWithFlags(&s.arrived, cudaEventDisableTiming));
  s.requests.reserve(h.recv_ranks.size() + h.send_ranks.size());
}

template <class Value, class Index>
device_spmv<Value, Index>::~device_spmv() = default;

// Where the ghosts from neighbour k land: the copy layout's x_ext past the owned entries; the room layout's
// room around x_own (one range per neighbour), or the staging buffer `ghosts` to scatter from.
template <class Value, class Index>
Value* device_spmv<Value, Index>::ghosts_of(std::size_t k, Value* x_own) const {
  const halo_plan& h = a_->halo();
  const state& s = *s_;
  const auto off = static_cast<std::size_t>(h.recv_offsets[k]);
  if (!s.in_room) return const_cast<Value*>(s.x_ext.data()) + h.local_rows + h.recv_offsets[k];
  if (s.recv_in_place && comm_->transport() == device_transport::nccl)
    return x_own + (h.ghost_global[off] - a_->first_row());
  return const_cast<Value*>(s.ghosts.data()) + h.recv_offsets[k];
}

// The halo's NCCL send/receive group on the communicator's NCCL stream: the packed send buffer to each
// neighbour, the ghosts to ghosts_of().
template <class Value, class Index>
void device_spmv<Value, Index>::exchange_halo_nccl(const Value* x_send, Value* x_own) {
#if defined(GPUKIT_HAVE_NCCL)
  const halo_plan& h = a_->halo();
  state& s = *s_;
  const auto comm_stream = static_cast<cudaStream_t>(comm_->nccl_stream());
  auto* c = static_cast<ncclComm_t>(comm_->nccl_comm());
  const ncclDataType_t type = sizeof(Value) == 4 ? ncclFloat32 : ncclFloat64;
  auto ok = [](ncclResult_t r, const char* what) {
    if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
  };
  ok(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t k = 0; k < h.recv_ranks.size(); ++k)
    ok(ncclRecv(ghosts_of(k, x_own), static_cast<std::size_t>(h.recv_offsets[k + 1] - h.recv_offsets[k]), type,
                h.recv_ranks[k], c, comm_stream),
       "ncclRecv");
  for (std::size_t k = 0; k < h.send_ranks.size(); ++k)
    ok(ncclSend(s.send_in_place ? x_send + h.send_local[static_cast<std::size_t>(h.send_offsets[k])]
                                : s.send.data() + h.send_offsets[k],
                static_cast<std::size_t>(h.send_offsets[k + 1] - h.send_offsets[k]), type, h.send_ranks[k], c, comm_stream),
       "ncclSend");
  ok(ncclGroupEnd(), "ncclGroupEnd");
#else
  (void)x_send;
  (void)x_own;
#endif
}

template <class Value, class Index>
void device_spmv<Value, Index>::connect(reduce::stream_t stream_in) {
  if (comm_->transport() != device_transport::nccl) return;
  state& s = *s_;
  const auto stream = static_cast<cudaStream_t>(stream_in);
  if (s.send.size() > 0)
    GPUKIT_CUDA_CHECK(cudaMemsetAsync(s.send.data(), 0, sizeof(Value) * static_cast<std::size_t>(s.send.size()), stream));
  const auto comm_stream = static_cast<cudaStream_t>(comm_->nccl_stream());
  Value* x = s.in_room ? s.x_room.data() + s.room.before : s.x_ext.data();  // defined values (zeros) to send
  if (!s.in_room && s.x_ext.size() > 0)
    GPUKIT_CUDA_CHECK(cudaMemsetAsync(s.x_ext.data(), 0, s.x_ext.bytes(), stream));
  GPUKIT_CUDA_CHECK(cudaEventRecord(s.packed, stream));
  GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(comm_stream, s.packed, 0));
  exchange_halo_nccl(x, s.in_room ? x : nullptr);
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(comm_stream));
}

// Packs what the neighbours need from x_own (gathered on the device; host staging: copied to pinned memory;
// NCCL sends it from x where each neighbour's part is one range) and records `packed` after it on `stream`.
template <class Value, class Index>
void device_spmv<Value, Index>::pack(const Value* x_own, cudaStream_t stream) {
  const halo_plan& h = a_->halo();
  state& s = *s_;
  const auto sends = static_cast<std::int64_t>(h.send_local.size());
  if (!s.send_in_place) detail::gather(x_own, s.send_index.data(), sends, s.send.data(), stream);
  if (comm_->transport() != device_transport::nccl && sends > 0)
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(s.h_send, s.send.data(), sizeof(Value) * static_cast<std::size_t>(sends),
                                      cudaMemcpyDeviceToHost, stream));
  GPUKIT_CUDA_CHECK(cudaEventRecord(s.packed, stream));
}

// The halo after pack(): what follows on `stream` sees the ghosts at ghosts_of() (the room layout: in x's
// room, scattered there from the staging buffer where they do not arrive in place).
template <class Value, class Index>
void device_spmv<Value, Index>::exchange(const Value* x_send, Value* x_own, cudaStream_t stream) {
  const halo_plan& h = a_->halo();
  state& s = *s_;
  const auto ghosts = static_cast<std::int64_t>(h.ghost_global.size());
  const bool nccl = comm_->transport() == device_transport::nccl;
#if defined(GPUKIT_HAVE_NCCL)
  if (nccl) {
    // The communicator's NCCL stream: behind any all-reduce issued before (dist::device_allreduce), in
    // the same order on every rank.
    const auto comm_stream = static_cast<cudaStream_t>(comm_->nccl_stream());
    GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(comm_stream, s.packed, 0));
    exchange_halo_nccl(x_send, x_own);
    GPUKIT_CUDA_CHECK(cudaEventRecord(s.arrived, comm_stream));
    GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(stream, s.arrived, 0));
  }
#endif
  if (!nccl) {
    GPUKIT_CUDA_CHECK(cudaEventSynchronize(s.packed));  // the send buffer is on the host
    const MPI_Datatype type = detail::mpi_type<Value>();
    std::vector<MPI_Request>& requests = s.requests;
    requests.clear();  // capacity reserved at construction
    for (std::size_t k = 0; k < h.recv_ranks.size(); ++k) {
      requests.emplace_back();
      detail::mpi_check(MPI_Irecv(s.h_recv + h.recv_offsets[k], detail::mpi_count(h.recv_offsets[k + 1] - h.recv_offsets[k], "dist halo"),
                                  type, h.recv_ranks[k], 22, comm_->mpi(), &requests.back()),
                        "MPI_Irecv");
    }
    for (std::size_t k = 0; k < h.send_ranks.size(); ++k) {
      requests.emplace_back();
      detail::mpi_check(MPI_Isend(s.h_send + h.send_offsets[k], detail::mpi_count(h.send_offsets[k + 1] - h.send_offsets[k], "dist halo"),
                                  type, h.send_ranks[k], 22, comm_->mpi(), &requests.back()),
                        "MPI_Isend");
    }
    detail::mpi_check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    if (ghosts > 0)
      GPUKIT_CUDA_CHECK(cudaMemcpyAsync(ghosts_of(0, x_own), s.h_recv, sizeof(Value) * static_cast<std::size_t>(ghosts),
                                        cudaMemcpyHostToDevice, stream));
  }
  if (s.in_room && s.ghost_at.size() > 0) detail::scatter(s.ghosts.data(), s.ghost_at.data(), ghosts, x_own, stream);
}

template <class Value, class Index>
void device_spmv<Value, Index>::apply(const Value* d_x_local, Value* d_y_local, reduce::stream_t stream_in) {
  const cudaStream_t stream = stream_in;
  state& s = *s_;
  const std::int64_t n = a_->local_rows();
  if (s.in_room && s.room.before + s.room.after == 0) {  // no ghosts: x is only read
    run_in_room(const_cast<Value*>(d_x_local), d_y_local, nullptr, nullptr, stream);
    return;
  }
  if (s.in_room) {  // x has no room: copied into the spmv's own vector with room
    Value* x = s.x_room.data() + s.room.before;
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(x, d_x_local, sizeof(Value) * static_cast<std::size_t>(n), cudaMemcpyDeviceToDevice,
                                      stream));
    run_in_room(x, d_y_local, nullptr, nullptr, stream);
    return;
  }
  // 1. Pack what the neighbours need, and start the boundary rows' x with the owned entries.
  pack(d_x_local, stream);
  if (n > 0)
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(s.x_ext.data(), d_x_local, sizeof(Value) * static_cast<std::size_t>(n),
                                      cudaMemcpyDeviceToDevice, stream));
  // 2. The interior rows, queued behind the packing, run while the halo travels.
  if (s.interior_plan) sparse::spmv(*s.interior_plan, Value(1), d_x_local, Value(0), s.y_interior.data(), stream);
  // 3. The halo.
  exchange(d_x_local, nullptr, stream);
  // 4. The boundary rows, then both blocks' results into y.
  if (s.boundary_plan) sparse::spmv(*s.boundary_plan, Value(1), s.x_ext.data(), Value(0), s.y_boundary.data(), stream);
  detail::scatter(s.y_interior.data(), s.interior_rows.data(), s.y_interior.size(), d_y_local, stream);
  detail::scatter(s.y_boundary.data(), s.boundary_rows.data(), s.y_boundary.size(), d_y_local, stream);
  // The staging buffers are reused by the next apply: the H2D copy must be done before they change.
  if (comm_->transport() != device_transport::nccl) GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class Value, class Index>
sparse::x_halo device_spmv<Value, Index>::input_room() const {
  return s_->in_room ? s_->room : sparse::x_halo{};
}

template <class Value, class Index>
bool device_spmv<Value, Index>::dots_fused() const {
  if (!s_->in_room) return false;
  for (const auto& b : s_->blocks)
    if (b.plan && !b.plan->dots_fused()) return false;
  return true;
}

template <class Value, class Index>
void device_spmv<Value, Index>::check_room(const char* what) const {
  if (!s_->in_room)
    throw std::logic_error(std::string("dist::device_spmv::") + what + ": this rank's rows have no room layout "
                           "(input_room() is empty): use apply()");
}

template <class Value, class Index>
void device_spmv<Value, Index>::apply_in_room(Value* d_x_local, Value* d_y_local, reduce::stream_t stream) {
  check_room("apply_in_room");
  run_in_room(d_x_local, d_y_local, nullptr, nullptr, stream);
}

template <class Value, class Index>
void device_spmv<Value, Index>::apply_in_room_with_dots(Value* d_x_local, Value* d_y_local, const Value* d_w_local,
                                                        double* d_sums, reduce::stream_t stream) {
  check_room("apply_in_room_with_dots");
  if (d_sums == nullptr) throw std::invalid_argument("dist::device_spmv::apply_in_room_with_dots: no sums");
  run_in_room(d_x_local, d_y_local, d_w_local, d_sums, stream);
}

// The room layout's product: pack, the interior block while the halo travels (into x's room), then the
// blocks before and after it; each block writes its rows of y in place. With d_sums, each block's
// sparse::spmv_dots takes its rows' three sums, the first block writing them and the others adding.
template <class Value, class Index>
void device_spmv<Value, Index>::run_in_room(Value* x, Value* y, const Value* w, double* sums, cudaStream_t stream) {
  state& s = *s_;
  pack(x, stream);
  bool first = true;
  auto run = [&](const room_block<Value, Index>& b) {
    if (!b.plan) return;
    if (!sums) {
      sparse::spmv(*b.plan, Value(1), x + b.first, Value(0), y + b.first, stream);
      return;
    }
    sparse::spmv_dots(*b.plan, x + b.first, y + b.first, w + b.first, sums, stream, sparse::dots_summation::fast,
                      first ? sparse::dots_store::overwrite : sparse::dots_store::accumulate);
    first = false;
  };
  run(s.blocks[0]);
  exchange(x, x, stream);
  run(s.blocks[1]);
  run(s.blocks[2]);
  if (sums && first) GPUKIT_CUDA_CHECK(cudaMemsetAsync(sums, 0, 3 * sizeof(double), stream));  // no rows
  if (comm_->transport() != device_transport::nccl) GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template class device_spmv<float, std::int32_t>;
template class device_spmv<float, std::int64_t>;
template class device_spmv<double, std::int32_t>;
template class device_spmv<double, std::int64_t>;

}  // namespace dist
