// The vocabulary of libsolve: the Krylov methods, the options of a solve and its result. No CUDA syntax.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace solve {

/// The Krylov methods.
///  * cg:       conjugate gradients (Hestenes-Stiefel), A symmetric positive definite.
///  * pcg:      cg with Jacobi (diagonal) preconditioning: z = D^-1 r; the diagonal must have no zero.
///  * bicgstab: BiCGStab (van der Vorst 1992), A nonsingular, no preconditioner.
///  * pipecg:   pipelined CG (Ghysels and Vanroose 2014, Alg. 4 without preconditioner): the two dots of an
///              iteration are taken in the same pass as its six vector updates, so one iteration is one SpMV
///              plus ONE fused kernel (cg: SpMV plus two). Same iterates as cg in exact arithmetic; its
///              recurrences for r, w = A r, s = A p, z = A s drift from their definitions far faster than
///              cg's (Cools et al. 2018; in float it diverged), so: every options::residual_check_every
///              iterations it measures ||(b - A x) - r|| and, above 1e-3 ||r||, REFRESHES r, w, s, z from x
///              and p keeping the direction (its scalars recomputed so the next direction is A-conjugate to
///              it); a recurrence that claims convergence is refreshed too and the recomputed residual
///              decides (stop_reason::stagnated when that cannot reach the tolerance); a recurrence p.Ap
///              <= 0 RESTARTS it (r = b - A x, w = A r, beta = 0). See result::replacements.
enum class krylov_method { cg, pcg, bicgstab, pipecg };

/// "cg", "pcg", "bicgstab", "pipecg".
const char* to_string(krylov_method m);
/// Inverse of to_string; std::invalid_argument listing the names otherwise.
krylov_method parse_krylov_method(std::string_view name);
/// Every method, in enum order (what tests and benchmarks iterate over).
std::vector<krylov_method> all_krylov_methods();

/// Why a solve stopped.
///  * converged:      ||r_k|| <= max(rtol ||b||, atol) for the recursively updated residual r_k.
///  * max_iterations: max_iterations iterations ran without that.
///  * breakdown:      a quantity the method divides by vanished or had the wrong sign (see breakdown_info);
///                    for pipecg, p.Ap <= 0 right after a restart (computed from the true residual).
///  * non_finite:     NaN or Inf appeared in a residual norm or a scalar of the iteration.
///  * stagnated:      pipecg only: the recurrence claimed convergence twice and b - A x, recomputed each
///                    time, did not fall below the tolerance nor by half in between: the tolerance is below
///                    the accuracy this precision attains on this problem (true_relative_residual says how
///                    far it got).
enum class stop_reason { converged, max_iterations, breakdown, non_finite, stagnated };

/// "converged", "max_iterations", "breakdown", "non_finite", "stagnated".
const char* to_string(stop_reason r);

/// options::pass_direction.
enum class pass_order { automatic, upward, downward };

/// options::p_in_l2.
enum class l2_window { automatic, off, on };

/// The L2 bytes a cg or pcg solve sets aside for its direction vector p (cudaLimitPersistingL2CacheSize,
/// with an access-policy window over p on the solve's stream; 0: none), from the vector's bytes, the GPU's
/// L2 and its most persisting bytes (cudaDevAttrMaxPersistingL2CacheSize). p is read by the SpMV and read
/// and written by the update: 3 of the iteration's 10 vector passes that the L2 can serve instead of DRAM.
///   automatic: the vector's bytes where they are at least 1/16 of the L2 and at most half the persisting
///     maximum (an H200: 3.9 to 19.7 MB, 1M to 4.9M float rows), else 0. H200, 3D Poisson float, cg per
///     iteration with the window against without, same run: 112^3 37.1 us against 37.9, 128^3 51.3
///     against 53.2, 160^3 85.5 against 89.2, 170^3 (19.65 MB) 103.1 against 110.0; pcg 160^3 97.5
///     against 102.7. Below the range everything stays in L2 anyway (64^3 16.1 and 96^3 24.9 us either
///     way); above it the window's set-aside costs the rest of the iteration more than p gains.
///   on: as automatic at any size (tests and measurements); past the automatic range a quarter of the
///     persisting maximum over the head of p, which measured slower (200^3: 168.7 us against 160.6).
///   off: 0.
/// Also 0 where the GPU has no persisting L2 (persisting_max 0) or the vector is empty.
std::int64_t l2_window_bytes(std::int64_t vector_bytes, std::int64_t l2_bytes, std::int64_t persisting_max,
                             l2_window policy);

