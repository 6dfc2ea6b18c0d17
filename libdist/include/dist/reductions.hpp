// Distributed reductions: each rank reduces its local part with ONE libreduce pass, then ONE collective
// combines the P partial results; every rank gets the result. Collective over the communicator: every
// rank must call with the same T (local counts may differ, and may be 0).
//
//   dist::X(comm, d_local, n_local, stream)      device data (libreduce's CUDA entry points), collective
//                                                 through comm.transport() (enable_device() first)
//   dist::reference::X(comm, local, n_local)      host data (libreduce's CPU backend), MPI collectives
//
// Error bounds (float/double) on top of the local pass's (libreduce/README.md): P partials, each rounded
// to T, are added by the collective in some tree of at most P - 1 additions, so
//   |sum - exact| <= (gamma_local + u + gamma_T(P - 1)) * sum |x_i|
// with u the unit roundoff of T (the partial's rounding). The MPI / NCCL order of the P additions is
// fixed for a fixed rank count, so results are run-to-run deterministic for a fixed P and partition, NOT
// across rank counts: use reproducible_sum for that. min / max are exact (an all-gather of the P local
// extrema, reduced again by libreduce: NaN propagates as in libreduce). Integers are exact modulo 2^bits.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "dist/communicator.hpp"
#include "reduce/device.hpp"
#include "reduce/exact_accumulator.hpp"

