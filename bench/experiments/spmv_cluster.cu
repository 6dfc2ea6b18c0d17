// Experiment (not part of the default build; -DGPUKIT_BUILD_EXPERIMENTS=ON): can Hopper's distributed
// shared memory (a thread block cluster's shared memories, read through the SM-to-SM network) serve
// SpMV's random x gathers faster than L2?
//
//   spmv_cluster [--classes random16,random1000]
//
// Why: random16, random1000 and powerlaw are bound by L2 sector throughput (bench/experiments/README.md,
// spmv_variants): each random 4-byte gather of x costs a 32-byte L2 sector, and cuSPARSE already reads the
// minimum number of sectors. A cluster of C blocks, one per SM with 224 KiB of shared memory each, holds
// C x 57,344 floats of x (3.5 MiB for C = 16); a gather from it costs no L2 sector.
//
// Part 1 times raw random gathers: an index stream (coalesced) and one 4-byte gather per index, from an
// L2-resident 8 MB array in global memory, from the block's own shared memory, and from a cluster's
// distributed shared memory (C = 2..16). Part 2 is a prototype SpMV: x is split into parts of C x S
// columns; for each part, every cluster loads it into its shared memories and then runs the part's
// stretch of each of its rows (the columns are sorted, so a part's entries are one stretch of the row,
// found from per-row split offsets that the host computes once). Partial row sums carry over parts in
// a global buffer, so each row's sum has a fixed order. Every result is compared with cuSPARSE ALG1.
#include <cooperative_groups.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpukit/cuda_timer.hpp"
#include "gpukit/cuda_check.hpp"
#include "reduce/cuda/warp_reduce.cuh"
#include "gpukit/device_buffer.hpp"
#include "sparse/csr.hpp"
#include "sparse/generate.hpp"
#include "sparse/spmv.hpp"
#include "fill.cuh"
#include "spmv_harness.hpp"

namespace cg = cooperative_groups;

namespace {
using V = float;
using I = std::int32_t;
constexpr int kThreads = 1024;

// ---------------------------------------------------------------- part 1: raw gathers
__global__ void fill_index_kernel(int* idx, std::int64_t n, std::int64_t range, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    idx[i] = static_cast<int>(experiments::mix64(static_cast<std::uint64_t>(i), seed) % static_cast<std::uint64_t>(range));
}

__global__ void __launch_bounds__(kThreads, 1)
global_gather_kernel(const int4* __restrict__ idx, std::int64_t n4, const float* __restrict__ x, float* out) {
  float s = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const int4 v = idx[i];
    s += __ldg(x + v.x) + __ldg(x + v.y) + __ldg(x + v.z) + __ldg(x + v.w);
  }
  out[blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x] = s;
}

template <int C, int S>
__global__ void __launch_bounds__(kThreads, 1)
dsmem_gather_kernel(const int4* __restrict__ idx, std::int64_t n4, float* out) {
  extern __shared__ float4 smem4[];
  float* xs = reinterpret_cast<float*>(smem4);
  cg::cluster_group cluster = cg::this_cluster();
  const int q = static_cast<int>(cluster.block_rank());
  for (int j = threadIdx.x; j < S; j += blockDim.x) xs[j] = static_cast<float>(q * S + j) * 1e-7f;
  cluster.sync();
  float s = 0;
  auto at = [&](int c) {
    const int owner = c / S;
    return *(cluster.map_shared_rank(xs, owner) + (c - owner * S));
  };
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const int4 v = idx[i];
    s += at(v.x) + at(v.y) + at(v.z) + at(v.w);
  }
  out[blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x] = s;
  cluster.sync();  // no block may leave while its shared memory can still be read
}

// A launch of `grid` kThreads-thread blocks in clusters of `c`, with `smem` bytes of dynamic shared memory.
struct cluster_launch {
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr{};
  cluster_launch(int c, int smem, int grid, cudaStream_t s) {
    cfg.gridDim = dim3(static_cast<unsigned>(grid));
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = static_cast<std::size_t>(smem);
    cfg.stream = s;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = static_cast<unsigned>(c);
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
  }
  cluster_launch(const cluster_launch&) = delete;  // cfg.attrs points into this object
  cluster_launch& operator=(const cluster_launch&) = delete;
};

