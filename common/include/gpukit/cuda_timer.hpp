// Timing GPU work for the apps' benchmarks: CUDA events around each call (or around a CUDA Graph of many
// back-to-back calls), warm-up first, median of many runs. Header-only; include from .cu or .cpp files
// that link CUDA::cudart. Every CUDA call is checked (gpukit::cuda_error on failure).
//
//   gpukit::cuda_timer timer(stream);
//   gpukit::timing t = timer.time([&] { my_reduce(d_in, n, d_out, ws, stream); }, {3, 50});
//   auto [ours, peer] = timer.time_paired([&] { ours(...); }, [&] { peer(...); }, {3, 50});  // alternated
//   gpukit::timing g = timer.time_graph([&] { my_reduce(...); }, 100, {2, 10});  // per call
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <utility>

#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"

namespace gpukit {

/// A non-blocking stream (no implicit sync with the legacy default stream), destroyed with its owner.
class owned_stream {
public:
  owned_stream() { GPUKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~owned_stream() { (void)cudaStreamDestroy(s_); }
  owned_stream(const owned_stream&) = delete;
  owned_stream& operator=(const owned_stream&) = delete;
  cudaStream_t get() const noexcept { return s_; }

private:
  cudaStream_t s_ = nullptr;
};

/// Microseconds per call: median (the reported figure), minimum and maximum over `runs` samples.
struct timing {
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  int runs = 0;
};

/// How many untimed calls come first and how many timed samples are taken.
struct repeats {
  int warmup = 3;
  int runs = 30;
};

inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

inline timing summarize(const std::vector<double>& samples_us) {
  timing t;
  t.runs = static_cast<int>(samples_us.size());
  if (samples_us.empty()) return t;
  t.median_us = median_of(samples_us);
  t.min_us = *std::min_element(samples_us.begin(), samples_us.end());
  t.max_us = *std::max_element(samples_us.begin(), samples_us.end());
  return t;
}

class cuda_timer {
public:
  /// `stream` must be a created stream (not the legacy default stream) for time_graph's capture.
  explicit cuda_timer(cudaStream_t stream) : stream_(stream) {
    GPUKIT_CUDA_CHECK(cudaEventCreate(&start_));
    GPUKIT_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~cuda_timer() {
    (void)cudaEventDestroy(start_);
    (void)cudaEventDestroy(stop_);
  }
  cuda_timer(const cuda_timer&) = delete;
  cuda_timer& operator=(const cuda_timer&) = delete;

  /// Events around each single call of `work` (which enqueues on the stream): launch latency included,
  /// as a user calling once would see it. The stream is synchronized after each sample, so successive
  /// calls do not overlap.
  template <class Work>
  timing time(Work&& work, repeats r = {}) {
    return summarize(samples(std::forward<Work>(work), r));
  }

  /// As time(), but every sample in microseconds, in call order (for work whose cost drifts from call to
  /// call, such as a model state that evolves).
  template <class Work>
  std::vector<double> samples(Work&& work, repeats r = {}) {
    for (int i = 0; i < r.warmup; ++i) work();
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(r.runs));
    for (int i = 0; i < r.runs; ++i) out.push_back(one_sample(work));
    return out;
  }

  /// As time() for two calls whose ratio is wanted (ours and a peer's), their samples taken in
  /// alternation (a b, b a, a b, ...): a drift of the host's launch cost or of the GPU's clocks during
  /// the measurement falls on both alike, where timing all of a before all of b would put it into the
  /// ratio. Matters for calls of a few microseconds, most of which is the launch.
  template <class WorkA, class WorkB>
  std::pair<timing, timing> time_paired(WorkA&& a, WorkB&& b, repeats r = {}) {
    const auto t = time_interleaved(
        {std::function<void()>(std::forward<WorkA>(a)), std::function<void()>(std::forward<WorkB>(b))},
        {r.runs, r.runs}, r.warmup);
    return {t[0], t[1]};
  }

