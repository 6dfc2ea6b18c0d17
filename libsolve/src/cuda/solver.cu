// Dispatch of the GPU solvers: workspace, launch shapes, the iteration loop with its periodic status check
// (or, with options::graph, one graph launch with a device-side while condition), the reproducible passes
// (fused_exact_pass: the same passes with exact sums), and the result. The only file of libsolve with
// solver launches.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fused_pass.cuh"
#include "gpukit/cuda_check.hpp"
#include "gpukit/cuda_launch.hpp"
#include "gpukit/cuda_timer.hpp"
#include "input_checks.hpp"
#include "krylov_ops.cuh"
#include "reduce/reduce.hpp"
#include "solve/solver.hpp"

namespace solve {

using detail::solver_state;

/// The most sums any op yields (pipe_recomputed: 6).
constexpr int max_sums = detail::pipe_sums;

/// Iterations still queued when the lagged status check's copy lands (run_loop): two, so that the host's
/// wake-up and its next launch (~10-20 us) hide behind them even at 64^3 (cg ~17 us an iteration on an H200).
constexpr int status_lag = 2;

/// A solver vector: n entries with the operator's input room around them (linear_operator::input_room: an
/// operator over ranks receives its ghosts there), the room ahead rounded up to 32 entries so that the
/// entries stay 16-byte aligned for the vectorized passes.
template <class Value>
struct room_vector {
  gpukit::device_buffer<Value> storage;
  std::int64_t lead = 0;
  room_vector() = default;
  room_vector(std::int64_t n, const sparse::x_halo& room)
      : storage((room.before + 31) / 32 * 32 + n + room.after), lead((room.before + 31) / 32 * 32) {}
  Value* data() { return storage.data() + lead; }
  std::size_t bytes() const { return storage.bytes(); }
};

/// options::p_in_l2 for one solve: the device's persisting-L2 limit set to `limit` bytes and an
/// access-policy window over [base, base + bytes) on the stream (hit ratio limit / bytes: persisting, the
/// rest streaming); restore() resets the persisting lines to normal, so nothing of the solve keeps L2 from
/// later work, and puts back the limit and the stream's (empty) window. set() does nothing where the stream
/// already has a window (the caller's), on the default streams (legacy or per-thread: no window is set on
/// them), or where the device refuses the limit.
class l2_window_guard {
public:
  l2_window_guard() = default;
  l2_window_guard(const l2_window_guard&) = delete;
  l2_window_guard& operator=(const l2_window_guard&) = delete;
  ~l2_window_guard() {
    if (!active_) return;  // an exception left the solve: put back what can be, errors ignored
    cudaStreamAttrValue none{};
    (void)cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &none);
    (void)cudaCtxResetPersistingL2Cache();
    (void)cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, previous_limit_);
  }
  void set(stream_t stream, const void* base, std::size_t bytes, std::size_t limit) {
    if (limit == 0 || stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return;
    cudaStreamAttrValue window{};
    GPUKIT_CUDA_CHECK(cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &window));
    if (window.accessPolicyWindow.num_bytes != 0) return;
    int max_window = 0;
    GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, gpukit::current_device()));
    const std::size_t covered = std::min(bytes, static_cast<std::size_t>(max_window));
    if (covered == 0) return;
    GPUKIT_CUDA_CHECK(cudaDeviceGetLimit(&previous_limit_, cudaLimitPersistingL2CacheSize));
    if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, limit) != cudaSuccess) {
      (void)cudaGetLastError();  // a device that refuses the limit (not sticky): no window, l2_window_bytes 0
      return;
    }
    stream_ = stream;
    active_ = true;
    limit_ = limit;
    window.accessPolicyWindow.base_ptr = const_cast<void*>(base);
    window.accessPolicyWindow.num_bytes = covered;
    window.accessPolicyWindow.hitRatio = static_cast<float>(std::min(1.0, static_cast<double>(limit) / covered));
    window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    GPUKIT_CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &window));
  }
  /// The bytes set aside (0: no window).
  std::size_t set_aside() const { return active_ ? limit_ : 0; }
  void restore() {
    if (!active_) return;
    active_ = false;
    cudaStreamAttrValue none{};
    GPUKIT_CUDA_CHECK(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &none));
    GPUKIT_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
    GPUKIT_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, previous_limit_));
  }

private:
  stream_t stream_ = nullptr;
  bool active_ = false;
  std::size_t limit_ = 0;
  std::size_t previous_limit_ = 0;
};