template <class... Params, class... Args>
void launch_cluster(void (*kernel)(Params...), int c, int smem, int grid, cudaStream_t s, Args... args) {
  const cluster_launch l(c, smem, grid, s);
  GPUKIT_CUDA_CHECK(cudaLaunchKernelEx(&l.cfg, kernel, static_cast<Params>(args)...));
}

// Grid of as many clusters as fit at once (one block per SM with this much shared memory).
template <class... Params>
int cluster_grid(void (*kernel)(Params...), int c, int smem) {
  GPUKIT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  if (c > 8) GPUKIT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const cluster_launch l(c, smem, c, nullptr);
  int clusters = 0;
  GPUKIT_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &l.cfg));
  if (clusters < 1) throw std::runtime_error("no cluster of " + std::to_string(c) + " fits");
  return clusters * c;
}

template <int C, int S>
void raw_dsmem(gpukit::cuda_timer& timer, cudaStream_t stream, std::int64_t n, float* out) {
  gpukit::device_buffer<int> idx(static_cast<std::size_t>(n));
  fill_index_kernel<<<1024, 256, 0, stream>>>(idx.data(), n, std::int64_t{C} * S, 99);
  GPUKIT_CHECK_LAUNCH();
  const int smem = S * 4;
  auto* k = dsmem_gather_kernel<C, S>;
  const int grid = cluster_grid(k, C, smem);
  const auto* idx4 = reinterpret_cast<const int4*>(idx.data());
  const double us = timer.time([&] { launch_cluster(k, C, smem, grid, stream, idx4, n / 4, out); }, {3, 21}).median_us;
  std::printf("  DSMEM, cluster of %2d x %6d floats (%5.2f MB), grid %4d: %8.1f us  %6.1f G gathers/s\n", C, S,
              C * S * 4.0 / 1e6, grid, us, n / us / 1e3);
}

void raw_gathers(cudaStream_t stream) {
  std::printf("Part 1: 32M random 4-byte gathers, index stream coalesced (int4), 1024-thread blocks\n");
  const std::int64_t n = std::int64_t{1} << 25;
  gpukit::cuda_timer timer(stream);
  int per_sm = 0, sms = 0, threads_per_sm = 0, dev = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&dev));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  GPUKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, global_gather_kernel, kThreads, 0));
  // One sink value per thread (the sums are written so the gathers are not optimized away). Every grid
  // here is one wave of resident blocks, so at most threads_per_sm per SM.
  gpukit::device_buffer<float> out(static_cast<std::size_t>(sms) * static_cast<std::size_t>(threads_per_sm));
  {
    const std::int64_t range = 2000000;  // random16's x: 8 MB, L2-resident
    gpukit::device_buffer<int> idx(static_cast<std::size_t>(n));
    gpukit::device_buffer<float> x(static_cast<std::size_t>(range));
    GPUKIT_CUDA_CHECK(cudaMemsetAsync(x.data(), 0, sizeof(float) * static_cast<std::size_t>(range), stream));
    fill_index_kernel<<<1024, 256, 0, stream>>>(idx.data(), n, range, 7);
    GPUKIT_CHECK_LAUNCH();
    const int grid = per_sm * sms;
    const auto* idx4 = reinterpret_cast<const int4*>(idx.data());
    const double us = timer.time([&] {
      global_gather_kernel<<<grid, kThreads, 0, stream>>>(idx4, n / 4, x.data(), out.data());
      GPUKIT_CHECK_LAUNCH();
    }, {3, 21}).median_us;
    std::printf("  global (L2), 8 MB array, grid %4d:                       %8.1f us  %6.1f G gathers/s\n", grid, us,
                n / us / 1e3);
  }
  raw_dsmem<1, 57344>(timer, stream, n, out.data());
  raw_dsmem<2, 57344>(timer, stream, n, out.data());
  raw_dsmem<4, 57344>(timer, stream, n, out.data());
  raw_dsmem<8, 57344>(timer, stream, n, out.data());
  raw_dsmem<16, 57344>(timer, stream, n, out.data());
  raw_dsmem<16, 28672>(timer, stream, n, out.data());
}

