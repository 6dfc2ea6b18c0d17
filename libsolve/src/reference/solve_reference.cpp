// The CPU path: plain loops, vectors in Value, dots in double in index order, scalars in double. Each method
// is written as the GPU path runs it (same updates, same scalar formulas, same stopping and breakdown tests,
// same iteration numbering), so the two differ only by the order of the dot sums.
#include "solve/reference.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "input_checks.hpp"

namespace solve::reference {
namespace {

template <class Value, class Index>
void apply(const sparse::host_csr<Value, Index>& a, const std::vector<Value>& x, std::vector<Value>& y) {
  const auto& rp = a.row_ptr();
  const auto& ci = a.col_idx();
  const auto& v = a.values();
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double acc = 0;
    for (Index e = rp[i]; e < rp[i + 1]; ++e) acc += static_cast<double>(v[e]) * static_cast<double>(x[ci[e]]);
    y[i] = static_cast<Value>(acc);
  }
}

template <class Value>
double dot(const std::vector<Value>& x, const std::vector<Value>& y) {
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += static_cast<double>(x[i]) * static_cast<double>(y[i]);
  return s;
}

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

template <class Value, class Index>
void cg(const sparse::host_csr<Value, Index>& a, std::vector<Value>& x, std::vector<Value>& r, bool jacobi,
        const options& opt, tracker& t) {
  const std::size_t n = x.size();
  std::vector<Value> dinv(n, Value(1)), p(n), q(n);
  if (jacobi) dinv = detail::jacobi_inverse(a);
  for (std::size_t i = 0; i < n; ++i) p[i] = dinv[i] * r[i];
  double rr = dot(r, r), rho = dot(r, p);
  t.record(0, rr);
  if (t.stop_on(0, rr)) return;
  for (int it = 1; it <= opt.max_iterations; ++it) {
    apply(a, p, q);
    const double pap = dot(p, q);
    if (t.broke("p.Ap", it, pap, true)) return;
    const Value alpha = static_cast<Value>(rho / pap);
    double rz = 0;
    rr = 0;
    for (std::size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rr += static_cast<double>(r[i]) * r[i];
      rz += static_cast<double>(r[i]) * static_cast<double>(dinv[i] * r[i]);
    }
    if (!jacobi) rz = rr;
    t.record(it, rr);
    if (t.stop_on(it, rr)) return;
    const Value beta = static_cast<Value>(rz / rho);
    rho = rz;
    for (std::size_t i = 0; i < n; ++i) p[i] = dinv[i] * r[i] + beta * p[i];
  }
}

template <class Value, class Index>
void bicgstab(const sparse::host_csr<Value, Index>& a, std::vector<Value>& x, std::vector<Value>& r,
              const options& opt, tracker& t) {
  const std::size_t n = x.size();
  std::vector<Value> rhat = r, p(n, Value(0)), v(n, Value(0)), s(n), tv(n);
  double rr = dot(r, r), rho = rr, alpha = 1, omega = 1, beta = 0;
  t.record(0, rr);
  if (t.stop_on(0, rr)) return;
  for (int it = 1; it <= opt.max_iterations; ++it) {
    const Value b = static_cast<Value>(beta), w = static_cast<Value>(omega);
    for (std::size_t i = 0; i < n; ++i) p[i] = r[i] + b * (p[i] - w * v[i]);
    apply(a, p, v);
    const double rv = dot(rhat, v);
    if (t.broke("r_hat.v", it, rv, false)) return;
    alpha = rho / rv;
    const Value al = static_cast<Value>(alpha);
    for (std::size_t i = 0; i < n; ++i) s[i] = r[i] - al * v[i];
    apply(a, s, tv);
    const double ts = dot(tv, s), tt = dot(tv, tv);
    omega = tt > 0 ? ts / tt : 0;
    const Value om = static_cast<Value>(omega);
    double rho_new = 0;
    rr = 0;
    for (std::size_t i = 0; i < n; ++i) {
      x[i] += al * p[i] + om * s[i];
      r[i] = s[i] - om * tv[i];
      rr += static_cast<double>(r[i]) * r[i];
      rho_new += static_cast<double>(rhat[i]) * r[i];
    }
    t.record(it, rr);
    if (t.stop_on(it, rr)) return;
    if (t.broke("omega", it, omega, false)) return;
    if (t.broke("rho", it, rho_new, false)) return;
    beta = (rho_new / rho) * (alpha / omega);
    rho = rho_new;
  }
}

template <class Value, class Index>
void pipecg(const sparse::host_csr<Value, Index>& a, std::vector<Value>& x, std::vector<Value>& r,
            const options& opt, tracker& t) {
  const std::size_t n = x.size();
  std::vector<Value> w(n), q(n), z(n, Value(0)), s(n, Value(0)), p(n, Value(0));
  apply(a, r, w);
  double gamma = dot(r, r), delta = dot(w, r);
  t.record(0, gamma);
  if (t.stop_on(0, gamma)) return;
  if (t.broke("p.Ap", 1, delta, true)) return;
  double alpha = gamma / delta, beta = 0;
  for (int it = 1; it <= opt.max_iterations; ++it) {
    apply(a, w, q);
    const Value al = static_cast<Value>(alpha), be = static_cast<Value>(beta);
    double g = 0, d = 0;
    for (std::size_t i = 0; i < n; ++i) {
      z[i] = q[i] + be * z[i];
      s[i] = w[i] + be * s[i];
      p[i] = r[i] + be * p[i];
      x[i] += al * p[i];
      r[i] -= al * s[i];
      w[i] -= al * z[i];
      g += static_cast<double>(r[i]) * r[i];
      d += static_cast<double>(w[i]) * r[i];
    }
    t.record(it, g);
    if (t.stop_on(it, g)) return;
    beta = g / gamma;
    const double pap = d - beta * g / alpha;  // p_{k+1} . A p_{k+1} in exact arithmetic
    if (t.broke("p.Ap", it + 1, pap, true)) return;
    alpha = g / pap;
    gamma = g;
  }
}

}  // namespace