template <class Value>
struct solver<Value>::impl {
  const linear_operator<Value>* a = nullptr;
  options opt;
  std::int64_t n = 0;
  int block = 256;
  int grid = 1;
  // The update passes take their entries from the last one down where the vectors outgrow L2: the SpMV
  // ahead walks its rows upward, so the entries it touched last are the ones still in L2, and a pass that
  // starts on them (and ends on the entries the next SpMV reads first) finds them there. 160^3 float
  // (16.4 MB vectors): cg 88.0-88.2 us an iteration against 91.1-91.3 walking up (H200), 113.1-113.3
  // against 116.9-117.1 (H100). Where they fit (64^3: 1 MB vectors, everything of an iteration in L2)
  // direction saves nothing, and walking down measured slower: cg 16.5-16.7 against 16.0-16.3 us (H200),
  // 17.1-17.2 against 16.3-16.4 (H100). The rule: down when cg's update pass's 7 vector passes
  // (7 n sizeof(Value)) exceed the L2 (50 MB on an H100, 60 MB on an H200: from about 1.9M and 2.2M float
  // rows). The downward kernels are instantiations of their own (fused_pass.cuh says why).
  bool walks_down = false;
  // Vectors, named by cg's roles; the other methods reuse them (see solve_impl).
  room_vector<Value> v0, v1, v2, v3, v4, v5;
  room_vector<Value> x_copy;  // an operator with input room: the caller's x copied here to be applied
  gpukit::device_buffer<Value> dinv;
  // Reproducible mode: fused_exact_pass's global accumulator (reduce::exact::end_grid's max_sums * limbs
  // limb words, then max_sums flags and the ticket in `exact_counters`; zeroed once, left zero by every
  // pass), and over several ranks the rounded sums of the merged states.
  gpukit::device_buffer<unsigned long long> exact_limbs;
  gpukit::device_buffer<unsigned> exact_counters;
  gpukit::device_buffer<Value> term_sums;  // max_sums
  gpukit::device_buffer<double> partials;  // grid * max_sums doubles: per-block sums of fused_pass
  gpukit::device_buffer<double> dots;      // cg with the operator's apply_with_dots: p.q, q.r, q.q (over ranks: + r.r, x 2)
  // An operator over several ranks (linear_operator::spans_ranks): the local totals, or in reproducible
  // mode the local exact states, summed over the ranks in place; `pending` is the finish of a pass whose
  // sum is still in flight (pipecg's update, overlapped with the next SpMV), run by settle().
  bool spans = false;
  gpukit::device_buffer<double> totals;                          // max_sums
  gpukit::device_buffer<reduce::exact_accumulator<Value>> states;  // reproducible: max_sums
  std::function<void()> pending;
  std::optional<detail::cg_step<Value, false>> carried;  // pass_carried's update, its finish not yet run
  gpukit::device_buffer<double> history;
  gpukit::device_buffer<solver_state> state;
  solver_state* host_state = nullptr;  // pinned: the status check's copy target
  cudaEvent_t status_copied = nullptr;  // after the lagged status check's copy (run_loop); made at first use
  stream_t stream = nullptr;
  // options::graph: the captured loop, rebuilt when d_x changes (its kernels hold the pointer). Captured on
  // a stream of its own: the legacy default stream, which callers may pass, cannot be captured.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t graph_exec = nullptr;
  const Value* graph_x = nullptr;
  std::unique_ptr<gpukit::owned_stream> capture_stream;

  ~impl() {
    if (graph_exec) (void)cudaGraphExecDestroy(graph_exec);
    if (graph) (void)cudaGraphDestroy(graph);
    if (host_state) (void)cudaFreeHost(host_state);
    if (status_copied) (void)cudaEventDestroy(status_copied);
  }

  // ---- launching one op ------------------------------------------------------------------------------------
  /// `defer` (operators over several ranks only): leave the finish pending until the next pass or status
  /// check, so that what is enqueued meanwhile (an SpMV) overlaps the sum over ranks.
  template <class Op>
  void pass(const Op& op, bool defer = false) {
    settle();
    if (block == 128) pass_shaped<128>(op, defer);
    else pass_shaped<256>(op, defer);
  }

  /// Runs the finish left pending by a deferred pass (its sum over ranks, then the op's scalar update).
  void settle() {
    if (!pending) return;
    const std::function<void()> f = std::move(pending);
    pending = nullptr;
    f();
  }

  template <int Block, class Op>
  void pass_shaped(const Op& op, bool defer) {
    static_assert(Op::k <= max_sums, "partials and the exact accumulator hold max_sums sums");
    if constexpr (Op::k == 0) {
      if (walks_down)
        gpukit::launch_dependent<detail::map_pass<Block, Op, true>>(grid, Block, stream, op, n, state.data());
      else
        gpukit::launch_dependent<detail::map_pass<Block, Op, false>>(grid, Block, stream, op, n, state.data());
    } else if (spans) {
      pass_spanning<Block>(op, defer);
    } else if (opt.reproducible) {
      launch_exact<Block, false>(op);
    } else {
      launch_fused<Block, false>(op);
    }
  }