namespace dist {

using reduce::stream_t;

/// Sum of the distributed vector. Example: float s = dist::sum(comm, d_x, n_local);
template <class T>
T sum(const communicator& comm, const T* d_in, std::int64_t n, stream_t stream = nullptr);
/// Smallest / largest element (NaN if any rank holds one; n = 0 everywhere gives libreduce's identity).
template <class T>
T min(const communicator& comm, const T* d_in, std::int64_t n, stream_t stream = nullptr);
template <class T>
T max(const communicator& comm, const T* d_in, std::int64_t n, stream_t stream = nullptr);
/// sum_i x_i y_i.
template <class T>
T dot(const communicator& comm, const T* d_x, const T* d_y, std::int64_t n, stream_t stream = nullptr);
/// sqrt(sum_i x_i^2) (float, double): the P local norms nk (libreduce norm2) combined as
/// sqrt(sum nk^2) in double on the host after an all-gather: relative error <= the local bound + 2^-52.
template <class T>
T norm2(const communicator& comm, const T* d_in, std::int64_t n, stream_t stream = nullptr);
/// out[j] = x_j . y_j for j < m, with the m local dots in one pass over the vectors (reduce::multi_dot, one
/// launch per reduce::multi_dot_max of them) and ONE all-reduce of the m partials (a solver's several dots
/// per iteration in one collective). d_x and d_y are HOST arrays of m DEVICE pointers; `out` is host
/// memory. Each local dot has reduce::multi_dot's bound (k = reduce::multi_dot_chain_length), not dot's.
template <class T>
void multi_dot(const communicator& comm, const T* const* d_x, const T* const* d_y, int m, std::int64_t n, T* out,
               stream_t stream = nullptr);
/// The correctly rounded sum of the whole distributed vector (float, double): the local exact state
/// (reduce::reproducible_sum_state), ONE all-reduce of its int64 limbs (an exact integer sum: see
/// reduce/exact_accumulator.hpp), rounded once. Bitwise identical for every rank count and partition,
/// and equal to reduce::reproducible_sum of the concatenated vector on one GPU.
template <class T>
T reproducible_sum(const communicator& comm, const T* d_in, std::int64_t n, stream_t stream = nullptr);
/// The merged exact state itself (every rank gets it), for callers that add more before rounding.
template <class T>
reduce::exact_accumulator<T> reproducible_sum_state(const communicator& comm, const T* d_in, std::int64_t n,
                                                    stream_t stream = nullptr);

/// An in-place sum over ranks of a small DEVICE array, split in two so that GPU work can run between the
/// halves (a pipelined solver's SpMV while its dots travel): start() enqueues it after the work already on
/// `stream`, finish() makes later work on `stream` wait for the result. One in flight at a time.
///  * NCCL: ncclAllReduce in place on the communicator's NCCL stream (communicator::nccl_stream()), which
///    waits for an event on `stream`; finish() is an event wait, so the host never blocks. device_spmv's
///    halo uses the same stream: a halo exchange issued between start() and finish() queues behind the
///    all-reduce (one order on every rank, so they cannot wait on each other); kernels on `stream`, such
///    as the SpMV's interior rows, run meanwhile.
///  * Host staging: start() copies the array to pinned host memory, waits for `stream` and posts
///    MPI_Iallreduce; finish() waits for it and copies the result back on `stream`. The host blocks in
///    start() (for the work before it) and in finish() (for the collective).
/// run() is the same sum in stream order, for callers with no work to overlap: NCCL: ncclAllReduce on
/// `stream` itself, without the side stream and its two event waits (2 x H200, 6 doubles, one run: 7.1 us
/// per call against 8.7 us for start + finish and 7.3 us for a raw ncclAllReduce); host staging: start() +
/// finish(). Work on the NCCL stream enqueued before (a halo exchange) must already be waited for on
/// `stream`, as device_spmv::apply makes it before it returns.
/// T: double (sums of products) or std::int64_t (exact accumulator states, an exact integer sum).
/// Holds its buffers (`capacity` bytes) and, with NCCL, two events: no allocation per call.
///
/// Example:
///   dist::device_allreduce ar(comm, 6 * sizeof(double));
///   ar.start(d_sums, 2, stream);  spmv.apply(d_w, d_q, stream);  ar.finish(stream);
///   ar.run(d_sums, 2, stream);    // nothing to overlap
class device_allreduce {
public:
  device_allreduce(const communicator& comm, std::size_t capacity);
  ~device_allreduce();
  device_allreduce(const device_allreduce&) = delete;
  device_allreduce& operator=(const device_allreduce&) = delete;
  template <class T>
  void start(T* d_buf, int count, stream_t stream);
  void finish(stream_t stream);
  template <class T>
  void run(T* d_buf, int count, stream_t stream);
  /// One all-reduce of one element, so that NCCL connects the ranks now and not inside the first start()
  /// (NCCL connects at a communicator's first collective: 0.2-0.5 s on 2 H100s). Collective; returns when
  /// it is done. A no-op on host staging.
  void connect(stream_t stream);

private:
  struct state;
  const communicator* comm_;
  std::unique_ptr<state> s_;
};

namespace reference {
/// The same operations on HOST memory (libreduce's CPU backend locally, MPI collectives), same bounds.
template <class T>
T sum(const communicator& comm, const T* in, std::int64_t n);
template <class T>
T min(const communicator& comm, const T* in, std::int64_t n);
template <class T>
T max(const communicator& comm, const T* in, std::int64_t n);
template <class T>
T dot(const communicator& comm, const T* x, const T* y, std::int64_t n);
template <class T>
T norm2(const communicator& comm, const T* in, std::int64_t n);
template <class T>
void multi_dot(const communicator& comm, const T* const* x, const T* const* y, int m, std::int64_t n, T* out);
/// Bitwise identical for every rank count and partition, and equal to
/// reduce::reference::reproducible_sum of the concatenated vector (and to the device version's bits).
/// Example:
///   double s = dist::reference::reproducible_sum(comm, x_local.data(), n_local);
template <class T>
T reproducible_sum(const communicator& comm, const T* in, std::int64_t n);
template <class T>
reduce::exact_accumulator<T> reproducible_sum_state(const communicator& comm, const T* in, std::int64_t n);
/// All-reduces states in place (MPI_SUM over their int64 words), then normalizes: an exact merge.
template <class T>
void allreduce_states(const communicator& comm, reduce::exact_accumulator<T>* states, int count);
}  // namespace reference

}  // namespace dist
