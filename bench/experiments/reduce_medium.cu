// Experiment (GPUKIT_BUILD_EXPERIMENTS=ON): where the device time of a multi-block one-launch float sum goes
// at 2^16..2^22 (256 KiB..16 MiB, L2-resident), and whether a leaner finish buys it back.
//
// Question: graph-timed on an H200 the library's one-block sum takes 1.28 us at 2^10 and 1.72 us at 2^14,
// but every multi-block shape tried takes 2.3-2.5 us at 2^16..2^18 (bench/experiments/README.md,
// launch_floor and reduce_medium). The issue's "0.65x CUB" at 2^16..2^20 needs about 0.3-0.7 us less. Which part costs it: the
// launch of many blocks, the loads, the block tree, the ticket, or the last block's collection?
//
// Rungs (the library's medium shape: 512 threads x 4 vectors, one block per 32 KiB, at most 2 per SM):
//   empty          the grid, nothing else
//   loads          + traverse and a per-thread sum (kept alive by a test no input passes)
//   block tree     + block_reduce, thread 0 stores the partial
//   ticket+publish + the ticket atomic at start and the flagged 64-bit publish (nobody collects)
//   ticket finish  the whole kernel: the last-ticket block collects with all its threads, block tree
//   warp finish    the same, but after the block tree only warp 0 stays: lane 0 holds the ticket in a
//                  register (no barrier, no shared broadcast), and in the last block each lane issues all
//                  its slot loads (blocks lane, lane + 32, ...) before waiting on any, combines them in
//                  order and the warp reduces them: no second block tree, no __syncthreads.
// Then a timeline (%globaltimer stamps per block) of the ticket and warp finishes: launch spread, loads,
// tree, wait for the partials, final combine; once after an idle GPU (as the plain timing) and back to back.
// Last, section "lean" (`reduce_medium lean` runs it alone): the ticket finish without its three barriers.
#include <cub/device/device_reduce.cuh>
#include <cuda/atomic>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "gpukit/cuda_timer.hpp"
#include "fill.cuh"
#include "sum_check.hpp"
#include "reduce/cuda/block_reduce.cuh"
#include "gpukit/cuda_check.hpp"
#include "libreduce/src/cuda/device_reduce.cuh"
#include "gpukit/device_buffer.hpp"
#include "reduce/operators.hpp"
#include "reduce/reduce.hpp"

namespace {

enum stage : int { st_empty = 0, st_loads = 1, st_tree = 2, st_publish = 3, st_finish = 4 };
constexpr int stamps_per_block = 6;  // start, loaded, reduced, collected, end, ticket
constexpr int max_per_lane = 16;     // warp finish: grids up to 512 blocks

/// %globaltimer (ns), read after `dep` is computed (the asm takes it as an input).
__device__ __forceinline__ unsigned long long stamp(float dep) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : "f"(dep));
  return t;
}

__device__ __forceinline__ void publish(unsigned long long* slot, float v) {
  const unsigned long long w = (1ull << 32) | __float_as_uint(v);
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slot), "l"(w) : "memory");
}
__device__ __forceinline__ unsigned long long peek(const unsigned long long* slot) {
  unsigned long long w;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w) : "l"(slot) : "memory");
  return w;
}
/// Waits for a flagged slot with two loads in flight, the second issued after __nanosleep(64) (0-128 ns):
/// a load that misses is re-issued at once, so a partial that lands between two polls is seen sooner.
/// (The sleep hides under the first load's round trip when that one hits.)
__device__ __forceinline__ unsigned long long wait_staggered(const unsigned long long* slot) {
  unsigned long long w0 = peek(slot);
  __nanosleep(64);
  unsigned long long w1 = peek(slot);
  for (;;) {
    if (w0 >> 32) return w0;
    w0 = peek(slot);
    if (w1 >> 32) return w1;
    w1 = peek(slot);
  }
}
__device__ __forceinline__ void clear(unsigned long long* slot) {
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slot), "l"(0ull) : "memory");
}