  /// fused_pass with 16-byte accesses where the op is vectorized and all its vectors are aligned (always for
  /// the solver's own vectors; b and x are the caller's and may sit at any element offset), else one entry
  /// at a time. Launched with PDL (gpukit::launch_dependent): the pass's launch hides behind the tail of
  /// the SpMV or pass before it (H100 microbenchmark: 1.4 us per kernel boundary).
  /// SpansRanks: the local totals go to `out` (default: `totals`).
  template <int Block, bool SpansRanks, class Op>
  void launch_fused(const Op& op, double* out = nullptr) {
    if (walks_down) launch_fused_to<Block, SpansRanks, true>(op, out);
    else launch_fused_to<Block, SpansRanks, false>(op, out);
  }
  template <int Block, bool SpansRanks, bool Down, class Op>
  void launch_fused_to(const Op& op, double* out) {
    constexpr int lanes = detail::vector_lanes<Value>;
    if constexpr (detail::is_vectorized<Op>::value) {
      if (op.aligned(lanes * sizeof(Value))) {
        launch_fused_shaped<detail::fused_pass<Block, lanes, Op, SpansRanks, Down>, SpansRanks>(op, out);
        return;
      }
    }
    launch_fused_shaped<detail::fused_pass<Block, 1, Op, SpansRanks, Down>, SpansRanks>(op, out);
  }
  /// The grid: at most one wave of the kernel unless options::grid_blocks set it. The grid is sized for 8
  /// blocks of 256 per SM, which the upward passes reach (cg's float update: 32 registers); a kernel with
  /// more registers (the downward update: 36, 6 blocks per SM; pcg's and pipecg's passes) would otherwise
  /// run in more than one wave, the last on a part-full GPU. H200, 3D Poisson float, same run: pcg 64^3
  /// 16.2 us an iteration against 18.5 (18.6 with the downward loop alone), pipecg 64^3 17.6 against
  /// 20.1, pcg 160^3 102.4-102.6 against 104.7; cg unchanged (88.8-88.9 at 160^3).
  template <auto Kernel, bool SpansRanks, class Op>
  void launch_fused_shaped(const Op& op, double* out) {
    const int g = opt.grid_blocks ? grid : one_wave_grid<Kernel>();
    auto* sums = reinterpret_cast<detail::sums<Op::k>*>(partials.data());
    if (SpansRanks && !out) out = totals.data();
    gpukit::launch_dependent<Kernel>(g, block, stream, op, n, state.data(), sums, SpansRanks ? out : nullptr);
  }

  /// The reproducible mode's pass (fused_exact_pass): as launch_fused, with the K sums exact; SpansRanks:
  /// each written as its exact state to `states`. Grid: at most one wave of the kernel (its 64-80 registers
  /// leave 3 blocks of 256 per SM, not fused_pass's 8), since every block ends with a flush of its windows
  /// and the grid step: H200, 3D Poisson float, per iteration: 160^3 125.2 us against 126.3 with the usual
  /// grid (2.7 waves), 64^3 24.2 against 26.0.
  template <int Block, bool SpansRanks, class Op>
  void launch_exact(const Op& op) {
    if (walks_down) launch_exact_to<Block, SpansRanks, true>(op);
    else launch_exact_to<Block, SpansRanks, false>(op);
  }
  template <int Block, bool SpansRanks, bool Down, class Op>
  void launch_exact_to(const Op& op) {
    unsigned long long* limb = exact_limbs.data();
    unsigned* flags = exact_counters.data();
    unsigned* ticket = flags + max_sums;
    reduce::exact_accumulator<Value>* out = SpansRanks ? states.data() : nullptr;
    constexpr int lanes = detail::vector_lanes<Value>;
    if constexpr (detail::is_vectorized<Op>::value) {
      if (op.aligned(lanes * sizeof(Value))) {
        launch_exact_shaped<detail::fused_exact_pass<Block, lanes, Op, Value, SpansRanks, Down>>(op, limb, flags,
                                                                                                ticket, out);
        return;
      }
    }
    launch_exact_shaped<detail::fused_exact_pass<Block, 1, Op, Value, SpansRanks, Down>>(op, limb, flags, ticket, out);
  }
  template <auto Kernel, class Op>
  void launch_exact_shaped(const Op& op, unsigned long long* limb, unsigned* flags, unsigned* ticket,
                           reduce::exact_accumulator<Value>* out) {
    gpukit::launch_dependent<Kernel>(one_wave_grid<Kernel>(), block, stream, op, n, state.data(), limb, flags,
                                     ticket, out);
  }
  /// `grid`, capped at one wave of Kernel at `block` threads (resident blocks per SM times SMs, cached per
  /// kernel and device).
  template <auto Kernel>
  int one_wave_grid() const {
    static std::atomic<int> waves[64] = {};  // one per kernel: see gpukit::cached_wave
    return static_cast<int>(std::min<std::int64_t>(grid, gpukit::cached_wave(waves, Kernel, block)));
  }

