// The automatic choice of an SpMV algorithm: the row statistics it reads, the CSR choice with every
// threshold and the measurements behind it, the vector algorithm's width and load modes, and when the
// plan tries the two algorithms with their own formats (stencil, windowed) on top of the CSR choice.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sparse/spmv.hpp"
#include "spmv_plan_state.hpp"

namespace sparse {

template <class Index>
row_stats compute_row_stats(std::int64_t rows, std::int64_t cols, const Index* row_ptr) {
  row_stats s;
  s.rows = rows;
  s.cols = cols;
  if (rows <= 0) return s;
  s.nnz = static_cast<std::int64_t>(row_ptr[rows]) - static_cast<std::int64_t>(row_ptr[0]);
  s.min_length = static_cast<std::int64_t>(row_ptr[1]) - row_ptr[0];
  double sum_sq = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t len = static_cast<std::int64_t>(row_ptr[i + 1]) - row_ptr[i];
    if (len < 0) throw std::invalid_argument("spmv plan: row_ptr decreases at row " + std::to_string(i));
    s.min_length = std::min(s.min_length, len);
    s.max_length = std::max(s.max_length, len);
    s.empty_rows += len == 0;
    if (len > 32) {
      ++s.rows_over_32;
      s.nnz_in_rows_over_32 += len;
    }
    s.rows_over_4096 += len > 4096;
    sum_sq += static_cast<double>(len) * static_cast<double>(len);
  }
  s.mean_length = static_cast<double>(s.nnz) / static_cast<double>(rows);
  s.stddev_length = std::sqrt(std::max(0.0, sum_sq / static_cast<double>(rows) - s.mean_length * s.mean_length));
  return s;
}