// ---------------------------------------------------------------- part 2: SpMV prototype
// split[(p - 1) * rows + r] = offset within row r of its first entry in part p (p = 1 .. parts-1).
template <int C, int S, int W>
__global__ void __launch_bounds__(kThreads, 1)
spmv_cluster_kernel(sparse::csr_view<V, I> a, const V* __restrict__ x, V* __restrict__ y, V* __restrict__ partial,
                    const std::uint16_t* __restrict__ split, int parts) {
  extern __shared__ float4 smem4[];
  V* xs = reinterpret_cast<V*>(smem4);
  cg::cluster_group cluster = cg::this_cluster();
  const int q = static_cast<int>(cluster.block_rank());
  const std::int64_t cid = blockIdx.x / C, clusters = gridDim.x / C;
  const std::int64_t per = (a.rows + clusters - 1) / clusters;
  const std::int64_t r0 = cid * per, r1 = std::min<std::int64_t>(a.rows, r0 + per);
  const int lane = static_cast<int>(threadIdx.x) % W;
  const std::int64_t grp = (static_cast<std::int64_t>(q) * kThreads + threadIdx.x) / W;
  constexpr std::int64_t groups = std::int64_t{C} * kThreads / W;
  constexpr std::int64_t width = std::int64_t{C} * S;
  constexpr int per_warp = 32 / W;
  const std::int64_t first_of_warp = grp - grp % per_warp;
  for (int p = 0; p < parts; ++p) {
    const std::int64_t base = p * width + static_cast<std::int64_t>(q) * S;
    for (int j = threadIdx.x; j < S; j += kThreads) xs[j] = base + j < a.cols ? __ldg(x + base + j) : V(0);
    cluster.sync();
    for (std::int64_t rw = r0 + first_of_warp; rw < r1; rw += groups) {  // warp-uniform trip count
      const std::int64_t r = rw + grp % per_warp;
      const bool live = r < r1;
      std::int64_t lo = 0, hi = 0;
      if (live) {
        const std::int64_t b = a.row_ptr[r], e = a.row_ptr[r + 1];
        lo = p == 0 ? b : b + split[(p - 1) * a.rows + r];
        hi = p == parts - 1 ? e : b + split[p * a.rows + r];
      }
      V s = 0;
      for (std::int64_t k = lo + lane; k < hi; k += W) {
        const int c = static_cast<int>(a.col_idx[k] - p * width);
        const int owner = c / S;
        s += a.values[k] * *(cluster.map_shared_rank(xs, owner) + (c - owner * S));
      }
      s = reduce::warp::sum<W>(s);
      if (live && lane == 0) {
        const V acc = p == 0 ? s : partial[r] + s;
        if (p == parts - 1) y[r] = acc;
        else partial[r] = acc;
      }
    }
    cluster.sync();  // the part's x is read by the whole cluster before the next part overwrites it
  }
}

using variant = experiments::spmv_variant<V>;

