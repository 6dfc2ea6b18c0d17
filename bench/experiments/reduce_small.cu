// Experiment (GPUKIT_BUILD_EXPERIMENTS=ON): the cross-block finish of a one-launch float sum at small and
// medium N (2^12 .. 2^22), against the library's default and cub::DeviceReduce::Sum in the same process.
//
// Question: at 2^18..2^20 the library's single launch is SLOWER in device time than CUB's two kernels
// (graph-timed 3.36 vs 2.63 us at 2^18 on an H200): its last-block finish costs ~1.3 us (partial store,
// __threadfence, a serialized counter atomic per block, a fence and a reload in the last block). Variants:
//   ticket:  each block takes a ticket (atomicAdd) as it STARTS, overlapped with its loads; non-last
//            blocks publish {partial, flag} in ONE 64-bit relaxed store (no fence: value and flag arrive
//            together); the block with the last ticket (all others have started, so they will finish)
//            polls the slots and sums them in block order. No fence, no atomic on the critical path.
//   cluster: one thread-block cluster (8 or 16 blocks): partials go to block 0's shared memory through
//            distributed shared memory, one cluster barrier, no global round trip at all.
//   cluster+ticket: clusters of 8 reduce in DSMEM, then the cluster leaders finish with the ticket.
// Every variant sums in an order fixed by (n, grid), so results must be run-to-run bitwise identical;
// each is checked against a double-precision host sum with the bound gamma_k * sum|x|.
#include <cooperative_groups.h>
#include <cub/device/device_reduce.cuh>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gpukit/cuda_timer.hpp"
#include "fill.cuh"
#include "sum_check.hpp"
#include "reduce/cuda/block_reduce.cuh"
#include "gpukit/cuda_check.hpp"
#include "libreduce/src/cuda/single_pass.cuh"
#include "gpukit/device_buffer.hpp"
#include "reduce/operators.hpp"
#include "reduce/reduce.hpp"

namespace cg = cooperative_groups;

namespace {

template <int Threads, int Unroll>
__device__ __forceinline__ float block_part(const float* __restrict__ x, std::int64_t n, int rank, int blocks,
                                            typename reduce::block::block_reduce<Threads, float>::storage& tmp) {
  float acc = 0.0f;
  reduce::detail::traverse<Threads, Unroll, false>(x, x, n, rank, blocks,
                                                   [&](std::int64_t, float a, float) { acc += a; });
  return reduce::block::block_reduce<Threads, float>::reduce(acc, reduce::plus{}, tmp);  // thread 0
}

__device__ __forceinline__ void store_slot(unsigned long long* p, float v) {
  const unsigned long long w = (1ull << 32) | __float_as_uint(v);
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}
__device__ __forceinline__ unsigned long long load_slot(const unsigned long long* p) {
  unsigned long long w;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
  return w;
}

/// Ticket finish among `parties` publishers (blocks, or cluster leaders); `me` is this party's slot,
/// `part` its partial (valid in thread 0). Called by every thread of the party's block.
/// Release/acquire flavour for accumulators too wide to share a 64-bit word with the flag: the partial
/// is a plain store, the flag a st.release (ordered after it); the combiner polls with ld.acquire.
__device__ __forceinline__ void publish_release(unsigned long long* slot, float v) {
  float* value = reinterpret_cast<float*>(slot);
  *value = v;
  unsigned* flag = reinterpret_cast<unsigned*>(slot) + 1;
  asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(flag), "r"(1u) : "memory");
}
__device__ __forceinline__ float wait_acquire(unsigned long long* slot) {
  const unsigned* flag = reinterpret_cast<const unsigned*>(slot) + 1;
  unsigned f;
  do asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(f) : "l"(flag) : "memory");
  while (f == 0);
  return __ldcg(reinterpret_cast<const float*>(slot));
}

template <int Threads, bool Packed = true>
__device__ void ticket_finish(unsigned ticket, unsigned me, unsigned parties, float part, unsigned long long* slots,
                             unsigned* tickets, float* out,
                             typename reduce::block::block_reduce<Threads, float>::storage& tmp) {
  __shared__ float mine;
  if (ticket != parties - 1) {
    if (threadIdx.x == 0) {
      if constexpr (Packed) store_slot(slots + me, part);
      else publish_release(slots + me, part);
    }
    return;
  }
  if (threadIdx.x == 0) mine = part;
  __syncthreads();
  float total = 0.0f;
  for (unsigned b = threadIdx.x; b < parties; b += Threads) {  // slot order per thread, then a fixed tree
    float v;
    if (b == me) {
      v = mine;
    } else {
      if constexpr (Packed) {
        unsigned long long w;
        do w = load_slot(slots + b);
        while ((w >> 32) == 0);
        v = __uint_as_float(static_cast<unsigned>(w));
      } else {
        v = wait_acquire(slots + b);
      }
      slots[b] = 0;  // ready for the next call (every publisher of this call has written)
    }
    total += v;
  }
  __syncthreads();
  total = reduce::block::block_reduce<Threads, float>::reduce(total, reduce::plus{}, tmp);
  if (threadIdx.x == 0) {
    *out = total;
    *tickets = 0;
  }
}

