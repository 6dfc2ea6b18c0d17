// thread_per_column's launch shape: balanced blocks of whole warps, and the multiply-shift division that
// maps a warp to its row. Host arithmetic (no CUDA syntax beyond the qualifiers): shared by the kernel
// (wsm5_kernels.cuh), the launch (wsm5_cuda.cu) and the CPU tests (tests/wsm5/test_wsm5.cpp).
#pragma once
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#if defined(__CUDACC__)
#define WSM5_HD_MEMBER __host__ __device__ __forceinline__
#else
#define WSM5_HD_MEMBER inline
#endif

// Min blocks per SM of the 1-row blocks of WSM5_TPC_BLOCK threads the register bound was measured with
// (H200, register prefetch; libwsm5/README.md): IEEE build 6 -> 80 registers + 104 B spilled, 0.721 ms;
// 5 -> 95, no spills, 0.687-0.692 ms. Fast-math build: 4 -> 0.454, 5 -> 0.377, 6 -> 0.410 ms. Their
// product (640 threads, 20 warps) is what one SM holds at the register bound.
#ifndef WSM5_TPC_MIN_BLOCKS
#define WSM5_TPC_MIN_BLOCKS 5
#endif
#ifndef WSM5_TPC_BLOCK
#define WSM5_TPC_BLOCK 128
#endif

namespace wsm5::detail {

/// Most warps of a block: one SM's worth at the register bound (65,536 / 640 = 102 registers a thread,
/// 93 used). The kernel's launch bound is one such block per SM.
constexpr int tpc_max_block_warps = WSM5_TPC_BLOCK * WSM5_TPC_MIN_BLOCKS / 32;
static_assert(tpc_max_block_warps >= 4 && tpc_max_block_warps * 32 <= 1024,
              "WSM5_TPC_BLOCK x WSM5_TPC_MIN_BLOCKS: 128 to 1,024 threads a block");
/// Fewest warps of a block: a small launch (a with-transfers chunk of a few rows) keeps blocks of 4
/// warps, the shape its chunks were measured with, rather than one warp on each of more SMs.
constexpr int tpc_min_block_warps = 4;

/// floor(n / d) for n < 2^31 and 1 <= d < 2^31 by a multiply and a shift: with s = ceil(log2 d) and
/// M = ceil(2^(31+s) / d) = 2^(31+s) / d + e (0 <= e < 1, M < 2^32), n M / 2^(31+s) = n / d + n e / 2^(31+s),
/// and n e / 2^(31+s) < 2^31 / 2^(31+s) = 2^-s <= 1 / d, while the fraction of n / d is at most
/// (d - 1) / d: the floor is floor(n / d). (M rounded down instead fails at d = 3, n = 3: the test.)
/// Why not `/`: the kernel's runtime division kept 3 more registers live and spilled 80 B (ptxas, sm_90).
struct row_divisor {
  std::uint32_t d = 1, magic = 1u << 31;
  int shift = 31;
  WSM5_HD_MEMBER std::uint32_t divide(std::uint32_t n) const {
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * magic) >> shift);
  }
};
inline row_divisor make_row_divisor(std::uint32_t d) {
  if (d == 0 || d > static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max()))
    throw std::invalid_argument("wsm5 row_divisor: divisor " + std::to_string(d) + " outside 1 .. 2^31 - 1");
  int s = 0;
  while ((std::uint64_t{1} << s) < d) ++s;
  row_divisor r;
  r.d = d;
  r.shift = 31 + s;
  r.magic = static_cast<std::uint32_t>(((std::uint64_t{1} << r.shift) + d - 1) / d);
  return r;
}

/// Balanced blocks: the launch's warps (ceil(nx / 32) a row, a warp 32 consecutive columns of one row,
/// numbered row after row) in as few waves of one block per SM as the register bound allows, cut into
/// blocks of equal warps, so that every SM of a wave runs the same number of warps. Against blocks of
/// 128 columns x 5 rows, which leave SMs idle where the grid is not a multiple of the SM count (on 132 SMs
/// 256 x 256 columns took 104 blocks, 200 x 200 took 80): H200, 30-call medians, 256 x 256 x 64 0.572-0.592
/// ms against 0.625-0.635, 200 x 200 x 100 1.126-1.181 against 1.252-1.255; CONUS 433 x 308 x 35 (4,312
/// warps: 254 blocks of 17, two waves either way) 0.398-0.404 against 0.393-0.400 (libwsm5/README.md,
/// "Balanced blocks").
struct tpc_launch_shape {
  int block_warps = tpc_min_block_warps;
  std::int64_t blocks = 0;
  row_divisor warps_per_row;  // d = ceil(nx / 32)
};
inline tpc_launch_shape tpc_balanced_launch(std::int64_t nx, std::int64_t rows, int sms) {
  tpc_launch_shape l;
  if (nx <= 0 || rows <= 0 || sms <= 0) return l;
  const std::int64_t per_row = (nx + 31) / 32, warps = per_row * rows;
  // The kernel's warp index is 32-bit: 2^31 warps are 2^36 columns, far beyond any GPU's memory.
  if (warps > std::numeric_limits<std::int32_t>::max())
    throw std::length_error("wsm5 thread_per_column: " + std::to_string(warps) + " warps in one launch (at most 2^31 - 1)");
  l.warps_per_row = make_row_divisor(static_cast<std::uint32_t>(per_row));
  const std::int64_t per_wave = static_cast<std::int64_t>(sms) * tpc_max_block_warps;
  const std::int64_t waves = (warps + per_wave - 1) / per_wave;
  const std::int64_t w = (warps + waves * sms - 1) / (waves * sms);  // <= tpc_max_block_warps
  l.block_warps = static_cast<int>(w < tpc_min_block_warps ? tpc_min_block_warps : w);
  l.blocks = (warps + l.block_warps - 1) / l.block_warps;
  return l;
}

}  // namespace wsm5::detail
