// The steps of the four methods as fused_pass / map_pass ops (see fused_pass.cuh for the shape). Each op's
// operator() is one entry of the method's vector formulas; finish() is its scalar update on the device.
// Terms are products (acc.add_product: taken in double in the default mode, exact for float vectors as
// 24 + 24 significant bits fit in 53; rounded once to the vector type in the reproducible mode).
#pragma once
#include <cstddef>
#include <cstdint>

#include "fused_pass.cuh"  // lanes, load, store, all_aligned
#include "pipe_scalars.hpp"
#include "solver_state.hpp"

namespace solve::detail {

using idx = std::int64_t;

__device__ __forceinline__ double sq(double v) { return v * v; }

// ---- shared scalar bookkeeping (one thread) -------------------------------------------------------------

/// Start of a solve: ||b||^2, the threshold, ||r_0||^2 (history[0]) and the first stopping test.
__device__ inline void start(solver_state* st, double bb, double bad_b, double rr, double* history) {
  st->b_norm2 = bb;
  st->threshold2 = fmax(st->rtol2 * bb, st->atol2);
  st->rr = rr;
  st->iterations = 0;
  if (history) history[0] = sqrt(rr);
  if (bad_b != 0) {
    st->status = status_bad_rhs;
  } else if (!isfinite(rr)) {
    st->status = status_non_finite;
    st->quantity = quantity_rr;
    st->breakdown_value = rr;
  } else if (rr <= st->threshold2) {
    st->status = status_converged;
  }
}

/// End of iteration: counts it, records ||r||; true when the iteration stops here (converged or non-finite).
__device__ inline bool record(solver_state* st, double rr, double* history) {
  const int it = ++st->iterations;
  st->rr = rr;
  if (history) history[it] = sqrt(rr);
  if (!isfinite(rr)) {
    st->status = status_non_finite;
    st->quantity = quantity_rr;
    st->breakdown_iteration = it;
    st->breakdown_value = rr;
    return true;
  }
  if (rr <= st->threshold2) {
    st->status = status_converged;
    return true;
  }
  return false;
}

/// A divisor's test: non-finite -> non_finite; `must_be_positive` ? v <= 0 : v == 0 -> breakdown.
__device__ inline bool broke(solver_state* st, int quantity, int iteration, double v, bool must_be_positive) {
  const bool nonfinite = !isfinite(v);
  const bool bad = must_be_positive ? !(v > 0) : v == 0;
  if (!nonfinite && !bad) return false;
  st->status = nonfinite ? status_non_finite : status_breakdown;
  st->quantity = quantity;
  st->breakdown_iteration = iteration;
  st->breakdown_value = v;
  return true;
}

template <class V>
__device__ __forceinline__ double not_finite(V v) { return isfinite(v) ? 0.0 : 1.0; }

// ---- cg / pcg ----------------------------------------------------------------------------------------------

/// r = b - q (q = A x0; q == nullptr: x0 = 0, r = b), p = D^-1 r; sums r.r, r.z, b.b, #non-finite b.
template <class V>
struct cg_init {
  static constexpr int k = 4;
  static constexpr bool gated = true;
  const V* b;
  const V* q;
  const V* dinv;  // nullptr: cg
  V* r;
  V* p;
  double* history;
  __device__ void load(const solver_state&) {}
  __device__ void operator()(idx i, double (&t)[k]) const {
    const V bi = b[i];
    const V ri = q ? bi - q[i] : bi;
    const V zi = dinv ? dinv[i] * ri : ri;
    r[i] = ri;
    p[i] = zi;
    t[0] = sq(ri);
    t[1] = static_cast<double>(ri) * zi;
    t[2] = sq(bi);
    t[3] = not_finite(bi);
  }
  __device__ void finish(const double* s, solver_state* st) const {
    start(st, s[2], s[3], s[0], history);
    st->rho = s[1];
  }
};

// One iteration is the SpMV q = A p and two passes (see the CPU path's cg for the algebra):
//   cg_dots: p.q, q.z(r), q.z(q) (z(v) = D^-1 v for pcg, v for cg) -> alpha = rho / p.q and
//            rho_new = rho - 2 alpha q.z(r) + alpha^2 q.z(q), beta = rho_new / rho, before r changes;
//   cg_step: r -= alpha q, x += alpha p, p = z(r) + beta p, summing the actual r.r (stopping) and r.z.
// n-vector passes per iteration (reads + writes), the matrix read once besides:
//   this formulation:  SpMV 2 (p, q) + dots 3 (p, q, r) + step 7 (r q x p; r x p)  = 12 (pcg: + D^-1 twice, 14)
//   before (4 kernels): SpMV 2 + p.q 2 + x, r update with r.r 6 + p update 3       = 13 (pcg 15)
//   textbook (CUDA samples, 7 library calls): 16
//   with the dots in the SpMV's epilogue (cg on an operator whose fuses_dots(): sparse::spmv_dots, the
//   stencil SpMV): SpMV 3 (p, q, r) + step 7 = 10, and 2 launches.
//   11 without the epilogue is possible (drop the read of r from the dots by taking r.q = p.q, which holds
//   only while p_old stays A-conjugate to p: Saad's single-reduction variant, unstable in float): not done.
// Launches per iteration: 3 (was 4), 2 with the epilogue.

/// cg's scalars from p.q, q.z(r), q.z(q) (s[0..2]): alpha = rho / p.q and beta = rho_new / rho with
/// rho_new = rho - 2 alpha q.z(r) + alpha^2 q.z(q), before r changes. False (and the breakdown recorded)
/// when p.q is not positive and finite. One thread; by cg_dots, or by cg_step when the SpMV took the dots.
__device__ inline bool cg_scalars(solver_state* st, const double* s) {
  if (broke(st, quantity_pap, st->iterations + 1, s[0], true)) return false;
  const double alpha = st->rho / s[0];
  const double rho_est = st->rho - 2 * alpha * s[1] + alpha * alpha * s[2];
  st->alpha = alpha;
  st->beta = fmax(rho_est, 0.0) / st->rho;
  return true;
}

/// p.q, q.z(r), q.z(q) with q = A p; alpha = rho / p.q (p.q <= 0: breakdown), beta from the expansion.
template <class V, bool Jacobi>
struct cg_dots {
  static constexpr int k = 3;
  static constexpr bool gated = true;
  static constexpr bool vectorized = true;
  const V* p;
  const V* q;
  const V* r;
  const V* dinv;
  __device__ void load(const solver_state&) {}
  template <int W, class Acc>
  __device__ void accumulate(idx i, Acc& acc) const {
    const lanes<V, W> pv = detail::load<W>(p, i), qv = detail::load<W>(q, i), rv = detail::load<W>(r, i);
    lanes<V, W> dv{};
    if constexpr (Jacobi) dv = detail::load<W>(dinv, i);
#pragma unroll
    for (int l = 0; l < W; ++l) {
      const V qi = qv.v[l], ri = rv.v[l];
      const V zr = Jacobi ? dv.v[l] * ri : ri;
      const V zq = Jacobi ? dv.v[l] * qi : qi;
      acc.add_product(0, l, pv.v[l], qi);
      acc.add_product(1, l, qi, zr);
      acc.add_product(2, l, qi, zq);
    }
  }
  bool aligned(std::size_t bytes) const { return all_aligned(bytes, p, q, r, dinv); }
  __device__ void finish(const double* s, solver_state* st) const { cg_scalars(st, s); }
};

/// r -= alpha q, x += alpha p, p = z(r) + beta p; sums r.r and r.z; the stopping test; rho = r.z.
/// `dots` (cg only, the operator's apply_with_dots: p.q, q.r, q.q from the SpMV's epilogue): every thread
/// takes alpha and beta from them (cg_scalars' formulas, on a copy of the state) instead of from a cg_dots
/// pass; a p.q that is not positive and finite leaves x, r, p untouched and finish() records the breakdown.
template <class V, bool Jacobi>
struct cg_step {
  static constexpr int k = Jacobi ? 2 : 1;
  static constexpr bool gated = true;
  static constexpr bool vectorized = true;
  V* x;
  V* r;
  V* p;
  const V* q;
  const V* dinv;
  double* history;
  const double* dots;  // nullptr: alpha and beta are in the state (cg_dots ran)
  V alpha, beta;
  bool broken;
  __device__ void load(const solver_state& st) {
    solver_state copy = st;
    broken = dots && !cg_scalars(&copy, dots);
    alpha = static_cast<V>(copy.alpha);
    beta = static_cast<V>(copy.beta);
  }
  template <int W, class Acc>
  __device__ void accumulate(idx i, Acc& acc) const {
    if (broken) return;
    lanes<V, W> rv = detail::load<W>(r, i), pv = detail::load<W>(p, i), xv = detail::load<W>(x, i);
    const lanes<V, W> qv = detail::load<W>(q, i);
    lanes<V, W> dv{};
    if constexpr (Jacobi) dv = detail::load<W>(dinv, i);
#pragma unroll
    for (int l = 0; l < W; ++l) {
      const V ri = rv.v[l] - alpha * qv.v[l];
      const V pi = pv.v[l];
      rv.v[l] = ri;
      xv.v[l] += alpha * pi;
      const V zi = Jacobi ? dv.v[l] * ri : ri;
      pv.v[l] = zi + beta * pi;
      acc.add_product(0, l, ri, ri);
      if constexpr (Jacobi) acc.add_product(1, l, ri, zi);
    }
    detail::store<W>(r, i, rv);
    detail::store<W>(x, i, xv);
    detail::store<W>(p, i, pv);
  }
  bool aligned(std::size_t bytes) const { return all_aligned(bytes, x, r, p, q, dinv); }
  __device__ void finish(const double* s, solver_state* st) const {
    if (dots && !cg_scalars(st, dots)) return;
    if (record(st, s[0], history)) return;
    st->rho = Jacobi ? s[1] : s[0];
  }
};

// ---- bicgstab ----------------------------------------------------------------------------------------------

/// r = b - q (or b), r_hat = r, p = v = 0; sums r.r, b.b, #non-finite b; rho = r_hat.r = r.r.
template <class V>
struct bicg_init {
  static constexpr int k = 3;
  static constexpr bool gated = true;
  const V* b;
  const V* q;
  V* r;
  V* rhat;
  V* p;
  V* v;
  double* history;
  __device__ void load(const solver_state&) {}
  __device__ void operator()(idx i, double (&t)[k]) const {
    const V bi = b[i];
    const V ri = q ? bi - q[i] : bi;
    r[i] = ri;
    rhat[i] = ri;
    p[i] = V(0);
    v[i] = V(0);
    t[0] = sq(ri);
    t[1] = sq(bi);
    t[2] = not_finite(bi);
  }
  __device__ void finish(const double* s, solver_state* st) const {
    start(st, s[1], s[2], s[0], history);
    st->rho = s[0];
    st->alpha = 1;
    st->omega = 1;
    st->beta = 0;
  }
};

/// p = r + beta (p - omega v).
template <class V>
struct bicg_direction {
  static constexpr int k = 0;
  static constexpr bool gated = true;
  const V* r;
  const V* v;
  V* p;
  V beta, omega;
  __device__ void load(const solver_state& st) {
    beta = static_cast<V>(st.beta);
    omega = static_cast<V>(st.omega);
  }
  __device__ void operator()(idx i) const { p[i] = r[i] + beta * (p[i] - omega * v[i]); }
};

/// r_hat.v with v = A p; alpha = rho / r_hat.v, breakdown when it is 0.
template <class V>
struct bicg_alpha {
  static constexpr int k = 1;
  static constexpr bool gated = true;
  const V* rhat;
  const V* v;
  __device__ void load(const solver_state&) {}
  __device__ void operator()(idx i, double (&t)[k]) const { t[0] = static_cast<double>(rhat[i]) * v[i]; }
  __device__ void finish(const double* s, solver_state* st) const {
    if (broke(st, quantity_rhat_v, st->iterations + 1, s[0], false)) return;
    st->alpha = st->rho / s[0];
  }
};

/// s = r - alpha v.
template <class V>
struct bicg_s {
  static constexpr int k = 0;
  static constexpr bool gated = true;
  const V* r;
  const V* v;
  V* s;
  V alpha;
  __device__ void load(const solver_state& st) { alpha = static_cast<V>(st.alpha); }
  __device__ void operator()(idx i) const { s[i] = r[i] - alpha * v[i]; }
};

/// t.s and t.t in one pass (t = A s); omega = t.s / t.t (0 when t = 0, as Eigen).
template <class V>
struct bicg_omega {
  static constexpr int k = 2;
  static constexpr bool gated = true;
  const V* t;
  const V* s;
  __device__ void load(const solver_state&) {}
  __device__ void operator()(idx i, double (&term)[k]) const {
    term[0] = static_cast<double>(t[i]) * s[i];
    term[1] = sq(t[i]);
  }
  __device__ void finish(const double* sum, solver_state* st) const {
    const double omega = sum[1] > 0 ? sum[0] / sum[1] : 0.0;
    if (!isfinite(omega)) {
      broke(st, quantity_omega, st->iterations + 1, omega, false);
      return;
    }
    st->omega = omega;
  }
};

/// x += alpha p + omega s, r = s - omega t; sums r.r and r_hat.r; omega == 0 or rho == 0 break down.
template <class V>
struct bicg_update {
  static constexpr int k = 2;
  static constexpr bool gated = true;
  V* x;
  V* r;
  const V* rhat;
  const V* p;
  const V* s;
  const V* t;
  double* history;
  V alpha, omega;
  __device__ void load(const solver_state& st) {
    alpha = static_cast<V>(st.alpha);
    omega = static_cast<V>(st.omega);
  }
  __device__ void operator()(idx i, double (&term)[k]) const {
    const V si = s[i];
    x[i] += alpha * p[i] + omega * si;
    const V ri = si - omega * t[i];
    r[i] = ri;
    term[0] = sq(ri);
    term[1] = static_cast<double>(rhat[i]) * ri;
  }
  __device__ void finish(const double* sum, solver_state* st) const {
    if (record(st, sum[0], history)) return;
    const int it = st->iterations;
    if (broke(st, quantity_omega, it, st->omega, false)) return;
    if (broke(st, quantity_rho, it, sum[1], false)) return;
    st->beta = (sum[1] / st->rho) * (st->alpha / st->omega);
    st->rho = sum[1];
  }
};

// ---- pipelined cg ------------------------------------------------------------------------------------------

/// r = b - q (or b), z = s = p = 0; sums r.r, b.b, #non-finite b.
template <class V>
struct pipe_init {
  static constexpr int k = 3;
  static constexpr bool gated = true;
  const V* b;
  const V* q;
  V* r;
  V* z;
  V* s;
  V* p;
  double* history;
  __device__ void load(const solver_state&) {}
  __device__ void operator()(idx i, double (&t)[k]) const {
    const V bi = b[i];
    const V ri = q ? bi - q[i] : bi;
    r[i] = ri;
    z[i] = V(0);
    s[i] = V(0);
    p[i] = V(0);
    t[0] = sq(ri);
    t[1] = sq(bi);
    t[2] = not_finite(bi);
  }
  __device__ void finish(const double* sum, solver_state* st) const { start(st, sum[1], sum[2], sum[0], history); }
};

/// gamma_0 = r.r, delta_0 = w.r (w = A r): alpha_0 = gamma_0 / delta_0, beta_0 = 0.
template <class V>
struct pipe_first {
  static constexpr int k = 2;
  static constexpr bool gated = true;
  const V* r;
  const V* w;
  __device__ void load(const solver_state&) {}
  __device__ void operator()(idx i, double (&t)[k]) const {
    t[0] = sq(r[i]);
    t[1] = static_cast<double>(w[i]) * r[i];
  }
  __device__ void finish(const double* sum, solver_state* st) const {
    if (broke(st, quantity_pap, 1, sum[1], true)) return;
    st->gamma = sum[0];
    st->gamma_prev = sum[0];
    st->alpha = sum[0] / sum[1];
    st->beta = 0;
  }
};

/// Ghysels-Vanroose Alg. 4 (M = I), one pass with q = A w:
///   z = q + beta z, s = w + beta s, p = r + beta p, x += alpha p, r -= alpha s, w -= alpha z;
/// (beta == 0, after the start or a restart: z = q, s = w, p = r without reading the old ones, which may
/// hold Inf); sums gamma = r.r and delta = w.r of the new r, w; then beta = gamma / gamma_old and
/// alpha = gamma / (delta - beta gamma / alpha_old), whose divisor is p.Ap of the next direction.
/// Pass count: reads q z s p x r w (7), writes z s p x r w (6): 13, plus the SpMV's 2.
template <class V>
struct pipe_update {
  static constexpr int k = 2;
  static constexpr bool gated = true;
  const V* q;
  V* z;
  V* s;
  V* p;
  V* x;
  V* r;
  V* w;
  double* history;
  V alpha, beta;
  bool fresh;
  static constexpr bool vectorized = true;
  __device__ void load(const solver_state& st) {
    alpha = static_cast<V>(st.alpha);
    beta = static_cast<V>(st.beta);
    fresh = st.beta == 0;
  }
  template <int W, class Acc>
  __device__ void accumulate(idx i, Acc& acc) const {
    lanes<V, W> rv = detail::load<W>(r, i), wv = detail::load<W>(w, i), xv = detail::load<W>(x, i);
    lanes<V, W> zv = detail::load<W>(q, i), sv = wv, pv = rv;  // fresh: z = q, s = w, p = r
    if (!fresh) {
      const lanes<V, W> z0 = detail::load<W>(z, i), s0 = detail::load<W>(s, i), p0 = detail::load<W>(p, i);
#pragma unroll
      for (int l = 0; l < W; ++l) {
        zv.v[l] += beta * z0.v[l];
        sv.v[l] += beta * s0.v[l];
        pv.v[l] += beta * p0.v[l];
      }
    }
#pragma unroll
    for (int l = 0; l < W; ++l) {
      xv.v[l] += alpha * pv.v[l];
      const V rn = rv.v[l] - alpha * sv.v[l];
      const V wn = wv.v[l] - alpha * zv.v[l];
      rv.v[l] = rn;
      wv.v[l] = wn;
      acc.add_product(0, l, rn, rn);
      acc.add_product(1, l, wn, rn);
    }
    detail::store<W>(z, i, zv);
    detail::store<W>(s, i, sv);
    detail::store<W>(p, i, pv);
    detail::store<W>(x, i, xv);
    detail::store<W>(r, i, rv);
    detail::store<W>(w, i, wv);
  }
  bool aligned(std::size_t bytes) const { return all_aligned(bytes, q, z, s, p, x, r, w); }
  /// The stopping test raises status_claim (a refresh decides from b - A x); a p.Ap <= 0 raises
  /// status_replace (a restart), or is a breakdown in the first iteration after a restart (or the start).
  __device__ void finish(const double* sum, solver_state* st) const {
    const int it = ++st->iterations;
    const double rr = sum[0];
    st->rr = rr;
    if (history) history[it] = sqrt(rr);
    if (!isfinite(rr)) {
      broke(st, quantity_rr, it, rr, false);
      return;
    }
    st->gamma_prev = st->gamma;
    st->gamma = rr;
    if (rr <= st->threshold2) {
      st->status = status_claim;
      return;
    }
    const double beta_new = rr / st->gamma_prev;
    const double pap = sum[1] - beta_new * rr / st->alpha;
    if (!(pap > 0) || !isfinite(pap)) {
      if (it == st->replaced_at + 1) broke(st, quantity_pap, it + 1, pap, true);
      else st->status = status_replace;
      return;
    }
    st->beta = beta_new;
    st->alpha = rr / pap;
  }
};

/// The gap check every options::residual_check_every iterations (q = A x): sums ||(b - q) - r||^2 and
/// r.r; a gap above pipe_gap_ratio ||r|| raises status_refresh. Gated: skipped after a stop or a raised
/// status.
template <class V>
struct pipe_gap {
  static constexpr int k = 2;
  static constexpr bool gated = true;
  const V* b;
  const V* q;
  const V* r;
  __device__ void load(const solver_state&) {}
  __device__ void operator()(idx i, double (&t)[k]) const {
    const double e = (static_cast<double>(b[i]) - static_cast<double>(q[i])) - static_cast<double>(r[i]);
    t[0] = e * e;
    t[1] = sq(r[i]);
  }
  __device__ void finish(const double* sum, solver_state* st) const {
    if (sum[0] > pipe_gap_ratio * pipe_gap_ratio * sum[1]) st->status = status_refresh;
  }
};

/// r = b - q (q = A x): the first kernel of a restart or a refresh, launched by the host only when the
/// status asks for one, so not gated.
template <class V>
struct pipe_residual {
  static constexpr int k = 0;
  static constexpr bool gated = false;
  const V* b;
  const V* q;
  V* r;
  __device__ void load(const solver_state&) {}
  __device__ void operator()(idx i) const { r[i] = b[i] - q[i]; }
};

/// The last kernel of a restart (mode status_replace: r, w = A r recomputed) or a refresh (status_refresh
/// or status_claim: s = A p and z = A s as well): sums r.r, r.w, r.s, p.w, p.s, r.p (pipe_sum order). The
/// recomputed ||r|| replaces the recorded one and decides convergence; an unconfirmed claim that did not
/// halve ||b - A x|| since the previous one stops as stagnated; a refresh takes pipe_refresh's scalars
/// (keeping p), falling back to a restart when they are not positive and finite; a restart sets
/// alpha = r.r / r.w, beta = 0 (r.w <= 0: breakdown). Not gated.
template <class V>
struct pipe_recomputed {
  static constexpr int k = pipe_sums;
  static constexpr bool gated = false;
  const V* r;
  const V* w;
  const V* s;
  const V* p;
  double* history;
  int mode;
  __device__ void load(const solver_state&) {}
  __device__ void operator()(idx i, double (&t)[k]) const {
    const double ri = r[i], wi = w[i];
    const bool keep = mode != status_replace;
    const double si = keep ? static_cast<double>(s[i]) : 0.0, pi = keep ? static_cast<double>(p[i]) : 0.0;
    t[pipe_rr] = ri * ri;
    t[pipe_rw] = ri * wi;
    t[pipe_rs] = ri * si;
    t[pipe_pw] = pi * wi;
    t[pipe_ps] = pi * si;
    t[pipe_rp] = ri * pi;
  }
  __device__ void finish(const double* sum, solver_state* st) const {
    const int it = st->iterations;
    const double rr = sum[pipe_rr];
    st->rr = rr;
    if (history) history[it] = sqrt(rr);
    if (!isfinite(rr)) {
      broke(st, quantity_rr, it, rr, false);
      return;
    }
    if (rr <= st->threshold2) {
      st->status = status_converged;
      return;
    }
    if (mode == status_claim) {
      if (st->claim_rr > 0 && rr > 0.25 * st->claim_rr) {
        st->status = status_stagnated;
        return;
      }
      st->claim_rr = rr;
    }
    if (mode != status_replace) {
      const pipe_refresh_scalars sc = pipe_refresh(sum);
      if (sc.ok) {
        ++st->replacements;
        st->gamma = rr;
        st->beta = sc.beta;
        st->alpha = sc.alpha;
        st->status = status_running;
        return;
      }
    }
    if (broke(st, quantity_pap, it + 1, sum[pipe_rw], true)) return;
    ++st->replacements;
    st->replaced_at = it;
    st->gamma = rr;
    st->alpha = rr / sum[pipe_rw];
    st->beta = 0;
    st->status = status_running;
  }
};

// ---- the end of a solve ------------------------------------------------------------------------------------

/// ||b - q||^2 with q = A x (not gated: runs after the iteration stopped).
template <class V>
struct true_residual {
  static constexpr int k = 1;
  static constexpr bool gated = false;
  const V* b;
  const V* q;
  __device__ void load(const solver_state&) {}
  __device__ void operator()(idx i, double (&t)[k]) const {
    t[0] = sq(static_cast<double>(b[i]) - static_cast<double>(q[i]));
  }
  __device__ void finish(const double* s, solver_state* st) const { st->true_r2 = s[0]; }
};

}  // namespace solve::detail
