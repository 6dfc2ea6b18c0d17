// Experiment: which load / launch shape of a single-pass float sum reads DRAM fastest on an H200 at
// large n, and the same for a block-per-segment segmented sum (1000 x 100,000 floats), each timed
// against CUB in the same process. Standalone (not part of the CMake build):
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I libreduce/include -o build-exp/reduce_large bench/experiments/reduce_large.cu
//   build-exp/reduce_large [out.csv]
//
// Baselines, timed in the same process and marked "(libreduce)" in the tables:
//  - "libreduce launch_default (lib kernel)": the library's own sum, reduce::detail::launch_default
//    (single_pass_kernel<256, large_unroll = 8 for the sum> over traverse, one wave of blocks, interleaved tiles, __ldg).
//    "t256 u4 inter ldg w1" is the same shape with this file's loop (see min_blocks).
//  - "libreduce segmented (short+PDL long)": the library's segmented pipeline as run_segmented launches
//    it; "seg t256 u4 lib-traverse": its long-kernel body (traverse) alone, one block per segment.
//    "seg t256 u4 ldg" is the same shape with this file's loop.
// Then argmax and min at 2^24..2^28 in several shapes of the library's kernel against CUB's ArgMax and
// Min (heavy_section; `reduce_large heavy` runs it alone). `reduce_large tail` runs only tail_section:
// the sum's one wave against a balanced grid (the same rounds, a full last one).
// Tables: median and min of 51 single-call CUDA-event timings after 5 warm-up calls, GB/s = bytes
// read / median, vs_CUB = median / CUB's median (< 1: faster than CUB).
//
// Correctness (exit 1 on any failure): every variant runs on two inputs, each output poisoned with NaN
// first:
//  - uniform random floats in [-1, 1): result within the gamma bound of a host double sum;
//  - random values in {-1, 0, 1}: every partial sum of any order is an integer far below 2^24 (see
//    check()), so every variant must match the host sum EXACTLY; this catches a dropped or
//    doubled tile, which the gamma bound on random data (2e-4 to 4e-3 x sum|x| at 2^30) would not.
// A CUDA error ends the run with exit 2.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "reduce/cuda/block_reduce.cuh"
#include "gpukit/cuda_check.hpp"
#include "libreduce/src/cuda/device_reduce.cuh"  // the library's own kernels and launch, timed as baselines

