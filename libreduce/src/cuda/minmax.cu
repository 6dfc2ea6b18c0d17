// Dispatch of min, max, argmin and argmax (exact, order-independent operators).
#include <cstdint>

#include "entry_points.hpp"

namespace reduce {
namespace detail {
namespace {
template <class T>
exact_op_reducer<T, minimum> make_min() { return {{minimum{}, minimum::identity<T>()}}; }
template <class T>
exact_op_reducer<T, maximum> make_max() { return {{maximum{}, maximum::identity<T>()}}; }
template <class T>
arg_reducer<T, false> make_argmin() { return {}; }
template <class T>
arg_reducer<T, true> make_argmax() { return {}; }
}  // namespace
}  // namespace detail

REDUCE_DEFINE_UNARY(min, T, detail::make_min)
REDUCE_DEFINE_UNARY(max, T, detail::make_max)
REDUCE_DEFINE_UNARY(argmin, value_index<T>, detail::make_argmin)
REDUCE_DEFINE_UNARY(argmax, value_index<T>, detail::make_argmax)

#define REDUCE_INSTANTIATE_MINMAX(T)                       \
  REDUCE_INSTANTIATE_UNARY(min, T, T)                      \
  REDUCE_INSTANTIATE_UNARY(max, T, T)                      \
  REDUCE_INSTANTIATE_UNARY(argmin, value_index<T>, T)      \
  REDUCE_INSTANTIATE_UNARY(argmax, value_index<T>, T)
REDUCE_INSTANTIATE_MINMAX(std::int32_t)
REDUCE_INSTANTIATE_MINMAX(std::int64_t)
REDUCE_INSTANTIATE_MINMAX(std::uint32_t)
REDUCE_INSTANTIATE_MINMAX(std::uint64_t)
REDUCE_INSTANTIATE_MINMAX(float)
REDUCE_INSTANTIATE_MINMAX(double)

}  // namespace reduce