template <int Threads, int Unroll, int Stage, bool WarpFinish, bool Timeline, int Lean = 0>
__global__ void __launch_bounds__(Threads)
medium_kernel(const float* __restrict__ x, std::int64_t n, unsigned long long* __restrict__ slots,
              unsigned* __restrict__ tickets, float* __restrict__ out, unsigned long long* __restrict__ stamps) {
  using br = reduce::block::block_reduce<Threads, float>;
  __shared__ typename br::storage tmp, tmp_final;
  __shared__ unsigned ticket_shared, own_ready;
  __shared__ float mine;
  unsigned long long ts[5] = {};
  auto note = [&](int k, float dep) {
    if constexpr (Timeline) ts[k] = stamp(dep);
  };
  auto flush = [&](unsigned ticket) {
    if constexpr (Timeline) {
      if (threadIdx.x == 0) {
        unsigned long long* s = stamps + static_cast<std::size_t>(blockIdx.x) * stamps_per_block;
        for (int k = 0; k < 5; ++k) s[k] = ts[k];
        s[5] = ticket;
      }
    }
  };
  note(0, 0.0f);
  if constexpr (Stage == st_empty) {
    note(4, 0.0f);
    flush(0);
    return;
  }
  unsigned ticket = 0;
  if (Stage >= st_publish && threadIdx.x == 0) ticket = atomicAdd(tickets, 1u);
  float acc = 0.0f;
  reduce::detail::traverse<Threads, Unroll, false>(x, x, n, static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x),
                                                   [&](std::int64_t, float a, float) { acc += a; });
  note(1, acc);
  if constexpr (Stage == st_loads) {
    if (acc == 1234.5f) *out = acc;  // never true for inputs in [-1, 1): keeps the loads
    note(4, acc);
    flush(0);
    return;
  }
  if constexpr (Lean == 1 || Lean == 2) {
    if (threadIdx.x == 0) {  // visible to the block after the tree's barrier
      ticket_shared = ticket;
      own_ready = 0;
    }
  }
  acc = br::reduce(acc, reduce::plus{}, tmp);
  note(2, acc);
  if constexpr (Stage == st_tree) {
    if (threadIdx.x == 0) reinterpret_cast<float*>(slots)[blockIdx.x] = acc;
    note(4, acc);
    flush(0);
    return;
  }
  if constexpr (Stage == st_publish) {
    if (threadIdx.x == 0) publish(slots + blockIdx.x, acc);
    note(4, acc);
    flush(ticket);
    return;
  }
  const unsigned grid = gridDim.x;
  if constexpr (Lean == 1 || Lean == 2) {
    // No barrier of its own: the ticket came through the tree's barrier; the final tree has its own
    // storage. Lean 1: the last block's own partial goes through its slot like the others; Lean 2: thread
    // 0 hands it to the thread that combines it through shared memory and a release/acquire flag. Both
    // LOST to the three barriers of the previous finish (section "lean"; the library keeps that one).
    static_assert(!WarpFinish, "one finish at a time");
    ticket = ticket_shared;
    if (ticket != grid - 1 || Lean == 1) {
      if (threadIdx.x == 0) publish(slots + blockIdx.x, acc);
    }
    if (ticket != grid - 1) {
      note(4, acc);
      flush(ticket);
      return;
    }
    if (Lean == 2 && threadIdx.x == 0) {
      mine = acc;
      cuda::atomic_ref<unsigned, cuda::thread_scope_block>(own_ready).store(1u, cuda::memory_order_release);
    }
    float total = 0.0f;
    for (unsigned b = threadIdx.x; b < grid; b += Threads) {
      if (Lean == 2 && b == blockIdx.x) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_block> ready(own_ready);
        while (ready.load(cuda::memory_order_acquire) == 0) {
        }
        total += mine;
        continue;
      }
      unsigned long long w;
      do w = peek(slots + b);
      while ((w >> 32) == 0);
      clear(slots + b);
      total += __uint_as_float(static_cast<unsigned>(w));
    }
    note(3, total);
    total = br::reduce(total, reduce::plus{}, tmp_final);
    if (threadIdx.x == 0) {
      *out = total;
      *tickets = 0;
    }
    note(4, total);
    flush(ticket);
  } else if constexpr (!WarpFinish) {
    if (threadIdx.x == 0) ticket_shared = ticket;
    __syncthreads();
    ticket = ticket_shared;
    if (ticket != grid - 1) {
      if (threadIdx.x == 0) publish(slots + blockIdx.x, acc);
      note(4, acc);
      flush(ticket);
      return;
    }
    if (threadIdx.x == 0) mine = acc;
    __syncthreads();
    float total = 0.0f;
    for (unsigned b = threadIdx.x; b < grid; b += Threads) {
      float v;
      if (b == blockIdx.x) {
        v = mine;
      } else {
        unsigned long long w;
        if constexpr (Lean == 3) {
          w = wait_staggered(slots + b);
        } else {
          do w = peek(slots + b);
          while ((w >> 32) == 0);
        }
        clear(slots + b);
        v = __uint_as_float(static_cast<unsigned>(w));
      }
      total += v;
    }
    note(3, total);
    __syncthreads();
    total = br::reduce(total, reduce::plus{}, tmp);
    if (threadIdx.x == 0) {
      *out = total;
      *tickets = 0;
    }
    note(4, total);
    flush(ticket);
  } else {
    if (threadIdx.x >= 32) return;  // the block tree's barrier is behind them: only warp 0 goes on
    const int lane = static_cast<int>(threadIdx.x);
    ticket = __shfl_sync(0xffffffffu, ticket, 0);
    if (ticket != grid - 1) {
      if (lane == 0) publish(slots + blockIdx.x, acc);
      note(4, acc);
      flush(ticket);
      return;
    }
    const float own = __shfl_sync(0xffffffffu, acc, 0);
    unsigned long long w[max_per_lane];
    unsigned pending = 0;  // bit k: slot lane + 32 k still to arrive
#pragma unroll
    for (int k = 0; k < max_per_lane; ++k) {  // every load issued before any wait
      const unsigned b = static_cast<unsigned>(lane + 32 * k);
      w[k] = 0;
      if (b < grid && b != blockIdx.x) {
        w[k] = peek(slots + b);
        pending |= 1u << k;
      }
    }
    for (;;) {  // a round: take what arrived, then re-issue every missing load together
#pragma unroll
      for (int k = 0; k < max_per_lane; ++k)
        if ((pending >> k & 1u) && (w[k] >> 32) != 0) {
          clear(slots + lane + 32 * k);
          pending &= ~(1u << k);
        }
      if (pending == 0) break;
#pragma unroll
      for (int k = 0; k < max_per_lane; ++k)
        if (pending >> k & 1u) w[k] = peek(slots + lane + 32 * k);
    }
    float total = 0.0f;
#pragma unroll
    for (int k = 0; k < max_per_lane; ++k) {
      const unsigned b = static_cast<unsigned>(lane + 32 * k);
      if (b >= grid) break;
      total += b == blockIdx.x ? own : __uint_as_float(static_cast<unsigned>(w[k]));
    }
    note(3, total);
    total = reduce::warp::reduce_to_first(total, reduce::plus{});
    if (lane == 0) {
      *out = total;
      *tickets = 0;
    }
    note(4, total);
    flush(ticket);
  }
}

