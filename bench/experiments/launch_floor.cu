// Experiment (GPUKIT_BUILD_EXPERIMENTS=ON): where the time of one small reduction goes in the "plain"
// timing (CUDA events around ONE call, stream synchronized between samples: how ANCHORS.md and `reduce
// bench` measure), and how much of it any launch costs before a kernel does any work.
//
// Question: the target asks for at most 0.65x CUB's time at 2^14..2^20. CUB runs two kernels there, the
// library one. If an EMPTY kernel launched the same way already costs more than 0.65x CUB's call, no
// kernel can meet the target; if the host's launch call dominates, a cheaper launch path (the driver's
// cuLaunchKernel with a cached function handle instead of the runtime's <<<>>>) is the lever.
//
// Rows: "host us" is the host's cost of one call (200 calls issued back to back, wall clock / 200);
// "plain us" the median of 61 event-timed single calls. The sums are checked: within gamma_k sum|x| of a
// double host sum, and the direct launches bitwise equal to the library's call (same kernel, same grid).
#include <cub/device/device_reduce.cuh>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <chrono>
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
#include "gpukit/cuda_check.hpp"
#include "libreduce/src/cuda/device_reduce.cuh"
#include "gpukit/device_buffer.hpp"
#include "reduce/reduce.hpp"

