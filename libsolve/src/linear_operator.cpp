#include "solve/linear_operator.hpp"

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "gpukit/cuda_check.hpp"

namespace solve {

template <class Value>
void linear_operator<Value>::diagonal(Value*, stream_t) const {
  throw std::invalid_argument("this linear operator does not provide its diagonal (needed by pcg's Jacobi preconditioner)");
}

namespace {
[[noreturn]] void no_ranks() {
  throw std::logic_error("a local linear operator (spans_ranks() == false) has no sum over ranks");
}
}  // namespace

template <class Value>
void linear_operator<Value>::apply_with_dots(const Value*, Value*, const Value*, double*, sparse::dots_summation,
                                             stream_t) const {
  throw std::logic_error("apply_with_dots called on a linear operator whose fuses_dots() is false");
}

template <class Value>
void linear_operator<Value>::start_rank_sum(double*, int, stream_t) const {
  no_ranks();
}
template <class Value>
void linear_operator<Value>::start_rank_sum_exact(std::int64_t*, int, stream_t) const {
  no_ranks();
}
template <class Value>
void linear_operator<Value>::finish_rank_sum(stream_t) const {
  no_ranks();
}
template <class Value>
void linear_operator<Value>::rank_sum(double* d_sums, int count, stream_t stream) const {
  start_rank_sum(d_sums, count, stream);
  finish_rank_sum(stream);
}
template <class Value>
void linear_operator<Value>::rank_sum_exact(std::int64_t* d_words, int count, stream_t stream) const {
  start_rank_sum_exact(d_words, count, stream);
  finish_rank_sum(stream);
}

template <class Value>
callback_operator<Value>::callback_operator(std::int64_t n, function apply, std::vector<Value> diagonal)
    : n_(n), apply_(std::move(apply)), diagonal_(std::move(diagonal)) {
  if (n < 0) throw std::invalid_argument("callback_operator: negative size " + std::to_string(n));
  if (!apply_) throw std::invalid_argument("callback_operator: no function given");
  if (!diagonal_.empty() && static_cast<std::int64_t>(diagonal_.size()) != n)
    throw std::invalid_argument("callback_operator: the diagonal has " + std::to_string(diagonal_.size()) +
                                " entries, the operator " + std::to_string(n) + " rows");
}

template <class Value>
void callback_operator<Value>::diagonal(Value* d_diag, stream_t stream) const {
  if (diagonal_.empty()) linear_operator<Value>::diagonal(d_diag, stream);
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(d_diag, diagonal_.data(), diagonal_.size() * sizeof(Value), cudaMemcpyHostToDevice,
                                    stream));
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host vector may not be pinned
}

template class linear_operator<float>;
template class linear_operator<double>;
template class callback_operator<float>;
template class callback_operator<double>;

}  // namespace solve