template <int Threads, int Unroll, bool Packed>
__global__ void __launch_bounds__(Threads)
ticket_kernel(const float* __restrict__ x, std::int64_t n, unsigned long long* slots, unsigned* tickets, float* out) {
  __shared__ typename reduce::block::block_reduce<Threads, float>::storage tmp;
  __shared__ unsigned ticket;
  if (threadIdx.x == 0) ticket = atomicAdd(tickets, 1u);  // its round trip overlaps the loads below
  const float part = block_part<Threads, Unroll>(x, n, static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x), tmp);
  __syncthreads();
  ticket_finish<Threads, Packed>(ticket, blockIdx.x, gridDim.x, part, slots, tickets, out, tmp);
}

/// Clusters of C blocks (launch attribute); Ticket: several clusters finished by the ticket among their
/// leaders; otherwise the grid is ONE cluster and its block 0 writes the result.
template <int Threads, int Unroll, bool Ticket>
__global__ void __launch_bounds__(Threads)
cluster_kernel(const float* __restrict__ x, std::int64_t n, unsigned long long* slots, unsigned* tickets, float* out) {
  __shared__ typename reduce::block::block_reduce<Threads, float>::storage tmp;
  __shared__ float parts[16];
  __shared__ unsigned ticket;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), size = cluster.num_blocks();
  const unsigned cluster_id = blockIdx.x / size, clusters = gridDim.x / size;
  if (Ticket && rank == 0 && threadIdx.x == 0) ticket = atomicAdd(tickets, 1u);
  const float part = block_part<Threads, Unroll>(x, n, static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x), tmp);
  if (threadIdx.x == 0) *cluster.map_shared_rank(&parts[rank], 0) = part;
  cluster.sync();  // release/acquire across the cluster: block 0 sees every part
  if (rank != 0) return;
  float s = 0.0f;
  if (threadIdx.x == 0)
    for (unsigned k = 0; k < size; ++k) s += parts[k];
  if constexpr (Ticket) {
    __syncthreads();
    ticket_finish<Threads>(ticket, cluster_id, clusters, s, slots, tickets, out, tmp);
  } else {
    if (threadIdx.x == 0) *out = s;
  }
}

struct variant {
  std::string name;
  std::function<void(const float*, std::int64_t, float*, cudaStream_t)> run;
  std::function<std::int64_t(std::int64_t)> blocks;  // grid for n (for the error bound's chain length)
};

int g_sms = 0;

std::int64_t grid_by_bytes(std::int64_t n, std::int64_t per_block_bytes, std::int64_t multiple, std::int64_t cap) {
  std::int64_t b = (n * 4 + per_block_bytes - 1) / per_block_bytes;
  b = std::max<std::int64_t>(1, std::min(b, cap));
  return (b + multiple - 1) / multiple * multiple;
}

template <int Threads, int Unroll, bool Packed = true>
variant make_ticket(std::int64_t per_block_bytes, unsigned long long* slots, unsigned* tickets) {
  auto grid = [=](std::int64_t n) { return grid_by_bytes(n, per_block_bytes, 1, 2 * g_sms); };
  return {std::string(Packed ? "ticket " : "ticket rel/acq ") + std::to_string(Threads) + "t x" + std::to_string(Unroll) + " " +
              std::to_string(per_block_bytes >> 10) + "K/blk",
          [=](const float* x, std::int64_t n, float* out, cudaStream_t s) {
            ticket_kernel<Threads, Unroll, Packed><<<static_cast<unsigned>(grid(n)), Threads, 0, s>>>(x, n, slots, tickets, out);
            GPUKIT_CHECK_LAUNCH();
          },
          grid};
}

template <int Threads, int Unroll, bool Ticket>
variant make_cluster(int cluster, std::int64_t per_block_bytes, unsigned long long* slots, unsigned* tickets) {
  auto kernel = cluster_kernel<Threads, Unroll, Ticket>;
  if (cluster > 8) GPUKIT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  auto grid = [=](std::int64_t n) {
    return Ticket ? grid_by_bytes(n, per_block_bytes, cluster, 2 * g_sms / cluster * cluster) : std::int64_t{cluster};
  };
  return {std::string(Ticket ? "cluster" : "one cluster") + " of " + std::to_string(cluster) + " " +
              std::to_string(Threads) + "t x" + std::to_string(Unroll) +
              (Ticket ? " " + std::to_string(per_block_bytes >> 10) + "K/blk +ticket" : ""),
          [=](const float* x, std::int64_t n, float* out, cudaStream_t s) {
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(static_cast<unsigned>(grid(n)));
            cfg.blockDim = dim3(Threads);
            cfg.stream = s;
            cudaLaunchAttribute attr[1];
            attr[0].id = cudaLaunchAttributeClusterDimension;
            attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
            attr[0].val.clusterDim.y = 1;
            attr[0].val.clusterDim.z = 1;
            cfg.attrs = attr;
            cfg.numAttrs = 1;
            GPUKIT_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, x, n, slots, tickets, out));
            GPUKIT_CHECK_LAUNCH();
          },
          grid};
}

}  // namespace