namespace {

#define CU_CHECK(call)                                                                       \
  do {                                                                                       \
    const CUresult r_ = (call);                                                              \
    if (r_ != CUDA_SUCCESS) {                                                                \
      const char* s_ = nullptr;                                                              \
      cuGetErrorName(r_, &s_);                                                               \
      throw std::runtime_error(std::string(#call) + " failed: " + (s_ ? s_ : "unknown"));   \
    }                                                                                        \
  } while (0)

__global__ void empty_kernel() {}

/// The single-pass sum's parameter list, no body: what the parameters alone cost.
__global__ void empty_params_kernel(const float*, const float*, std::int64_t, reduce::detail::op_reducer<float, reduce::plus>,
                                    unsigned long long*, unsigned*, float*) {}

// ---- the latency ladder of a small sum: each rung adds one thing a one-block reduction must do ----

__global__ void param_store_kernel(std::int64_t n, float* out) {
  if (threadIdx.x == 0) *out = static_cast<float>(n);
}
__global__ void one_load_kernel(const float* __restrict__ x, std::int64_t n, float* out) {
  if (threadIdx.x == 0) *out = __ldg(x + n - 1);
}

/// Compact float sum of this block's share (aligned float4 data, n % 4 == 0): tiles of T * U vectors,
/// block `rank` of `blocks` takes tiles rank, rank + blocks, ...; guarded loads, all U issued first.
template <int T, int U>
__device__ __forceinline__ float compact_part(const float4* __restrict__ v, std::int64_t nv, int rank, int blocks) {
  float acc = 0.0f;
  const int tid = static_cast<int>(threadIdx.x);
  for (std::int64_t base = static_cast<std::int64_t>(rank) * T * U; base < nv; base += static_cast<std::int64_t>(blocks) * T * U) {
    float4 a[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const std::int64_t i = base + k * T + tid;
      a[k] = i < nv ? __ldg(v + i) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int k = 0; k < U; ++k) {
      acc += a[k].x;
      acc += a[k].y;
      acc += a[k].z;
      acc += a[k].w;
    }
  }
  return acc;
}

template <int T, int U>
__global__ void __launch_bounds__(T) compact_block_kernel(const float* __restrict__ x, std::int64_t n, float* __restrict__ out) {
  using br = reduce::block::block_reduce<T, float>;
  __shared__ typename br::storage tmp;
  float acc = compact_part<T, U>(reinterpret_cast<const float4*>(x), n / 4, 0, 1);
  acc = br::reduce(acc, reduce::plus{}, tmp);
  if (threadIdx.x == 0) *out = acc;
}

/// The library's ticket finish (publish_partial / collect_partials) around compact_part.
template <int T, int U>
__global__ void __launch_bounds__(T)
compact_ticket_kernel(const float* __restrict__ x, std::int64_t n, unsigned long long* __restrict__ slots,
                      unsigned* __restrict__ tickets, float* __restrict__ out) {
  using br = reduce::block::block_reduce<T, float>;
  __shared__ typename br::storage tmp;
  __shared__ unsigned ticket;
  __shared__ float mine;
  if (threadIdx.x == 0) ticket = atomicAdd(tickets, 1u);
  float acc = compact_part<T, U>(reinterpret_cast<const float4*>(x), n / 4, static_cast<int>(blockIdx.x),
                                 static_cast<int>(gridDim.x));
  acc = br::reduce(acc, reduce::plus{}, tmp);
  __syncthreads();
  if (ticket != gridDim.x - 1) {
    if (threadIdx.x == 0) reduce::detail::publish_partial(slots + blockIdx.x, acc);
    return;
  }
  if (threadIdx.x == 0) mine = acc;
  __syncthreads();
  const reduce::detail::op_reducer<float, reduce::plus> r{reduce::plus{}, 0.0f};
  float total = reduce::detail::collect_partials<T, float>(slots, gridDim.x, blockIdx.x, mine, r);
  __syncthreads();
  total = br::reduce(total, reduce::plus{}, tmp);
  if (threadIdx.x == 0) {
    *out = total;
    *tickets = 0;
  }
}

/// Ablations between compact_block_kernel<256, 4> and the library's single_pass_kernel<256, 4> on one
/// block: Traverse = the library's traverse instead of compact_part; Ticket = the library's ticket
/// prologue (skipped on one block, but compiled in); WideParams = the library's seven parameters.
template <bool Traverse, bool Ticket>
__global__ void __launch_bounds__(256)
ablation_kernel(const float* __restrict__ x, const float* __restrict__ y, std::int64_t n,
                reduce::detail::op_reducer<float, reduce::plus> r, unsigned long long* __restrict__ slots,
                unsigned* __restrict__ tickets, float* __restrict__ out) {
  using br = reduce::block::block_reduce<256, float>;
  __shared__ typename br::storage tmp;
  __shared__ unsigned ticket;
  if (Ticket && gridDim.x > 1 && threadIdx.x == 0) ticket = atomicAdd(tickets, 1u);
  float acc = 0.0f;
  if constexpr (Traverse) {
    reduce::detail::traverse<256, 4, false>(x, y, n, 0, 1, [&](std::int64_t i, float a, float b) { r.add(acc, a, b, i); });
  } else {
    acc = compact_part<256, 4>(reinterpret_cast<const float4*>(x), n / 4, 0, 1);
  }
  acc = br::reduce(acc, reduce::plus{}, tmp);
  if (Ticket && gridDim.x > 1) {
    __syncthreads();
    if (threadIdx.x == 0 && ticket == 12345u) slots[0] = 1;  // never taken on one block
  }
  if (threadIdx.x == 0) *out = acc;
}

CUfunction driver_handle(const void* kernel) {
  cudaFunction_t f = nullptr;
  GPUKIT_CUDA_CHECK(cudaGetFuncBySymbol(&f, kernel));
  return reinterpret_cast<CUfunction>(f);
}

struct row {
  std::string name;
  double host_us = 0, plain_us = 0, graph_us = 0;
};

row measure(const std::string& name, const std::function<void()>& call, gpukit::cuda_timer& timer, cudaStream_t s) {
  row r{name};
  for (int i = 0; i < 5; ++i) call();
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(s));
  constexpr int batch = 200;
  std::vector<double> host;
  for (int rep = 0; rep < 7; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) call();
    const auto t1 = std::chrono::steady_clock::now();
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(s));
    host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / batch);
  }
  r.host_us = gpukit::median_of(host);
  r.plain_us = timer.time(call, {5, 61}).median_us;
  r.graph_us = timer.time_graph(call, 100, {2, 11}).median_us;
  return r;
}

}  // namespace

