// solve::distributed on the GPU: device_operator (dist::device_spmv + dist::device_allreduce behind
// solve::linear_operator) and the collective solve over it with solve::solver's kernels. Host code only.
#include <cuda_runtime_api.h>

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

#include "gpukit/cuda_check.hpp"
#include "input_checks.hpp"
#include "local_checks.hpp"
#include "reduce/exact_accumulator.hpp"
#include "solve/distributed.hpp"
#include "solve/solver.hpp"

namespace solve::distributed {

/// The most a solver sums over ranks at once: 6 exact states (pipecg's recomputation), which also holds
/// 6 doubles.
template <class Value>
constexpr std::size_t rank_sum_bytes = 6 * sizeof(reduce::exact_accumulator<Value>);

template <class Value, class Index>
device_operator<Value, Index>::device_operator(const dist::communicator& comm, const dist::distributed_csr<Value, Index>& a,
                                               sparse::spmv_algorithm algorithm)
    : a_(&a),
      spmv_(std::make_unique<dist::device_spmv<Value, Index>>(comm, a, algorithm)),
      sums_(std::make_unique<dist::device_allreduce>(comm, rank_sum_bytes<Value>)) {}

template <class Value, class Index>
device_operator<Value, Index>::~device_operator() = default;

template <class Value, class Index>
void device_operator<Value, Index>::apply(const Value* d_x, Value* d_y, stream_t stream) const {
  // The room around d_x is the caller's promise (linear_operator::input_room): the halo lands there.
  if (spmv_->input_room().before + spmv_->input_room().after > 0)
    spmv_->apply_in_room(const_cast<Value*>(d_x), d_y, stream);
  else
    spmv_->apply(d_x, d_y, stream);
}

template <class Value, class Index>
sparse::x_halo device_operator<Value, Index>::input_room() const {
  return spmv_->input_room();
}

template <class Value, class Index>
bool device_operator<Value, Index>::fuses_dots() const {
  return spmv_->dots_fused();
}

template <class Value, class Index>
void device_operator<Value, Index>::apply_with_dots(const Value* d_x, Value* d_y, const Value* d_w, double* d_sums,
                                                    sparse::dots_summation how, stream_t stream) const {
  if (how != sparse::dots_summation::fast)
    throw std::logic_error("solve::distributed::device_operator::apply_with_dots: only fast sums (exact states are "
                           "summed over ranks by the solver's own passes)");
  spmv_->apply_in_room_with_dots(const_cast<Value*>(d_x), d_y, d_w, d_sums, stream);
}

template <class Value, class Index>
void device_operator<Value, Index>::diagonal(Value* d_diag, stream_t stream) const {
  const auto& d = a_->diagonal();
  if (d.empty()) return;
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(d_diag, d.data(), d.size() * sizeof(Value), cudaMemcpyHostToDevice,
                                    static_cast<cudaStream_t>(stream)));
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));  // the host vector is not pinned
}

template <class Value, class Index>
void device_operator<Value, Index>::start_rank_sum(double* d_sums, int count, stream_t stream) const {
  sums_->start(d_sums, count, stream);
}

template <class Value, class Index>
void device_operator<Value, Index>::start_rank_sum_exact(std::int64_t* d_words, int count, stream_t stream) const {
  sums_->start(d_words, count, stream);
}

template <class Value, class Index>
void device_operator<Value, Index>::finish_rank_sum(stream_t stream) const {
  sums_->finish(stream);
}

template <class Value, class Index>
void device_operator<Value, Index>::rank_sum(double* d_sums, int count, stream_t stream) const {
  sums_->run(d_sums, count, stream);
}

template <class Value, class Index>
void device_operator<Value, Index>::rank_sum_exact(std::int64_t* d_words, int count, stream_t stream) const {
  sums_->run(d_words, count, stream);
}

template <class Value, class Index>
void device_operator<Value, Index>::connect(stream_t stream) const {
  spmv_->connect(stream);
  sums_->connect(stream);
}

template <class Value, class Index>
result solve(const dist::communicator& comm, const dist::distributed_csr<Value, Index>& a, const Value* d_b,
             Value* d_x, const options& opt, stream_t stream, bool use_guess) {
  if (comm.transport() == dist::device_transport::none)
    throw std::logic_error("solve::distributed::solve on device data: the communicator has no device transport "
                           "(call enable_device() first)");
  dist::all_or_none(comm, [&] {
    detail::check_options(opt);
    if (opt.graph)
      throw std::invalid_argument("graph mode is not available on the distributed GPU path (its sums over ranks may "
                                  "stage through the host, which a CUDA graph cannot capture)");
    if (a.global_rows() == 0) detail::check_shape(0, 0);
    // With a rank without rows the ranks' collective sequences differ (cause not found): on one H200, 2
    // ranks over host staging, a 1-row matrix, OpenMPI's MPI_Iallreduce met a collective of another size
    // (MPI_ERR_TRUNCATE); on two H200s over NCCL the same run hung. Refused, agreed on every rank.
    if (a.local_rows() == 0)
      throw std::invalid_argument("this rank holds no rows of the " + std::to_string(a.global_rows()) +
                                  "-row matrix: the distributed GPU solve needs at least one row per rank (run "
                                  "fewer ranks; the CPU path, --device cpu, allows ranks without rows)");
    detail::check_local_matrix(a);
    if (opt.method == krylov_method::pcg) detail::check_local_diagonal(a);
  });
  // Reproducible: scalar SpMV rows, bitwise the same for every partition (see dist::device_spmv).
  const auto algorithm = opt.reproducible ? sparse::spmv_algorithm::scalar : sparse::spmv_algorithm::automatic;
  std::optional<device_operator<Value, Index>> op;
  std::optional<solver<Value>> s;
  dist::all_or_none(comm, [&] {
    op.emplace(comm, a, algorithm);
    s.emplace(*op, opt);
  });
  // Every rank built its operator: connect the NCCL peers now, not inside the timed first iteration.
  op->connect(stream);
  // A bad b is seen by every rank at the same status check (its non-finite count is summed over ranks),
  // so every rank throws std::invalid_argument there and the agreement names the lowest rank's words.
  // Any other failure (a CUDA error, a throwing progress callback) is this rank's alone while the others
  // wait in the next sum over ranks: an agreement would pair its collective with theirs and hang (seen on
  // an H200, 2 ranks), so it propagates without one, and the caller ends the job (run_on_mpi_world:
  // one line, MPI_Abort; tests/apps/rank_fault.cpp).
  result r;
  std::exception_ptr refused;
  try {
    r = use_guess ? s->solve_with_guess(d_b, d_x, a.local_rows(), stream) : s->solve(d_b, d_x, a.local_rows(), stream);
  } catch (const std::invalid_argument&) {
    refused = std::current_exception();
  }
  if (refused) dist::all_or_none(comm, [&] { std::rethrow_exception(refused); });
  return r;
}

#define SOLVE_DISTRIBUTED_DEVICE(V, I)                                                                        \
  template class device_operator<V, I>;                                                                       \
  template result solve<V, I>(const dist::communicator&, const dist::distributed_csr<V, I>&, const V*, V*, \
                              const options&, stream_t, bool);
SOLVE_DISTRIBUTED_DEVICE(float, std::int32_t)
SOLVE_DISTRIBUTED_DEVICE(float, std::int64_t)
SOLVE_DISTRIBUTED_DEVICE(double, std::int32_t)
SOLVE_DISTRIBUTED_DEVICE(double, std::int64_t)
#undef SOLVE_DISTRIBUTED_DEVICE

}  // namespace solve::distributed