// The variants and where each wins. Figures: `spmv bench --quick` on an NVIDIA H200, 2026-11-21, float
// values, int32 indices, median us of y = A x, cuSPARSE CSR ALG1 timed in the same run (run 2 unless
// marked: [1] = run 1, [0] = an earlier H200 run of the same kernel code):
//
//   class (rows, entries/row)  scalar  warp_per_row  vector          adaptive     block_per_row  merge  warp_stream  ALG1
//   laplace2d (4.2M, 5)          60.5    1000          175.2 (W=8)   106.2 [0]     3309            94.7    74.0     84.7
//   laplace3d (4.1M, 7)          74.5    1122          176.0 (W=8)   128.0 [0]     3448           113.1    93.0    100.1
//   random16  (2M, 16)          307.3     563          255.5 (W=4)   265.0 [0]     1796           362.6   365.4    240.7
//   powerlaw  (1M, 6.4 mean)  12884      1235         6292            64.8 [0]      849            76.4  18070       57.9
//   random2   (8M, 2)           175.8    1395          161.5 (W=2 streaming) [1]  5188           230.0   168.9    176.6
//   random1000 (20k, 1000)      217.4     157.7         157.1 (W=32)  166.6 [0]      153.8         194.7   305.2    150.8
//   (shared_cached: 72-91 on the Laplacians, 477-846 on random16/random1000, never the best.)
//   Measured after that table (libsparse/README.md): scalar on one wave of blocks (laplace2d 59.2-59.7,
//   laplace3d 71.6-72.2), adaptive at 32 registers (powerlaw 58.9), block_per_row with 256 threads and a
//   block per row (random1000 149.9); none of them moves a choice below.
//
//  * scalar (a thread per row, the seed's csrmul_kernel): wins on short uniform rows of ~3-7 entries
//    (the Laplacians: 3.6-3.7 TB/s, 1.34-1.40x ALG1): a warp's 32 rows are one contiguous 0.6-1.5 KB
//    stretch that L1 serves after the first touch, full occupancy, no barrier. Collapses on long or
//    irregular rows (one 200k-entry row serialises its warp: 12.9 ms on powerlaw).
//  * shared_cached (the seed's csrmul_shared): the barrier costs more than the x window saves. Never chosen.
//  * warp_per_row: 4-entry chunks per lane; ties vector(32) on uniformly long rows (within 1-8 % either way
//    on the rows of 96-512 below); 31 of 32 lanes idle on short rows. Chosen only for launch-bound
//    irregular matrices (below).
//  * vector (W = 2..32 lanes per row, choose_vector_width: ~4 entries per lane): best measured on
//    uniform rows of 1-2 entries (random2, W = 2, evict-first entry loads because its 32 MB x fights the
//    streamed entries for L2: 161.5 us, 1.10x ALG1 [1]; 172.7 us with plain loads), not of 3-4: the SpMV
//    corpus (H200, 2026-11-27, median us, scalar / vector): banded_k1_10m (3 a row) 100.6 / 151.9,
//    random_k4_10m (4 a row, random columns) 468.4 / 502.5, banded_k1_1k 6.0 / 6.8; random rows of 10M x 2,
//    3 and 4 entries drawn with other seeds (`spmv bench --corpus`, same GPU and day): vector 244.3 / 402.5 /
//    506.8, scalar 270.4 / 394.6 / 471.5 (ALG1 250.7 / 349.2 / 440.6; adaptive 248.7 / 350.0 / 449.1 wins
//    the rows of 3 and 4 with random columns, and loses to scalar where the columns are near the diagonal:
//    rect_1m_x_1k 38.7 / 30.9, banded_k4_100k 17.1 / 8.7; no row statistic tells the two apart: the
//    plan samples the columns, samples_column_spread below); of 8 (random columns, `spmv bench
//    --corpus`, H200, interleaved timing, median us, scalar / vector W = 2: rect_1m_x_1k 30.7 / 27.1, random_k8_1k 6.8 / 6.9; the Laplacians' 5 and 7
//    stay scalar's: laplace3d_1m 22.4 / 26.8, laplace2d_1m 17.5 / 19.5), hence the cut at 7.5; of 13-63 entries
//    (random16, W = 4: 255.5 us, still 0.94x ALG1: 32M random 4-byte gathers from L2 bound every
//    variant and cuSPARSE alike at 125-133 G gathers/s); and of 64-767 (W = 32, 4-entry chunks: see
//    block_per_row below).
//  * adaptive (CSR-stream tiles of short rows, a warp per medium row, a block per long row, split very
//    long rows): the best measured on irregular rows (powerlaw 58.9-59.2, 0.98-0.99x ALG1), so it takes everything
//    that is not uniform. Its stream tiles pay two barriers and a staging pass per 2,048 entries: 1.7x
//    slower than scalar on the Laplacians.
//  * block_per_row (256 threads per row, a block per row): uniform rows of 768-1024 entries (random1000
//    150.1-150.2, 1.006x ALG1; a warp per row leaves 2.4 waves of warps with a 40 % full last one).
//    Collapses on short rows, and already on rows of 96-512, where a block per row spends its launch and
//    reduction on 1-2 entries per thread: uniform rows generated for the cut (`spmv bench --corpus`, H200,
//    2026-11-28, median us, block_per_row / vector / ALG1): random 96 per row, 30k rows 59.8 / 15.9 /
//    27.1; blockdiag 256, 10k rows 24.7 / 9.4 / 15.2; random 256, 20k x 1M 52.7 / 45.0 / 49.0; random
//    494, 20k rows 128.1 / 33.6 / 37.6; random 300, 5k x 5M 19.8 / 18.2 / 24.1. Hence vector up to 768.
//  * merge (nnz-balanced merge-path blocks, CSR-stream sums, split rows finished in-kernel): balanced by
//    construction but its per-block staging and barriers cost more than adaptive's bins on powerlaw
//    (76.4 vs 64.8) and 1.5-1.6x scalar on the Laplacians. Never chosen; kept as the load-balanced baseline.
//  * warp_stream (CSR-stream per warp): coalesced entry loads, but 22-25 % behind scalar on the
//    Laplacians (shared-memory staging adds latency that scalar's L1 reuse does not have); 168.9 us on
//    random2, behind streaming vector. Never chosen.
//  * stencil (not a CSR kernel: one pattern byte per row instead of col_idx; see spmv.hpp): not
//    chosen here, since it depends on the columns, not on row statistics. The plan tries it when this
//    function says scalar (the only domain measured: the Laplacians, where it moves 37-40 % fewer bytes,
//    laplace2d 42-46 us and laplace3d 47-52 us against scalar's 60 and 72) and takes it if the
//    matrix qualifies.
//  * launch-bound irregular matrices (at most 16,384 rows, two waves of one warp per row on 132 SMs at 64
//    warps each, and 2^18 entries): one launch of warp_per_row, no tiles to stage. The SpMV corpus (H200,
//    `spmv bench --corpus`, median us, warp_per_row / adaptive / ALG1): bcsstk13 6.8 / 15.1 / 11.2,
//    cage8 6.6 / 12.4 / 9.9, zenios 6.8 / 16.2 / 11.5, pushpull 7.0 / 10.5 / 11.7, west0479 6.4 / 9.3 /
//    8.0, olm1000 6.1 / 9.6 / 8.4, 494_bus 6.5 / 8.8 / 8.0, powerlaw_10k 9.9 / 12.6 / 11.9.
//  * ... unless a row is longer than 1,024 entries (more than 8 of a warp's 128-entry steps, each a
//    dependent load of x behind a load of col_idx): then block_per_row (256 threads a row) up to 2,048
//    rows (two waves of its 8 blocks per SM on 128-132 SMs), merge (balanced by entries) beyond. H200,
//    2026-11-28, median us over three runs, warp_per_row / block_per_row / merge / ALG1, one dense row
//    of L entries in rows of 4 (`spmv generate denserow`): 16,000 rows and L 16,000: 49.4-50.3 / 25.7 /
//    9.9-10.2 / 13.7-15.0; 8,000 rows, L 8,000: 28.4-29.3 / 18.1 / 9.9-10.5 / 13.5-15.6; 16,000 rows,
//    L 3,000: 16.9 / 29.0 / 9.6 / 13.3; 16,000 rows, L 1,500: 12.4 / 28.9 / 10.6-10.8 / 12.8-13.2;
//    2,000 rows, L 2,000: 12.0-12.5 / 9.2-9.7 / 10.0-10.1 / 12.7-13.2; powerlaw_2000 (a row of 2,000):
//    11.5-12.7 / 9.4-10.3 / 10.8-11.8 / 12.4-15.9. At L <= 1,024 warp_per_row stays best or within a few
//    percent: 4,000 rows, L 1,200: 10.2 / 12.2 / 10.5 / 12.8; 8,000 rows, L 600: 8.8 / 18.0 / 9.2 / 13.2;
//    power-law rows (`spmv generate powerlaw`, longest 245-761) of 2,000-16,000 rows: warp_per_row
//    7.6-11.6 against merge 10.6-12.1 and block_per_row 9.3-29.2.
// "Uniform" = coefficient of variation of the row lengths < 0.25 and no row longer than 2 x mean + 2.
namespace {
bool is_launch_bound(const row_stats& s) { return s.rows <= 16384 && s.nnz <= (std::int64_t{1} << 18); }
}  // namespace

