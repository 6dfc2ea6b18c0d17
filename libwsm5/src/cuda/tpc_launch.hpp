// thread_per_column's launch shape: blocks of tpc_block consecutive columns x R consecutive rows, R chosen
// per launch. Host arithmetic (no CUDA syntax): shared by the kernel (wsm5_kernels.cuh), the launch
// (wsm5_cuda.cu) and the CPU tests (tests/wsm5/test_wsm5.cpp).
#pragma once
#include <cstdint>

// Min blocks per SM of the 1-row blocks of WSM5_TPC_BLOCK threads the register bound was measured with
// (H200, register prefetch; libwsm5/README.md): IEEE build 6 -> 80 registers + 104 B spilled, 0.721 ms;
// 5 -> 95, no spills, 0.687-0.692 ms. Fast-math build: 4 -> 0.454, 5 -> 0.377, 6 -> 0.410 ms. Their
// product (640 threads, 20 warps) is what one SM holds at the register bound.
#ifndef WSM5_TPC_MIN_BLOCKS
#define WSM5_TPC_MIN_BLOCKS 5
#endif
// Threads per block row (consecutive columns). 64 (10 blocks per SM) against 128: 0.422 against 0.428 ms
// on CONUS, within noise, so 128 stays.
#ifndef WSM5_TPC_BLOCK
#define WSM5_TPC_BLOCK 128
#endif

namespace wsm5::detail {

constexpr int tpc_block = WSM5_TPC_BLOCK;
/// Most rows of a block: the launch bound is what an SM holds (WSM5_TPC_MIN_BLOCKS blocks of one row, or
/// one block of tpc_block_rows rows), so the register budget (65,536 / 640 = 102) is the same for every R.
constexpr int tpc_block_rows = WSM5_TPC_MIN_BLOCKS;
static_assert(tpc_block % 32 == 0 && tpc_block * tpc_block_rows <= 1024,
              "WSM5_TPC_BLOCK: whole warps; x WSM5_TPC_MIN_BLOCKS: at most 1,024 threads a block");
/// Launches of fewer rows (the with-transfers chunks) keep blocks of one row.
constexpr int tpc_multi_row_min_rows = 160;

/// A launch of `rows` rows of nx columns in blocks of tpc_block columns x R rows: how many blocks, how many
/// an SM holds at once (the register bound: tpc_block_rows / R), the waves on `sms` SMs, and the warps of
/// the fullest SM in the first wave.
struct tpc_launch_shape {
  int block_rows = 1;
  std::int64_t blocks_x = 0, blocks_y = 0;
  std::int64_t blocks() const { return blocks_x * blocks_y; }
  std::int64_t per_sm() const { return tpc_block_rows / block_rows; }
  std::int64_t waves(int sms) const { return (blocks() + sms * per_sm() - 1) / (sms * per_sm()); }
  std::int64_t fullest_sm_warps(int sms) const {
    const std::int64_t spread = (blocks() + sms - 1) / sms;
    return (spread < per_sm() ? spread : per_sm()) * block_rows * (tpc_block / 32);
  }
};
inline tpc_launch_shape tpc_shape(std::int64_t nx, std::int64_t rows, int block_rows) {
  tpc_launch_shape l;
  l.block_rows = block_rows;
  l.blocks_x = (nx + tpc_block - 1) / tpc_block;
  l.blocks_y = (rows + block_rows - 1) / block_rows;
  return l;
}

/// Rows per block. Why (H200, 30-call medians, builds alternated, the fields bitwise the same; libwsm5/
/// README.md, "Launch shape"):
/// * from tpc_multi_row_min_rows rows, blocks of tpc_block_rows rows (one per SM): CONUS 433 x 308 x 35
///   0.392-0.393 ms against 0.410-0.413 in 1-row blocks; a launch of R rows wastes at most 4 / R of its
///   blocks' rows (2.5 % from 160). The with-transfers chunks of 2-6 rows keep 1-row blocks: in 5-row
///   blocks the pipeline lost 6-12 % (4.58-4.86 against 4.32-4.35 ms).
/// * but where 5-row blocks fit in one wave and leave SMs idle (on 132 SMs 256 x 256 columns are 104
///   blocks of 20 warps, 200 x 200 80 of them), the R whose single wave leaves the fullest SM the fewest
///   warps, the largest such R on a tie: 4 rows for both (128 and 100 blocks). 256 x 256 x 64 0.614-0.615 ms
///   against 0.623-0.628, 200 x 200 x 100 1.195-1.208 against 1.245-1.267.
/// * with more waves, 5 rows. Blocks of equal runs of consecutive warps (32 columns of one row each), the
///   fewest waves of one per SM, were 6-10 % faster than 5-row blocks in the single waves above but 18-36 %
///   slower with more waves (500 x 400 x 45 0.810 against 0.678-0.686 ms, 1000 x 600 x 40 2.46 against
///   1.79-1.82; cause not profiled): not taken, nor a rule switching between the two (not measured).
inline int tpc_rows_per_block(std::int64_t nx, std::int64_t rows, int sms) {
  if (rows < tpc_multi_row_min_rows || nx <= 0 || sms <= 0) return 1;
  tpc_launch_shape best = tpc_shape(nx, rows, tpc_block_rows);
  if (best.waves(sms) > 1) return tpc_block_rows;
  for (int r = tpc_block_rows - 1; r >= 1; --r) {
    const tpc_launch_shape l = tpc_shape(nx, rows, r);
    if (l.waves(sms) == 1 && l.fullest_sm_warps(sms) < best.fullest_sm_warps(sms)) best = l;
  }
  return best.block_rows;
}

}  // namespace wsm5::detail
