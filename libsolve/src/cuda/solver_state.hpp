// The iteration's scalars, in device memory (one per solver), and the codes they use. Plain C++ (the host
// prepares it before a solve and reads it back at the end).
#pragma once

namespace solve::detail {

enum status_code : int {
  status_running = 0,
  status_converged = 1,
  status_breakdown = 2,
  status_non_finite = 3,
  status_bad_rhs = 4,  ///< NaN/Inf in b: the host throws std::invalid_argument
  /// pipecg: the recurrence asks for a restart (its p.Ap <= 0 or not finite). Gated kernels skip, like after
  /// a stop; the host sees it at its next status check and enqueues r = b - A x, w = A r and pipe_recomputed,
  /// which sets the status back to running (or to a stop).
  status_replace = 5,
  /// pipecg: the gap check found ||(b - A x) - r|| > pipe_gap_ratio ||r||: a refresh (r, w, s, z
  /// recomputed, p kept), enqueued by the host like status_replace.
  status_refresh = 6,
  /// pipecg: the recurrence passed the stopping test: a refresh whose recomputed residual decides.
  status_claim = 7,
  /// pipecg: a claim not confirmed twice in a row without progress (stop_reason::stagnated).
  status_stagnated = 8,
};

enum quantity_code : int { quantity_none = 0, quantity_pap, quantity_rhat_v, quantity_omega, quantity_rho, quantity_rr };

inline const char* quantity_name(int q) {
  switch (q) {
    case quantity_pap: return "p.Ap";
    case quantity_rhat_v: return "r_hat.v";
    case quantity_omega: return "omega";
    case quantity_rho: return "rho";
    case quantity_rr: return "r.r";
    default: return "";
  }
}

struct solver_state {
  double rtol2 = 0, atol2 = 0;       // set by the host
  double b_norm2 = 0, threshold2 = 0;
  double rr = 0;                     // ||r_k||^2 of the latest iterate
  double rho = 0, alpha = 0, beta = 0, omega = 0, gamma = 0;
  double gamma_prev = 0;             // pipecg: r.r of the iteration before
  double claim_rr = 0;               // pipecg: ||b - A x||^2 at the last unconfirmed claim (0: none yet)
  double true_r2 = 0;                // ||b - A x||^2 at the end
  double breakdown_value = 0;
  int status = status_running;
  int iterations = 0;                // right after status: the host's status check copies both (8 bytes)
  int quantity = quantity_none;
  int breakdown_iteration = 0;
  unsigned ticket = 0;               // fused_pass's last-block counter, back to 0 after every pass
  int replacements = 0;              // pipecg: residual replacements that restarted the recurrence
  int replaced_at = 0;               // pipecg: the iteration of the latest replacement (0: the start)
  int pad = 0;
};

}  // namespace solve::detail
