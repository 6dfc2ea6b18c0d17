// dist reductions on DEVICE data: libreduce's CUDA entry points for the local pass (its result left in
// device memory), then one collective through the communicator's transport: NCCL on the stream, or a
// copy to the host and MPI (host staging). Host code only: the kernels are libreduce's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "dist/reductions.hpp"
#include "device_scratch.hpp"
#include "dist_check.hpp"
#include "gpukit/cuda_check.hpp"
#include "reduce/reduce.hpp"

#if defined(GPUKIT_HAVE_NCCL)
#include <nccl.h>
#endif

namespace dist {
namespace {

void require_device(const communicator& comm, const char* what) {
  if (comm.transport() == device_transport::none)
    throw std::logic_error(std::string(what) + ": device data on a communicator without a device transport "
                                               "(call enable_device() first)");
}

#if defined(GPUKIT_HAVE_NCCL)
template <class T>
ncclDataType_t nccl_type() {
  if constexpr (std::is_same_v<T, float>) return ncclFloat32;
  else if constexpr (std::is_same_v<T, double>) return ncclFloat64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return ncclInt32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return ncclInt64;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return ncclUint32;
  else return ncclUint64;
}
void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}
#endif

/// `count` elements of device scratch from the stream-ordered pool (no cudaMalloc on a solver's path).
template <class T>
class pool_slots {
public:
  pool_slots(std::size_t count, cudaStream_t stream) : stream_(stream) {
    GPUKIT_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&data_), count * sizeof(T), stream));
  }
  ~pool_slots() { (void)cudaFreeAsync(data_, stream_); }
  pool_slots(const pool_slots&) = delete;
  pool_slots& operator=(const pool_slots&) = delete;
  T* data() const { return data_; }

private:
  T* data_ = nullptr;
  cudaStream_t stream_;
};

/// host_out[0..count) = the element-wise sum over ranks of d_buf[0..count) (device). NCCL reduces in
/// place on the stream; host staging copies to the host first. Synchronizes the stream.
template <class T>
void allreduce_sum(const communicator& comm, T* d_buf, int count, T* host_out, cudaStream_t stream) {
#if defined(GPUKIT_HAVE_NCCL)
  if (comm.transport() == device_transport::nccl) {
    nccl_check(ncclAllReduce(d_buf, d_buf, static_cast<std::size_t>(count), nccl_type<T>(), ncclSum,
                             static_cast<ncclComm_t>(comm.nccl_comm()), stream),
               "ncclAllReduce");
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(host_out, d_buf, sizeof(T) * static_cast<std::size_t>(count),
                                      cudaMemcpyDeviceToHost, stream));
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
#endif
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(host_out, d_buf, sizeof(T) * static_cast<std::size_t>(count),
                                    cudaMemcpyDeviceToHost, stream));
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  detail::mpi_check(MPI_Allreduce(MPI_IN_PLACE, host_out, count, detail::mpi_type<T>(), MPI_SUM, comm.mpi()),
                    "MPI_Allreduce");
}

/// Every rank's d_one[0] (device), in rank order, on the host. Synchronizes the stream.
template <class T>
std::vector<T> allgather_one(const communicator& comm, T* d_one, cudaStream_t stream) {
  std::vector<T> all(static_cast<std::size_t>(comm.size()));
#if defined(GPUKIT_HAVE_NCCL)
  if (comm.transport() == device_transport::nccl) {
    pool_slots<T> d_all(all.size(), stream);
    nccl_check(ncclAllGather(d_one, d_all.data(), 1, nccl_type<T>(), static_cast<ncclComm_t>(comm.nccl_comm()), stream),
               "ncclAllGather");
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(all.data(), d_all.data(), sizeof(T) * all.size(), cudaMemcpyDeviceToHost, stream));
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    return all;
  }
#endif
  T mine{};
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(&mine, d_one, sizeof(T), cudaMemcpyDeviceToHost, stream));
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  detail::mpi_check(MPI_Allgather(&mine, 1, detail::mpi_type<T>(), all.data(), 1, detail::mpi_type<T>(), comm.mpi()),
                    "MPI_Allgather");
  return all;
}

/// One local libreduce pass writing its result to the communicator's device slot with its workspace
/// (launch(d_slot, ws): no allocation), then the sum over ranks.
template <class T, class Launch>
T summed(const communicator& comm, cudaStream_t stream, const char* what, Launch&& launch) {
  require_device(comm, what);
  auto& scratch = comm.scratch();
  T* d = scratch.slot_as<T>();
  launch(d, scratch.ws);
  T out{};
  allreduce_sum(comm, d, 1, &out, stream);
  return out;
}
/// One local libreduce pass into the communicator's slot, then every rank's result on the host, in rank order.
template <class T, class Launch>
std::vector<T> gathered(const communicator& comm, cudaStream_t stream, const char* what, Launch&& launch) {
  require_device(comm, what);
  auto& scratch = comm.scratch();
  T* d = scratch.slot_as<T>();
  launch(d, scratch.ws);
  return allgather_one(comm, d, stream);
}

}  // namespace