spmv_algorithm choose_algorithm(const row_stats& s) {
  if (s.rows == 0 || s.nnz == 0) return spmv_algorithm::scalar;  // nothing to balance; smallest launch
  const double cv = s.mean_length > 0 ? s.stddev_length / s.mean_length : 0.0;
  const bool uniform = cv < 0.25 && s.max_length <= 2 * s.mean_length + 2;
  const bool launch_bound = is_launch_bound(s);
  if (!uniform && !launch_bound) return spmv_algorithm::adaptive;
  if (!uniform) {
    if (s.max_length <= 1024) return spmv_algorithm::warp_per_row;
    return s.rows <= 2048 ? spmv_algorithm::block_per_row : spmv_algorithm::merge;
  }
  if (s.mean_length < 2.5) return spmv_algorithm::vector;        // W = 2: rows of 1-2 entries
  if (s.mean_length < 7.5) return spmv_algorithm::scalar;        // Laplacian-like
  if (s.mean_length < 768) return spmv_algorithm::vector;        // W = 4..32: ~4 entries per lane, chunked
  if (s.max_length <= 1024) return spmv_algorithm::block_per_row; // <= 4 entries per thread of 256
  return spmv_algorithm::adaptive;                               // uniformly very long rows: blocks
}

int choose_vector_width(const row_stats& s) {
  // The smallest power of two >= a quarter of the mean length, clamped to 2..32: about four entries per
  // lane, four independent gathers in flight. Measured on random16 (H200, us): 4 lanes 255.5, 8 lanes
  // 262.1, 16 lanes (one entry per lane) 263.4-265.8, 32 lanes 323.4.
  int w = 2;
  while (w < 32 && 4.0 * w < s.mean_length) w *= 2;
  return w;
}