int main() {
  try {
    cudaDeviceProp prop{};
    GPUKIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    std::printf("GPU: %s, %d SMs\n", prop.name, g_sms);
    cudaStream_t stream;
    GPUKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const std::int64_t max_n = std::int64_t{1} << 22;
    const experiments::uniform_floats input = experiments::make_uniform_floats(max_n, 7, stream);
    const gpukit::device_buffer<float>& x = input.device;
    const std::vector<float>& hx = input.host;
    gpukit::device_buffer<float> out(1);
    gpukit::device_buffer<unsigned long long> slots(4096);
    gpukit::device_buffer<unsigned> tickets(1);
    GPUKIT_CUDA_CHECK(cudaMemset(slots.data(), 0, 4096 * 8));
    GPUKIT_CUDA_CHECK(cudaMemset(tickets.data(), 0, 4));
    reduce::workspace ws;

    std::vector<variant> vs;
    void* cub_tmp = nullptr;
    std::size_t cub_bytes = 0;
    GPUKIT_CUDA_CHECK(cub::DeviceReduce::Sum(cub_tmp, cub_bytes, x.data(), out.data(), max_n, stream));
    GPUKIT_CUDA_CHECK(cudaMalloc(&cub_tmp, cub_bytes + 4096));
    const std::size_t cub_cap = cub_bytes + 4096;
    vs.push_back({"CUB DeviceReduce::Sum", [&](const float* p, std::int64_t n, float* o, cudaStream_t s) {
                    std::size_t b = cub_cap;
                    GPUKIT_CUDA_CHECK(cub::DeviceReduce::Sum(cub_tmp, b, p, o, n, s));
                  },
                  [](std::int64_t) { return std::int64_t{4096}; }});
    vs.push_back({"library default", [&](const float* p, std::int64_t n, float* o, cudaStream_t s) {
                    reduce::sum(p, n, o, ws, s);
                  },
                  [](std::int64_t) { return std::int64_t{2048}; }});
    vs.push_back(make_ticket<256, 4>(16 << 10, slots.data(), tickets.data()));
    vs.push_back(make_ticket<256, 4>(32 << 10, slots.data(), tickets.data()));
    vs.push_back(make_ticket<512, 4>(32 << 10, slots.data(), tickets.data()));
    vs.push_back(make_ticket<256, 4, false>(16 << 10, slots.data(), tickets.data()));
    vs.push_back(make_ticket<512, 2>(16 << 10, slots.data(), tickets.data()));
    vs.push_back(make_cluster<512, 4, false>(8, 0, slots.data(), tickets.data()));
    vs.push_back(make_cluster<1024, 4, false>(16, 0, slots.data(), tickets.data()));
    vs.push_back(make_cluster<256, 4, true>(8, 16 << 10, slots.data(), tickets.data()));
    vs.push_back(make_cluster<512, 2, true>(8, 16 << 10, slots.data(), tickets.data()));

    gpukit::cuda_timer timer(stream);
    bool ok = true;
    std::printf("%-40s %6s %9s %9s %9s %9s  %s\n", "variant", "N", "plain us", "graph us", "vs CUB", "vs CUBg", "check");
    for (int lg : {12, 14, 16, 18, 20, 22}) {
      const std::int64_t n = std::int64_t{1} << lg;
      const experiments::host_sum h = experiments::host_sum_of(hx, n);
      double cub_plain = 0, cub_graph = 0;
      for (auto& v : vs) {
        if (v.name.rfind("one cluster", 0) == 0 && lg > 20) continue;
        const char* check =
            experiments::check_float_sum([&] { v.run(x.data(), n, out.data(), stream); }, out.data(), stream, n, h);
        if (std::string(check) != "ok") ok = false;
        const double plain = timer.time([&] { v.run(x.data(), n, out.data(), stream); }, {5, 61}).median_us;
        const double graph =
            timer.time_graph([&] { v.run(x.data(), n, out.data(), stream); }, 100, {2, 11}).median_us;
        if (v.name.rfind("CUB", 0) == 0) cub_plain = plain, cub_graph = graph;
        std::printf("%-40s   2^%-2d %9.2f %9.2f %8.3fx %8.3fx  %s\n", v.name.c_str(), lg, plain, graph,
                    cub_plain > 0 ? plain / cub_plain : 0.0, cub_graph > 0 ? graph / cub_graph : 0.0, check);
      }
    }
    GPUKIT_CUDA_CHECK(cudaFree(cub_tmp));
    GPUKIT_CUDA_CHECK(cudaStreamDestroy(stream));
    std::printf("RESULT: %s\n", ok ? "all variants within bound and deterministic" : "FAIL");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reduce_small: error: %s\n", e.what());
    return 1;
  }
}