template <class T>
T sum(const communicator& comm, const T* d_in, std::int64_t n, stream_t stream) {
  return summed<T>(comm, stream, "dist::sum",
                   [&](T* d, reduce::workspace& ws) { reduce::sum(d_in, n, d, ws, stream); });
}
template <class T>
T min(const communicator& comm, const T* d_in, std::int64_t n, stream_t stream) {
  const auto all = gathered<T>(comm, stream, "dist::min",
                               [&](T* d, reduce::workspace& ws) { reduce::min(d_in, n, d, ws, stream); });
  return reduce::reference::min(all.data(), static_cast<std::int64_t>(all.size()));
}
template <class T>
T max(const communicator& comm, const T* d_in, std::int64_t n, stream_t stream) {
  const auto all = gathered<T>(comm, stream, "dist::max",
                               [&](T* d, reduce::workspace& ws) { reduce::max(d_in, n, d, ws, stream); });
  return reduce::reference::max(all.data(), static_cast<std::int64_t>(all.size()));
}
template <class T>
T dot(const communicator& comm, const T* d_x, const T* d_y, std::int64_t n, stream_t stream) {
  return summed<T>(comm, stream, "dist::dot",
                   [&](T* d, reduce::workspace& ws) { reduce::dot(d_x, d_y, n, d, ws, stream); });
}
template <class T>
T norm2(const communicator& comm, const T* d_in, std::int64_t n, stream_t stream) {
  return detail::combine_norms(gathered<T>(
      comm, stream, "dist::norm2", [&](T* d, reduce::workspace& ws) { reduce::norm2(d_in, n, d, ws, stream); }));
}
template <class T>
void multi_dot(const communicator& comm, const T* const* d_x, const T* const* d_y, int m, std::int64_t n, T* out,
               stream_t stream) {
  require_device(comm, "dist::multi_dot");
  if (m < 0) throw std::invalid_argument("dist::multi_dot: negative count " + std::to_string(m));
  if (m == 0) return;
  pool_slots<T> d(static_cast<std::size_t>(m), stream);
  // The local dots in one pass over the vectors per reduce::multi_dot_max of them (one launch for the
  // solvers' at most 6), then the one all-reduce of the m partials.
  for (int j = 0; j < m; j += reduce::multi_dot_max)
    reduce::multi_dot(d_x + j, d_y + j, std::min(m - j, reduce::multi_dot_max), n, d.data() + j, stream);
  allreduce_sum(comm, d.data(), m, out, stream);
}
template <class T>
reduce::exact_accumulator<T> reproducible_sum_state(const communicator& comm, const T* d_in, std::int64_t n,
                                                    stream_t stream) {
  require_device(comm, "dist::reproducible_sum");
  using state = reduce::exact_accumulator<T>;
  pool_slots<state> d(1, stream);
  reduce::reproducible_sum_state(d_in, n, d.data(), stream);
  state out;
  // Normalized states: the int64 word sums are exact for P <= 2^31 (reduce/exact_accumulator.hpp).
  allreduce_sum(comm, reinterpret_cast<std::int64_t*>(d.data()), state::words, reinterpret_cast<std::int64_t*>(&out),
                stream);
  reduce::normalize(out);
  return out;
}
template <class T>
T reproducible_sum(const communicator& comm, const T* d_in, std::int64_t n, stream_t stream) {
  return reduce::round_exact(reproducible_sum_state(comm, d_in, n, stream));
}

// ---- device_allreduce -------------------------------------------------------------------------------------

struct device_allreduce::state {
  std::size_t capacity = 0;
  void* host = nullptr;  // pinned: host staging's copy of the array
  void* d_buf = nullptr;  // the array in flight (host staging copies it back at finish)
  std::size_t bytes = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  cudaEvent_t ready = nullptr, done = nullptr;
  bool in_flight = false;
  ~state() {
    if (request != MPI_REQUEST_NULL) (void)MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (host) (void)cudaFreeHost(host);
    if (ready) (void)cudaEventDestroy(ready);
    if (done) (void)cudaEventDestroy(done);
  }
};

device_allreduce::device_allreduce(const communicator& comm, std::size_t capacity)
    : comm_(&comm), s_(std::make_unique<state>()) {
  require_device(comm, "dist::device_allreduce");
  s_->capacity = capacity;
  GPUKIT_CUDA_CHECK(cudaMallocHost(&s_->host, capacity + 8));
  if (comm.transport() == device_transport::nccl) {
    GPUKIT_CUDA_CHECK(cudaEventCreateWithFlags(&s_->ready, cudaEventDisableTiming));
    GPUKIT_CUDA_CHECK(cudaEventCreateWithFlags(&s_->done, cudaEventDisableTiming));
  }
}

device_allreduce::~device_allreduce() = default;

namespace {
void check_fits(const char* call, bool in_flight, int count, std::size_t bytes, std::size_t capacity) {
  if (in_flight) throw std::logic_error(std::string("dist::device_allreduce: ") + call + " while one is in flight");
  if (count < 0 || bytes > capacity)
    throw std::invalid_argument("dist::device_allreduce: " + std::to_string(count) + " elements, capacity " +
                                std::to_string(capacity) + " bytes");
}
}  // namespace

