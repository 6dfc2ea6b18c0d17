// The distributed layer's handle: an MPI communicator and, for device data, the transport of its
// collectives (NCCL when built with it and every rank has a GPU of its own; MPI with host staging
// otherwise). No CUDA syntax; MPI's C API is part of the interface (mpi.h).
#pragma once
#include <mpi.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

namespace dist {

/// How collectives over DEVICE data travel.
///  * none:             not set up (enable_device not called): device collectives throw std::logic_error.
///  * nccl:             ncclAllReduce / ncclAllGather on the caller's stream, device to device.
///  * mpi_host_staging: the local result is copied to the host, reduced with MPI, copied back (one
///                      small copy each way: the local pass already reduced n elements to a few).
enum class device_transport { none, nccl, mpi_host_staging };
/// "none", "nccl", "mpi-host-staging".
const char* to_string(device_transport t);

/// Whether this build links NCCL.
bool built_with_nccl();

/// The number of ranks the MPI launcher started this process among, read from the launcher's environment
/// (OpenMPI, PMI, PMIx, MVAPICH) without initializing MPI: 1 when the process was not started by mpirun.
/// Apps call it first to choose between their one-process and distributed paths.
int launched_world_size();

/// MPI_Init_thread / MPI_Finalize for a program's lifetime (apps, tests). MPI_THREAD_FUNNELED: only the
/// main thread calls MPI. Throws std::runtime_error when MPI fails to start.
class environment {
public:
  environment(int& argc, char**& argv);
  ~environment();
  environment(const environment&) = delete;
  environment& operator=(const environment&) = delete;
};

/// A communicator: rank, size, the MPI_Comm (not owned: the caller keeps it alive) and the device
/// transport. Move-only (it owns the NCCL communicator once enable_device() made one).
///
/// Example:
///   dist::environment env(argc, argv);
///   dist::communicator comm;                        // MPI_COMM_WORLD
///   double s = dist::reference::sum(comm, x_local.data(), n_local);
class communicator {
public:
  explicit communicator(MPI_Comm comm = MPI_COMM_WORLD);
  ~communicator();
  communicator(communicator&&) noexcept;
  communicator& operator=(communicator&&) noexcept;
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm mpi() const noexcept { return comm_; }

  /// Collective. Sets up the collectives over device data on the CURRENT CUDA device (the caller picks
  /// one per rank, e.g. local rank modulo the device count): NCCL when `prefer_nccl`, the build has it
  /// and no two ranks share a GPU (NCCL refuses duplicate GPUs); otherwise MPI with host staging.
  /// transport_reason() then says why (libraries never print: the app decides what to say).
  void enable_device(bool prefer_nccl = true);
  device_transport transport() const noexcept { return transport_; }
  const std::string& transport_reason() const noexcept { return reason_; }
  /// The ncclComm_t (as an opaque pointer) when transport() == nccl, nullptr otherwise.
  void* nccl_comm() const noexcept;
  /// The cudaStream_t (opaque) on which libdist issues the NCCL operations that overlap other work
  /// (device_spmv's halo, device_allreduce), when transport() == nccl; nullptr otherwise. One stream, so
  /// they run in the order issued, the same on every rank: NCCL does not promise that two operations of
  /// one communicator on two streams can progress concurrently, and such a pair could wait on each other.
  void* nccl_stream() const noexcept;
  /// libdist's scratch for its reductions over device data (a reduce::workspace and a result slot, made by
  /// enable_device() on the current device; src/device_scratch.hpp), so that dist::sum, dot, min, max and
  /// norm2 allocate nothing per call. One such reduction at a time per communicator (each synchronizes its
  /// stream before it returns). Throws std::logic_error before enable_device().
  struct device_scratch;
  device_scratch& scratch() const;

private:
  struct nccl_state;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  device_transport transport_ = device_transport::none;
  std::string reason_;
  std::unique_ptr<nccl_state> nccl_;
  std::unique_ptr<device_scratch> scratch_;
};

/// Collective: one rank per GPU. Selects CUDA device (rank on this node) modulo (devices on this node)
/// with cudaSetDevice and returns it; ranks beyond the device count share GPUs (enable_device() then
/// stages through the host). Throws gpukit::no_cuda_device when the node has none.
int select_local_device(const communicator& comm);

/// Collective: how many distinct physical GPUs the ranks' CURRENT CUDA devices are (compared by UUID, so
/// CUDA_VISIBLE_DEVICES remappings and several nodes count right); every rank gets the count. Fewer than
/// comm.size() means ranks share a GPU (enable_device() then stages through the host). A rank whose current
/// device cannot be queried makes every rank throw rank_failure (the lowest such rank's words).
int distinct_gpus(const communicator& comm);

/// A failure on some rank, known to every rank: the message is the lowest failing rank's, prefixed with
/// "rank R: " when the communicator has several ranks. `bad_input`: that rank failed on its input (an
/// unreadable or malformed file, an invalid argument), not at run time.
struct rank_failure : std::runtime_error {
  rank_failure(const std::string& what, int rank, bool input_error)
      : std::runtime_error(what), failed_rank(rank), bad_input(input_error) {}
  int failed_rank;
  bool bad_input;
};

/// Collective: each rank says whether it failed (an empty `local_error` means it did not). When any rank
/// failed, every rank throws the same rank_failure; otherwise returns. Two MPI collectives (an
/// all-reduce of the lowest failing rank, a broadcast of its message), so a bad file on one rank makes
/// every rank stop with one message instead of the others hanging in their next collective.
void agree(const communicator& comm, const std::string& local_error, bool local_bad_input = false);

/// Runs f() on every rank, catching what it throws, then agree()s: every rank returns, or every rank
/// throws the same rank_failure. std::invalid_argument, sparse::io_error and sparse::invalid_matrix count as
/// bad input; anything else (gpukit::cuda_error, std::bad_alloc, ...) as a runtime failure.
void all_or_none(const communicator& comm, const std::function<void()>& f);

}  // namespace dist
