// `reduce bench`'s floor probe: the library's multi-block medium sum WITHOUT its cross-block step. Same
// grid, block shape, launch path, traversal and block tree as reduce::sum at that size; each block
// then stores its partial, and nothing combines them. So it is not a sum: it is what any one-launch sum
// in that shape costs before the blocks' partials meet (at least one L2 round trip more). `reduce bench`
// times it against CUB in the same run, beside the sum's own ratio, so the 0.65x target at 2^16..2^20
// can be read against what the loads and block trees alone cost on the same board.
#pragma once
#include <cstdint>

#include "reduce/device.hpp"

namespace reduce_app::floor_probe {

/// The grid of reduce::sum<float> at n elements when it is a multi-block medium launch (more than one
/// block, at most medium_bytes), else 0 (the probe does not apply).
int grid_for(std::int64_t n);

/// Enqueues the probe on `stream`: grid_for(n) blocks each store their block's partial to
/// d_partials[block] (grid_for(n) floats). Throws std::invalid_argument when grid_for(n) is 0.
void run(const float* d_in, std::int64_t n, float* d_partials, reduce::stream_t stream);

}  // namespace reduce_app::floor_probe