  /// An operator over several ranks: the local totals (reproducible: the local exact state of each sum,
  /// fused_exact_pass), their sum over ranks (the operator's; int64 words of normalized
  /// states add exactly for up to 2^31 ranks), then the finish on one thread (reproducible: each state
  /// rounded once on the device, reduce::round_exact), now or, with `defer`, at the next settle().
  template <int Block, class Op>
  void pass_spanning(const Op& op, bool defer) {
    constexpr int K = Op::k;
    // Deferred: started now, finished at the next settle(); otherwise one in-order call
    // (linear_operator::rank_sum: no side stream on the NCCL path).
    if (opt.reproducible) {
      launch_exact<Block, true>(op);
      auto* words = reinterpret_cast<std::int64_t*>(states.data());
      constexpr int count = K * reduce::exact_accumulator<Value>::words;
      const auto finish = [this, op] {
        reduce::round_exact(states.data(), K, term_sums.data(), stream);
        detail::finish_terms<<<1, 1, 0, stream>>>(op, state.data(), term_sums.data());
        GPUKIT_CHECK_LAUNCH();
      };
      if (!defer) {
        a->rank_sum_exact(words, count, stream);
        finish();
        return;
      }
      a->start_rank_sum_exact(words, count, stream);
      pending = [this, finish] {
        a->finish_rank_sum(stream);
        finish();
      };
    } else {
      launch_fused<Block, true>(op);
      const auto finish = [this, op] {
        detail::finish_sums<<<1, 1, 0, stream>>>(op, state.data(), totals.data());
        GPUKIT_CHECK_LAUNCH();
      };
      if (!defer) {
        a->rank_sum(totals.data(), K, stream);
        finish();
        return;
      }
      a->start_rank_sum(totals.data(), K, stream);
      pending = [this, finish] {
        a->finish_rank_sum(stream);
        finish();
      };
    }
  }

  /// cg's update over ranks with the dots from the operator (fused_dots): its local r.r goes to `carry_to`,
  /// where the next iteration's three local dots join it, so ONE sum over ranks per iteration carries both
  /// (run_carried_sums); its finish (the stopping test and history of this iteration, rho = r.r) follows
  /// that sum. A status check or any other pass before then settles it alone (pending: its own sum).
  void pass_carried(const detail::cg_step<Value, false>& op, double* carry_to) {
    settle();
    if (block == 128) launch_fused<128, true>(op, carry_to);
    else launch_fused<256, true>(op, carry_to);
    carried = op;
    pending = [this, carry_to] {
      a->rank_sum(carry_to, 1, stream);
      finish_carried(carry_to);
    };
  }
  void finish_carried(const double* total) {
    detail::finish_sums<<<1, 1, 0, stream>>>(*carried, state.data(), total);
    GPUKIT_CHECK_LAUNCH();
    carried.reset();
  }
  /// This iteration's three local dots in d[0..3), summed over ranks with the carried r.r in d[3] (written by
  /// the previous update, unless a status check settled it), whose finish then runs.
  void run_carried_sums(double* d) {
    if (!carried) {
      settle();
      a->rank_sum(d, 3, stream);
      return;
    }
    pending = nullptr;  // its sum rides with these three
    a->rank_sum(d, 4, stream);
    finish_carried(d + 3);
  }

  void apply(const Value* x, Value* y) { a->apply(x, y, stream); }
  /// apply() of the caller's vector (the solution x), which has no room: copied into x_copy first where the
  /// operator needs room around its input.
  void apply_caller(const Value* x, Value* y) {
    if (x_copy.bytes() == 0) return apply(x, y);
    if (n > 0)
      GPUKIT_CUDA_CHECK(cudaMemcpyAsync(x_copy.data(), x, static_cast<std::size_t>(n) * sizeof(Value),
                                        cudaMemcpyDeviceToDevice, stream));
    apply(x_copy.data(), y);
  }

  /// cg takes its dots from the operator's product (linear_operator::fuses_dots); the reproducible mode asks
  /// for them summed exactly (sparse::dots_summation::exact: each term rounded to Value, the same terms and
  /// sums as its cg_dots pass, so the same bits), except over ranks, where exact states are summed (its
  /// cg_dots pass).
  bool fused_dots() const {
    return opt.method == krylov_method::cg && a->fuses_dots() && !(spans && opt.reproducible);
  }
  sparse::dots_summation dots_summation() const {
    return opt.reproducible ? sparse::dots_summation::exact : sparse::dots_summation::fast;
  }

  /// Enqueues the copy of the status word and the iteration count (and with `all`, the whole state) to the
  /// pinned host copy, and an event after it; wait_status() waits for that event. The host reads host_state
  /// only after the wait. fetch() is both at once; the lagged check of run_loop enqueues more in between.
  void post_status(bool all) {
    static_assert(offsetof(solver_state, iterations) == offsetof(solver_state, status) + sizeof(int),
                  "the status check copies status and iterations in one 8-byte copy");
    settle();
    if (!status_copied) GPUKIT_CUDA_CHECK(cudaEventCreateWithFlags(&status_copied, cudaEventDisableTiming));
    if (all)
      GPUKIT_CUDA_CHECK(cudaMemcpyAsync(host_state, state.data(), sizeof(solver_state), cudaMemcpyDeviceToHost, stream));
    else
      GPUKIT_CUDA_CHECK(cudaMemcpyAsync(&host_state->status, &state.data()->status, 2 * sizeof(int),
                                        cudaMemcpyDeviceToHost, stream));
    GPUKIT_CUDA_CHECK(cudaEventRecord(status_copied, stream));
  }
  void wait_status() { GPUKIT_CUDA_CHECK(cudaEventSynchronize(status_copied)); }
  /// The status check that waits for everything enqueued so far (the copy is the stream's last work).
  void fetch(bool all) {
    post_status(all);
    wait_status();
  }

