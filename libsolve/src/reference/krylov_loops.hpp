// The Krylov loops of the CPU path, written once over a "space" that supplies the operator and the
// reductions, so that the serial CPU path (solve::reference) and the distributed one (solve::distributed,
// MPI) run the same iterations. A Space provides:
//   apply(x, y)                 y = A x on (this rank's part of) the vectors
//   accumulator_for(n)          an accumulator of x_i y_i over n local terms: add(double, double)
//   finish(acc[N], out[N])      the N sums over every rank (ONE collective in the distributed space)
//   start(acc[N], pending<N>&), wait(pending<N>&, out[N])
//                               finish in two halves, so that work can run while the collective travels
//   dots({{&x, &y}, ...}, out)  whole dots, same as accumulating and finishing
//   dot(x, y)                   one dot
//   jacobi_inverse()            1 / diagonal, checked (pcg)
// Private to libsolve (src/).
#pragma once
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "input_checks.hpp"
#include "pipe_scalars.hpp"
#include "solve/types.hpp"

namespace solve::detail {

/// A dot product accumulated as Ogita, Rump and Oishi's Dot2 (2005): each product split exactly into
/// p + e (TwoProduct by fma; e = 0 for float inputs, whose products are exact in double), both added with
/// Neumaier's compensated sum. Error <= u |x.y| + gamma_2n^2 sum |x_i y_i| (u = 2^-53): the exactly rounded
/// dot up to a term quadratic in u, independent of the order.
///
/// Why not the plain loop `s += x_i y_i`: its error bound (n - 1) u sum |x_i y_i| is the worst of any
/// order, and on an ill-conditioned problem the count follows it. CG in double on jumping2d_40_1e3 (b of
/// the tests, rtol 1e-10), emulated on the CPU with each summation order: plain loop 1549 iterations;
/// this compensated dot 1524; long double 1519; the GPU's orders (per thread strided, block tree, partials
/// tree) at 256 x 7, 128 x 13, 128 x 7, 256 x 1 and 32 x 50 launch shapes 1513, 1513, 1526, 1514, 1513;
/// the same with fma-contracted updates 1504 to 1538. The H100 run of the plain-loop reference gave gpu
/// 1517 vs cpu 1549: the plain loop, not the GPU, was the outlier. Accurate orders scatter by about
/// +-1.1 % around 1521 on this problem (poisson2d_48: all 164): rounding alone, the band the 2 % test allows.
class dot2 {
public:
  void add(double x, double y) {
    const double p = x * y;
    sum(p);
    sum(std::fma(x, y, -p));
  }
  double value() const { return s_ + c_; }

private:
  void sum(double v) {
    const double t = s_ + v;
    c_ += std::fabs(s_) >= std::fabs(v) ? (s_ - t) + v : (v - t) + s_;
    s_ = t;
  }
  double s_ = 0, c_ = 0;
};


/// Bookkeeping shared by the methods: history, the stopping test, the stop reasons.
struct tracker {
  result& res;
  double threshold2;
  bool keep;
  const options& opt;
  void record(int it, double rr) {
    res.iterations = it;
    res.residual_norm = std::sqrt(rr);
    if (keep) res.history.push_back(std::sqrt(rr));
    if (opt.progress && it > 0 && it % opt.check_every == 0) opt.progress(it, res.residual_norm);
  }
  /// Replaces the latest recorded ||r|| by a recomputed one (pipecg's residual replacement).
  void amend(double rr) {
    res.residual_norm = std::sqrt(rr);
    if (keep && !res.history.empty()) res.history.back() = std::sqrt(rr);
  }
  /// True when the iteration must stop after recording rr (converged or non-finite).
  bool stop_on(int it, double rr) {
    if (!std::isfinite(rr)) {
      res.reason = stop_reason::non_finite;
      res.breakdown = {"r.r", it, rr};
      return true;
    }
    if (rr <= threshold2) {
      res.reason = stop_reason::converged;
      res.converged = true;
      return true;
    }
    return false;
  }
  /// Breakdown test of a divisor: non-finite, or (positive = true) <= 0, or == 0.
  bool broke(const char* what, int it, double v, bool must_be_positive) {
    if (!std::isfinite(v)) {
      res.reason = stop_reason::non_finite;
      res.breakdown = {what, it, v};
      return true;
    }
    if (must_be_positive ? !(v > 0) : v == 0) {
      res.reason = stop_reason::breakdown;
      res.breakdown = {what, it, v};
      return true;
    }
    return false;
  }
};

/// cg and pcg as the GPU runs them (src/cuda/krylov_ops.cuh, cg_dots and cg_step): after q = A p, ONE pass
/// takes p.q, q.z(r) and q.z(q) (z(v) = D^-1 v, or v for cg), which give alpha = rho / p.q and, before r is
/// updated, rho_new = r'.z(r') of r' = r - alpha q by expansion: rho - 2 alpha q.z(r) + alpha^2 q.z(q)
/// (algebra, not a recurrence: no orthogonality assumed); so beta is known and ONE more pass does
/// r -= alpha q, x += alpha p, p = z(r) + beta p together, summing the actual r.r (the stopping test) and
/// r.z (the next rho). The expansion cancels when rho_new << rho, but its terms are products exact in
/// double (float data) summed to ~1e-16 relative, and rho_new / rho per iteration stays far above 1e-8.
template <class Space, class Value>
void cg(Space& sp, std::vector<Value>& x, std::vector<Value>& r, bool jacobi, const options& opt, tracker& t) {
  const std::size_t n = x.size();
  std::vector<Value> dinv(n, Value(1)), p(n), q(n);
  if (jacobi) dinv = sp.jacobi_inverse();
  for (std::size_t i = 0; i < n; ++i) p[i] = jacobi ? dinv[i] * r[i] : r[i];
  double rr_rho[2];
  sp.dots({{&r, &r}, {&r, &p}}, rr_rho);
  double rr = rr_rho[0], rho = rr_rho[1];
  t.record(0, rr);
  if (t.stop_on(0, rr)) return;
  for (int it = 1; it <= opt.max_iterations; ++it) {
    sp.apply(p, q);
    typename Space::accumulator s1[3] = {sp.accumulator_for(n), sp.accumulator_for(n), sp.accumulator_for(n)};
    for (std::size_t i = 0; i < n; ++i) {
      const Value zr = jacobi ? dinv[i] * r[i] : r[i];
      const Value zq = jacobi ? dinv[i] * q[i] : q[i];
      s1[0].add(p[i], q[i]);
      s1[1].add(q[i], zr);
      s1[2].add(q[i], zq);
    }
    double v1[3];
    sp.finish(s1, v1);  // one collective for the three sums
    const double pap = v1[0];
    if (t.broke("p.Ap", it, pap, true)) return;
    const double alpha_d = rho / pap;
    const double rho_est = rho - 2 * alpha_d * v1[1] + alpha_d * alpha_d * v1[2];
    const Value alpha = static_cast<Value>(alpha_d);
    const Value beta = static_cast<Value>(std::fmax(rho_est, 0.0) / rho);
    typename Space::accumulator s2[2] = {sp.accumulator_for(n), sp.accumulator_for(n)};
    for (std::size_t i = 0; i < n; ++i) {
      const Value ri = r[i] - alpha * q[i];
      r[i] = ri;
      x[i] += alpha * p[i];
      const Value zi = jacobi ? dinv[i] * ri : ri;
      p[i] = zi + beta * p[i];
      s2[0].add(ri, ri);
      s2[1].add(ri, zi);
    }
    double v2[2];
    sp.finish(s2, v2);
    rr = v2[0];
    t.record(it, rr);
    if (t.stop_on(it, rr)) return;
    rho = jacobi ? v2[1] : rr;
  }
}

template <class Space, class Value>
void bicgstab(Space& sp, std::vector<Value>& x, std::vector<Value>& r, const options& opt, tracker& t) {
  const std::size_t n = x.size();
  std::vector<Value> rhat = r, p(n, Value(0)), v(n, Value(0)), s(n), tv(n);
  double rr = sp.dot(r, r), rho = rr, alpha = 1, omega = 1, beta = 0;
  t.record(0, rr);
  if (t.stop_on(0, rr)) return;
  for (int it = 1; it <= opt.max_iterations; ++it) {
    const Value b = static_cast<Value>(beta), w = static_cast<Value>(omega);
    for (std::size_t i = 0; i < n; ++i) p[i] = r[i] + b * (p[i] - w * v[i]);
    sp.apply(p, v);
    const double rv = sp.dot(rhat, v);
    if (t.broke("r_hat.v", it, rv, false)) return;
    alpha = rho / rv;
    const Value al = static_cast<Value>(alpha);
    for (std::size_t i = 0; i < n; ++i) s[i] = r[i] - al * v[i];
    sp.apply(s, tv);
    double tst[2];
    sp.dots({{&tv, &s}, {&tv, &tv}}, tst);
    const double ts = tst[0], tt = tst[1];
    omega = tt > 0 ? ts / tt : 0;
    const Value om = static_cast<Value>(omega);
    typename Space::accumulator sums[2] = {sp.accumulator_for(n), sp.accumulator_for(n)};
    for (std::size_t i = 0; i < n; ++i) {
      x[i] += al * p[i] + om * s[i];
      r[i] = s[i] - om * tv[i];
      sums[0].add(r[i], r[i]);
      sums[1].add(rhat[i], r[i]);
    }
    double vals[2];
    sp.finish(sums, vals);
    rr = vals[0];
    const double rho_new = vals[1];
    t.record(it, rr);
    if (t.stop_on(it, rr)) return;
    if (t.broke("omega", it, omega, false)) return;
    if (t.broke("rho", it, rho_new, false)) return;
    beta = (rho_new / rho) * (alpha / omega);
    rho = rho_new;
  }
}

/// Pipelined CG (Ghysels-Vanroose Alg. 4, M = I) with residual replacement (Cools, Cornelis and Vanroose
/// 2018; van der Vorst and Ye 2000). The recurrences r -= alpha s, w -= alpha z, s = w + beta s,
/// z = q + beta z drift from b - A x, A r, A p, A s by rounding that the pipelining amplifies, far more
/// than cg's single recurrence: in float on poisson2d_512 (b = A x_true, rtol 1e-5) the recurrence's ||r||
/// stalled at 2e-5 ||b|| from iteration 100 while b - A x grew to 7e-2 ||b|| by iteration 150, and with
/// only the remedies below at the stopping test and at p.Ap <= 0, the restarted iteration went on to
/// ||b - A x|| = 1e18 ||b|| (the H100 bench: 2e9 on poisson3d_160, NaN on poisson2d_2048). So:
///  * every options::residual_check_every iterations (automatic: 10 in float, 50 in double) the gap
///    ||(b - A x) - r|| is measured (one SpMV); when it exceeds 1e-3 ||r|| the vectors are REFRESHED:
///    r = b - A x, w = A r, s = A p, z = A s (three more SpMVs), and the scalars recomputed from them so
///    that the next direction is A-conjugate to the kept one (detail::pipe_refresh): no restart, so the
///    convergence rate is kept (float poisson2d_512, b random, rtol 1e-5: 1103 iterations, cg 1108);
///  * when the recurrence claims convergence, the same refresh: the recomputed ||b - A x|| decides (so the
///    reported convergence is that of b - A x, up to the rounding of one SpMV). A claim that it does not
///    confirm is a stagnation stop when ||b - A x|| fell by less than half since the previous unconfirmed
///    claim (the tolerance lies below what this precision attains: before, that case restarted until
///    max_iterations, e.g. float poisson3d_40, b = ones, rtol 1e-6: 3975 restarts in 20000 iterations);
///  * when the recurrence's p.Ap is <= 0 or not finite (or the refreshed one is), RESTART: r = b - A x,
///    w = A r, beta = 0 (p = r at the next step). Breakdown only where it recurs at once: delta = w.r <= 0
///    from the recomputed r and w, or p.Ap <= 0 in the first iteration after a restart (or the start);
///    an SPD matrix does not do that, an indefinite one does.
/// result::replacements counts refreshes and restarts; a recomputation that only confirms convergence is
/// not counted.
template <class Space, class Value>
void pipecg(Space& sp, const std::vector<Value>& b, std::vector<Value>& x, std::vector<Value>& r, const options& opt,
            tracker& t) {
  const std::size_t n = x.size();
  std::vector<Value> w(n), q(n), z(n, Value(0)), s(n, Value(0)), p(n, Value(0));
  sp.apply(r, w);
  double gd[2];
  sp.dots({{&r, &r}, {&w, &r}}, gd);
  double gamma = gd[0], delta = gd[1];
  t.record(0, gamma);
  if (t.stop_on(0, gamma)) return;
  if (t.broke("p.Ap", 1, delta, true)) return;
  double alpha = gamma / delta, beta = 0, gamma_prev = gamma;
  int replaced_at = 0;  // the start counts as a restart: its r and w are computed, not recurred
  double claim_rr = std::numeric_limits<double>::infinity();  // ||b - A x||^2 at the last unconfirmed claim
  const double ratio2 = detail::pipe_gap_ratio * detail::pipe_gap_ratio;
  const int check_every = detail::pipecg_check_every<Value>(opt);
  // r = b - A x, w = A r; with `keep`, s = A p, z = A s as well. Sums r.r, r.w, r.s, p.w, p.s, r.p.
  // q = A w for the next iteration, computed while this iteration's all-reduce travels (Ghysels and
  // Vanroose's overlap): it needs only the w just updated. Whatever changes w or q afterwards (a refresh,
  // a restart, the gap check) clears it, and the next iteration computes q itself.
  bool q_ready = false;
  auto recompute = [&](bool keep, double (&d)[6]) {
    q_ready = false;
    sp.apply(x, q);
    for (std::size_t i = 0; i < n; ++i) r[i] = b[i] - q[i];
    sp.apply(r, w);
    if (keep) {
      sp.apply(p, s);
      sp.apply(s, z);
    }
    typename Space::accumulator sum[6] = {sp.accumulator_for(n), sp.accumulator_for(n), sp.accumulator_for(n),
                                          sp.accumulator_for(n), sp.accumulator_for(n), sp.accumulator_for(n)};
    for (std::size_t i = 0; i < n; ++i) {
      sum[0].add(r[i], r[i]);
      sum[1].add(r[i], w[i]);
      sum[2].add(r[i], s[i]);
      sum[3].add(p[i], w[i]);
      sum[4].add(p[i], s[i]);
      sum[5].add(r[i], p[i]);
    }
    sp.finish(sum, d);
  };
  // A restart from r, w just recomputed: alpha = r.r / w.r, beta = 0. False when the iteration stops.
  auto restart = [&](int it, double rr, double rw) {
    if (t.broke("p.Ap", it + 1, rw, true)) return false;
    ++t.res.replacements;
    replaced_at = it;
    gamma = rr;
    alpha = rr / rw;
    beta = 0;
    return true;
  };
  // The refresh after iteration `it` (gamma = r.r of the recurrence at `it`, gamma_prev the one before);
  // `claim`: the recurrence passed the stopping test. False when the iteration stops.
  auto refresh = [&](int it, bool claim) {
    double d[6];
    recompute(true, d);
    const double rr = d[0];
    t.amend(rr);
    if (t.stop_on(it, rr)) return false;
    if (claim) {
      if (rr > 0.25 * claim_rr) {
        t.res.reason = stop_reason::stagnated;
        return false;
      }
      claim_rr = rr;
    }
    const detail::pipe_refresh_scalars sc = detail::pipe_refresh(d);
    if (!sc.ok) return restart(it, rr, d[1]);
    ++t.res.replacements;
    gamma = rr;
    beta = sc.beta;
    alpha = sc.alpha;
    return true;
  };
  for (int it = 1; it <= opt.max_iterations; ++it) {
    if (!q_ready) sp.apply(w, q);
    q_ready = false;
    const Value al = static_cast<Value>(alpha), be = static_cast<Value>(beta);
    const bool fresh = beta == 0;  // after the start or a restart: z, s, p are not read (they may hold Inf)
    typename Space::accumulator gd_sum[2] = {sp.accumulator_for(n), sp.accumulator_for(n)};
    for (std::size_t i = 0; i < n; ++i) {
      z[i] = fresh ? q[i] : q[i] + be * z[i];
      s[i] = fresh ? w[i] : w[i] + be * s[i];
      p[i] = fresh ? r[i] : r[i] + be * p[i];
      x[i] += al * p[i];
      r[i] -= al * s[i];
      w[i] -= al * z[i];
      gd_sum[0].add(r[i], r[i]);
      gd_sum[1].add(w[i], r[i]);
    }
    typename Space::template pending<2> inflight;
    sp.start(gd_sum, inflight);  // pipecg's single collective of the iteration ...
    if (it < opt.max_iterations) {
      sp.apply(w, q);  // ... overlapped with the next SpMV
      q_ready = true;
    }
    double gd_val[2];
    sp.wait(inflight, gd_val);
    const double g = gd_val[0], d = gd_val[1];
    t.record(it, g);
    if (!std::isfinite(g)) {
      t.stop_on(it, g);
      return;
    }
    gamma_prev = gamma;
    gamma = g;
    if (g <= t.threshold2) {  // the recurrence claims convergence: b - A x decides
      if (!refresh(it, true)) return;
      continue;
    }
    beta = g / gamma_prev;
    const double pap = d - beta * g / alpha;  // p_{k+1} . A p_{k+1} in exact arithmetic
    if (!(pap > 0) || !std::isfinite(pap)) {
      if (it == replaced_at + 1) {
        t.broke("p.Ap", it + 1, pap, true);
        return;
      }
      double dd[6];
      recompute(false, dd);
      t.amend(dd[0]);
      if (t.stop_on(it, dd[0])) return;
      if (!restart(it, dd[0], dd[1])) return;
      continue;
    }
    alpha = g / pap;
    // The periodic gap check (after the scalars of the next step are set, as on the GPU).
    if (check_every > 0 && it % check_every == 0) {
      q_ready = false;
      sp.apply(x, q);
      typename Space::accumulator gap_rr[2] = {sp.accumulator_for(n), sp.accumulator_for(n)};
      for (std::size_t i = 0; i < n; ++i) {
        const double e = (static_cast<double>(b[i]) - static_cast<double>(q[i])) - static_cast<double>(r[i]);
        gap_rr[0].add(e, e);
        gap_rr[1].add(r[i], r[i]);
      }
      double gv[2];
      sp.finish(gap_rr, gv);
      if (gv[0] > ratio2 * gv[1] && !refresh(it, false)) return;
    }
  }
}


/// One solve on a space (serial_space, dist_space): r = b - A x, ||b||, the method's loop. x holds x0 on
/// entry and the solution on return; the caller adds the true residual, which each space computes its way.
template <class Space, class Value>
result run_krylov(Space& sp, const std::vector<Value>& b, std::vector<Value>& x, const options& opt) {
  const std::size_t n = b.size();
  std::vector<Value> r(n);
  sp.apply(x, r);
  for (std::size_t i = 0; i < n; ++i) r[i] = b[i] - r[i];
  result res;
  res.method = opt.method;
  const double bb = sp.dot(b, b);
  res.rhs_norm = std::sqrt(bb);
  tracker t{res, threshold2(opt, bb), opt.keep_history, opt};
  const auto loop_start = std::chrono::steady_clock::now();
  switch (opt.method) {
    case krylov_method::cg: cg(sp, x, r, false, opt, t); break;
    case krylov_method::pcg: cg(sp, x, r, true, opt, t); break;
    case krylov_method::bicgstab: bicgstab(sp, x, r, opt, t); break;
    case krylov_method::pipecg: pipecg(sp, b, x, r, opt, t); break;
  }
  res.iteration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_start).count();
  return res;
}

}  // namespace solve::detail
