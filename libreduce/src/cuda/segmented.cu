// Dispatch of segmented_sum / segmented_min / segmented_max (binned by segment length).
#include <cstdint>

#include "entry_points.hpp"

namespace reduce {

#define REDUCE_DEFINE_SEGMENTED(NAME, OP)                                                                  \
  template <class T>                                                                                       \
  void NAME(const T* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, T* d_out,             \
            stream_t stream) {                                                                             \
    detail::run_segmented(d_in, d_offsets, num_segments, OP{}, OP::identity<T>(), d_out, nullptr, stream,  \
                          "reduce::" #NAME);                                                               \
  }                                                                                                        \
  template <class T>                                                                                       \
  void NAME(const T* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, T* d_out,             \
            workspace& ws, stream_t stream) {                                                              \
    detail::run_segmented(d_in, d_offsets, num_segments, OP{}, OP::identity<T>(), d_out, &ws, stream,      \
                          "reduce::" #NAME);                                                               \
  }
REDUCE_DEFINE_SEGMENTED(segmented_sum, plus)
REDUCE_DEFINE_SEGMENTED(segmented_min, minimum)
REDUCE_DEFINE_SEGMENTED(segmented_max, maximum)

#define REDUCE_INSTANTIATE_SEGMENTED(NAME, T)                                                        \
  template void NAME<T>(const T*, const std::int64_t*, std::int64_t, T*, stream_t);                  \
  template void NAME<T>(const T*, const std::int64_t*, std::int64_t, T*, workspace&, stream_t);
#define REDUCE_INSTANTIATE_SEGMENTED_ALL(T)          \
  REDUCE_INSTANTIATE_SEGMENTED(segmented_sum, T)     \
  REDUCE_INSTANTIATE_SEGMENTED(segmented_min, T)     \
  REDUCE_INSTANTIATE_SEGMENTED(segmented_max, T)
REDUCE_INSTANTIATE_SEGMENTED_ALL(std::int32_t)
REDUCE_INSTANTIATE_SEGMENTED_ALL(std::int64_t)
REDUCE_INSTANTIATE_SEGMENTED_ALL(std::uint32_t)
REDUCE_INSTANTIATE_SEGMENTED_ALL(std::uint64_t)
REDUCE_INSTANTIATE_SEGMENTED_ALL(float)
REDUCE_INSTANTIATE_SEGMENTED_ALL(double)

}  // namespace reduce