namespace {

// =============================================================================================
// Knobs (template parameters of the kernels)
// =============================================================================================

// Threads (256, 512, 1024): block size. Bigger blocks mean fewer blocks per wave, so fewer partials,
//   completion atomics and block-level trees in the finish, but a coarser tail: the last tiles are
//   spread over fewer, larger blocks.
// Unroll (4, 8): 16-byte loads per thread per tile, written to be issued before the first add. Bytes
//   in flight per SM are what hide DRAM latency (Little's law: ~4.8 TB/s x ~1 us / 132 SMs = ~36 KB
//   per SM at least); 8 deepens each warp at the price of registers (see min_blocks for what ptxas
//   makes of it).
// Grid (w1, w2, s4; see add_sum): one wave, two waves, or SMs x 4 blocks.

// Schedule: which tiles of the input a block reads.
//  interleaved: block b takes tiles b, b + grid, b + 2 grid, ... (libreduce today). All blocks sweep
//    the input together, so at any time the reads fall in one window of ~grid tiles: DRAM pages and
//    L2 slices are shared by neighbouring blocks.
//  contiguous: block b takes one contiguous run of whole tiles, the runs as even as possible (CUB's
//    GridEvenShare). Every block streams its own region: longer sequential runs per SM, but reads
//    spread over grid far-apart DRAM regions at once.
enum class schedule { interleaved, contiguous };

// Load: the PTX of the 16-byte vector loads of the body.
//  ldg:            ld.global.nc.v4.f32 (__ldg, libreduce today): read-only path, allocates in L1.
//  nc_noalloc_256: ld.global.nc.L1::no_allocate.L2::256B.v4.f32: no L1 allocation (the data is used
//                  once) and a 256-byte L2 prefetch per miss (CUB's streaming loads on sm_90 use the
//                  L1::no_allocate hint; the prefetch asks DRAM for whole 256 B sectors groups).
//  cs:             ld.global.cs.v4.f32 (__ldcs): "evict first" streaming hint, coherent path.
//  nc_evict_first: ld.global.nc.L1::no_allocate.L2::cache_hint.v4.f32 with a createpolicy
//                  L2::evict_first policy. The direct spelling ld.global.nc...L2::evict_first.v4.f32 is
//                  REJECTED by ptxas 13.0 for sm_90 ("requires .v8.b32/.v4.b64 type with
//                  .L2::evict_first", i.e. 32-byte loads, sm_100+), so the policy form is the only
//                  sm_90 way to mark streamed lines evict-first in L2.
enum class load_flavor { ldg, nc_noalloc_256, cs, nc_evict_first };

const char* name_of(schedule s) { return s == schedule::interleaved ? "inter" : "contig"; }
const char* name_of(load_flavor l) {
  switch (l) {
    case load_flavor::ldg: return "ldg";
    case load_flavor::nc_noalloc_256: return "nc_noalloc_256";
    case load_flavor::cs: return "cs";
    case load_flavor::nc_evict_first: return "nc_evict_first";
  }
  return "?";
}

// =============================================================================================
// Device code
// =============================================================================================

/// Occupancy floor given to ptxas (__launch_bounds__'s second argument) for Unroll loads in flight.
/// Why it is pinned: ptxas's own choice moves with small code changes and confounds the knobs. Seen in
/// the SASS of this file with nvcc 13.0 (LDG / FADD order and scoreboard waits of the cubin): with no
/// floor, the U8 kernels took 36-48 registers (5-6 blocks of 256 per SM) and the U4 interleaved ones
/// 34 (6 blocks); with a floor of 1 block ptxas took 98-112 registers (2 blocks per SM). An earlier
/// draft that kept libreduce's loop shape (64-bit tile index) compiled at 32 registers but issued only
/// 3 of its 4 loads before the first add waited. With the loop below and this floor, ptxas unrolls the
/// tile loop and software-pipelines it: 4-5 (U4) or 12 (U8) loads are issued before the first wait,
/// then a new load after each consumed one. libreduce's own single_pass_kernel<256, 4> (29 registers,
/// 8 blocks per SM) issues its 4 loads, waits, adds, and only then loops: a burst per tile, not a
/// pipeline; it is timed as its own row.
///   Unroll <= 4: a full SM (2048 threads, <= 32 registers).
///   Unroll 8:    half an SM (1024 threads, <= 64 registers): the same 128 KiB in flight per SM as
///                4 loads x 2048 threads, deeper per warp, with half the warps.
constexpr int min_blocks(int threads, int unroll) { return (unroll <= 4 ? 2048 : 1024) / threads; }

/// The L2 policy operand of nc_evict_first (created once per thread; unused by the other flavors).
template <load_flavor L>
__device__ __forceinline__ std::uint64_t make_policy() {
  std::uint64_t policy = 0;
  if constexpr (L == load_flavor::nc_evict_first)
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

/// One 16-byte load of the chosen flavor (asm volatile, as CUB's ThreadLoad: kept in program order by
/// the front end; ptxas still schedules them, see min_blocks).
template <load_flavor L>
__device__ __forceinline__ float4 load4(const float4* p, std::uint64_t policy) {
  float4 v;
  if constexpr (L == load_flavor::ldg) {
    v = __ldg(p);
  } else if constexpr (L == load_flavor::nc_noalloc_256) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
  } else if constexpr (L == load_flavor::cs) {
    asm volatile("ld.global.cs.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p), "l"(policy));
  }
  (void)policy;
  return v;
}

__device__ __forceinline__ void add4(float& acc, const float4& v) {
  acc += v.x;  // one accumulator, elements in index order: the library's rounding chain
  acc += v.y;
  acc += v.z;
  acc += v.w;
}

/// This thread's share of x[0, n) when `blocks` blocks cooperate on it and this one is `rank`.
/// Layout (as libreduce's traverse): a misaligned head of < 4 floats (block 0), the 16-byte aligned
/// body in tiles of Threads * Unroll float4 (thread t takes vectors t, t + Threads, ... of a tile, all
/// Unroll loads issued before any add), then the partial tile and the < 4-float tail (guarded, one
/// block). Schedule S decides which full tiles this block takes.
template <int Threads, int Unroll, schedule S, load_flavor L>
__device__ __forceinline__ float block_range_sum(const float* __restrict__ x, std::int64_t n, int rank, int blocks,
                                                 std::uint64_t policy) {
  const int tid = static_cast<int>(threadIdx.x);
  float acc = 0.0f;
  const auto mis = static_cast<std::int64_t>((reinterpret_cast<std::uintptr_t>(x) % 16) / sizeof(float));
  const std::int64_t head = mis ? (4 - mis < n ? 4 - mis : n) : 0;
  if (rank == 0 && tid < head) acc += x[tid];
  const std::int64_t nvec = (n - head) / 4;
  const float4* __restrict__ v = reinterpret_cast<const float4*>(x + head);
  constexpr std::int64_t per_tile = std::int64_t{Threads} * Unroll;
  const std::int64_t full_tiles = nvec / per_tile;

  // The full tiles of this block: `count` tiles, the first at vector `first`, `stride` vectors apart.
  // The loop carries only a pointer and a 32-bit count (a block has < 2^31 tiles: 2^31 x 1024 float4
  // is far above any n here), so that 4 x 4 data registers + the loop state fit ptxas's 32-register
  // budget of a full-occupancy 256-thread block without pushing a load behind the first add.
  std::int64_t first = 0, stride = 0;
  int count = 0;
  int remainder_owner = 0;  // block that reads the partial tile and the tail
  if constexpr (S == schedule::interleaved) {
    count = rank < full_tiles ? static_cast<int>((full_tiles - 1 - rank) / blocks + 1) : 0;
    first = rank * per_tile;
    stride = blocks * per_tile;
    remainder_owner = static_cast<int>(full_tiles % blocks);  // whose turn the next tile would be
  } else {
    const std::int64_t share = full_tiles / blocks, extra = full_tiles % blocks;
    count = static_cast<int>(share + (rank < extra ? 1 : 0));
    first = (rank * share + (rank < extra ? rank : extra)) * per_tile;
    stride = per_tile;
    remainder_owner = blocks - 1;  // the block whose run ends last
  }
  const float4* p = v + first + tid;
  for (; count > 0; --count, p += stride) {
    float4 a[Unroll];
#pragma unroll
    for (int k = 0; k < Unroll; ++k) a[k] = load4<L>(p + k * Threads, policy);
#pragma unroll
    for (int k = 0; k < Unroll; ++k) add4(acc, a[k]);
  }
  if (rank == remainder_owner) {
    const std::int64_t v0 = full_tiles * per_tile + tid;
    float4 a[Unroll];
#pragma unroll
    for (int k = 0; k < Unroll; ++k)
      if (v0 + k * Threads < nvec) a[k] = load4<L>(v + v0 + k * Threads, policy);
#pragma unroll
    for (int k = 0; k < Unroll; ++k)
      if (v0 + k * Threads < nvec) add4(acc, a[k]);
    const std::int64_t i = head + nvec * 4 + tid;
    if (i < n) acc += x[i];
  }
  return acc;
}

/// Single-pass sum: block_range_sum over the whole grid, block_reduce, partials[blockIdx.x], then the
/// last block to finish (completion counter) sums the partials in block order and re-zeroes the counter
/// (libreduce's single_pass_kernel finish, partials loaded 8 per thread at a time).
template <int Threads, int Unroll, schedule S, load_flavor L>
__global__ void __launch_bounds__(Threads, min_blocks(Threads, Unroll))
exp_sum_kernel(const float* __restrict__ x, std::int64_t n, float* __restrict__ partials,
               unsigned int* __restrict__ done_blocks, float* __restrict__ out) {
  using br = reduce::block::block_reduce<Threads, float>;
  __shared__ typename br::storage tmp;
  __shared__ bool am_last;
  const std::uint64_t policy = make_policy<L>();
  float acc = block_range_sum<Threads, Unroll, S, L>(x, n, static_cast<int>(blockIdx.x),
                                                     static_cast<int>(gridDim.x), policy);
  acc = br::reduce(acc, reduce::plus{}, tmp);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();  // publish the partial before announcing that this block is done
    am_last = (atomicAdd(done_blocks, 1u) == gridDim.x - 1);
  }
  __syncthreads();
  if (!am_last) return;
  __threadfence();  // see every other block's partial
  float total = 0.0f;
  for (unsigned b0 = 0; b0 < gridDim.x; b0 += 8u * Threads) {
    float p[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const unsigned b = b0 + threadIdx.x + static_cast<unsigned>(k) * Threads;
      p[k] = b < gridDim.x ? __ldcg(partials + b) : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) total += p[k];
  }
  __syncthreads();  // tmp is reused
  total = br::reduce(total, reduce::plus{}, tmp);
  if (threadIdx.x == 0) {
    *out = total;
    *done_blocks = 0;  // ready for the next call without a memset
  }
}

/// Segmented, one block per segment (grid = num_segments; blocks beyond one wave are scheduled by the
/// hardware as earlier ones finish). Segment starts may be misaligned (block_range_sum's head path).
/// No grid-stride loop over segments: with one (even with a 32-bit index) the 4-load body needed 16
/// bytes of spills under the 32-register cap and issued only 2 loads before the first wait.
template <int Threads, int Unroll, load_flavor L>
__global__ void __launch_bounds__(Threads, min_blocks(Threads, Unroll))
exp_segmented_long_kernel(const float* __restrict__ x, const std::int64_t* __restrict__ offsets,
                          float* __restrict__ out) {
  using br = reduce::block::block_reduce<Threads, float>;
  __shared__ typename br::storage tmp;
  const std::uint64_t policy = make_policy<L>();
  const unsigned seg = blockIdx.x;
  const std::int64_t b = offsets[seg];
  float acc = block_range_sum<Threads, Unroll, schedule::interleaved, L>(x + b, offsets[seg + 1] - b, 0, 1, policy);
  acc = br::reduce(acc, reduce::plus{}, tmp);
  if (threadIdx.x == 0) out[seg] = acc;
}

/// Segmented, K blocks per segment (grid = num_segments * K; block i: segment i / K, chunk i % K).
/// Chunk blocks split the segment's tiles by schedule S and write K partials; the last chunk block of
/// a segment to finish (per-segment counter) adds them in chunk order and re-zeroes the counter.
/// Tests whether shorter per-block work (25k-50k floats instead of 100k) evens out the tail of the
/// 1000-block launch (1000 blocks on 132 SMs x 8 slots: some SMs get 8, others 7).
template <int Threads, int Unroll, schedule S, load_flavor L>
__global__ void __launch_bounds__(Threads, min_blocks(Threads, Unroll))
exp_segmented_split_kernel(const float* __restrict__ x, const std::int64_t* __restrict__ offsets, int chunks,
                           float* __restrict__ partials, unsigned int* __restrict__ counters, float* __restrict__ out) {
  using br = reduce::block::block_reduce<Threads, float>;
  __shared__ typename br::storage tmp;
  const std::uint64_t policy = make_policy<L>();
  const std::int64_t seg = blockIdx.x / chunks;
  const int chunk = static_cast<int>(blockIdx.x % chunks);
  const std::int64_t b = offsets[seg];
  float acc = block_range_sum<Threads, Unroll, S, L>(x + b, offsets[seg + 1] - b, chunk, chunks, policy);
  acc = br::reduce(acc, reduce::plus{}, tmp);
  if (threadIdx.x == 0) {
    partials[seg * chunks + chunk] = acc;
    __threadfence();
    if (atomicAdd(counters + seg, 1u) == static_cast<unsigned>(chunks - 1)) {
      __threadfence();
      float total = 0.0f;
      for (int c = 0; c < chunks; ++c) total += __ldcg(partials + seg * chunks + c);
      out[seg] = total;
      counters[seg] = 0;
    }
  }
}

/// Baseline for the segmented kernels: libreduce's segmented_long_kernel body (reduce::detail::traverse,
/// 256 threads, unroll 4) without its queue, one block per segment. Against "seg t256 u4 ldg" it
/// isolates this file's loop (see min_blocks) from the load and launch knobs.
__global__ void __launch_bounds__(256)
lib_traverse_segmented_kernel(const float* __restrict__ x, const std::int64_t* __restrict__ offsets,
                              float* __restrict__ out) {
  using br = reduce::block::block_reduce<256, float>;
  __shared__ typename br::storage tmp;
  const unsigned seg = blockIdx.x;
  const std::int64_t b = offsets[seg];
  float acc = 0.0f;
  reduce::detail::traverse<256, 4, false>(x + b, x + b, offsets[seg + 1] - b, 0, 1,
                                          [&](std::int64_t, float v, float) { acc = acc + v; });
  acc = br::reduce(acc, reduce::plus{}, tmp);
  if (threadIdx.x == 0) out[seg] = acc;
}

__device__ __host__ inline std::uint64_t mix64(std::uint64_t z) {  // splitmix64 finalizer
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// x[i] = k * 2^-23 - 1 with k = 24 random bits (uniform in [-1, 1)), or, with ternary, -1, 0 or 1.
__global__ void fill_kernel(float* __restrict__ x, std::int64_t n, std::uint64_t seed, bool ternary) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t k = mix64(static_cast<std::uint64_t>(i) + seed * 0x9e3779b97f4a7c15ull) >> 40;
    x[i] = ternary ? static_cast<float>(static_cast<int>(k % 3) - 1)
                   : static_cast<float>(k) * (1.0f / 8388608.0f) - 1.0f;
  }
}