// windowed (spmv_windowed.cuh): each warp walks its entries in column-window order, so an SM's gathers
// of x repeat within L1. What can repeat: an SM runs nnz / SMs gathers into the cols / (32 / sizeof(Value))
// 32-byte sectors of x; with reuse = gathers / sectors, a fraction 1 - (1 - e^-reuse) / reuse of them
// can hit L1. Measured on an H200 (bench/experiments/spmv_windowed.cu): random16 in float, reuse 0.97,
// 194-198 us against vector's 255 and ALG1's 240; random1000, reuse 0.61, rows summed in 32 slots of
// interleaved entries: 132 us for the slot sums against block_per_row's 150 and ALG1's 152. Taken where
// automatic's CSR choice is vector or block_per_row (uniform rows), the rows fit the slots (<= 2,048
// entries), the columns fit the packed 22 bits, the matrix is large enough to be gather-bound (>= 2^22
// entries) and reuse >= 0.5 (random16 in double, 0.48, was not measured), and x holds at least 1 MiB:
// a smaller x stays in L1 and L2 in row order already, and the slots only add work (blockdiag_b256_100k,
// 400 KB of x: windowed 60.7-61.8 us against warp_per_row's 54.8-55.1 and vector's 55.6-57.0, H200,
// 2026-11-28/29; rect_1m_x_1k, 4 KB: 29.2 against vector's 29.1). From 4 MB it wins or ties: banded_k16_1m
// 86.2 against vector's 112.7, random_k64_1m 262.4 / 514.1, blockdiag_b32_1m 82.0 / 83.2.
bool windowed_pays(const row_stats& s, std::size_t value_bytes, int sm_count) {
  if (s.cols <= 0 || s.cols > detail::windowed_max_cols || s.nnz < (std::int64_t{1} << 22) || sm_count <= 0 ||
      s.max_length > std::int64_t{detail::windowed_slot_entries} * detail::windowed_max_row_slots ||
      static_cast<double>(s.cols) * static_cast<double>(value_bytes) < static_cast<double>(1 << 20))
    return false;
  const double sector_values = 32.0 / static_cast<double>(value_bytes);
  const double reuse = static_cast<double>(s.nnz) * sector_values / (static_cast<double>(sm_count) * static_cast<double>(s.cols));
  return reuse >= 0.5;
}

// column_blocks (spmv_column_blocks.cuh): one range of columns per SM, x's slice in shared memory, a
// partial per (range, row). Per row it moves k entries of 6 bytes (float; 10 for double) against blocks
// x 12 bytes of row starts and partials; row by row each entry costs an L2 sector (32 bytes) at the L2's
// random-read rate. Measured on an H200 (132 SMs, 2026-12-03, bench/experiments/spmv_column_blocks.cu,
// float, 2M columns, median us, column blocks / automatic's pick then / ALG1): 20k rows of 1,000 entries
// (7.6 per range) 77.9 / 141.9 (windowed) / 155.3; 20k rows of 300 (2.3 per range) 52.2 / 54.5 (vector)
// / 57.0; 100k rows of 200 (1.5 per range) 158.2 / 136.6 (windowed) / 156.2. Taken where automatic's CSR
// choice is vector or block_per_row (uniform rows), rows average at least 4 entries per range (mean length
// >= 4 x SMs: 528 on 132 SMs, between the small gain at 2.3 and the large one at 7.6), the matrix is
// gather-bound (>= 2^22 entries) and x holds at least 1 MiB (a smaller x stays in L1 in row order; not
// measured), and the layout applies (spmv_column_blocks_plan.hpp: ranges of <= 65,536 columns whose x
// fits shared memory, <= 1 GiB of row starts and partials).
bool column_blocks_pays(const row_stats& s, std::size_t value_bytes, int sm_count) {
  return sm_count > 0 && s.nnz >= (std::int64_t{1} << 22) && s.mean_length >= 4.0 * sm_count &&
         static_cast<double>(s.cols) * static_cast<double>(value_bytes) >= static_cast<double>(1 << 20);
}