template <class T>
void device_allreduce::start(T* d_buf, int count, stream_t stream_in) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, std::int64_t>, "double sums or exact states");
  state& s = *s_;
  s.bytes = sizeof(T) * static_cast<std::size_t>(count);
  check_fits("start()", s.in_flight, count, s.bytes, s.capacity);
  const auto stream = static_cast<cudaStream_t>(stream_in);
  s.d_buf = d_buf;
  s.in_flight = true;
#if defined(GPUKIT_HAVE_NCCL)
  if (comm_->transport() == device_transport::nccl) {
    // The communicator's NCCL stream, which device_spmv's halo also uses: one order on every rank.
    const auto side = static_cast<cudaStream_t>(comm_->nccl_stream());
    GPUKIT_CUDA_CHECK(cudaEventRecord(s.ready, stream));
    GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(side, s.ready, 0));
    nccl_check(ncclAllReduce(d_buf, d_buf, static_cast<std::size_t>(count), nccl_type<T>(), ncclSum,
                             static_cast<ncclComm_t>(comm_->nccl_comm()), side),
               "ncclAllReduce");
    GPUKIT_CUDA_CHECK(cudaEventRecord(s.done, side));
    return;
  }
#endif
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(s.host, d_buf, s.bytes, cudaMemcpyDeviceToHost, stream));
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  detail::mpi_check(MPI_Iallreduce(MPI_IN_PLACE, s.host, count, detail::mpi_type<T>(), MPI_SUM, comm_->mpi(), &s.request),
                    "MPI_Iallreduce");
}

void device_allreduce::finish(stream_t stream_in) {
  state& s = *s_;
  if (!s.in_flight) throw std::logic_error("dist::device_allreduce: finish() without start()");
  s.in_flight = false;
  const auto stream = static_cast<cudaStream_t>(stream_in);
  if (comm_->transport() == device_transport::nccl) {
    GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(stream, s.done, 0));
    return;
  }
  detail::mpi_check(MPI_Wait(&s.request, MPI_STATUS_IGNORE), "MPI_Wait");
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(s.d_buf, s.host, s.bytes, cudaMemcpyHostToDevice, stream));
}

template <class T>
void device_allreduce::run(T* d_buf, int count, stream_t stream_in) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, std::int64_t>, "double sums or exact states");
#if defined(GPUKIT_HAVE_NCCL)
  if (comm_->transport() == device_transport::nccl) {
    check_fits("run()", s_->in_flight, count, sizeof(T) * static_cast<std::size_t>(count), s_->capacity);
    nccl_check(ncclAllReduce(d_buf, d_buf, static_cast<std::size_t>(count), nccl_type<T>(), ncclSum,
                             static_cast<ncclComm_t>(comm_->nccl_comm()), static_cast<cudaStream_t>(stream_in)),
               "ncclAllReduce");
    return;
  }
#endif
  start(d_buf, count, stream_in);
  finish(stream_in);
}

void device_allreduce::connect(stream_t stream_in) {
  if (comm_->transport() != device_transport::nccl) return;
  const auto stream = static_cast<cudaStream_t>(stream_in);
  pool_slots<double> one(1, stream);  // freed on `stream`, after finish()'s wait
  GPUKIT_CUDA_CHECK(cudaMemsetAsync(one.data(), 0, sizeof(double), stream));
  start(one.data(), 1, stream);  // throws std::logic_error while another is in flight
  finish(stream);
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template void device_allreduce::start<double>(double*, int, stream_t);
template void device_allreduce::start<std::int64_t>(std::int64_t*, int, stream_t);
template void device_allreduce::run<double>(double*, int, stream_t);
template void device_allreduce::run<std::int64_t>(std::int64_t*, int, stream_t);

#define DIST_DEVICE_ALL(T)                                                                          \
  template T sum(const communicator&, const T*, std::int64_t, stream_t);                            \
  template T min(const communicator&, const T*, std::int64_t, stream_t);                            \
  template T max(const communicator&, const T*, std::int64_t, stream_t);                            \
  template T dot(const communicator&, const T*, const T*, std::int64_t, stream_t);                  \
  template void multi_dot(const communicator&, const T* const*, const T* const*, int, std::int64_t, T*, stream_t);
DIST_DEVICE_ALL(std::int32_t)
DIST_DEVICE_ALL(std::int64_t)
DIST_DEVICE_ALL(std::uint32_t)
DIST_DEVICE_ALL(std::uint64_t)
DIST_DEVICE_ALL(float)
DIST_DEVICE_ALL(double)
#define DIST_DEVICE_FLOAT(T)                                                                                       \
  template T norm2(const communicator&, const T*, std::int64_t, stream_t);                                         \
  template T reproducible_sum(const communicator&, const T*, std::int64_t, stream_t);                              \
  template reduce::exact_accumulator<T> reproducible_sum_state(const communicator&, const T*, std::int64_t, stream_t);
DIST_DEVICE_FLOAT(float)
DIST_DEVICE_FLOAT(double)

}  // namespace dist