// =============================================================================================
// Host side
// =============================================================================================

#define CHECK(call) GPUKIT_CUDA_CHECK(call)
#define CHECK_LAUNCH() GPUKIT_CHECK_LAUNCH()

constexpr double unit_roundoff = 1.0 / 16777216.0;  // 2^-24
constexpr int warmup_calls = 5;
constexpr int timed_calls = 51;
constexpr int max_partials = 16384;  // sum kernels' partials (grid <= 2 waves of 1024 / SM x 132 SMs)

struct timing {
  double median_us = 0, min_us = 0;
};

cudaEvent_t ev_start, ev_stop;

/// CUDA events around ONE call each: warmup_calls untimed, then timed_calls; median and minimum.
template <class F>
timing time_calls(F&& call) {
  for (int i = 0; i < warmup_calls; ++i) call();
  CHECK(cudaDeviceSynchronize());
  std::vector<double> us;
  for (int i = 0; i < timed_calls; ++i) {
    CHECK(cudaEventRecord(ev_start));
    call();
    CHECK(cudaEventRecord(ev_stop));
    CHECK(cudaEventSynchronize(ev_stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, ev_start, ev_stop));
    us.push_back(1e3 * ms);
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us.front()};
}

struct host_ref {
  double sum = 0, abs_sum = 0;
};

/// Streams the device prefixes x[0, p) (p ascending) to the host in 64 MiB chunks through one pinned
/// buffer: visit(h, m, first) for each chunk of m elements whose first index is `first`, then
/// prefix_done() after each p.
template <class Visit, class PrefixDone>
void scan_prefixes(const float* d_x, const std::vector<std::int64_t>& prefixes, Visit&& visit, PrefixDone&& prefix_done) {
  constexpr std::int64_t chunk = std::int64_t{1} << 24;
  float* h = nullptr;
  CHECK(cudaMallocHost(&h, chunk * sizeof(float)));
  std::int64_t done = 0;
  for (std::int64_t p : prefixes) {
    while (done < p) {
      const std::int64_t m = std::min(chunk, p - done);
      CHECK(cudaMemcpy(h, d_x + done, m * sizeof(float), cudaMemcpyDeviceToHost));
      visit(static_cast<const float*>(h), m, done);
      done += m;
    }
    prefix_done();
  }
  CHECK(cudaFreeHost(h));
}

/// Host double sums of the device prefixes x[0, p) for each p in `prefixes` (ascending).
std::vector<host_ref> prefix_refs(const float* d_x, const std::vector<std::int64_t>& prefixes) {
  std::vector<host_ref> refs;
  host_ref r;
  scan_prefixes(
      d_x, prefixes,
      [&](const float* h, std::int64_t m, std::int64_t) {
        for (std::int64_t i = 0; i < m; ++i) {
          r.sum += h[i];
          r.abs_sum += std::fabs(h[i]);
        }
      },
      [&] { refs.push_back(r); });
  return refs;
}