int main() {
  try {
    CU_CHECK(cuInit(0));
    cudaDeviceProp prop{};
    GPUKIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("GPU: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    cudaStream_t stream;
    GPUKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    gpukit::cuda_timer timer(stream);
    bool ok = true;

    // ---- empty launches ----
    const CUfunction empty_f = driver_handle(reinterpret_cast<const void*>(&empty_kernel));
    std::vector<row> floor_rows;
    floor_rows.push_back(measure("events only (no launch)", [] {}, timer, stream));
    floor_rows.push_back(measure("empty kernel <<<1, 32>>>", [&] { empty_kernel<<<1, 32, 0, stream>>>(); }, timer, stream));
    floor_rows.push_back(measure("empty kernel <<<1, 512>>>", [&] { empty_kernel<<<1, 512, 0, stream>>>(); }, timer, stream));
    floor_rows.push_back(measure("empty kernel <<<264, 512>>>", [&] { empty_kernel<<<264, 512, 0, stream>>>(); }, timer, stream));
    {
      reduce::detail::op_reducer<float, reduce::plus> r{reduce::plus{}, 0.0f};
      floor_rows.push_back(measure("empty, the sum's 7 parameters <<<1, 512>>>", [&] {
        empty_params_kernel<<<1, 512, 0, stream>>>(nullptr, nullptr, 0, r, nullptr, nullptr, nullptr);
      }, timer, stream));
    }
    floor_rows.push_back(measure("empty kernel, cudaLaunchKernel", [&] {
      GPUKIT_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(&empty_kernel), dim3(1), dim3(512), nullptr, 0, stream));
    }, timer, stream));
    floor_rows.push_back(measure("empty kernel, driver cuLaunchKernel", [&] {
      CU_CHECK(cuLaunchKernel(empty_f, 1, 1, 1, 512, 1, 1, 0, reinterpret_cast<CUstream>(stream), nullptr, nullptr));
    }, timer, stream));
    floor_rows.push_back(measure("two empty kernels <<<1, 512>>>", [&] {
      empty_kernel<<<1, 512, 0, stream>>>();
      empty_kernel<<<1, 512, 0, stream>>>();
    }, timer, stream));
    GPUKIT_CHECK_LAUNCH();
    std::printf("\n%-48s %9s %9s %9s\n", "launch", "host us", "plain us", "graph us");
    for (const auto& r : floor_rows)
      std::printf("%-48s %9.2f %9.2f %9.2f\n", r.name.c_str(), r.host_us, r.plain_us, r.graph_us);
    const double floor_us = floor_rows[2].plain_us;

    // ---- sums ----
    const std::int64_t max_n = std::int64_t{1} << 22;
    const experiments::uniform_floats input = experiments::make_uniform_floats(max_n, 11, stream);
    const gpukit::device_buffer<float>& x = input.device;
    const std::vector<float>& hx = input.host;
    gpukit::device_buffer<float> out(1);
    reduce::workspace ws;
    void* cub_tmp = nullptr;
    std::size_t cub_bytes = 0;
    GPUKIT_CUDA_CHECK(cub::DeviceReduce::Sum(cub_tmp, cub_bytes, x.data(), out.data(), max_n, stream));
    GPUKIT_CUDA_CHECK(cudaMalloc(&cub_tmp, cub_bytes + 4096));
    const std::size_t cub_cap = cub_bytes + 4096;

    using R = reduce::detail::op_reducer<float, reduce::plus>;
    const R r{reduce::plus{}, 0.0f};
    auto* tickets = reinterpret_cast<unsigned*>(static_cast<char*>(ws.data()) + reduce::detail::done_counter_offset);
    auto* slots = reinterpret_cast<unsigned long long*>(static_cast<char*>(ws.data()) + reduce::detail::partials_offset);
    // The library's shapes: one block of 256 x 4 vectors up to 16 KiB, of 512 x 8 up to 64 KiB, then
    // 256-thread blocks of 4 vectors, one per 16 KiB, at most one per SM.
    const CUfunction sp512x8 = driver_handle(reinterpret_cast<const void*>(&reduce::detail::single_pass_kernel<512, 8, R>));
    const CUfunction sp256 = driver_handle(reinterpret_cast<const void*>(&reduce::detail::single_pass_kernel<256, 4, R>));

    std::printf("\n%-6s %-38s %9s %9s %9s %9s %s\n", "N", "call", "host us", "plain us", "graph us", "vs CUB", "check");
    for (int lg : {10, 12, 14, 16, 18, 20, 22}) {
      const std::int64_t n = std::int64_t{1} << lg;
      const experiments::host_sum h = experiments::host_sum_of(hx, n);
      // The library's launch policy (device_reduce.cuh) for sizes up to medium_bytes.
      const bool small = n * 4 <= reduce::detail::small_block_bytes;
      const int grid = n * 4 <= reduce::detail::single_block_bytes
                           ? 1
                           : reduce::detail::policy_grid(n, 4,
                                                         std::int64_t{reduce::detail::medium_blocks_per_sm<R>} *
                                                             prop.multiProcessorCount,
                                                         reduce::detail::medium_block_bytes);
      // The policy before bench/experiments/reduce_medium.cu (512 x 4 vectors, one block per 32 KiB, up to 2
      // per SM): the compact rungs below keep its grid, so they compare with the kept results.
      const int previous_grid = reduce::detail::policy_grid(n, 4, std::int64_t{2} * prop.multiProcessorCount);
      const float* xp = x.data();
      float* op = out.data();
      std::int64_t nn = n;
      R rr = r;
      void* params[] = {&xp, &xp, &nn, &rr, &slots, &tickets, &op};
      struct call {
        std::string name;
        std::function<void()> run;
      };
      std::vector<call> calls = {
          {"CUB DeviceReduce::Sum", [&] {
             std::size_t b = cub_cap;
             GPUKIT_CUDA_CHECK(cub::DeviceReduce::Sum(cub_tmp, b, xp, op, n, stream));
           }},
          {"library reduce::sum", [&] { reduce::sum(xp, n, op, ws, stream); }},
          {"single_pass_kernel <<<>>>", [&] {
             if (small) reduce::detail::single_pass_kernel<256, 4, R><<<1, 256, 0, stream>>>(xp, xp, n, r, slots, tickets, op);
             else if (grid == 1) reduce::detail::single_pass_kernel<512, 8, R><<<1, 512, 0, stream>>>(xp, xp, n, r, slots, tickets, op);
             else reduce::detail::single_pass_kernel<256, 4, R><<<grid, 256, 0, stream>>>(xp, xp, n, r, slots, tickets, op);
           }},
          {"single_pass_kernel cuLaunchKernel", [&] {
             CU_CHECK(cuLaunchKernel(grid == 1 && !small ? sp512x8 : sp256, static_cast<unsigned>(grid), 1, 1,
                                     grid == 1 && !small ? 512 : 256, 1, 1, 0, reinterpret_cast<CUstream>(stream), params,
                                     nullptr));
           }},
      };
      // Rungs of the latency ladder (no check: they do not sum) and compact kernels (checked).
      struct rung {
        std::string name;
        std::function<void()> run;
        bool sums;
      };
      std::vector<rung> rungs;
      if (grid == 1) {
        rungs.push_back({"rung: empty <<<1, 256>>>", [&] { empty_kernel<<<1, 256, 0, stream>>>(); }, false});
        rungs.push_back({"rung: store a parameter", [&] { param_store_kernel<<<1, 256, 0, stream>>>(n, op); }, false});
        rungs.push_back({"rung: one L2 load, one store", [&] { one_load_kernel<<<1, 256, 0, stream>>>(xp, n, op); }, false});
        rungs.push_back({"compact block 256t x4", [&] { compact_block_kernel<256, 4><<<1, 256, 0, stream>>>(xp, n, op); }, true});
        rungs.push_back({"compact block 512t x4", [&] { compact_block_kernel<512, 4><<<1, 512, 0, stream>>>(xp, n, op); }, true});
        rungs.push_back({"compact block 1024t x4", [&] { compact_block_kernel<1024, 4><<<1, 1024, 0, stream>>>(xp, n, op); }, true});
        rungs.push_back({"ablation: compact, 7 params", [&] {
                           ablation_kernel<false, false><<<1, 256, 0, stream>>>(xp, xp, n, r, slots, tickets, op);
                         }, true});
        rungs.push_back({"ablation: compact + ticket prologue", [&] {
                           ablation_kernel<false, true><<<1, 256, 0, stream>>>(xp, xp, n, r, slots, tickets, op);
                         }, true});
        rungs.push_back({"ablation: library traverse", [&] {
                           ablation_kernel<true, false><<<1, 256, 0, stream>>>(xp, xp, n, r, slots, tickets, op);
                         }, true});
        rungs.push_back({"ablation: library traverse + ticket", [&] {
                           ablation_kernel<true, true><<<1, 256, 0, stream>>>(xp, xp, n, r, slots, tickets, op);
                         }, true});
        rungs.push_back({"library kernel at 256t, one block", [&] {
                           reduce::detail::single_pass_kernel<256, 4, R><<<1, 256, 0, stream>>>(xp, xp, n, r, slots, tickets, op);
                         }, true});
      } else {
        rungs.push_back({"compact ticket 512t x4 (previous library grid)", [&, previous_grid] {
                           compact_ticket_kernel<512, 4><<<previous_grid, 512, 0, stream>>>(xp, n, slots, tickets, op);
                         }, true});
        const int grid2 = std::min(2 * previous_grid, 4 * prop.multiProcessorCount);
        rungs.push_back({"compact ticket 256t x4 (2x grid)", [&, grid2] {
                           compact_ticket_kernel<256, 4><<<grid2, 256, 0, stream>>>(xp, n, slots, tickets, op);
                         }, true});
        const int grid_half = std::max(1, previous_grid / 2);
        rungs.push_back({"compact ticket 1024t x4 (grid / 2)", [&, grid_half] {
                           compact_ticket_kernel<1024, 4><<<grid_half, 1024, 0, stream>>>(xp, n, slots, tickets, op);
                         }, true});
      }
      for (auto& g : rungs) calls.push_back({g.name, g.run});
      double cub_us = 0;
      float lib_bits = 0;
      for (auto& c : calls) {
        float got = 0;
        GPUKIT_CUDA_CHECK(cudaMemsetAsync(op, 0xFF, 4, stream));  // NaN poison
        c.run();
        GPUKIT_CHECK_LAUNCH();
        GPUKIT_CUDA_CHECK(cudaMemcpyAsync(&got, op, 4, cudaMemcpyDeviceToHost, stream));
        GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
        const bool is_rung = c.name.rfind("rung:", 0) == 0;
        bool right = is_rung || experiments::within_float_sum_bound(got, n, h);
        if (c.name.rfind("library", 0) == 0) lib_bits = got;
        const bool direct = c.name.rfind("single_pass", 0) == 0;
        if (direct && std::memcmp(&got, &lib_bits, 4) != 0) right = false;
        if (!right) ok = false;
        const row m = measure(c.name, c.run, timer, stream);
        if (c.name.rfind("CUB", 0) == 0) cub_us = m.plain_us;
        std::printf("2^%-4d %-38s %9.2f %9.2f %9.2f %8.3fx %s\n", lg, c.name.c_str(), m.host_us, m.plain_us, m.graph_us,
                    m.plain_us / cub_us, is_rung ? "-" : right ? (direct ? "ok, bitwise = library" : "ok") : "FAIL");
      }
      std::printf("2^%-4d %-38s %9s %9.2f %9s %8.3fx  (0.65x CUB: %.2f us; empty-kernel floor leaves %.2f us)\n", lg,
                  "empty kernel <<<1, 512>>>", "", floor_us, "", floor_us / cub_us, 0.65 * cub_us, 0.65 * cub_us - floor_us);
    }
    GPUKIT_CUDA_CHECK(cudaFree(cub_tmp));
    GPUKIT_CUDA_CHECK(cudaStreamDestroy(stream));
    std::printf("RESULT: %s\n", ok ? "every sum within bound; direct launches bitwise equal to the library" : "FAIL");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "launch_floor: error: %s\n", e.what());
    return 1;
  }
}
