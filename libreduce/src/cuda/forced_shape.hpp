// Forced launch shapes of sum and reproducible_sum, for white-box tests and benchmarks (the result of
// reproducible_sum must not depend on the shape; sum's must stay inside its bound). Private to
// libreduce: declared here, defined and instantiated (every reduce.hpp type) in sum.cu and
// reproducible_sum.cu. No CUDA syntax, so .cpp tests can include it.
#pragma once
#include <cstdint>

#include "reduce/reduce.hpp"

namespace reduce::detail {

/// grid blocks of `block` threads (grid >= 1, at most 4096; 0 means "choose as usual").
/// reproducible_sum: block in {128, 256, 512}. sum: block in {128, 256, 512, 1024} with `unroll`
/// (16-byte loads in flight per thread) 4, or {256, 512} with 8; all three 0 is the usual shape.
struct launch_config {
  int grid = 0;
  int block = 0;
  int unroll = 0;
};

/// reproducible_sum with a forced launch shape.
template <class T>
void reproducible_sum(const T* d_in, std::int64_t n, T* d_out, workspace& ws, launch_config config,
                      stream_t stream = nullptr);

/// sum with a forced launch shape.
template <class T>
void sum(const T* d_in, std::int64_t n, T* d_out, workspace& ws, launch_config config,
         stream_t stream = nullptr);

}  // namespace reduce::detail