int g_sms = 0;

int grid_for(std::int64_t n, std::int64_t per_block_bytes, int cap_per_sm) {
  const std::int64_t b = (n * 4 + per_block_bytes - 1) / per_block_bytes;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(b, std::int64_t{cap_per_sm} * g_sms)));
}

struct variant {
  std::string name;
  bool checked;  // computes the sum (rungs below the full kernel do not)
  std::function<void(const float*, std::int64_t, float*, cudaStream_t)> run;
};

struct device_state {
  unsigned long long* slots;  // the finishing kernels' slots and ticket: zero between calls
  unsigned* tickets;
  unsigned long long* stamps;
  unsigned long long* junk_slots;  // the rungs that publish without collecting write here instead
  unsigned* junk_tickets;
};

template <int Threads, int Unroll, int Stage, bool WarpFinish, int Lean = 0>
variant make(const char* what, std::int64_t per_block_bytes, int cap_per_sm, device_state d) {
  const std::string name = std::string(what) + " " + std::to_string(Threads) + "t x" + std::to_string(Unroll) + " " +
                           std::to_string(per_block_bytes >> 10) + "K/blk";
  return {name, Stage == st_finish, [=](const float* x, std::int64_t n, float* out, cudaStream_t s) {
            medium_kernel<Threads, Unroll, Stage, WarpFinish, false, Lean>
                <<<static_cast<unsigned>(grid_for(n, per_block_bytes, cap_per_sm)), Threads, 0, s>>>(
                    x, n, Stage == st_finish ? d.slots : d.junk_slots, Stage == st_finish ? d.tickets : d.junk_tickets,
                    out, d.stamps);
            GPUKIT_CHECK_LAUNCH();
          }};
}