std::vector<host_ref> segment_refs(const float* d_x, const std::vector<std::int64_t>& offsets) {
  std::vector<float> h(static_cast<std::size_t>(offsets.back()));
  CHECK(cudaMemcpy(h.data(), d_x, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<host_ref> refs(offsets.size() - 1);
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s)
    for (std::int64_t i = offsets[s]; i < offsets[s + 1]; ++i) {
      refs[s].sum += h[static_cast<std::size_t>(i)];
      refs[s].abs_sum += std::fabs(h[static_cast<std::size_t>(i)]);
    }
  return refs;
}

int failures = 0;

/// Random input: |result - sum| <= chain * 2^-24 * sum|x| (gamma_k ~ k u for a rounding chain of k
/// additions, any order; the double reference's own error is ~2^-53 n sum|x|, negligible). NaN fails.
/// Ternary input ({-1, 0, 1}, zero mean, variance 2/3): every partial sum of any order is a sum over a
/// subset of m <= 2^30 of these i.i.d. values (which subset depends only on indices), standard
/// deviation <= sqrt(2/3 * 2^30) = 2.7e4, so it is an integer far below 2^24 (600 sigma) and every
/// float addition is exact: the result must equal the host sum exactly.
bool check(const char* what, const std::string& variant, float got, const host_ref& ref, double chain, bool exact) {
  const double err = std::fabs(static_cast<double>(got) - ref.sum);
  const double bound = exact ? 0.0 : chain * unit_roundoff * ref.abs_sum;
  if (err <= bound) return true;  // false for NaN
  ++failures;
  std::printf("FAIL %s %s: got %.9g, reference %.9g, |error| %.3g > bound %.3g (%s input)\n", what, variant.c_str(),
              static_cast<double>(got), ref.sum, err, bound, exact ? "ternary, exact" : "random");
  return false;
}

// ---- sum variants ----
struct sum_args {
  const float* x;
  float* partials;
  unsigned int* done;
  float* out;
  void* lib_scratch;  // libreduce workspace layout (reduce::detail::workspace_bytes, counters zeroed)
};

struct sum_variant {
  std::string name;
  int threads, unroll;
  const char* sched;
  const char* load;
  int grid;
  int blocks_per_sm, regs;
  std::string grid_rule;
  void (*launch)(const sum_variant&, const sum_args&, std::int64_t n);
};

int sm_count = 0;

// Baseline rows (the library's own code), marked in the tables.
const char* const lib_sum_name = "libreduce launch_default (lib kernel)";
const char* const lib_seg_name = "libreduce segmented (block per segment)";
const char* const lib_traverse_name = "seg t256 u4 lib-traverse";

template <class K>
std::pair<int, int> occupancy(K kernel, int threads) {
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  return {std::max(per_sm, 1), attr.numRegs};
}

template <int Threads, int Unroll, schedule S, load_flavor L>
void launch_exp_sum(const sum_variant& v, const sum_args& a, std::int64_t n) {
  exp_sum_kernel<Threads, Unroll, S, L><<<v.grid, Threads>>>(a.x, n, a.partials, a.done, a.out);
  CHECK_LAUNCH();
}

// Grid rules: the wave is SMs x resident blocks of that instantiation. w1: one wave, every block
// resident at once (libreduce). w2: two waves, so that blocks of the second half start as the first
// ones finish (evens out per-SM imbalance of the tail). s4: SMs x 4 for 512 threads, added only where it
// differs from w1 and w2 (the U4 kernels fit 4 blocks of 512 per SM, so s4 = w1; the U8 ones 2, s4 = w2):
// with the min_blocks floors below it adds no row unless ptxas lands on another occupancy.
template <int Threads, int Unroll, schedule S, load_flavor L>
void add_sum(std::vector<sum_variant>& list, bool sms_x4 = false) {
  const auto [per_sm, regs] = occupancy(exp_sum_kernel<Threads, Unroll, S, L>, Threads);
  const int wave = sm_count * per_sm;
  std::vector<std::pair<std::string, int>> grids = {{"w1", wave}, {"w2", 2 * wave}};
  if (sms_x4 && 4 * sm_count != wave && 4 * sm_count != 2 * wave) grids.push_back({"s4", 4 * sm_count});
  for (const auto& [rule, grid] : grids) {
    const std::string name = "t" + std::to_string(Threads) + " u" + std::to_string(Unroll) + " " + name_of(S) +
                             " " + name_of(L) + " " + rule;
    list.push_back({name, Threads, Unroll, name_of(S), name_of(L), std::min(grid, max_partials), per_sm, regs, rule,
                    launch_exp_sum<Threads, Unroll, S, L>});
  }
}

// The library itself: reduce::detail::launch_default with its sum reducer (what reduce::sum runs with
// a workspace), i.e. single_pass_kernel<256, large_unroll> over traverse, grid = policy_grid = one wave here.
using lib_sum_reducer = reduce::detail::op_reducer<float, reduce::plus>;
void launch_lib_sum(const sum_variant&, const sum_args& a, std::int64_t n) {
  reduce::detail::launch_default(a.x, a.x, n, lib_sum_reducer{reduce::plus{}, 0.0f}, a.out, a.lib_scratch,
                                 cudaStream_t{});
}

std::vector<sum_variant> sum_variants() {
  std::vector<sum_variant> v;
  {
    constexpr int t = reduce::detail::default_threads, u = reduce::detail::large_unroll<lib_sum_reducer>;
    const auto [per_sm, regs] = occupancy(reduce::detail::single_pass_kernel<t, u, lib_sum_reducer>, t);
    v.push_back({lib_sum_name, t, u, "inter", "ldg", sm_count * per_sm, per_sm, regs, "w1", launch_lib_sum});
  }
  using S = schedule;
  using L = load_flavor;
  // Every load flavor at the library's 256 threads, interleaved, with 4 and 8 loads in flight
  // ("t256 u4 inter ldg w1" is the library's shape with this file's loop: see min_blocks).
  add_sum<256, 4, S::interleaved, L::ldg>(v);
  add_sum<256, 4, S::interleaved, L::nc_noalloc_256>(v);
  add_sum<256, 4, S::interleaved, L::cs>(v);
  add_sum<256, 4, S::interleaved, L::nc_evict_first>(v);
  add_sum<256, 8, S::interleaved, L::ldg>(v);
  add_sum<256, 8, S::interleaved, L::nc_noalloc_256>(v);
  add_sum<256, 8, S::interleaved, L::cs>(v);
  add_sum<256, 8, S::interleaved, L::nc_evict_first>(v);
  // CUB's even share with the two most likely flavors.
  add_sum<256, 4, S::contiguous, L::ldg>(v);
  add_sum<256, 4, S::contiguous, L::nc_noalloc_256>(v);
  add_sum<256, 8, S::contiguous, L::ldg>(v);
  add_sum<256, 8, S::contiguous, L::nc_noalloc_256>(v);
  // Bigger blocks: fewer blocks in the wave, fewer partials and atomics in the finish.
  add_sum<512, 4, S::interleaved, L::ldg>(v, true);
  add_sum<512, 4, S::interleaved, L::nc_noalloc_256>(v, true);
  add_sum<512, 8, S::interleaved, L::ldg>(v, true);
  add_sum<512, 8, S::interleaved, L::nc_noalloc_256>(v, true);
  add_sum<512, 4, S::contiguous, L::ldg>(v, true);
  add_sum<1024, 4, S::interleaved, L::ldg>(v);
  return v;
}

// ---- segmented variants ----
struct seg_args {
  const float* x;
  const std::int64_t* offsets;
  std::int64_t num_segments;
  float* out;
  float* partials;         // split: num_segments x 4
  unsigned int* counters;  // split: one per segment, zero between calls
};

struct seg_variant {
  std::string name;
  int threads, unroll;
  const char* sched;
  const char* load;
  int blocks_per_sm, regs;
  std::string grid_rule;
  int chunks;  // blocks per segment (the grid is num_segments x chunks)
  void (*launch)(const seg_variant&, const seg_args&);
};

template <int Threads, int Unroll, load_flavor L>
void launch_long(const seg_variant&, const seg_args& a) {
  exp_segmented_long_kernel<Threads, Unroll, L><<<static_cast<unsigned>(a.num_segments), Threads>>>(a.x, a.offsets, a.out);
  CHECK_LAUNCH();
}

template <int Threads, int Unroll, schedule S, load_flavor L>
void launch_split(const seg_variant& v, const seg_args& a) {
  exp_segmented_split_kernel<Threads, Unroll, S, L><<<static_cast<unsigned>(a.num_segments * v.chunks), Threads>>>(
      a.x, a.offsets, v.chunks, a.partials, a.counters, a.out);
  CHECK_LAUNCH();
}

template <int Threads, int Unroll, load_flavor L>
void add_long(std::vector<seg_variant>& list) {
  const auto [per_sm, regs] = occupancy(exp_segmented_long_kernel<Threads, Unroll, L>, Threads);
  const std::string name = "seg t" + std::to_string(Threads) + " u" + std::to_string(Unroll) + " " + name_of(L);
  list.push_back({name, Threads, Unroll, "block", name_of(L), per_sm, regs, "segs", 1, launch_long<Threads, Unroll, L>});
}

template <int Threads, int Unroll, schedule S, load_flavor L>
void add_split(std::vector<seg_variant>& list) {
  const auto [per_sm, regs] = occupancy(exp_segmented_split_kernel<Threads, Unroll, S, L>, Threads);
  for (int chunks : {2, 4}) {
    const std::string name = "split" + std::to_string(chunks) + " t" + std::to_string(Threads) + " u" +
                             std::to_string(Unroll) + " " + name_of(S) + " " + name_of(L);
    list.push_back({name, Threads, Unroll, name_of(S), name_of(L), per_sm, regs, "segs*" + std::to_string(chunks),
                    chunks, launch_split<Threads, Unroll, S, L>});
  }
}

void launch_lib_traverse(const seg_variant&, const seg_args& a) {
  lib_traverse_segmented_kernel<<<static_cast<unsigned>(a.num_segments), reduce::detail::default_threads>>>(
      a.x, a.offsets, a.out);
  CHECK_LAUNCH();
}

// The library's segmented path for 1000 segments, launched as reduce::detail::run_segmented does
// (device_reduce.cuh): <= block_per_segment_max segments run segmented_block_kernel, a block each. run_segmented itself cannot be called from this standalone file: its workspace
// size, workspace::segmented_bytes, is compiled into libreduce. Keep in step with run_segmented.
void launch_lib_segmented(const seg_variant&, const seg_args& a) {
  namespace d = reduce::detail;
  // <= block_per_segment_max segments: the library runs segmented_block_kernel alone.
  d::segmented_block_kernel<d::segment_block_threads><<<static_cast<unsigned>(a.num_segments), d::segment_block_threads>>>(
      a.x, a.offsets, reduce::plus{}, 0.0f, a.out);
  CHECK_LAUNCH();
}

std::vector<seg_variant> seg_variants() {
  std::vector<seg_variant> v;
  {
    constexpr int t = reduce::detail::default_threads;
    const auto [per_sm, regs] = occupancy(reduce::detail::segmented_block_kernel<t, float, reduce::plus>, t);
    v.push_back({lib_seg_name, t, 4, "block", "ldg", per_sm, regs, "segs", 1, launch_lib_segmented});
    const auto [per_sm2, regs2] = occupancy(lib_traverse_segmented_kernel, t);
    v.push_back({lib_traverse_name, t, 4, "block", "ldg", per_sm2, regs2, "segs", 1, launch_lib_traverse});
  }
  using S = schedule;
  using L = load_flavor;
  add_long<256, 4, L::ldg>(v);  // the library's long-kernel shape with this file's loop
  add_long<256, 8, L::ldg>(v);
  add_long<256, 4, L::nc_noalloc_256>(v);
  add_long<256, 8, L::nc_noalloc_256>(v);
  add_long<512, 4, L::ldg>(v);
  add_long<512, 8, L::ldg>(v);
  add_long<1024, 4, L::ldg>(v);
  add_split<256, 4, S::interleaved, L::ldg>(v);
  add_split<256, 4, S::contiguous, L::ldg>(v);
  add_split<256, 8, S::contiguous, L::nc_noalloc_256>(v);
  return v;
}

// ---- results ----
struct row {
  std::string section, size, variant, sched, load, grid_rule;
  int threads = 0, unroll = 0, blocks_per_sm = 0, regs = 0;
  std::int64_t grid = 0;
  timing t;
  double bytes = 0;
  bool ok = true;
  double gbps() const { return bytes / (t.median_us * 1e3); }
};

void print_table(const std::string& title, const std::vector<row>& rows, double cub_median_us) {
  std::size_t best = rows.size();
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].section.rfind("cub", 0) != 0 && (best == rows.size() || rows[i].t.median_us < rows[best].t.median_us))
      best = i;
  std::printf("\n== %s\n", title.c_str());
  std::printf("%-42s %6s %5s %4s %9s %9s %9s %8s\n", "variant", "grid", "blk/SM", "regs", "median_us", "min_us",
              "GB/s", "vs_CUB");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const row& r = rows[i];
    const bool lib = r.variant == lib_sum_name || r.variant == lib_seg_name || r.variant == lib_traverse_name;
    std::printf("%-42s %6lld %5d %4d %9.2f %9.2f %9.1f %8.4f%s%s%s\n", r.variant.c_str(), static_cast<long long>(r.grid),
                r.blocks_per_sm, r.regs, r.t.median_us, r.t.min_us, r.gbps(), r.t.median_us / cub_median_us,
                lib ? "  (libreduce)" : "", i == best ? "  <== best" : "", r.ok ? "" : "  FAIL");
  }
}