  /// Any number of calls timed as time_paired() times two: `warmup` calls of each, then rounds in which
  /// every call i still short of its runs[i] samples takes one, round r starting at call r mod n (no call
  /// always follows the same one; for two calls: a b, b a, a b, ...). Timing each call's samples in a
  /// block of their own put up to 1 us of drift between calls of 6 us (the SpMV corpus's launch-bound
  /// matrices: one algorithm 6.3 and 6.9 us in two blocks of one run); interleaved, that drift falls on
  /// every call alike.
  std::vector<timing> time_interleaved(const std::vector<std::function<void()>>& work, const std::vector<int>& runs,
                                       int warmup) {
    const std::size_t n = work.size();
    for (int i = 0; i < warmup; ++i)
      for (const auto& w : work) w();
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<std::vector<double>> s(n);
    const int rounds = runs.empty() ? 0 : *std::max_element(runs.begin(), runs.end());
    for (int r = 0; r < rounds; ++r)
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = (k + static_cast<std::size_t>(r)) % n;
        if (r < runs[i]) s[i].push_back(one_sample(work[i]));
      }
    std::vector<timing> out;
    for (const auto& v : s) out.push_back(summarize(v));
    return out;
  }

  /// `calls` back-to-back calls of `work` captured into one CUDA Graph, launched `r.runs` times; each
  /// sample is the graph's time divided by `calls`. Hides most launch overhead, so small sizes show the
  /// kernels' own cost. `work` must be capturable (no allocation, no synchronization).
  template <class Work>
  timing time_graph(Work&& work, int calls, repeats r = {}) {
    cudaGraph_t graph = nullptr;
    GPUKIT_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    try {
      for (int i = 0; i < calls; ++i) work();
    } catch (...) {
      cudaGraph_t broken = nullptr;
      (void)cudaStreamEndCapture(stream_, &broken);
      if (broken) (void)cudaGraphDestroy(broken);
      throw;
    }
    GPUKIT_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
    (void)cudaGraphDestroy(graph);
    GPUKIT_CUDA_CHECK(inst);
    std::vector<double> samples;
    try {
      for (int i = 0; i < r.warmup; ++i) GPUKIT_CUDA_CHECK(cudaGraphLaunch(exec, stream_));
      GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      for (int i = 0; i < r.runs; ++i) {
        GPUKIT_CUDA_CHECK(cudaEventRecord(start_, stream_));
        GPUKIT_CUDA_CHECK(cudaGraphLaunch(exec, stream_));
        GPUKIT_CUDA_CHECK(cudaEventRecord(stop_, stream_));
        GPUKIT_CUDA_CHECK(cudaEventSynchronize(stop_));
        samples.push_back(elapsed_us() / calls);
      }
    } catch (...) {
      (void)cudaGraphExecDestroy(exec);
      throw;
    }
    GPUKIT_CUDA_CHECK(cudaGraphExecDestroy(exec));
    return summarize(samples);
  }

private:
  /// Events around one call of `work`, waited for: microseconds.
  template <class Work>
  double one_sample(Work&& work) {
    GPUKIT_CUDA_CHECK(cudaEventRecord(start_, stream_));
    work();
    GPUKIT_CUDA_CHECK(cudaEventRecord(stop_, stream_));
    GPUKIT_CUDA_CHECK(cudaEventSynchronize(stop_));
    return elapsed_us();
  }
  double elapsed_us() const {
    float ms = 0;
    GPUKIT_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return 1000.0 * ms;
  }
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

/// GB/s for `bytes` moved in `us` microseconds (1 GB = 1e9 bytes).
inline double gb_per_s(double bytes, double us) { return us > 0 ? bytes / (us * 1e3) : 0; }

/// The measured memory ceiling: a device-to-device cudaMemcpy of `bytes`, counting bytes read plus
/// written (2 * bytes) over the median time.
struct copy_ceiling {
  double bytes_moved = 0;  ///< 2 * bytes
  timing t;
  double gb_per_s() const { return t.median_us > 0 ? bytes_moved / (t.median_us * 1e3) : 0; }
};
inline copy_ceiling measure_copy_ceiling(std::size_t bytes, cudaStream_t stream, repeats r = {2, 10}) {
  gpukit::device_buffer<unsigned char> src(static_cast<std::int64_t>(bytes)), dst(static_cast<std::int64_t>(bytes));
  src.fill_bytes(1);
  cuda_timer timer(stream);
  copy_ceiling c;
  c.bytes_moved = 2.0 * static_cast<double>(bytes);
  c.t = timer.time(
      [&] { GPUKIT_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream)); }, r);
  return c;
}

}  // namespace gpukit
