// dist::communicator: MPI bookkeeping, the device transport choice (NCCL or MPI with host staging) and
// the all-ranks failure agreement.
#include "dist/communicator.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "device_scratch.hpp"
#include "dist_check.hpp"
#include "gpukit/cuda_check.hpp"
#include "sparse/csr.hpp"

#if defined(GPUKIT_HAVE_NCCL)
#include <nccl.h>
#endif

namespace dist {

int launched_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MV2_COMM_WORLD_SIZE"})
    if (const char* v = std::getenv(name)) return std::max(1, std::atoi(v));
  return 1;
}

const char* to_string(device_transport t) {
  switch (t) {
    case device_transport::none: return "none";
    case device_transport::nccl: return "nccl";
    case device_transport::mpi_host_staging: return "mpi-host-staging";
  }
  return "?";
}

bool built_with_nccl() {
#if defined(GPUKIT_HAVE_NCCL)
  return true;
#else
  return false;
#endif
}

environment::environment(int& argc, char**& argv) {
  int provided = 0;
  detail::mpi_check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
}
environment::~environment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

struct communicator::nccl_state {
#if defined(GPUKIT_HAVE_NCCL)
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;  // every NCCL operation of libdist on this communicator: see nccl_stream()
  ~nccl_state() {
    if (comm) ncclCommDestroy(comm);
    if (stream) (void)cudaStreamDestroy(stream);
  }
#endif
};

communicator::communicator(MPI_Comm comm) : comm_(comm) {
  detail::mpi_check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  detail::mpi_check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}
communicator::~communicator() = default;
communicator::communicator(communicator&&) noexcept = default;
communicator& communicator::operator=(communicator&&) noexcept = default;

void* communicator::nccl_comm() const noexcept {
#if defined(GPUKIT_HAVE_NCCL)
  return nccl_ ? static_cast<void*>(nccl_->comm) : nullptr;
#else
  return nullptr;
#endif
}

void* communicator::nccl_stream() const noexcept {
#if defined(GPUKIT_HAVE_NCCL)
  return nccl_ ? static_cast<void*>(nccl_->stream) : nullptr;
#else
  return nullptr;
#endif
}

int distinct_gpus(const communicator& comm) {
  // A rank without a usable device (no GPU, a driver too old) fails here, before any device work: agreed,
  // so every rank throws the same rank_failure instead of one line per rank.
  cudaDeviceProp prop{};
  std::string error;
  try {
    int device = 0;
    GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
    GPUKIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  } catch (const std::exception& e) {
    error = e.what();
  }
  agree(comm, error);
  std::vector<char> all(static_cast<std::size_t>(comm.size()) * sizeof prop.uuid.bytes);
  detail::mpi_check(MPI_Allgather(prop.uuid.bytes, sizeof prop.uuid.bytes, MPI_BYTE, all.data(),
                                  sizeof prop.uuid.bytes, MPI_BYTE, comm.mpi()),
                    "MPI_Allgather");
  std::vector<std::string> ids;
  for (int r = 0; r < comm.size(); ++r)
    ids.emplace_back(all.data() + static_cast<std::size_t>(r) * sizeof prop.uuid.bytes, sizeof prop.uuid.bytes);
  std::sort(ids.begin(), ids.end());
  return static_cast<int>(std::unique(ids.begin(), ids.end()) - ids.begin());
}

communicator::device_scratch& communicator::scratch() const {
  if (!scratch_)
    throw std::logic_error("dist::communicator::scratch: no device transport (call enable_device() first)");
  return *scratch_;
}

void communicator::enable_device(bool prefer_nccl) {
  const bool shared = distinct_gpus(*this) < size_;  // collective: every rank takes this branch alike
  scratch_ = std::make_unique<device_scratch>();
  if (!prefer_nccl) {
    transport_ = device_transport::mpi_host_staging;
    reason_ = "MPI with host staging (NCCL not requested)";
    return;
  }
  if (!built_with_nccl()) {
    transport_ = device_transport::mpi_host_staging;
    reason_ = "MPI with host staging (built without NCCL)";
    return;
  }
  if (shared) {
    transport_ = device_transport::mpi_host_staging;
    reason_ = "MPI with host staging (ranks share a GPU, which NCCL does not allow)";
    return;
  }
#if defined(GPUKIT_HAVE_NCCL)
  ncclUniqueId id;
  std::string error;
  if (rank_ == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) error = std::string("ncclGetUniqueId: ") + ncclGetErrorString(r);
  }
  agree(*this, error);
  detail::mpi_check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm_), "MPI_Bcast");
  auto state = std::make_unique<nccl_state>();
  const ncclResult_t r = ncclCommInitRank(&state->comm, size_, id, rank_);
  agree(*this, r == ncclSuccess ? std::string() : std::string("ncclCommInitRank: ") + ncclGetErrorString(r));
  GPUKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking));
  nccl_ = std::move(state);
  transport_ = device_transport::nccl;
  int version = 0;
  ncclGetVersion(&version);
  reason_ = "NCCL " + std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
            std::to_string(version % 100);
#endif
}

int select_local_device(const communicator& comm) {
  MPI_Comm node = MPI_COMM_NULL;
  detail::mpi_check(MPI_Comm_split_type(comm.mpi(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node),
                    "MPI_Comm_split_type");
  int local_rank = 0;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    throw gpukit::no_cuda_device("dist::select_local_device: no CUDA device on this node");
  }
  const int device = local_rank % count;
  GPUKIT_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

void agree(const communicator& comm, const std::string& local_error, bool local_bad_input) {
  // The lowest failing rank (size when none) and whether it failed on its input, in one all-reduce:
  // key = rank * 2 + (bad_input ? 0 : 1), minimised.
  const int none = 2 * comm.size();
  const int mine = local_error.empty() ? none : 2 * comm.rank() + (local_bad_input ? 0 : 1);
  int lowest = none;
  detail::mpi_check(MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, comm.mpi()), "MPI_Allreduce");
  if (lowest == none) return;
  const int failed = lowest / 2;
  std::string message = comm.rank() == failed ? local_error : std::string();
  int length = static_cast<int>(message.size());
  detail::mpi_check(MPI_Bcast(&length, 1, MPI_INT, failed, comm.mpi()), "MPI_Bcast");
  message.resize(static_cast<std::size_t>(length));
  detail::mpi_check(MPI_Bcast(message.data(), length, MPI_CHAR, failed, comm.mpi()), "MPI_Bcast");
  if (comm.size() > 1) message = "rank " + std::to_string(failed) + ": " + message;
  throw rank_failure(message, failed, lowest % 2 == 0);
}

void all_or_none(const communicator& comm, const std::function<void()>& f) {
  bool failed = false, bad = false;
  std::string error;
  try {
    f();
  } catch (const std::invalid_argument& e) {
    failed = bad = true;
    error = e.what();
  } catch (const sparse::io_error& e) {
    failed = bad = true;
    error = e.what();
  } catch (const sparse::invalid_matrix& e) {
    failed = bad = true;
    error = e.what();
  } catch (const std::exception& e) {
    failed = true;
    error = e.what();
  } catch (...) {
    failed = true;
  }
  if (failed && error.empty()) error = "failed with an exception that carries no message";
  agree(comm, error, bad);
}

}  // namespace dist