void write_csv(const char* path, const std::vector<row>& rows, const std::vector<double>& cub_for_row) {
  const std::string tmp = std::string(path) + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "error: cannot open %s for writing\n", tmp.c_str());
    ++failures;
    return;
  }
  std::fprintf(f, "section,size,variant,threads,unroll,schedule,load,grid_rule,grid,blocks_per_sm,regs,median_us,"
                  "min_us,gbps,ratio_to_cub,ok\n");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const row& r = rows[i];
    std::fprintf(f, "%s,%s,%s,%d,%d,%s,%s,%s,%lld,%d,%d,%.3f,%.3f,%.2f,%.5f,%d\n", r.section.c_str(), r.size.c_str(),
                 r.variant.c_str(), r.threads, r.unroll, r.sched.c_str(), r.load.c_str(), r.grid_rule.c_str(),
                 static_cast<long long>(r.grid), r.blocks_per_sm, r.regs, r.t.median_us, r.t.min_us, r.gbps(),
                 r.t.median_us / cub_for_row[i], r.ok ? 1 : 0);
  }
  const bool write_ok = std::fclose(f) == 0;
  if (!write_ok || std::rename(tmp.c_str(), path) != 0) {
    std::fprintf(stderr, "error: cannot write %s\n", path);
    std::remove(tmp.c_str());
    ++failures;
    return;
  }
  std::printf("\nwrote %s (%zu rows)\n", path, rows.size());
}

void fill(float* d_x, std::int64_t n, std::uint64_t seed, bool ternary) {
  fill_kernel<<<sm_count * 8, 256>>>(d_x, n, seed, ternary);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());
}