  void build_graph(const std::function<void()>& iterate, const Value* x);
  void run_loop(const std::function<void()>& iterate, const std::function<void(int)>& replace,
                const std::function<void()>& gap_check);
  result solve_impl(const Value* d_b, Value* d_x, bool guess);
};

/// The while node's condition after each iteration: go on while running and below the iteration limit.
__global__ void graph_continue(cudaGraphConditionalHandle h, const solver_state* s, int max_iterations) {
  cudaGraphSetConditional(h, s->status == detail::status_running && s->iterations < max_iterations ? 1u : 0u);
}

/// options::graph: a graph of one conditional while node (default condition 1, reset at every launch) whose
/// body is `iterate` and graph_continue, captured from the same enqueueing code as the host loop. The host
/// checks status and limit before launching it, so the first body never runs past a stop.
template <class Value>
void solver<Value>::impl::build_graph(const std::function<void()>& iterate, const Value* x) {
  if (graph_exec) (void)cudaGraphExecDestroy(graph_exec);
  if (graph) (void)cudaGraphDestroy(graph);
  graph_exec = nullptr;
  graph = nullptr;
  if (!capture_stream) capture_stream = std::make_unique<gpukit::owned_stream>();
  GPUKIT_CUDA_CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphConditionalHandle cond{};
  GPUKIT_CUDA_CHECK(cudaGraphConditionalHandleCreate(&cond, graph, 1, cudaGraphCondAssignDefault));
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = cond;
  p.conditional.type = cudaGraphCondTypeWhile;
  p.conditional.size = 1;
  cudaGraphNode_t node{};
  GPUKIT_CUDA_CHECK(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &p));
  cudaGraph_t body = p.conditional.phGraph_out[0];
  const stream_t user_stream = stream;
  stream = capture_stream->get();
  GPUKIT_CUDA_CHECK(cudaStreamBeginCaptureToGraph(stream, body, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
  try {
    iterate();
    graph_continue<<<1, 1, 0, stream>>>(cond, state.data(), opt.max_iterations);
    GPUKIT_CHECK_LAUNCH();
  } catch (...) {
    cudaGraph_t partial = nullptr;
    (void)cudaStreamEndCapture(stream, &partial);
    stream = user_stream;
    throw;
  }
  cudaGraph_t captured = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &captured);
  stream = user_stream;
  GPUKIT_CUDA_CHECK(ended);
  GPUKIT_CUDA_CHECK(cudaGraphInstantiate(&graph_exec, graph, 0));
  graph_x = x;
}

/// The host-driven loop: check_every iterations between status checks; iterations after a stop (or after a
/// pipecg status asking for a recomputation) are no-ops.
/// cg, pcg, bicgstab: the check lags: the status is copied `status_lag` iterations before the segment's end
/// and the host waits for that copy, not for the stream, so the GPU still has those iterations queued while
/// the host wakes and enqueues the next segment (a drained queue costs ~10-20 us: a sync's wake-up, then
/// the first launch's latency). A stop is seen at most check_every + status_lag - 1 iterations late (no-ops,
/// but their SpMVs run). The host counts what it enqueued, so max_iterations holds exactly.
/// pipecg: the check waits for the stream (its host reacts to the status at once: restarts, refreshes), and
/// the segment is sized from the device's own count, so iterations skipped while a recomputation waited for
/// the check are launched again, and the gap check lands after iterations that are multiples of its period,
/// as on the CPU path.
template <class Value>
void solver<Value>::impl::run_loop(const std::function<void()>& iterate, const std::function<void(int)>& replace,
                                   const std::function<void()>& gap_check) {
  const bool pipe = opt.method == krylov_method::pipecg;
  const int gap_every = pipe ? detail::pipecg_check_every<Value>(opt) : 0;
  const int lag = pipe ? 0 : std::min(status_lag, opt.check_every - 1);
  const bool all = static_cast<bool>(opt.progress);
  int enqueued = host_state->iterations;
  for (;;) {
    const int status = host_state->status;
    if (status == detail::status_replace || status == detail::status_refresh || status == detail::status_claim) {
      replace(status);
      fetch(false);
      enqueued = host_state->iterations;
      continue;
    }
    if (status != detail::status_running || enqueued >= opt.max_iterations) break;
    int segment = std::min(opt.check_every, opt.max_iterations - enqueued);
    if (gap_every > 0) segment = std::min(segment, gap_every - enqueued % gap_every);
    const bool lagged = lag > 0 && segment > lag;
    for (int k = 0; k < segment; ++k) {
      iterate();
      if (lagged && k == segment - 1 - lag) post_status(all);
    }
    enqueued += segment;
    if (gap_every > 0 && enqueued % gap_every == 0) gap_check();
    if (lagged) {
      wait_status();
    } else {
      fetch(all);
      if (pipe) enqueued = host_state->iterations;
    }
    if (opt.progress) opt.progress(host_state->iterations, std::sqrt(host_state->rr));
  }
}