/// Timeline of one launch shape: median over launches of each phase (ns).
template <int Threads, int Unroll, bool WarpFinish, int Lean = 0>
void timeline(const char* name, const float* x, std::int64_t n, float* out, device_state d, cudaStream_t s,
              bool back_to_back, int cap_per_sm = 2) {
  constexpr int launches = 21;
  const int grid = grid_for(n, std::int64_t{Threads} * Unroll * 16, cap_per_sm);
  std::vector<unsigned long long> h(static_cast<std::size_t>(launches) * grid * stamps_per_block);
  auto launch = [&](int i) {
    medium_kernel<Threads, Unroll, st_finish, WarpFinish, true, Lean><<<static_cast<unsigned>(grid), Threads, 0, s>>>(
        x, n, d.slots, d.tickets, out, d.stamps + static_cast<std::size_t>(i) * grid * stamps_per_block);
    GPUKIT_CHECK_LAUNCH();
  };
  for (int i = 0; i < 3; ++i) launch(0);  // warm-up
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(s));
  for (int i = 0; i < launches; ++i) {
    launch(i);
    if (!back_to_back) GPUKIT_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(s));
  GPUKIT_CUDA_CHECK(cudaMemcpy(h.data(), d.stamps, h.size() * 8, cudaMemcpyDeviceToHost));
  // Per launch: spread of block starts; median block's loads and tree; the last-ticket block's phases
  // measured from the first block's start; the latest publish among the others.
  std::vector<double> spread, loads, tree, last_start, last_loaded, last_reduced, latest_publish, last_collected,
      last_end, span;
  for (int i = 0; i < launches; ++i) {
    const unsigned long long* t = h.data() + static_cast<std::size_t>(i) * grid * stamps_per_block;
    unsigned long long t0 = ~0ull, tmax_start = 0, tend = 0, pub = 0;
    int last = -1;
    std::vector<double> l, r;
    for (int b = 0; b < grid; ++b) {
      const unsigned long long* e = t + b * stamps_per_block;
      t0 = std::min(t0, e[0]);
      tmax_start = std::max(tmax_start, e[0]);
      tend = std::max(tend, e[4]);
      l.push_back(static_cast<double>(e[1] - e[0]));
      r.push_back(static_cast<double>(e[2] - e[1]));
      if (e[5] == static_cast<unsigned long long>(grid - 1)) last = b;
    }
    for (int b = 0; b < grid; ++b)
      if (b != last) pub = std::max(pub, t[b * stamps_per_block + 4]);
    spread.push_back(static_cast<double>(tmax_start - t0));
    loads.push_back(gpukit::median_of(l));
    tree.push_back(gpukit::median_of(r));
    span.push_back(static_cast<double>(tend - t0));
    if (last >= 0) {
      const unsigned long long* e = t + last * stamps_per_block;
      last_start.push_back(static_cast<double>(e[0] - t0));
      last_loaded.push_back(static_cast<double>(e[1] - t0));
      last_reduced.push_back(static_cast<double>(e[2] - t0));
      last_collected.push_back(static_cast<double>(e[3] - t0));
      last_end.push_back(static_cast<double>(e[4] - t0));
      latest_publish.push_back(grid > 1 ? static_cast<double>(pub - t0) : 0.0);
    }
  }
  std::printf("%-16s 2^%-2d %-12s %5d %7.0f %7.0f %7.0f | %7.0f %7.0f %7.0f %7.0f %7.0f %7.0f | %7.0f\n", name,
              static_cast<int>(std::lround(std::log2(static_cast<double>(n)))), back_to_back ? "back-to-back" : "isolated",
              grid, gpukit::median_of(spread), gpukit::median_of(loads), gpukit::median_of(tree),
              gpukit::median_of(last_start), gpukit::median_of(last_loaded), gpukit::median_of(last_reduced),
              gpukit::median_of(latest_publish), gpukit::median_of(last_collected), gpukit::median_of(last_end),
              gpukit::median_of(span));
}