float read_scalar(const float* d) {
  float h = 0;
  CHECK(cudaMemcpy(&h, d, sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

// ---- heavy reducers at large n: argmax and min, the library's kernel in several shapes, against CUB ----
// (`reduce_large heavy` runs this section alone.) Question: `reduce bench` had argmax at 1.02-1.04x CUB's
// time at 2^24..2^26 and min at 1.003-1.007x at 2^28..2^30 on an H200, both in the library's large shape
// of then (256 threads x 4 vectors, one wave: 8 blocks per SM). Do more loads in flight or another block
// size close the gap? Every result is checked exactly against a host pass (first index of the maximum;
// the minimum). "library launch_default" is the library's own call; the other rows its kernel in a
// given shape (one wave of the occupancy, or at most k blocks per SM).

struct heavy_ref {
  float min = 0, max = 0;
  std::int64_t argmax = -1;
};

/// Host min, max and first index of the max of the device prefixes x[0, p), p ascending.
std::vector<heavy_ref> heavy_refs(const float* d_x, const std::vector<std::int64_t>& prefixes) {
  std::vector<heavy_ref> refs;
  heavy_ref r;
  scan_prefixes(
      d_x, prefixes,
      [&](const float* h, std::int64_t m, std::int64_t first) {
        for (std::int64_t i = 0; i < m; ++i) {
          const float v = h[i];
          if (r.argmax < 0 || v < r.min) r.min = v;
          if (r.argmax < 0 || v > r.max) {  // strict: the first index of the maximum
            r.max = v;
            r.argmax = first + i;
          }
        }
      },
      [&] { refs.push_back(r); });
  return refs;
}

using heavy_argmax = reduce::detail::arg_reducer<float, true>;
using heavy_min = reduce::detail::exact_op_reducer<float, reduce::minimum>;

struct heavy_shape {
  std::string name;
  int threads, unroll, per_sm, regs_argmax, regs_min;
  void (*argmax)(const float*, std::int64_t, reduce::value_index<float>*, void*, int);
  void (*min)(const float*, std::int64_t, float*, void*, int);
};

/// One wave of the slower of the two kernels' occupancies, at most `cap` blocks per SM (0: no cap).
template <int Threads, int Unroll>
heavy_shape make_heavy(int cap = 0) {
  const auto [per_sm_a, regs_a] = occupancy(reduce::detail::single_pass_kernel<Threads, Unroll, heavy_argmax>, Threads);
  const auto [per_sm_m, regs_m] = occupancy(reduce::detail::single_pass_kernel<Threads, Unroll, heavy_min>, Threads);
  heavy_shape h;
  h.name = "t" + std::to_string(Threads) + " u" + std::to_string(Unroll) + (cap ? " <=" + std::to_string(cap) + "/SM" : "");
  h.threads = Threads;
  h.unroll = Unroll;
  h.per_sm = std::min(per_sm_a, per_sm_m);  // one grid for both, so a row compares like with like
  if (cap) h.per_sm = std::min(h.per_sm, cap);
  h.regs_argmax = regs_a;
  h.regs_min = regs_m;
  h.argmax = [](const float* x, std::int64_t n, reduce::value_index<float>* o, void* scratch, int grid) {
    reduce::detail::launch_single_pass<Threads, heavy_argmax, Unroll>(x, x, n, heavy_argmax{}, o, scratch, nullptr, grid);
  };
  h.min = [](const float* x, std::int64_t n, float* o, void* scratch, int grid) {
    reduce::detail::launch_single_pass<Threads, heavy_min, Unroll>(
        x, x, n, heavy_min{{reduce::minimum{}, reduce::minimum::identity<float>()}}, o, scratch, nullptr, grid);
  };
  return h;
}

void heavy_section(const float* d_x, void* d_lib_scratch) {
  const std::vector<std::int64_t> sizes = {std::int64_t{1} << 24, std::int64_t{1} << 26, std::int64_t{1} << 28};
  const std::vector<heavy_ref> refs = heavy_refs(d_x, sizes);
  reduce::value_index<float>* d_vi = nullptr;
  float *d_val = nullptr, *d_min = nullptr;
  std::int64_t* d_idx = nullptr;
  CHECK(cudaMalloc(&d_vi, sizeof(reduce::value_index<float>)));
  CHECK(cudaMalloc(&d_val, sizeof(float)));
  CHECK(cudaMalloc(&d_min, sizeof(float)));
  CHECK(cudaMalloc(&d_idx, sizeof(std::int64_t)));
  std::size_t cub_bytes = 1;
  for (std::int64_t n : sizes) {
    std::size_t b = 0;
    CHECK(cub::DeviceReduce::ArgMax(nullptr, b, d_x, d_val, d_idx, n));
    cub_bytes = std::max(cub_bytes, b);
    CHECK(cub::DeviceReduce::Min(nullptr, b, d_x, d_min, n));
    cub_bytes = std::max(cub_bytes, b);
  }
  void* d_cub = nullptr;
  CHECK(cudaMalloc(&d_cub, cub_bytes));
  const std::vector<heavy_shape> shapes = {make_heavy<256, 4>(), make_heavy<256, 4>(4), make_heavy<256, 8>(),
                                           make_heavy<512, 4>(), make_heavy<512, 4>(2), make_heavy<512, 8>()};
  auto read_vi = [&] {
    reduce::value_index<float> got{};
    CHECK(cudaMemcpy(&got, d_vi, sizeof(got), cudaMemcpyDeviceToHost));
    return got;
  };
  auto check_argmax = [&](const std::string& what, const reduce::value_index<float>& got, const heavy_ref& r) {
    if (got.index == r.argmax && got.value == r.max) return true;
    ++failures;
    std::printf("FAIL %s: argmax (%.9g, %lld), expected (%.9g, %lld)\n", what.c_str(), static_cast<double>(got.value),
                static_cast<long long>(got.index), static_cast<double>(r.max), static_cast<long long>(r.argmax));
    return false;
  };
  auto check_min = [&](const std::string& what, float got, const heavy_ref& r) {
    if (got == r.min) return true;
    ++failures;
    std::printf("FAIL %s: min %.9g, expected %.9g\n", what.c_str(), static_cast<double>(got), static_cast<double>(r.min));
    return false;
  };
  std::printf("\n== argmax and min at large n (median us of %d single calls; ratio to CUB's ArgMax / Min)\n",
              timed_calls);
  std::printf("%-26s %5s %5s %6s %5s %5s %10s %8s %10s %8s\n", "variant", "N", "grid", "blk/SM", "regsA", "regsM",
              "argmax us", "vs CUB", "min us", "vs CUB");
  for (std::size_t si = 0; si < sizes.size(); ++si) {
    const std::int64_t n = sizes[si];
    const std::string size = "2^" + std::to_string(static_cast<int>(std::log2(static_cast<double>(n))));
    // CUB
    CHECK(cudaMemset(d_val, 0xff, sizeof(float)));
    CHECK(cudaMemset(d_idx, 0xff, sizeof(std::int64_t)));
    CHECK(cub::DeviceReduce::ArgMax(d_cub, cub_bytes, d_x, d_val, d_idx, n));
    {
      reduce::value_index<float> got{};
      CHECK(cudaMemcpy(&got.value, d_val, sizeof(float), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(&got.index, d_idx, sizeof(std::int64_t), cudaMemcpyDeviceToHost));
      check_argmax("CUB ArgMax " + size, got, refs[si]);
    }
    CHECK(cudaMemset(d_min, 0xff, sizeof(float)));
    CHECK(cub::DeviceReduce::Min(d_cub, cub_bytes, d_x, d_min, n));
    check_min("CUB Min " + size, read_scalar(d_min), refs[si]);
    const timing cub_a = time_calls([&] {
      std::size_t b = cub_bytes;
      CHECK(cub::DeviceReduce::ArgMax(d_cub, b, d_x, d_val, d_idx, n));
    });
    const timing cub_m = time_calls([&] {
      std::size_t b = cub_bytes;
      CHECK(cub::DeviceReduce::Min(d_cub, b, d_x, d_min, n));
    });
    std::printf("%-26s %5s %5s %6s %5s %5s %10.2f %8.4f %10.2f %8.4f\n", "CUB ArgMax / Min", size.c_str(), "-", "-",
                "-", "-", cub_a.median_us, 1.0, cub_m.median_us, 1.0);
    // the library's own call
    {
      CHECK(cudaMemset(d_vi, 0xff, sizeof(reduce::value_index<float>)));
      reduce::detail::launch_default(d_x, d_x, n, heavy_argmax{}, d_vi, d_lib_scratch, nullptr);
      check_argmax("library argmax " + size, read_vi(), refs[si]);
      const heavy_min rm{{reduce::minimum{}, reduce::minimum::identity<float>()}};
      CHECK(cudaMemset(d_min, 0xff, sizeof(float)));
      reduce::detail::launch_default(d_x, d_x, n, rm, d_min, d_lib_scratch, nullptr);
      check_min("library min " + size, read_scalar(d_min), refs[si]);
      const timing ta = time_calls([&] { reduce::detail::launch_default(d_x, d_x, n, heavy_argmax{}, d_vi, d_lib_scratch, nullptr); });
      const timing tm = time_calls([&] { reduce::detail::launch_default(d_x, d_x, n, rm, d_min, d_lib_scratch, nullptr); });
      std::printf("%-26s %5s %5s %6s %5s %5s %10.2f %8.4f %10.2f %8.4f\n", "library launch_default", size.c_str(), "-",
                  "-", "-", "-", ta.median_us, ta.median_us / cub_a.median_us, tm.median_us, tm.median_us / cub_m.median_us);
    }
    for (const heavy_shape& h : shapes) {
      const int grid = std::min(h.per_sm * sm_count, reduce::detail::max_grid);
      CHECK(cudaMemset(d_vi, 0xff, sizeof(reduce::value_index<float>)));
      h.argmax(d_x, n, d_vi, d_lib_scratch, grid);
      check_argmax(h.name + " argmax " + size, read_vi(), refs[si]);
      CHECK(cudaMemset(d_min, 0xff, sizeof(float)));
      h.min(d_x, n, d_min, d_lib_scratch, grid);
      check_min(h.name + " min " + size, read_scalar(d_min), refs[si]);
      const timing ta = time_calls([&] { h.argmax(d_x, n, d_vi, d_lib_scratch, grid); });
      const timing tm = time_calls([&] { h.min(d_x, n, d_min, d_lib_scratch, grid); });
      std::printf("%-26s %5s %5d %6d %5d %5d %10.2f %8.4f %10.2f %8.4f\n", h.name.c_str(), size.c_str(), grid, h.per_sm,
                  h.regs_argmax, h.regs_min, ta.median_us, ta.median_us / cub_a.median_us, tm.median_us,
                  tm.median_us / cub_m.median_us);
    }
  }
  CHECK(cudaFree(d_cub));
  CHECK(cudaFree(d_vi));
  CHECK(cudaFree(d_val));
  CHECK(cudaFree(d_min));
  CHECK(cudaFree(d_idx));
}


// ---- the large sum's last round: one wave against the balanced grid (`reduce_large tail`) ----
// Question: on one wave of W blocks, block b takes tiles b, b + W, ...; at 2^28 floats (32,768 tiles of
// 32 KiB, W = 528 on an H200) the last round holds 32 tiles: 32 blocks read 1 MiB while the rest have left,
// about one DRAM round trip with the memory nearly idle. The balanced grid ceil(tiles / rounds) (521
// blocks here) keeps the same number of rounds with a full last one. Is the call shorter? Timed in
// rotating rounds (library, balanced, CUB, each call alone between events); both checked against the
// host sum within the bound.
void tail_section(const float* d_x, void* d_lib_scratch, float* d_out) {
  using R = lib_sum_reducer;
  constexpr int t = reduce::detail::default_threads, u = reduce::detail::large_unroll<R>;
  const int wave = sm_count * occupancy(reduce::detail::single_pass_kernel<t, u, R>, t).first;
  const std::vector<std::int64_t> sizes = {std::int64_t{1} << 24, std::int64_t{1} << 26, std::int64_t{1} << 28,
                                           std::int64_t{1} << 30};
  const std::vector<host_ref> refs = prefix_refs(d_x, sizes);
  std::size_t cub_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes, d_x, d_out, sizes.back()));
  void* d_cub = nullptr;
  CHECK(cudaMalloc(&d_cub, cub_bytes));
  constexpr int rounds = 31;
  std::printf("\nLast round (sum, 256 x 8 vectors = 32 KiB tiles; wave %d blocks; plain us, median of %d rotated samples)\n",
              wave, rounds);
  std::printf("%-6s %6s %7s %9s %9s | %10s %10s %10s | %8s %8s\n", "N", "rounds", "balanced", "last:wave", "last:bal",
              "library", "balanced", "CUB", "lib/CUB", "bal/CUB");
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::int64_t n = sizes[k];
    const std::int64_t tiles = (n * 4 + std::int64_t{t} * u * 16 - 1) / (std::int64_t{t} * u * 16);
    const std::int64_t rounds_n = (tiles + wave - 1) / wave;
    const int balanced = static_cast<int>((tiles + rounds_n - 1) / rounds_n);
    const R r{reduce::plus{}, 0.0f};
    auto lib = [&] { reduce::detail::launch_default(d_x, d_x, n, r, d_out, d_lib_scratch, cudaStream_t{}); };
    auto bal = [&] {
      reduce::detail::launch_single_pass<t, R, u>(d_x, d_x, n, r, d_out, d_lib_scratch, cudaStream_t{}, balanced);
    };
    auto cub = [&] {
      std::size_t b = cub_bytes;
      CHECK(cub::DeviceReduce::Sum(d_cub, b, d_x, d_out, n));
    };
    // The library's chain on its smaller grid (the balanced one) bounds both of its calls; CUB's as in
    // the main table.
    const double lib_chain = static_cast<double>(n) / (static_cast<double>(balanced) * t) + 3.0 * u * 4 + 4096;
    const double cub_chain = static_cast<double>(n) / (sm_count * 128.0) + 4096;
    const std::function<void()> calls[3] = {lib, bal, cub};
    const char* names[3] = {"library", "balanced", "CUB"};
    const double chains[3] = {lib_chain, lib_chain, cub_chain};
    for (int v = 0; v < 3; ++v) {
      CHECK(cudaMemset(d_out, 0xFF, sizeof(float)));
      calls[v]();
      float got = 0;
      CHECK(cudaMemcpy(&got, d_out, sizeof(float), cudaMemcpyDeviceToHost));
      check("tail", std::string(names[v]) + " at 2^" + std::to_string(static_cast<int>(std::log2(static_cast<double>(n)))),
            got, refs[k], chains[v], false);
    }
    std::vector<double> us[3];
    for (int v = 0; v < 3; ++v)
      for (int w = 0; w < 3; ++w) calls[v]();
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < rounds; ++i)
      for (int j = 0; j < 3; ++j) {
        const int v = (i + j) % 3;
        CHECK(cudaEventRecord(ev_start));
        calls[v]();
        CHECK(cudaEventRecord(ev_stop));
        CHECK(cudaEventSynchronize(ev_stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, ev_start, ev_stop));
        us[v].push_back(1e3 * ms);
      }
    double med[3];
    for (int v = 0; v < 3; ++v) {
      std::sort(us[v].begin(), us[v].end());
      med[v] = us[v][us[v].size() / 2];
    }
    std::printf("2^%-4d %6lld %7d %9lld %9lld | %10.2f %10.2f %10.2f | %8.4f %8.4f\n",
                static_cast<int>(std::log2(static_cast<double>(n))), static_cast<long long>(rounds_n), balanced,
                static_cast<long long>(tiles - (rounds_n - 1) * wave),
                static_cast<long long>(tiles - (rounds_n - 1) * balanced), med[0], med[1], med[2], med[0] / med[2],
                med[1] / med[2]);
  }
  CHECK(cudaFree(d_cub));
}