/// How a solve runs. The defaults suit a well-conditioned SPD system in double.
struct options {
  krylov_method method = krylov_method::cg;
  double rtol = 1e-8;          ///< stop when ||r|| <= max(rtol * ||b||, atol)
  double atol = 0;             ///< absolute floor of that test (useful when b is tiny)
  int max_iterations = 1000;   ///< >= 0
  /// The host learns whether the iteration has stopped every `check_every` iterations (one 8-byte copy).
  /// cg, pcg and bicgstab copy the status two iterations before the end of each segment and the host waits
  /// for that copy only, so the GPU never runs dry at a check (a drained launch queue costs ~10-20 us);
  /// pipecg synchronizes the stream (its host enqueues restarts and refreshes at once). Iterations launched
  /// after the stop are no-ops on the device (their kernels return at once; the SpMV still runs), so the
  /// solution and the count are those of the stopping iteration: at most check_every + 1 wasted SpMVs after
  /// convergence (pipecg: check_every - 1). 8 is not tuned by measurement: with the lagged check a check
  /// costs one copy in the stream, and a larger value mostly adds no-op iterations after the stop.
  int check_every = 8;
  /// Every dot product summed exactly and rounded once (the bits of reduce::reproducible_sum of the rounded
  /// products), so the residual history is bitwise identical across runs, launch shapes (block_size,
  /// grid_blocks) and GPUs, given an SpMV that is itself deterministic (one sparse::spmv_algorithm). Costs
  /// exact work per term in the same passes (cg's dots in the SpMV's epilogue where the operator fuses them,
  /// summed exactly there: sparse::dots_summation::exact); 1.13x the default cg's time per iteration on an
  /// H200 (3D Poisson 160^3, float; 1.11x on an H100 with the float runs' earlier, slower exactness check).
  bool reproducible = false;
  /// Record ||r_k|| for k = 0 .. iterations on the device; copied to result::history once at the end.
  bool keep_history = true;
  /// Launch shape of the solver's vector kernels (tests and benchmarks): threads per block (0 = 256; 128 or
  /// 256) and blocks (0 = enough to fill the GPU, capped by the vector length). std::invalid_argument otherwise.
  int block_size = 0;
  int grid_blocks = 0;
  /// Order in which the solver's vector passes take their entries (tests and benchmarks, as block_size):
  /// automatic (from the last entry down where the vectors outgrow the GPU's L2, so that each pass starts on
  /// what the SpMV ahead, walking upward, left there; libsolve/README.md, "Passes walk down"), upward or
  /// downward. The reproducible mode's bits do not depend on it; the default mode's sums change order.
  pass_order pass_direction = pass_order::automatic;
  /// cg and pcg on one GPU, host-driven loop (not options::graph): keep the direction vector p in a
  /// set-aside part of the L2 (l2_window_bytes has the rule and its measurements). For the solve only: the
  /// device's persisting-L2 limit and the stream's access-policy window are set at its start and put back
  /// at its end, after every persisting line of the context is reset to normal (a caller's own persisting
  /// data too: set off where other work relies on it). No window on a stream that has one already (the
  /// caller's), on the default streams (legacy or per-thread), where the device refuses the limit, or over
  /// several ranks: result::l2_window_bytes says which. Results are the same bits either way.
  l2_window p_in_l2 = l2_window::automatic;
  /// pipecg: every this many iterations, the gap ||(b - A x) - r|| between the true residual and the
  /// recurrence's is measured (one extra SpMV and one pass); when it exceeds 1e-3 ||r||, r, w, s and z are
  /// recomputed from x and p (three more SpMVs) keeping the direction (a refresh, see krylov_method).
  /// -1: automatic, 10 in float, 50 in double; 0: never (only the refreshes at the stopping test and the
  /// restarts at p.Ap <= 0). Other methods ignore it.
  int residual_check_every = -1;
  /// GPU: run the iterations as ONE CUDA graph launch: a conditional while node whose body is one iteration
  /// and a one-thread kernel that sets the condition from the device status (running and iterations <
  /// max_iterations), so the host waits once, at the stop, instead of every check_every iterations, and
  /// no launch reaches the driver inside the loop. Same results, bitwise, as the host-driven loop (the body
  /// enqueues the same kernels). The graph is built at the first solve and reused while d_x is the same
  /// pointer (its kernels hold it). check_every and progress have no effect. pipecg is refused
  /// (std::invalid_argument, on the CPU path too): its recomputations are decided on the host. The
  /// operator's apply must be capturable (no synchronization, allocation or host callback): csr_operator
  /// is; a callback_operator is if its callback is. The CPU path runs as without it.
  bool graph = false;
  /// Called on the host at every status check (every check_every iterations) with the iterations done and
  /// the current ||r_k||, for progress reports; libraries never print, the caller decides. Empty: none.
  std::function<void(int iterations, double residual_norm)> progress;
};

/// What broke down, where.
struct breakdown_info {
  std::string quantity;  ///< "p.Ap" (cg, pcg, pipecg), "rho" / "omega" / "r_hat.v" (bicgstab), "r.r" (non-finite)
  int iteration = 0;     ///< the iteration (1-based) that produced it
  double value = 0;      ///< its value (NaN / Inf for non_finite)
};

/// The outcome of one solve.
struct result {
  krylov_method method = krylov_method::cg;
  bool converged = false;
  stop_reason reason = stop_reason::max_iterations;
  int iterations = 0;                     ///< iterations completed (SpMV-update cycles; 0 when x0 already passes)
  double residual_norm = 0;               ///< ||r_k|| of the recursively updated residual at the stop
  double true_relative_residual = 0;      ///< ||b - A x|| / ||b|| recomputed from x at the end (0 when b = 0)
  double rhs_norm = 0;                    ///< ||b||
  std::vector<double> history;            ///< ||r_k||, k = 0 .. iterations (empty unless keep_history)
  breakdown_info breakdown;               ///< meaningful when reason is breakdown or non_finite
  /// pipecg: how many times its vectors were recomputed from x (refreshes and restarts; 0 for the
  /// other methods). A recomputation that only confirms convergence is not counted.
  int replacements = 0;
  /// Wall time of the iterations alone (host clock): from the end of the set-up (initial residual, first
  /// status check; the device idle) to the last status check that ended the loop, before the true residual
  /// is recomputed. Excludes building the solver, reading b and the final residual check: time per iteration
  /// = iteration_seconds / iterations. GPU path; the CPU path times its loop the same way.
  double iteration_seconds = 0;
  /// The L2 bytes set aside for p during the solve (options::p_in_l2; 0: no window).
  std::int64_t l2_window_bytes = 0;
  /// One line: "cg converged in 31 iterations, true relative residual 3.1e-09" or "cg breakdown at
  /// iteration 4: p.Ap = -2.5e-01 <= 0 (is the matrix symmetric positive definite?)".
  std::string summary() const;
};

}  // namespace solve