// adaptive for scalar's short uniform rows (2.5-7.5 entries) where the columns are scattered and x is
// larger than a third of the 50 MB L2 (as the vector kernel's evict-first rule, choose_vector_state), so
// the gathers miss L2: adaptive's stream tiles read the entries once, coalesced and evict-first, and
// leave L2 to x. Random rows of 10M x 3 and 4 entries (H200, `spmv bench --corpus`, 2026-11-27, median us,
// scalar / adaptive / ALG1): 394.6 / 350.0 / 349.2 and 471.5 / 449.1 / 440.6; random_k4_10m (2026-11-28,
// interleaved timing) 468.2 / 446.2 / 467.9. Where the columns lie near the diagonal scalar wins
// (L1 serves a warp's 32 rows: rect_1m_x_1k 30.9 against adaptive's 38.7, banded_k4_100k 8.7 / 17.1), and
// no row statistic tells the two apart, hence the sample (spmv_plan.cpp: 16 ranges of 1,024 rows spread
// over the matrix, a few small copies at plan time). "Far": farther than 2^16 columns (256 KB of float x)
// from the row's diagonal position row * cols / rows; a 3D mesh of 10M nodes in a bandwidth-reducing
// order reads within ~n^(2/3) = 46k columns. Taken where at least half the sampled entries are far.
bool samples_column_spread(const row_stats& s, spmv_algorithm csr_choice, std::size_t value_bytes) {
  return csr_choice == spmv_algorithm::scalar && s.nnz >= (std::int64_t{1} << 22) &&
         static_cast<double>(s.cols) * static_cast<double>(value_bytes) > 16.0 * (1 << 20);
}
bool scattered_columns_take_adaptive(double far) { return far >= 0.5; }