int run(int argc, char** argv) {
  int device = 0;
  CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, device));
  sm_count = prop.multiProcessorCount;
  CHECK(cudaEventCreate(&ev_start));
  CHECK(cudaEventCreate(&ev_stop));

  const std::vector<std::int64_t> sizes = {std::int64_t{1} << 26, std::int64_t{1} << 28, std::int64_t{1} << 30};
  const std::int64_t n_max = sizes.back();
  float* d_x = nullptr;  // 4 GiB, cudaMalloc: 256-byte aligned, so every prefix starts aligned
  CHECK(cudaMalloc(&d_x, n_max * sizeof(float)));
  float *d_out = nullptr, *d_partials = nullptr, *d_copy = nullptr;
  unsigned int* d_done = nullptr;
  CHECK(cudaMalloc(&d_out, 4096 * sizeof(float)));
  CHECK(cudaMalloc(&d_partials, max_partials * sizeof(float)));
  CHECK(cudaMalloc(&d_done, 4096 * sizeof(unsigned int)));
  CHECK(cudaMemset(d_done, 0, 4096 * sizeof(unsigned int)));  // kernels leave their counters at 0

  std::printf("GPU: %s, %d SMs, %.1f GiB, CUB %d.%d.%d\n", prop.name, sm_count,
              static_cast<double>(prop.totalGlobalMem) / (1 << 30), CUB_VERSION / 100000, CUB_VERSION / 100 % 1000,
              CUB_VERSION % 100);
  fill(d_x, n_max, 1, false);

  // ---- ceiling: device-to-device copy of 2^28 floats (read + write bytes) ----
  row ceiling{"ceiling", "2^28", "cudaMemcpyAsync D2D", "-", "-", "-", 0, 0, 0, 0, 0, timing{},
              2.0 * static_cast<double>(std::int64_t{1} << 28) * sizeof(float), true};
  {
    const std::int64_t n = std::int64_t{1} << 28;
    CHECK(cudaMalloc(&d_copy, n * sizeof(float)));
    ceiling.t = time_calls([&] { CHECK(cudaMemcpyAsync(d_copy, d_x, n * sizeof(float), cudaMemcpyDeviceToDevice)); });
    std::printf("copy ceiling: cudaMemcpyAsync D2D 2^28 floats: median %.2f us, min %.2f us, %.1f GB/s (read + write)\n",
                ceiling.t.median_us, ceiling.t.min_us, ceiling.gbps());
    CHECK(cudaFree(d_copy));
  }

  // ---- segments: regular 1000 x 100000 (timed) and an awkward set (checked only): misaligned
  // starts, empty and short segments, lengths not a multiple of 4 or of any tile ----
  const std::int64_t num_segments = 1000, seg_len = 100000;
  std::vector<std::int64_t> regular(num_segments + 1), awkward(num_segments + 1);
  awkward[0] = 3;
  for (std::int64_t s = 0; s <= num_segments; ++s) regular[s] = s * seg_len;
  for (std::int64_t s = 0; s < num_segments; ++s) {
    const std::int64_t len = s % 7 == 0 ? s % 5 : s % 7 == 1 ? 1 + s % 37 : 99991 + s % 13;
    awkward[s + 1] = awkward[s] + len;
  }
  std::int64_t *d_regular = nullptr, *d_awkward = nullptr;
  CHECK(cudaMalloc(&d_regular, regular.size() * sizeof(std::int64_t)));
  CHECK(cudaMalloc(&d_awkward, awkward.size() * sizeof(std::int64_t)));
  CHECK(cudaMemcpy(d_regular, regular.data(), regular.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_awkward, awkward.data(), awkward.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  float *d_seg_out = nullptr, *d_seg_partials = nullptr;
  CHECK(cudaMalloc(&d_seg_out, num_segments * sizeof(float)));
  CHECK(cudaMalloc(&d_seg_partials, num_segments * 4 * sizeof(float)));
  unsigned int* d_seg_counters = nullptr;
  CHECK(cudaMalloc(&d_seg_counters, num_segments * sizeof(unsigned int)));
  CHECK(cudaMemset(d_seg_counters, 0, num_segments * sizeof(unsigned int)));
  // The library's scratch for the sum: its workspace layout, zeroed once (every library kernel leaves its
  // counters and partial slots at zero).
  const std::size_t lib_bytes = reduce::detail::workspace_bytes;
  void* d_lib_scratch = nullptr;
  CHECK(cudaMalloc(&d_lib_scratch, lib_bytes));
  CHECK(cudaMemset(d_lib_scratch, 0, lib_bytes));
  if (argc > 1 && std::string(argv[1]) == "tail") {
    tail_section(d_x, d_lib_scratch, d_out);
    std::printf("RESULT tail: %s\n", failures ? "FAIL" : "every call within its bound");
    return failures ? 1 : 0;
  }
  if (argc > 1 && std::string(argv[1]) == "heavy") {
    heavy_section(d_x, d_lib_scratch);
    std::printf(failures ? "FAIL: %d check(s) failed\n" : "all checks passed\n", failures);
    return failures ? 1 : 0;
  }

  // ---- CUB temporary storage, allocated once before any timing ----
  std::size_t cub_bytes = 1;
  for (std::int64_t n : sizes) {
    std::size_t b = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, b, d_x, d_out, n));
    cub_bytes = std::max(cub_bytes, b);
  }
  {
    std::size_t b = 0;
    CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, b, d_x, d_seg_out, num_segments, d_regular, d_regular + 1));
    cub_bytes = std::max(cub_bytes, b);
    CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, b, d_x, d_seg_out, num_segments, d_awkward, d_awkward + 1));
    cub_bytes = std::max(cub_bytes, b);
  }
  void* d_cub = nullptr;
  CHECK(cudaMalloc(&d_cub, cub_bytes));
  auto cub_sum = [&](std::int64_t n) {
    std::size_t b = cub_bytes;
    CHECK(cub::DeviceReduce::Sum(d_cub, b, d_x, d_out, n));
  };
  auto cub_segmented = [&](const std::int64_t* d_off, float* out) {
    std::size_t b = cub_bytes;
    CHECK(cub::DeviceSegmentedReduce::Sum(d_cub, b, d_x, out, num_segments, d_off, d_off + 1));
  };

  const std::vector<sum_variant> sv = sum_variants();
  const std::vector<seg_variant> gv = seg_variants();
  std::printf("%zu sum variants, %zu segmented variants; %d warm-up + %d timed calls each, median reported\n",
              sv.size(), gv.size(), warmup_calls, timed_calls);

  const sum_args sargs{d_x, d_partials, d_done, d_out, d_lib_scratch};
  auto launch_sum = [&](const sum_variant& v, std::int64_t n) { v.launch(v, sargs, n); };
  // Generous rounding chain of a sum variant: the per-thread share (n / (grid threads), plus up to one
  // extra tile of Unroll x 4 when tiles do not divide evenly, plus the partial tile and the tail), the
  // block tree (log2 1024 = 10), the finish's per-thread chain (grid / threads + 8) and tree, + 64.
  auto sum_chain = [](const sum_variant& v, std::int64_t n) {
    return static_cast<double>(n) / (static_cast<double>(v.grid) * v.threads) + 3.0 * v.unroll * 4 +
           static_cast<double>(v.grid) / v.threads + 8 + 2 * 10 + 64;
  };
  // CUB: unknown grid; any of its launches has >= one block of >= 128 threads per SM, so
  // n / (SMs x 128) bounds its per-thread share; + 4096 for its tiles, trees and second pass.
  auto cub_chain = [&](std::int64_t n) { return static_cast<double>(n) / (sm_count * 128.0) + 4096; };
  auto seg_chain = [](const seg_variant& v, std::int64_t len) {
    return static_cast<double>(len) / (static_cast<double>(v.threads) * v.chunks) + 3.0 * v.unroll * 4 + 2 * 10 +
           v.chunks + 64;
  };
  auto cub_seg_chain = [](std::int64_t len) { return static_cast<double>(len) / 128.0 + 4096; };
  const seg_args regular_args{d_x, d_regular, num_segments, d_seg_out, d_seg_partials, d_seg_counters};
  const seg_args awkward_args{d_x, d_awkward, num_segments, d_seg_out, d_seg_partials, d_seg_counters};

  auto poison = [&](float* p, std::size_t count) { CHECK(cudaMemset(p, 0xff, count * sizeof(float))); };  // NaN
  auto check_segments = [&](const std::string& name, const std::vector<host_ref>& refs,
                            const std::vector<std::int64_t>& off, bool exact, auto chain_of_len) {
    std::vector<float> got(static_cast<std::size_t>(num_segments));
    CHECK(cudaMemcpy(got.data(), d_seg_out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (std::int64_t s = 0; s < num_segments && ok; ++s)
      ok = check("segment", name + " [segment " + std::to_string(s) + "]", got[static_cast<std::size_t>(s)],
                 refs[static_cast<std::size_t>(s)], chain_of_len(off[s + 1] - off[s]), exact);
    return ok;
  };

  // Tables are printed at the end, after the exactness pass has flagged its failures in them too.
  struct result_table {
    std::string title;
    std::vector<row> rows;
    double cub_median_us;
  };
  std::vector<result_table> tables;
  auto mark_failed = [&](const std::string& section, const std::string& size, const std::string& variant) {
    for (result_table& t : tables)
      for (row& r : t.rows)
        if (r.section == section && r.size == size && r.variant == variant) r.ok = false;
  };

  // ================= timed pass on uniform random data, gamma-bound checks =================
  const std::vector<host_ref> refs = prefix_refs(d_x, sizes);
  const std::vector<host_ref> seg_refs = segment_refs(d_x, regular), awk_refs = segment_refs(d_x, awkward);
  for (std::size_t si = 0; si < sizes.size(); ++si) {
    const std::int64_t n = sizes[si];
    const std::string size = "2^" + std::to_string(static_cast<int>(std::log2(static_cast<double>(n))));
    const double bytes = static_cast<double>(n) * sizeof(float);
    std::vector<row> table;  // CUB first, then the variants
    poison(d_out, 1);
    row cub_row{"cub_sum", size, "cub::DeviceReduce::Sum", "-", "-", "-", 0, 0, 0, 0, 0, timing{}, bytes, true};
    cub_row.t = time_calls([&] { cub_sum(n); });
    cub_row.ok = check(("sum " + size).c_str(), cub_row.variant, read_scalar(d_out), refs[si], cub_chain(n), false);
    table.push_back(cub_row);
    for (const sum_variant& v : sv) {
      poison(d_out, 1);
      row r{"sum",  size,   v.name,         v.sched, v.load,   v.grid_rule, v.threads,
            v.unroll, v.blocks_per_sm, v.regs, v.grid, timing{}, bytes,       true};
      r.t = time_calls([&] { launch_sum(v, n); });
      r.ok = check(("sum " + size).c_str(), v.name, read_scalar(d_out), refs[si], sum_chain(v, n), false);
      table.push_back(r);
    }
    tables.push_back({"sum, n = " + size + " floats (" + std::to_string(n) + "), random [-1, 1)", table,
                      cub_row.t.median_us});
  }
  {
    const double bytes = static_cast<double>(num_segments * seg_len) * sizeof(float) +
                         static_cast<double>(num_segments + 1) * sizeof(std::int64_t);
    const std::string size = std::to_string(num_segments) + "x" + std::to_string(seg_len);
    std::vector<row> table;
    poison(d_seg_out, num_segments);
    row cub_row{"cub_segmented", size, "cub::DeviceSegmentedReduce::Sum", "-", "-", "-", 0, 0, 0, 0, 0, timing{},
                bytes,           true};
    cub_row.t = time_calls([&] { cub_segmented(d_regular, d_seg_out); });
    cub_row.ok = check_segments(cub_row.variant, seg_refs, regular, false, cub_seg_chain);
    poison(d_seg_out, num_segments);
    cub_segmented(d_awkward, d_seg_out);
    cub_row.ok = check_segments(cub_row.variant + " (awkward offsets)", awk_refs, awkward, false, cub_seg_chain) &&
                 cub_row.ok;
    table.push_back(cub_row);
    for (const seg_variant& v : gv) {
      auto chain = [&](std::int64_t len) { return seg_chain(v, len); };
      poison(d_seg_out, num_segments);
      const std::int64_t grid = v.name == lib_seg_name
                                    ? std::min<std::int64_t>(std::int64_t{sm_count} * v.blocks_per_sm, num_segments)
                                    : num_segments * v.chunks;
      row r{"segmented", size,   v.name, v.sched, v.load,   v.grid_rule, v.threads,
            v.unroll,    v.blocks_per_sm, v.regs, grid,  timing{}, bytes,       true};
      r.t = time_calls([&] { v.launch(v, regular_args); });
      r.ok = check_segments(v.name, seg_refs, regular, false, chain);
      poison(d_seg_out, num_segments);
      v.launch(v, awkward_args);
      r.ok = check_segments(v.name + " (awkward offsets)", awk_refs, awkward, false, chain) && r.ok;
      table.push_back(r);
    }
    tables.push_back({"segmented sum, " + size + " floats, int64 offsets, random [-1, 1)", table, cub_row.t.median_us});
  }

  // ================= exactness pass on {-1, 0, 1} data: one untimed call per variant =================
  fill(d_x, n_max, 2, true);
  {
    const std::vector<host_ref> tr = prefix_refs(d_x, sizes);
    const std::vector<host_ref> tseg = segment_refs(d_x, regular), tawk = segment_refs(d_x, awkward);
    int checked = 0;
    for (std::size_t si = 0; si < sizes.size(); ++si) {
      const std::int64_t n = sizes[si];
      const std::string size = "2^" + std::to_string(static_cast<int>(std::log2(static_cast<double>(n))));
      const std::string what = "sum " + size;
      poison(d_out, 1);
      cub_sum(n);
      if (!check(what.c_str(), "cub::DeviceReduce::Sum", read_scalar(d_out), tr[si], 0, true))
        mark_failed("cub_sum", size, "cub::DeviceReduce::Sum");
      for (const sum_variant& v : sv) {
        poison(d_out, 1);
        launch_sum(v, n);
        if (!check(what.c_str(), v.name + " (ternary)", read_scalar(d_out), tr[si], 0, true))
          mark_failed("sum", size, v.name);
        ++checked;
      }
    }
    auto zero = [](std::int64_t) { return 0.0; };
    const std::string seg_size = std::to_string(num_segments) + "x" + std::to_string(seg_len);
    for (int pass = 0; pass < 2; ++pass) {
      const bool awk = pass == 1;
      const auto& refs_now = awk ? tawk : tseg;
      const auto& off = awk ? awkward : regular;
      const std::string suffix = awk ? " (awkward offsets, ternary)" : " (ternary)";
      poison(d_seg_out, num_segments);
      cub_segmented(awk ? d_awkward : d_regular, d_seg_out);
      if (!check_segments("cub::DeviceSegmentedReduce::Sum" + suffix, refs_now, off, true, zero))
        mark_failed("cub_segmented", seg_size, "cub::DeviceSegmentedReduce::Sum");
      for (const seg_variant& v : gv) {
        poison(d_seg_out, num_segments);
        v.launch(v, awk ? awkward_args : regular_args);
        if (!check_segments(v.name + suffix, refs_now, off, true, zero)) mark_failed("segmented", seg_size, v.name);
        ++checked;
      }
    }
    std::printf("\nexactness pass ({-1, 0, 1} input): %d variant runs checked against exact host sums\n", checked);
  }

  std::vector<row> rows{ceiling};
  std::vector<double> cub_for_row{std::nan("")};  // the copy has no CUB peer
  for (const result_table& t : tables) {
    print_table(t.title, t.rows, t.cub_median_us);
    for (const row& r : t.rows) {
      rows.push_back(r);
      cub_for_row.push_back(t.cub_median_us);
    }
  }
  if (argc > 1) write_csv(argv[1], rows, cub_for_row);
  fill(d_x, n_max, 1, false);  // back to the random input
  heavy_section(d_x, d_lib_scratch);
  tail_section(d_x, d_lib_scratch, d_out);
  CHECK(cudaDeviceSynchronize());
  if (failures) {
    std::printf("FAIL: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("all checks passed\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 2;
  }
}