template <class Value, class Index>
void check_matrix(const sparse::host_csr<Value, Index>& a, bool need_diagonal) {
  detail::check_shape(a.rows(), a.cols());
  a.validate();
  for (std::int64_t i = 0; i < a.rows(); ++i)
    for (Index e = a.row_ptr()[i]; e < a.row_ptr()[i + 1]; ++e)
      if (!std::isfinite(static_cast<double>(a.values()[e])))
        throw std::invalid_argument("the matrix holds NaN or Inf (row " + std::to_string(i) + ", column " +
                                    std::to_string(a.col_idx()[e]) + ")");
  if (need_diagonal) (void)detail::jacobi_inverse(a);
}

template <class Value, class Index>
double true_relative_residual(const sparse::host_csr<Value, Index>& a, const std::vector<Value>& b,
                              const std::vector<Value>& x) {
  double num = 0, den = 0;
  const auto& rp = a.row_ptr();
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double acc = 0;
    for (Index e = rp[i]; e < rp[i + 1]; ++e)
      acc += static_cast<double>(a.values()[e]) * static_cast<double>(x[a.col_idx()[e]]);
    const double d = static_cast<double>(b[i]) - acc;
    num += d * d;
    den += static_cast<double>(b[i]) * b[i];
  }
  return den > 0 ? std::sqrt(num / den) : 0.0;
}

template <class Value, class Index>
result solve(const sparse::host_csr<Value, Index>& a, const std::vector<Value>& b, std::vector<Value>& x,
             const options& opt, bool use_guess) {
  detail::check_options(opt);
  check_matrix(a, opt.method == krylov_method::pcg);
  detail::check_vector_size("right-hand side", static_cast<std::int64_t>(b.size()), a.rows());
  for (std::size_t i = 0; i < b.size(); ++i)
    if (!std::isfinite(static_cast<double>(b[i])))
      throw std::invalid_argument("the right-hand side holds NaN or Inf (entry " + std::to_string(i) + ")");
  if (use_guess) detail::check_vector_size("initial guess", static_cast<std::int64_t>(x.size()), a.rows());
  else x.assign(b.size(), Value(0));

  const std::size_t n = b.size();
  std::vector<Value> r(n);
  apply(a, x, r);
  for (std::size_t i = 0; i < n; ++i) r[i] = b[i] - r[i];

  result res;
  res.method = opt.method;
  const double bb = dot(b, b);
  res.rhs_norm = std::sqrt(bb);
  tracker t{res, detail::threshold2(opt, bb), opt.keep_history, opt};
  switch (opt.method) {
    case krylov_method::cg: cg(a, x, r, false, opt, t); break;
    case krylov_method::pcg: cg(a, x, r, true, opt, t); break;
    case krylov_method::bicgstab: bicgstab(a, x, r, opt, t); break;
    case krylov_method::pipecg: pipecg(a, x, r, opt, t); break;
  }
  res.true_relative_residual = true_relative_residual(a, b, x);
  return res;
}

#define SOLVE_REFERENCE(V, I)                                                                                    \
  template result solve<V, I>(const sparse::host_csr<V, I>&, const std::vector<V>&, std::vector<V>&,            \
                              const options&, bool);                                                            \
  template double true_relative_residual<V, I>(const sparse::host_csr<V, I>&, const std::vector<V>&,            \
                                               const std::vector<V>&);                                          \
  template void check_matrix<V, I>(const sparse::host_csr<V, I>&, bool);
SOLVE_REFERENCE(float, std::int32_t)
SOLVE_REFERENCE(float, std::int64_t)
SOLVE_REFERENCE(double, std::int32_t)
SOLVE_REFERENCE(double, std::int64_t)
#undef SOLVE_REFERENCE

}  // namespace solve::reference