namespace detail {

// Chunked loads when a lane gets at least two 4-entry chunks of a typical row (random1000 at 32 lanes:
// 157 us, as warp_per_row; one chunk per lane was never better than strided lanes). Evict-first entry
// loads when x is larger than 16 MiB, a third of the 50 MB L2 (random2, 32 MB x: 161 vs 173 us; with
// 8 MB x they change nothing measurable).
vector_state choose_vector_state(const row_stats& s, int width, std::size_t value_bytes) {
  vector_state v;
  v.width = width;
  v.chunked = s.mean_length >= 8.0 * width;
  v.streaming = !v.chunked && static_cast<double>(s.cols) * static_cast<double>(value_bytes) > 16.0 * (1 << 20);
  return v;
}

// stencil: automatic tries it where the CSR choice is scalar or vector and rows hold at most 12 entries on
// average (the Laplacians, where it reads 37-40 % fewer bytes than scalar; banded_k1_10m, a tridiagonal
// matrix of 10M rows: stencil 86 us, vector 151, ALG1 140 on an H200; 2D 9-point stencils, vector's since
// the cut at 7.5) and every row fits a stencil pattern; the analysis then reads col_idx back and may still
// refuse (random2's and rect_1m_x_1k's random columns: vector stays).
bool automatic_tries_stencil(const row_stats& s, spmv_algorithm csr_choice) {
  const bool short_rows = (csr_choice == spmv_algorithm::scalar || csr_choice == spmv_algorithm::vector) &&
                          s.mean_length <= 12;
  return short_rows && s.nnz > 0 && s.max_length <= stencil_max_row;
}

// An automatic stencil plan of a launch-bound matrix (choose_algorithm's cut: at most 16,384 rows and
// 2^18 entries) runs its plain SpMV through scalar's kernel, whose sums are bitwise stencil's; spmv_dots
// keeps the stencil kernel, which fuses the sums (one launch instead of two). There the stencil kernel's
// table staging (a load, then a barrier, before a row's first load) costs more than the col_idx bytes it
// saves. The SpMV corpus (H200, 2026-11-28, median us, stencil / scalar / best / ALG1): banded_k1_1k
// 7.1 / 6.5 / 6.5 scalar / 10.1, laplace2d_16 6.8 / 6.6 / 6.2 vector / 9.0, blockdiag_b4_10k
// 6.7 / 6.2 / 6.1 vector / 12.2; from 100,000 rows stencil ties or wins: banded_k4_100k 8.4 / 8.4,
// laplace2d_1m 16.4 / 17.9.
bool automatic_stencil_applies_through_scalar(const row_stats& s) { return is_launch_bound(s); }

// Column panels: where the automatic plan is adaptive, x is larger than half the L2 but not larger than
// all of it, the matrix has at least 2^22 entries (gather-bound) and its rows average at least 3.5
// entries: two panels (spmv_panels_plan.hpp). Why: Hopper's L2 is two partitions, and an SM's reads are
// cached in its own partition, so x that every SM gathers from competes for half the L2 (30 MB on an
// H200). On powerlaw_10m (10M x 10M, 62.1M entries, 40 MB of float x) Nsight Compute counts 1.84 GB
// read from DRAM for adaptive, 1.62 GB for ALG1, against the 0.62 GB the matrix and vectors hold: most
// gathers miss. With two panels each pass gathers from 20 MB. H200, 2026-11-29 (bench/experiments,
// spmv_variants; median us, one panel (adaptive) / 2 / 3 / 4 / 6 panels / ALG1): powerlaw_10m 714.9 /
// 585.2 / 660.5 / 744.3 / 917.6 / 671.1; random_k4_10m (4 random columns a row) 446.0 / 423.2 / 438.8 /
// 486.7 / 607.8 / 442.4. Each pass re-reads row_ptr and reads and writes y (12 bytes a row), which is why
// more panels lose; x set aside in L2 as persisting lines (cudaAccessPolicyWindow, 20-39 MB) and L2
// evict-last gathers lost or tied (713-813 us). Unmeasured, hence not taken: x beyond L2 (double x of
// 10M columns). Rows of 2 lose: random2 (8M x 8M, 32 MB of x) in two panels took 204.3 us against
// vector's 163.8, hence rows of at least 3.5 (random2 takes vector and never reaches this rule anyway).
int automatic_column_panels(const row_stats& s, spmv_algorithm chosen, std::size_t value_bytes, std::int64_t l2_bytes) {
  const double x_bytes = static_cast<double>(s.cols) * static_cast<double>(value_bytes);
  const bool x_near_l2 = x_bytes > 0.5 * static_cast<double>(l2_bytes) && x_bytes <= static_cast<double>(l2_bytes);
  const bool large = s.nnz >= (std::int64_t{1} << 22) && s.mean_length >= 3.5;
  return chosen == spmv_algorithm::adaptive && x_near_l2 && large ? 2 : 1;
}

// windowed: automatic tries it where the CSR choice is vector or block_per_row and the L1 reuse pays
// (windowed_pays above); the layout reads col_idx and the values back and keeps its own ordered copy.
bool automatic_tries_windowed(const row_stats& s, spmv_algorithm csr_choice, std::size_t value_bytes, int sm_count) {
  return (csr_choice == spmv_algorithm::vector || csr_choice == spmv_algorithm::block_per_row) &&
         windowed_pays(s, value_bytes, sm_count);
}

// column_blocks: automatic tries it where the CSR choice is vector or block_per_row and column_blocks_pays
// (above); the layout reads col_idx and the values back and may still refuse (too wide a range of x).
bool automatic_tries_column_blocks(const row_stats& s, spmv_algorithm csr_choice, std::size_t value_bytes, int sm_count) {
  return (csr_choice == spmv_algorithm::vector || csr_choice == spmv_algorithm::block_per_row) &&
         column_blocks_pays(s, value_bytes, sm_count);
}

}  // namespace detail

template row_stats compute_row_stats<std::int32_t>(std::int64_t, std::int64_t, const std::int32_t*);
template row_stats compute_row_stats<std::int64_t>(std::int64_t, std::int64_t, const std::int64_t*);

}  // namespace sparse