template <int C, int S, int W>
variant cluster_variant(const sparse::csr_view<V, I>& a, const std::vector<I>& row_ptr, const std::vector<I>& col,
                        const V* x, V* y, V* partial, std::vector<std::unique_ptr<gpukit::device_buffer<std::uint16_t>>>& keep) {
  constexpr std::int64_t width = std::int64_t{C} * S;
  const int parts = static_cast<int>(std::max<std::int64_t>(1, (a.cols + width - 1) / width));
  std::vector<std::uint16_t> split(static_cast<std::size_t>(std::max(1, parts - 1)) * static_cast<std::size_t>(a.rows), 0);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const auto* b = col.data() + row_ptr[static_cast<std::size_t>(r)];
    const auto* e = col.data() + row_ptr[static_cast<std::size_t>(r) + 1];
    if (e - b > 65535)  // the split offsets are 16-bit
      throw std::runtime_error("row " + std::to_string(r) + " has " + std::to_string(e - b) +
                               " entries; the prototype's split offsets allow at most 65535");
    for (int p = 1; p < parts; ++p)
      split[static_cast<std::size_t>(p - 1) * static_cast<std::size_t>(a.rows) + static_cast<std::size_t>(r)] =
          static_cast<std::uint16_t>(std::lower_bound(b, e, static_cast<I>(p * width)) - b);
  }
  keep.push_back(std::make_unique<gpukit::device_buffer<std::uint16_t>>(split.size()));
  GPUKIT_CUDA_CHECK(cudaMemcpy(keep.back()->data(), split.data(), 2 * split.size(), cudaMemcpyHostToDevice));
  const std::uint16_t* sp = keep.back()->data();
  auto* k = spmv_cluster_kernel<C, S, W>;
  const int smem = S * 4;
  const int grid = cluster_grid(k, C, smem);
  return {"cluster " + std::to_string(C) + " x " + std::to_string(S) + " floats, W=" + std::to_string(W) + ", " +
              std::to_string(parts) + " parts, grid " + std::to_string(grid),
          [=](cudaStream_t s) { launch_cluster(k, C, smem, grid, s, a, x, y, partial, sp, parts); }};
}

bool run_class(const sparse::benchmark_matrix& m, cudaStream_t stream) {
  experiments::study_matrix<V, I> sm(m);
  const auto& host = sm.host;
  const auto& d = sm.d;
  const auto& a = sm.a;
  auto &x = sm.x, &y = sm.y, &y_peer = sm.y_peer;
  gpukit::device_buffer<V> partial(a.rows);
  std::vector<std::unique_ptr<gpukit::device_buffer<std::uint16_t>>> keep;
  std::vector<variant> vs;
  sparse::spmv_plan<V, I> plan(d, sparse::spmv_algorithm::automatic);
  vs.push_back({"library automatic", [&](cudaStream_t s) { sparse::spmv(plan, V(1), x.data(), V(0), y.data(), s); }});
  const auto& rp = host.row_ptr();
  const auto& ci = host.col_idx();
  if (m.name == "random16") {
    vs.push_back(cluster_variant<16, 57344, 4>(a, rp, ci, x.data(), y.data(), partial.data(), keep));
    vs.push_back(cluster_variant<16, 57344, 2>(a, rp, ci, x.data(), y.data(), partial.data(), keep));
    vs.push_back(cluster_variant<8, 57344, 2>(a, rp, ci, x.data(), y.data(), partial.data(), keep));
  } else if (m.name == "random1000") {
    vs.push_back(cluster_variant<16, 57344, 32>(a, rp, ci, x.data(), y.data(), partial.data(), keep));
    vs.push_back(cluster_variant<8, 57344, 32>(a, rp, ci, x.data(), y.data(), partial.data(), keep));
  } else {
    std::fprintf(stderr, "spmv_cluster: no variants for class %s\n", m.name.c_str());
    return false;
  }

  sparse::cusparse_spmv<V, I> peer(a, sparse::cusparse_algorithm::alg1, x.data(), y_peer.data(), V(1), V(0), stream);
  const auto ref = experiments::run_peer(peer, y_peer.data(), a.rows, stream);
  return experiments::time_variants(m.name, a, peer, ref, y.data(), vs, stream);
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> classes{"random16", "random1000"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--classes" && i + 1 < argc) classes = experiments::split_commas(argv[++i]);
    else {
      std::fprintf(stderr, "usage: spmv_cluster [--classes a,b]\n");
      return 2;
    }
  }
  return experiments::run_classes("spmv_cluster", classes, "every variant close to cuSPARSE", run_class, raw_gathers);
}