template <class Value>
result solver<Value>::impl::solve_impl(const Value* b, Value* x, bool guess) {
  double* hist = opt.keep_history ? history.data() : nullptr;
  pending = nullptr;  // nothing of an earlier solve is carried into this one
  carried.reset();
  // The state starts over: running, no iterations, the tolerances.
  *host_state = solver_state{};
  host_state->rtol2 = opt.rtol * opt.rtol;
  host_state->atol2 = opt.atol * opt.atol;
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(state.data(), host_state, sizeof(solver_state), cudaMemcpyHostToDevice, stream));

  const Value* q0 = nullptr;  // A x0, when there is a guess
  if (guess) {
    apply_caller(x, v2.data());
    q0 = v2.data();
  } else if (n > 0) {  // a rank of a distributed solve may hold no rows (and d_x no memory)
    GPUKIT_CUDA_CHECK(cudaMemsetAsync(x, 0, static_cast<std::size_t>(n) * sizeof(Value), stream));
  }
  const Value* jac = opt.method == krylov_method::pcg ? dinv.data() : nullptr;

  // One iteration of each method, enqueued; the ops read their scalars from the device state.
  std::function<void()> iterate;
  std::function<void(int)> replace;  // pipecg: enqueued when the status check asks for a recomputation
  std::function<void()> gap_check;   // pipecg: every residual_check_every iterations
  Value* scratch = v2.data();  // A x at the end
  switch (opt.method) {
    case krylov_method::cg:
    case krylov_method::pcg: {
      Value *r = v0.data(), *p = v1.data(), *q = v2.data();
      pass(detail::cg_init<Value>{b, q0, jac, r, p, hist});
      if (fused_dots()) {  // the SpMV's epilogue takes p.q, q.r, q.q: one pass fewer
        double* d = dots.data();
        const sparse::dots_summation how = dots_summation();
        if (!spans) {
          iterate = [=] {
            a->apply_with_dots(p, q, r, d, how, stream);
            pass(detail::cg_step<Value, false>{x, r, p, q, nullptr, hist, d, Value(0), Value(0), false});
          };
          break;
        }
        // Over ranks: ONE sum per iteration, the three dots with the previous update's r.r (pass_carried).
        // That update's finish reads its own iteration's dots again (to record a breakdown) after this
        // iteration's SpMV wrote new ones: iterations alternate between two slots of 4 doubles.
        iterate = [=, slot = 0]() mutable {
          double* dk = d + 4 * slot;
          slot ^= 1;
          a->apply_with_dots(p, q, r, dk, how, stream);
          run_carried_sums(dk);
          pass_carried(detail::cg_step<Value, false>{x, r, p, q, nullptr, hist, dk, Value(0), Value(0), false},
                       d + 4 * slot + 3);
        };
        break;
      }
      iterate = [=] {
        apply(p, q);
        if (jac) {
          pass(detail::cg_dots<Value, true>{p, q, r, jac});
          pass(detail::cg_step<Value, true>{x, r, p, q, jac, hist, nullptr, Value(0), Value(0), false});
        } else {
          pass(detail::cg_dots<Value, false>{p, q, r, nullptr});
          pass(detail::cg_step<Value, false>{x, r, p, q, nullptr, hist, nullptr, Value(0), Value(0), false});
        }
      };
      break;
    }
    case krylov_method::bicgstab: {
      Value *r = v0.data(), *p = v1.data(), *t = v2.data(), *rhat = v3.data(), *v = v4.data(), *s = v5.data();
      pass(detail::bicg_init<Value>{b, q0, r, rhat, p, v, hist});
      iterate = [=] {
        pass(detail::bicg_direction<Value>{r, v, p, Value(0), Value(0)});
        apply(p, v);
        pass(detail::bicg_alpha<Value>{rhat, v});
        pass(detail::bicg_s<Value>{r, v, s, Value(0)});
        apply(s, t);
        pass(detail::bicg_omega<Value>{t, s});
        pass(detail::bicg_update<Value>{x, r, rhat, p, s, t, hist, Value(0), Value(0)});
      };
      break;
    }
    case krylov_method::pipecg: {
      Value *r = v0.data(), *p = v1.data(), *q = v2.data(), *w = v3.data(), *z = v4.data(), *s = v5.data();
      pass(detail::pipe_init<Value>{b, q0, r, z, s, p, hist});
      apply(r, w);
      pass(detail::pipe_first<Value>{r, w});
      // Over several ranks the update's two dots are summed while the next iteration's SpMV runs: its
      // finish (alpha, beta for the next update) is settled by the next pass or status check.
      iterate = [=] {
        apply(w, q);
        pass(detail::pipe_update<Value>{q, z, s, p, x, r, w, hist, Value(0), Value(0), false}, spans);
      };
      // Enqueued when the status check finds status_replace (restart: r = b - A x, w = A r), or
      // status_refresh / status_claim (refresh: s = A p, z = A s as well, p kept); see pipe_recomputed.
      replace = [=](int mode) {
        apply_caller(x, q);
        pass(detail::pipe_residual<Value>{b, q, r});
        apply(r, w);
        if (mode != detail::status_replace) {
          apply(p, s);
          apply(s, z);
        }
        pass(detail::pipe_recomputed<Value>{r, w, s, p, hist, mode});
      };
      gap_check = [=] {
        apply_caller(x, q);
        pass(detail::pipe_gap<Value>{b, q, r});
      };
      break;
    }
  }

  // The host-driven loop of cg and pcg on one GPU: p in a set-aside part of the L2 (options::p_in_l2).
  l2_window_guard p_window;
  const bool cg_family = opt.method == krylov_method::cg || opt.method == krylov_method::pcg;
  if (cg_family && !spans && !opt.graph && n > 0) {
    const auto vector_bytes = n * static_cast<std::int64_t>(sizeof(Value));
    static std::atomic<int> persisting_max[64] = {};
    const std::int64_t limit = l2_window_bytes(
        vector_bytes, gpukit::l2_cache_bytes(),
        gpukit::cached_device_attribute(persisting_max, cudaDevAttrMaxPersistingL2CacheSize), opt.p_in_l2);
    p_window.set(stream, v1.data(), static_cast<std::size_t>(vector_bytes), static_cast<std::size_t>(limit));
  }
  fetch(false);
  const auto loop_start = std::chrono::steady_clock::now();
  if (opt.graph) {
    if (host_state->status == detail::status_running && host_state->iterations < opt.max_iterations) {
      if (!graph_exec || graph_x != x) build_graph(iterate, x);
      GPUKIT_CUDA_CHECK(cudaGraphLaunch(graph_exec, stream));
    }
  } else {
    run_loop(iterate, replace, gap_check);
  }
  fetch(true);
  const double loop_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_start).count();
  if (host_state->status == detail::status_bad_rhs)
    throw std::invalid_argument("the right-hand side holds NaN or Inf");

  result res;
  res.method = opt.method;
  res.iterations = host_state->iterations;
  res.residual_norm = std::sqrt(host_state->rr);
  res.rhs_norm = std::sqrt(host_state->b_norm2);
  switch (host_state->status) {
    case detail::status_converged: res.reason = stop_reason::converged; break;
    case detail::status_breakdown: res.reason = stop_reason::breakdown; break;
    case detail::status_non_finite: res.reason = stop_reason::non_finite; break;
    case detail::status_stagnated: res.reason = stop_reason::stagnated; break;
    default: res.reason = stop_reason::max_iterations; break;
  }
  res.converged = res.reason == stop_reason::converged;
  res.replacements = host_state->replacements;
  res.iteration_seconds = loop_seconds;
  if (res.reason == stop_reason::breakdown || res.reason == stop_reason::non_finite)
    res.breakdown = {detail::quantity_name(host_state->quantity), host_state->breakdown_iteration,
                     host_state->breakdown_value};
  if (opt.keep_history) {
    res.history.resize(static_cast<std::size_t>(res.iterations) + 1);
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(res.history.data(), history.data(), res.history.size() * sizeof(double),
                                      cudaMemcpyDeviceToHost, stream));
  }
  // The true residual, from x.
  apply_caller(x, scratch);
  pass(detail::true_residual<Value>{b, scratch});
  fetch(true);
  res.true_relative_residual = host_state->b_norm2 > 0 ? std::sqrt(host_state->true_r2 / host_state->b_norm2) : 0.0;
  res.l2_window_bytes = static_cast<std::int64_t>(p_window.set_aside());
  p_window.restore();
  return res;
}