/// Section "lean" (`reduce_medium lean` runs it alone). Question: the finish has three barriers of its
/// own (the ticket's broadcast, the hand-over of the last block's own partial, the reuse of the tree's
/// storage); without them, does the last block finish sooner? The finish without them (two ways of
/// handing over the own partial) against the one with them, in the library's medium shape (256 x 4
/// vectors, one block per 16 KiB, one per SM), as this file's copies (medium_kernel, identical but for the
/// finish), with CUB and the library in the same rounds. Plain: events around one call, the calls'
/// samples taken in rotating order round after round (a drift of the launch cost falls on all alike);
/// graph: 100 calls per graph. Answer (H200, bench/experiments/README.md, reduce_medium): no, slower. Last, the
/// library's finish with staggered polls (two loads of a slot in flight, wait_staggered): no gain either.
bool lean_section(const float* x, const std::vector<float>& hx, float* out, device_state d, reduce::workspace& ws,
                  void* cub_tmp, std::size_t cub_bytes, cudaStream_t stream) {
  const auto grid = [](std::int64_t n) { return static_cast<unsigned>(grid_for(n, 16 << 10, 1)); };
  struct entry {
    const char* name;
    std::function<void(std::int64_t)> run;
  };
  // This file's copy of the medium kernel with finish Lean (see medium_kernel).
  const auto copy = [&](const char* name, auto lean) {
    return entry{name, [&](std::int64_t n) {
                   medium_kernel<256, 4, st_finish, false, false, decltype(lean)::value>
                       <<<grid(n), 256, 0, stream>>>(x, n, d.slots, d.tickets, out, nullptr);
                   GPUKIT_CHECK_LAUNCH();
                 }};
  };
  const entry entries[] = {
      {"CUB, same rounds",
       [&](std::int64_t n) {
         std::size_t b = cub_bytes;
         GPUKIT_CUDA_CHECK(cub::DeviceReduce::Sum(cub_tmp, b, x, out, n, stream));
       }},
      {"library, same rounds", [&](std::int64_t n) { reduce::sum(x, n, out, ws, stream); }},
      copy("copy, previous finish", std::integral_constant<int, 0>{}),
      copy("copy, lean, own via slot", std::integral_constant<int, 1>{}),
      copy("copy, lean, own via flag", std::integral_constant<int, 2>{}),
      copy("copy, staggered polls", std::integral_constant<int, 3>{}),
  };
  constexpr int count = 6;
  constexpr int rounds = 101;
  gpukit::cuda_timer timer(stream);
  bool ok = true;
  std::printf("\nLean finish (this file's copies in the library's medium shape; plain us: median of %d rotated samples;\n"
              "graph us: per call in a graph of 100; ratios to CUB in the same rounds)\n", rounds);
  std::printf("%-26s %4s %9s %9s %8s %8s  %s\n", "variant", "N", "plain us", "graph us", "vs CUB", "vs CUBg", "check");
  for (int lg = 16; lg <= 22; ++lg) {
    const std::int64_t n = std::int64_t{1} << lg;
    const experiments::host_sum h = experiments::host_sum_of(hx, n);
    std::string checks[count];
    float bits[count] = {};
    for (int v = 0; v < count; ++v) {
      checks[v] = experiments::check_float_sum([&] { entries[v].run(n); }, out, stream, n, h);
      GPUKIT_CUDA_CHECK(cudaMemcpy(&bits[v], out, sizeof(float), cudaMemcpyDeviceToHost));
      if (checks[v] != "ok") ok = false;
    }
    for (int v = 3; v < count; ++v)
      if (std::memcmp(&bits[2], &bits[v], sizeof(float)) != 0) {  // the finish must not change a bit
        checks[v] = "DIFFERS FROM THE PREVIOUS FINISH";
        ok = false;
      }
    std::vector<double> samples[count];
    for (int v = 0; v < count; ++v) (void)timer.time([&] { entries[v].run(n); }, {3, 1});  // warm-up
    for (int i = 0; i < rounds; ++i)
      for (int k = 0; k < count; ++k) {
        const int v = (i + k) % count;
        samples[v].push_back(timer.time([&] { entries[v].run(n); }, {0, 1}).median_us);
      }
    double plain[count], graph[count];
    for (int v = 0; v < count; ++v) {
      plain[v] = gpukit::median_of(samples[v]);
      graph[v] = timer.time_graph([&] { entries[v].run(n); }, 100, {2, 11}).median_us;
    }
    for (int v = 0; v < count; ++v)
      std::printf("%-26s 2^%-2d %9.2f %9.2f %7.3fx %7.3fx  %s\n", entries[v].name, lg, plain[v], graph[v],
                  plain[v] / plain[0], graph[v] / graph[0], checks[v].c_str());
  }
  std::printf("\nTimeline of the two finishes (256 x 4, one block per 16 KiB, one per SM; columns as below)\n");
  std::printf("%-16s %4s %-12s %5s %7s %7s %7s | %7s %7s %7s %7s %7s %7s | %7s\n", "finish", "N", "launch", "grid",
              "spread", "loads", "tree", "l.start", "l.loads", "l.tree", "publish", "l.coll", "l.end", "span");
  for (int lg : {16, 18, 20, 22}) {
    const std::int64_t n = std::int64_t{1} << lg;
    timeline<256, 4, false, 0>("previous 256x4", x, n, out, d, stream, false, 1);
    timeline<256, 4, false, 1>("lean slot 256x4", x, n, out, d, stream, false, 1);
    timeline<256, 4, false, 2>("lean flag 256x4", x, n, out, d, stream, false, 1);
    timeline<256, 4, false, 3>("staggered 256x4", x, n, out, d, stream, false, 1);
  }
  std::printf("RESULT lean: %s\n", ok ? "every variant within bound, deterministic, lean = previous bitwise" : "FAIL");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    cudaDeviceProp prop{};
    GPUKIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    std::printf("GPU: %s, %d SMs\n", prop.name, g_sms);
    cudaStream_t stream;
    GPUKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const std::int64_t max_n = std::int64_t{1} << 23;
    const experiments::uniform_floats input = experiments::make_uniform_floats(max_n, 11, stream);
    const gpukit::device_buffer<float>& x = input.device;
    const std::vector<float>& hx = input.host;
    gpukit::device_buffer<float> out(1);
    gpukit::device_buffer<unsigned long long> slots(4096), stamps(std::int64_t{21} * 4096 * stamps_per_block);
    gpukit::device_buffer<unsigned long long> junk_slots(4096);
    gpukit::device_buffer<unsigned> tickets(2);
    GPUKIT_CUDA_CHECK(cudaMemset(slots.data(), 0, 4096 * 8));
    GPUKIT_CUDA_CHECK(cudaMemset(tickets.data(), 0, 8));
    reduce::workspace ws;
    const device_state d{slots.data(), tickets.data(), stamps.data(), junk_slots.data(), tickets.data() + 1};

    void* cub_tmp = nullptr;
    std::size_t cub_bytes = 0;
    GPUKIT_CUDA_CHECK(cub::DeviceReduce::Sum(cub_tmp, cub_bytes, x.data(), out.data(), max_n, stream));
    GPUKIT_CUDA_CHECK(cudaMalloc(&cub_tmp, cub_bytes));
    if (argc > 1 && std::strcmp(argv[1], "lean") == 0) {
      const bool lean_ok = lean_section(x.data(), hx, out.data(), d, ws, cub_tmp, cub_bytes, stream);
      GPUKIT_CUDA_CHECK(cudaFree(cub_tmp));
      GPUKIT_CUDA_CHECK(cudaStreamDestroy(stream));
      return lean_ok ? 0 : 1;
    }
    std::vector<variant> vs;
    vs.push_back({"CUB DeviceReduce::Sum", true, [&](const float* p, std::int64_t n, float* o, cudaStream_t s) {
                    std::size_t b = cub_bytes;
                    GPUKIT_CUDA_CHECK(cub::DeviceReduce::Sum(cub_tmp, b, p, o, n, s));
                  }});
    vs.push_back({"library default", true,
                  [&](const float* p, std::int64_t n, float* o, cudaStream_t s) { reduce::sum(p, n, o, ws, s); }});
    // The library's kernel in its previous medium shape (512 x 4 vectors, one block per 32 KiB, up to 2 per SM).
    vs.push_back({"library kernel, previous shape", true, [&](const float* p, std::int64_t n, float* o, cudaStream_t s) {
                    using R = reduce::detail::op_reducer<float, reduce::plus>;
                    if (n * 4 <= reduce::detail::single_block_bytes || n * 4 > reduce::detail::medium_bytes) {
                      reduce::sum(p, n, o, ws, s);  // the one-block and large shapes did not change
                      return;
                    }
                    reduce::detail::launch_single_pass<512, R, 4>(p, p, n, R{reduce::plus{}, 0.0f}, o, ws.data(), s,
                                                                  grid_for(n, 32 << 10, 2));
                  }});
    // The library's kernel is 0.15-0.3 us slower (graph-timed) than this file's copy of the same shape:
    // the launch path, the scratch memory or the kernel? Each crossed with the other.
    {
      using R = reduce::detail::op_reducer<float, reduce::plus>;
      auto* ws_tickets = reinterpret_cast<unsigned*>(static_cast<char*>(ws.data()) + reduce::detail::done_counter_offset);
      auto* ws_slots =
          reinterpret_cast<unsigned long long*>(static_cast<char*>(ws.data()) + reduce::detail::partials_offset);
      const auto medium_grid = [](std::int64_t n) { return static_cast<unsigned>(grid_for(n, 16 << 10, 1)); };
      vs.push_back({"copy 256t x4 16K c1, library scratch", true,
                    [=](const float* p, std::int64_t n, float* o, cudaStream_t s) {
                      medium_kernel<256, 4, st_finish, false, false>
                          <<<medium_grid(n), 256, 0, s>>>(p, n, ws_slots, ws_tickets, o, nullptr);
                      GPUKIT_CHECK_LAUNCH();
                    }});
      vs.push_back({"library kernel <<<>>>, study scratch", true,
                    [=](const float* p, std::int64_t n, float* o, cudaStream_t s) {
                      reduce::detail::single_pass_kernel<256, 4, R><<<medium_grid(n), 256, 0, s>>>(
                          p, p, n, R{reduce::plus{}, 0.0f}, d.slots, d.tickets, o);
                      GPUKIT_CHECK_LAUNCH();
                    }});
      vs.push_back({"library kernel <<<>>>, library scratch", true,
                    [=](const float* p, std::int64_t n, float* o, cudaStream_t s) {
                      reduce::detail::single_pass_kernel<256, 4, R><<<medium_grid(n), 256, 0, s>>>(
                          p, p, n, R{reduce::plus{}, 0.0f}, ws_slots, ws_tickets, o);
                      GPUKIT_CHECK_LAUNCH();
                    }});
    }
    vs.push_back(make<512, 4, st_empty, false>("empty", 32 << 10, 2, d));
    vs.push_back(make<512, 4, st_loads, false>("loads", 32 << 10, 2, d));
    vs.push_back(make<512, 4, st_tree, false>("block tree", 32 << 10, 2, d));
    vs.push_back(make<512, 4, st_publish, false>("ticket+publish", 32 << 10, 2, d));
    vs.push_back(make<512, 4, st_finish, false>("ticket finish", 32 << 10, 2, d));
    vs.push_back(make<512, 4, st_finish, true>("warp finish", 32 << 10, 2, d));
    vs.push_back(make<256, 8, st_finish, false>("ticket finish", 32 << 10, 1, d));
    vs.push_back(make<256, 4, st_finish, false>("ticket finish", 16 << 10, 1, d));
    vs.push_back(make<128, 4, st_finish, false>("ticket finish", 8 << 10, 1, d));
    vs.push_back(make<128, 2, st_finish, false>("ticket finish", 4 << 10, 1, d));
    vs.push_back(make<64, 4, st_finish, false>("ticket finish", 4 << 10, 1, d));
    vs.push_back(make<32, 4, st_finish, false>("ticket finish", 2 << 10, 1, d));
    vs.push_back(make<128, 4, st_empty, false>("empty", 8 << 10, 1, d));
    vs.push_back(make<128, 4, st_loads, false>("loads", 8 << 10, 1, d));
    vs.push_back(make<128, 4, st_tree, false>("block tree", 8 << 10, 1, d));
    gpukit::cuda_timer timer(stream);
    bool ok = true;
    std::printf("%-36s %6s %9s %9s %9s %9s  %s\n", "variant", "N", "plain us", "graph us", "vs CUB", "vs CUBg", "check");
    for (int lg : {14, 16, 18, 20, 22}) {
      const std::int64_t n = std::int64_t{1} << lg;
      const experiments::host_sum h = experiments::host_sum_of(hx, n);
      double cub_plain = 0, cub_graph = 0;
      for (auto& v : vs) {
        std::string check = "-";
        if (v.checked) {
          check = experiments::check_float_sum([&] { v.run(x.data(), n, out.data(), stream); }, out.data(), stream, n, h);
          if (check != std::string("ok")) ok = false;
        }
        const double plain = timer.time([&] { v.run(x.data(), n, out.data(), stream); }, {5, 61}).median_us;
        const double graph = timer.time_graph([&] { v.run(x.data(), n, out.data(), stream); }, 100, {2, 11}).median_us;
        if (v.name.rfind("CUB", 0) == 0) cub_plain = plain, cub_graph = graph;
        std::printf("%-36s   2^%-2d %9.2f %9.2f %8.3fx %8.3fx  %s\n", v.name.c_str(), lg, plain, graph,
                    cub_plain > 0 ? plain / cub_plain : 0.0, cub_graph > 0 ? graph / cub_graph : 0.0, check.c_str());
      }
    }

    // Medium-size launch shapes for the three kinds of single-pass reducer (sum; min, whose tiles are
    // reduced as trees; argmax, (value, index) pairs): graph-timed us, the library's kernel in each shape.
    {
      using sum_r = reduce::detail::op_reducer<float, reduce::plus>;
      using min_r = reduce::detail::exact_op_reducer<float, reduce::minimum>;
      using argmax_r = reduce::detail::arg_reducer<float, true>;
      gpukit::device_buffer<reduce::value_index<float>> vi(1);
      struct shape {
        const char* name;
        int threads;
        std::int64_t per_block;
        int per_sm;
      };
      const shape shapes[] = {{"256x4, 16K/blk, 1/SM", 256, 16 << 10, 1}, {"256x4, 16K/blk, 2/SM", 256, 16 << 10, 2},
                              {"256x4, 16K/blk, 4/SM", 256, 16 << 10, 4}, {"512x4, 32K/blk, 2/SM", 512, 32 << 10, 2}};
      std::printf("\nMedium shapes by reducer (graph us; the library's single_pass_kernel)\n%-24s %6s %8s %8s %8s\n",
                  "shape", "N", "sum", "min", "argmax");
      for (int lg : {16, 18, 20, 21, 22, 23}) {
        const std::int64_t n = std::int64_t{1} << lg;
        for (const shape& sh : shapes) {
          const int g = grid_for(n, sh.per_block, sh.per_sm);
          auto one = [&](auto r, auto* o) {
            using R = decltype(r);
            return timer
                .time_graph(
                    [&] {
                      if (sh.threads == 256)
                        reduce::detail::launch_single_pass<256, R, 4>(x.data(), x.data(), n, r, o, ws.data(), stream, g);
                      else
                        reduce::detail::launch_single_pass<512, R, 4>(x.data(), x.data(), n, r, o, ws.data(), stream, g);
                    },
                    100, {2, 11})
                .median_us;
          };
          const double ts = one(sum_r{reduce::plus{}, 0.0f}, out.data());
          const double tm = one(min_r{{reduce::minimum{}, reduce::minimum::identity<float>()}}, out.data());
          const double ta = one(argmax_r{}, vi.data());
          std::printf("%-24s   2^%-2d %8.2f %8.2f %8.2f\n", sh.name, lg, ts, tm, ta);
        }
      }
    }

    std::printf("\nTimeline (ns of %%globaltimer, median over 21 launches; one tile per block, at most 2 blocks per SM, c1: 1;\n"
                "spread: of the block starts; loads, tree: the median block's; 'l.' = the last-ticket block, from the first\n"
                "block's start (l.coll: its thread 0's collection); publish: the latest publish among the others)\n");
    std::printf("%-16s %4s %-12s %5s %7s %7s %7s | %7s %7s %7s %7s %7s %7s | %7s\n", "finish", "N", "launch", "grid",
                "spread", "loads", "tree", "l.start", "l.loads", "l.tree", "publish", "l.coll", "l.end", "span");
    for (int lg : {16, 18, 20, 22}) {
      const std::int64_t n = std::int64_t{1} << lg;
      for (bool b2b : {false, true}) {
        timeline<512, 4, false>("ticket 512x4", x.data(), n, out.data(), d, stream, b2b);
        timeline<512, 4, true>("warp 512x4", x.data(), n, out.data(), d, stream, b2b);
      }
      timeline<256, 8, false>("ticket 256x8 c1", x.data(), n, out.data(), d, stream, false, 1);
      timeline<128, 4, false>("ticket 128x4 c1", x.data(), n, out.data(), d, stream, false, 1);
      timeline<64, 4, false>("ticket 64x4 c1", x.data(), n, out.data(), d, stream, false, 1);
      timeline<32, 4, false>("ticket 32x4 c1", x.data(), n, out.data(), d, stream, false, 1);
    }
    if (!lean_section(x.data(), hx, out.data(), d, ws, cub_tmp, cub_bytes, stream)) ok = false;
    GPUKIT_CUDA_CHECK(cudaFree(cub_tmp));
    GPUKIT_CUDA_CHECK(cudaStreamDestroy(stream));
    std::printf("RESULT: %s\n", ok ? "all variants within bound and deterministic" : "FAIL");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reduce_medium: error: %s\n", e.what());
    return 1;
  }
}
