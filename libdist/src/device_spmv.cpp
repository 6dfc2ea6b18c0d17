// dist::device_spmv: the GPU SpMV of a distributed_csr (libsparse plans for the interior and boundary
// rows, the halo through NCCL or MPI with host staging, overlapped with the interior rows).
#include <cuda_runtime.h>

#include <optional>
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

template <class Value, class Index>
struct device_spmv<Value, Index>::state {
  sparse::device_csr<Value, Index> interior, boundary;
  std::optional<sparse::spmv_plan<Value, Index>> interior_plan, boundary_plan;  // none for an empty block
  gpukit::device_buffer<std::int64_t> send_index, interior_rows, boundary_rows;
  gpukit::device_buffer<Value> send, x_ext, y_interior, y_boundary;
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

template <class Value, class Index>
device_spmv<Value, Index>::device_spmv(const communicator& comm, const distributed_csr<Value, Index>& a,
                                       sparse::spmv_algorithm algorithm)
    : comm_(&comm), a_(&a), s_(std::make_unique<state>()) {
  if (comm.transport() == device_transport::none)
    throw std::logic_error("dist::device_spmv: the communicator has no device transport (call enable_device())");
  const halo_plan& h = a.halo();
  state& s = *s_;
  s.interior = sparse::device_csr<Value, Index>(a.interior());
  s.boundary = sparse::device_csr<Value, Index>(a.boundary());
  if (a.interior().rows() > 0) s.interior_plan.emplace(s.interior, algorithm);
  if (a.boundary().rows() > 0) s.boundary_plan.emplace(s.boundary, algorithm);
  s.send_index = gpukit::device_buffer<std::int64_t>(h.send_local);
  s.interior_rows = gpukit::device_buffer<std::int64_t>(a.interior_rows());
  s.boundary_rows = gpukit::device_buffer<std::int64_t>(a.boundary_rows());
  const auto ghosts = static_cast<std::int64_t>(h.ghost_global.size());
  s.send = gpukit::device_buffer<Value>(static_cast<std::int64_t>(h.send_local.size()));
  s.x_ext = gpukit::device_buffer<Value>(h.local_rows + ghosts);
  s.y_interior = gpukit::device_buffer<Value>(static_cast<std::int64_t>(a.interior_rows().size()));
  s.y_boundary = gpukit::device_buffer<Value>(static_cast<std::int64_t>(a.boundary_rows().size()));
  GPUKIT_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&s.h_send), sizeof(Value) * (h.send_local.size() + 1)));
  GPUKIT_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&s.h_recv), sizeof(Value) * static_cast<std::size_t>(ghosts + 1)));
  GPUKIT_CUDA_CHECK(cudaEventCreateWithFlags(&s.packed, cudaEventDisableTiming));
  GPUKIT_CUDA_CHECK(cudaEventCreateWithFlags(&s.arrived, cudaEventDisableTiming));
  s.requests.reserve(h.recv_ranks.size() + h.send_ranks.size());
}

template <class Value, class Index>
device_spmv<Value, Index>::~device_spmv() = default;

// The halo's NCCL send/receive group on the communicator's NCCL stream: the packed send buffer to each
// neighbour, the ghosts into x_ext past the owned entries.
template <class Value, class Index>
void device_spmv<Value, Index>::exchange_halo_nccl() {
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
    ok(ncclRecv(s.x_ext.data() + h.local_rows + h.recv_offsets[k],
                static_cast<std::size_t>(h.recv_offsets[k + 1] - h.recv_offsets[k]), type, h.recv_ranks[k], c, comm_stream),
       "ncclRecv");
  for (std::size_t k = 0; k < h.send_ranks.size(); ++k)
    ok(ncclSend(s.send.data() + h.send_offsets[k], static_cast<std::size_t>(h.send_offsets[k + 1] - h.send_offsets[k]),
                type, h.send_ranks[k], c, comm_stream),
       "ncclSend");
  ok(ncclGroupEnd(), "ncclGroupEnd");
#endif
}

template <class Value, class Index>
void device_spmv<Value, Index>::connect(reduce::stream_t stream_in) {
  if (comm_->transport() != device_transport::nccl) return;
  state& s = *s_;
  const auto stream = static_cast<cudaStream_t>(stream_in);
  if (s.send.size() > 0)
    GPUKIT_CUDA_CHECK(cudaMemsetAsync(s.send.data(), 0, sizeof(Value) * static_cast<std::size_t>(s.send.size()), stream));
  GPUKIT_CUDA_CHECK(cudaEventRecord(s.packed, stream));
  const auto comm_stream = static_cast<cudaStream_t>(comm_->nccl_stream());
  GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(comm_stream, s.packed, 0));
  exchange_halo_nccl();
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(comm_stream));
}

template <class Value, class Index>
void device_spmv<Value, Index>::apply(const Value* d_x_local, Value* d_y_local, reduce::stream_t stream_in) {
  const cudaStream_t stream = stream_in;
  const halo_plan& h = a_->halo();
  state& s = *s_;
  const std::int64_t n = h.local_rows;
  const auto sends = static_cast<std::int64_t>(h.send_local.size());
  const auto ghosts = static_cast<std::int64_t>(h.ghost_global.size());
  // 1. Pack what the neighbours need, and start the boundary rows' x with the owned entries.
  detail::gather(d_x_local, s.send_index.data(), sends, s.send.data(), stream);
  if (n > 0)
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(s.x_ext.data(), d_x_local, sizeof(Value) * static_cast<std::size_t>(n),
                                      cudaMemcpyDeviceToDevice, stream));
  const bool nccl = comm_->transport() == device_transport::nccl;
  if (!nccl && sends > 0)
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(s.h_send, s.send.data(), sizeof(Value) * static_cast<std::size_t>(sends),
                                      cudaMemcpyDeviceToHost, stream));
  GPUKIT_CUDA_CHECK(cudaEventRecord(s.packed, stream));
  // 2. The interior rows, queued behind the packing, run while the halo travels.
  if (s.interior_plan) sparse::spmv(*s.interior_plan, Value(1), d_x_local, Value(0), s.y_interior.data(), stream);
  // 3. The halo.
#if defined(GPUKIT_HAVE_NCCL)
  if (nccl) {
    // The communicator's NCCL stream: behind any all-reduce issued before (dist::device_allreduce), in
    // the same order on every rank.
    const auto comm_stream = static_cast<cudaStream_t>(comm_->nccl_stream());
    GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(comm_stream, s.packed, 0));
    exchange_halo_nccl();
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
      GPUKIT_CUDA_CHECK(cudaMemcpyAsync(s.x_ext.data() + n, s.h_recv, sizeof(Value) * static_cast<std::size_t>(ghosts),
                                        cudaMemcpyHostToDevice, stream));
  }
  // 4. The boundary rows, then both blocks' results into y.
  if (s.boundary_plan) sparse::spmv(*s.boundary_plan, Value(1), s.x_ext.data(), Value(0), s.y_boundary.data(), stream);
  detail::scatter(s.y_interior.data(), s.interior_rows.data(), s.y_interior.size(), d_y_local, stream);
  detail::scatter(s.y_boundary.data(), s.boundary_rows.data(), s.y_boundary.size(), d_y_local, stream);
  // The staging buffers are reused by the next apply: the H2D copy must be done before they change.
  if (!nccl) GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template class device_spmv<float, std::int32_t>;
template class device_spmv<float, std::int64_t>;
template class device_spmv<double, std::int32_t>;
template class device_spmv<double, std::int64_t>;

}  // namespace dist