template <class Value>
solver<Value>::solver(const linear_operator<Value>& a, const options& opt) : impl_(std::make_unique<impl>()) {
  detail::check_options(opt);
  // Over several ranks, a rank may hold no rows: the distributed entry point checks the global shape.
  if (!a.spans_ranks() || a.rows() != a.cols()) detail::check_shape(a.rows(), a.cols());
  if (opt.graph && a.spans_ranks())
    throw std::invalid_argument("graph mode is not available for an operator over several ranks (its sums over "
                                "ranks may stage through the host, which a CUDA graph cannot capture)");
  impl& s = *impl_;
  s.a = &a;
  s.opt = opt;
  s.n = a.rows();
  s.block = opt.block_size ? opt.block_size : 256;
  // Enough blocks to fill the GPU (2048 resident threads per SM on sm_80/90), fewer for short vectors.
  const std::int64_t full = static_cast<std::int64_t>(gpukit::sm_count()) * (2048 / s.block);
  const std::int64_t needed = (s.n + s.block - 1) / s.block;
  s.grid = static_cast<int>(opt.grid_blocks ? opt.grid_blocks : std::max<std::int64_t>(1, std::min(full, needed)));
  s.walks_down = opt.pass_direction == pass_order::automatic
                     ? 7 * s.n * static_cast<std::int64_t>(sizeof(Value)) > gpukit::l2_cache_bytes()
                     : opt.pass_direction == pass_order::downward;
  const sparse::x_halo room = a.input_room();
  for (auto* v : {&s.v0, &s.v1, &s.v2, &s.v3, &s.v4, &s.v5}) *v = room_vector<Value>(s.n, room);
  if (room.before + room.after > 0) s.x_copy = room_vector<Value>(s.n, room);
  s.partials = gpukit::device_buffer<double>(static_cast<std::int64_t>(s.grid) * max_sums);
  if (opt.keep_history) s.history = gpukit::device_buffer<double>(static_cast<std::int64_t>(opt.max_iterations) + 1);
  s.state = gpukit::device_buffer<solver_state>(1);
  s.spans = a.spans_ranks();
  if (s.fused_dots()) {
    s.dots = gpukit::device_buffer<double>(s.spans ? 8 : 3);  // over ranks: two slots of 4
    // Defined from the start: an update that found the solve stopped writes no r.r, and the next sum over
    // ranks still carries its slot (its finish then does nothing).
    GPUKIT_CUDA_CHECK(cudaMemset(s.dots.data(), 0, s.dots.bytes()));
  }
  if (opt.reproducible) {
    s.exact_limbs = gpukit::device_buffer<unsigned long long>(max_sums * reduce::exact::limbs<Value>);
    s.exact_counters = gpukit::device_buffer<unsigned>(max_sums + 1);
    GPUKIT_CUDA_CHECK(cudaMemset(s.exact_limbs.data(), 0, s.exact_limbs.bytes()));
    GPUKIT_CUDA_CHECK(cudaMemset(s.exact_counters.data(), 0, s.exact_counters.bytes()));
    s.term_sums = gpukit::device_buffer<Value>(max_sums);
  }
  if (s.spans) {
    s.totals = gpukit::device_buffer<double>(max_sums);
    if (opt.reproducible) s.states = gpukit::device_buffer<reduce::exact_accumulator<Value>>(max_sums);
  }
  GPUKIT_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&s.host_state), sizeof(solver_state)));
  *s.host_state = solver_state{};
  // The ticket counter must start at 0: the whole state is written before every solve.
  if (opt.method == krylov_method::pcg) {
    if (!a.has_diagonal())
      throw std::invalid_argument("pcg (Jacobi) needs the operator's diagonal: this operator does not provide one");
    gpukit::device_buffer<Value> d(s.n);
    a.diagonal(d.data(), nullptr);
    GPUKIT_CUDA_CHECK(cudaDeviceSynchronize());
    s.dinv = gpukit::device_buffer<Value>(detail::checked_inverse(d.download()));
  }
}

