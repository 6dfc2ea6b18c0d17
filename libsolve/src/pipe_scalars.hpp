// pipecg's scalar update after a refresh, shared by the CPU path and the GPU kernels (plain C++, callable
// from device code): one formula, so both paths take the same decisions from the same sums.
#pragma once

#if defined(__CUDACC__)
#define SOLVE_HOST_DEVICE __host__ __device__
#else
#define SOLVE_HOST_DEVICE
#endif

namespace solve::detail {

/// pipecg's gap test: the vectors are refreshed when ||(b - A x) - r|| > pipe_gap_ratio ||r||. Measured on
/// the CPU path, float poisson2d_512, b random, rtol 1e-5 (cg: 1108 iterations): checking every 10
/// iterations at 1e-3, 1103 iterations (92 refreshes); every 25 at 1e-2, 1603 (50); without the
/// conjugacy-restoring scalars of pipe_refresh below, 3000+ at either setting.
inline constexpr double pipe_gap_ratio = 1e-3;

/// Sums of pipe_refresh, in this order.
enum pipe_sum : int { pipe_rr = 0, pipe_rw, pipe_rs, pipe_pw, pipe_ps, pipe_rp, pipe_sums };

struct pipe_refresh_scalars {
  double alpha = 0, beta = 0;
  bool ok = false;
};

/// The scalars after a refresh (r = b - A x, w = A r, s = A p, z = A s recomputed, p kept; d holds r.r,
/// r.w, r.s, p.w, p.s, r.p): beta = -r.Ap / p.Ap makes the next direction p' = r + beta p exactly
/// A-conjugate to p again, and alpha = p'.r / p'.Ap' is the exact line search along it:
///   p'.Ap' = r.w + 2 beta c + beta^2 p.s   (c = (r.s + p.w) / 2: r.Ap = p.Ar for a symmetric A),
///   p'.r   = r.r + beta r.p.
/// Keeping cg's beta = r.r / gamma_prev and alpha = r.r / p'.Ap' instead (exact only while the kept p is
/// A-conjugate to the previous one and r orthogonal to it, which the drift has undone) left float
/// poisson2d_512 at ||r|| = 1e-3 ||b|| after 3000 iterations. ok = false when p'.Ap' or alpha is not
/// positive and finite (the caller restarts instead).
SOLVE_HOST_DEVICE inline pipe_refresh_scalars pipe_refresh(const double* d) {
  pipe_refresh_scalars s;
  const double c = 0.5 * (d[pipe_rs] + d[pipe_pw]);
  s.beta = d[pipe_ps] > 0 ? -c / d[pipe_ps] : 0.0;
  const double pap = d[pipe_rw] + 2 * s.beta * c + s.beta * s.beta * d[pipe_ps];
  s.alpha = (d[pipe_rr] + s.beta * d[pipe_rp]) / pap;
  // x - x == 0 is false exactly for NaN and +-Inf (a test that reads the same in host and device code).
  s.ok = pap > 0 && pap - pap == 0 && s.alpha > 0 && s.alpha - s.alpha == 0 && s.beta - s.beta == 0;
  return s;
}

}  // namespace solve::detail
