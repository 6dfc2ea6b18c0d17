// The floor probe of `reduce bench` (see floor_probe.hpp): the library's medium shape without its finish.
#include "floor_probe.hpp"

#include <stdexcept>
#include <string>

#include "libreduce/src/cuda/device_reduce.cuh"

namespace reduce_app::floor_probe {
namespace {

namespace d = reduce::detail;
using sum_reducer = d::op_reducer<float, reduce::plus>;

/// single_pass_kernel's traversal and block tree for the float sum (the same per-thread order), then a
/// plain store of the block's partial: no ticket, no publish, no collection.
template <int Threads, int Unroll>
__global__ void __launch_bounds__(Threads)
loads_and_block_trees(const float* __restrict__ x, std::int64_t n, float* __restrict__ partials) {
  using br = reduce::block::block_reduce<Threads, float>;
  __shared__ typename br::storage tmp;
  float acc = 0.0f;
  d::traverse<Threads, Unroll, false>(x, x, n, static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x),
                                      [&](std::int64_t, float a, float) { acc += a; });
  acc = br::reduce(acc, reduce::plus{}, tmp);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

}  // namespace

int grid_for(std::int64_t n) {
  const std::int64_t bytes = n * static_cast<std::int64_t>(sizeof(float));
  if (bytes <= d::single_block_bytes || bytes > d::medium_bytes) return 0;  // one block, or the large shape
  // launch_default's medium grid for the float sum.
  return d::policy_grid(n, sizeof(float), std::int64_t{d::medium_blocks_per_sm<sum_reducer>} * d::sm_count(),
                        d::medium_block_bytes);
}

void run(const float* d_in, std::int64_t n, float* d_partials, reduce::stream_t stream) {
  const int grid = grid_for(n);
  if (grid == 0)
    throw std::invalid_argument("floor probe: " + std::to_string(n) + " floats is not a multi-block medium size");
  // The library's driver launch path (launch.hpp), as reduce::sum uses.
  d::launch<loads_and_block_trees<d::medium_threads, d::medium_unroll>>(dim3(static_cast<unsigned>(grid)),
                                                                       dim3(d::medium_threads),
                                                                       static_cast<cudaStream_t>(stream), d_in, n,
                                                                       d_partials);
}

}  // namespace reduce_app::floor_probe