template <class Value>
solver<Value>::solver(solver&&) noexcept = default;
template <class Value>
solver<Value>& solver<Value>::operator=(solver&&) noexcept = default;
template <class Value>
solver<Value>::~solver() = default;

template <class Value>
void solver<Value>::check_sizes(std::int64_t b, std::int64_t x) const {
  detail::check_vector_size("right-hand side", b, impl_->n);
  detail::check_vector_size("solution vector", x, impl_->n);
}

template <class Value>
result solver<Value>::solve(const Value* d_b, Value* d_x, std::int64_t n, stream_t stream) {
  detail::check_vector_size("right-hand side", n, impl_->n);
  impl_->stream = stream;
  return impl_->solve_impl(d_b, d_x, false);
}

template <class Value>
result solver<Value>::solve_with_guess(const Value* d_b, Value* d_x, std::int64_t n, stream_t stream) {
  detail::check_vector_size("right-hand side", n, impl_->n);
  impl_->stream = stream;
  return impl_->solve_impl(d_b, d_x, true);
}

template <class Value>
const options& solver<Value>::settings() const noexcept {
  return impl_->opt;
}

template <class Value>
std::size_t solver<Value>::workspace_bytes() const noexcept {
  const impl& s = *impl_;
  return 6 * s.v0.bytes() + s.x_copy.bytes() + s.dinv.bytes() + s.exact_limbs.bytes() + s.exact_counters.bytes() + s.term_sums.bytes() +
         s.partials.bytes() + s.dots.bytes() + s.history.bytes() + s.totals.bytes() + s.states.bytes();
}

template class solver<float>;
template class solver<double>;

}  // namespace solve
