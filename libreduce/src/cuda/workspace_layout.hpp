// How a reduce::workspace is carved up: [completion counter | padding | partials of up to max_blocks].
#pragma once
#include <cstddef>

namespace reduce::detail {
constexpr int max_blocks = 4096;               // grid cap of the single-pass kernels
constexpr std::size_t partials_offset = 256;   // keeps the partials 256-byte aligned
constexpr std::size_t max_partial_bytes = 32;  // largest partial (value + index pairs) in bytes
constexpr std::size_t workspace_bytes = partials_offset + max_blocks * max_partial_bytes;
}  // namespace reduce::detail
