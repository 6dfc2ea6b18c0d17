// GPU-vs-reference field comparison and the per-column water budget.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "wsm5/wsm5.hpp"

namespace wsm5 {

std::vector<field_error> compare(const domain& a, const domain& b, double rel_allowance) {
  std::vector<field_error> out;
  // Relative errors use a floor so that values near zero do not dominate: 1e-12 kg/kg for mixing
  // ratios (far below anything that matters to the scheme), 1e-6 for the others.
  const std::vector<std::string> names = {"th", "qv", "qc", "qr", "qi", "qs", "rain", "snow", "rainncv", "snowncv", "sr"};
  for (const auto& n : names) {
    const auto& x = field(a, n);
    const auto& y = field(b, n);
    field_error e;
    e.name = n;
    const double floor = n[0] == 'q' ? 1e-12 : 1e-6;
    if (x.size() != y.size()) {
      e.max_abs = e.max_rel = e.max_excess = std::numeric_limits<double>::infinity();
      out.push_back(e);
      continue;
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double diff = std::fabs(static_cast<double>(x[i]) - static_cast<double>(y[i]));
      const double d = std::isnan(diff) ? std::numeric_limits<double>::infinity() : diff;
      if (d > e.max_abs || e.worst < 0) {
        if (d > e.max_abs) e.max_abs = d;
        if (e.worst < 0 || d >= e.max_abs) e.worst = static_cast<std::int64_t>(i);
      }
      e.max_rel = std::max(e.max_rel, d / std::max(std::fabs(static_cast<double>(y[i])), floor));
      e.max_excess = std::max(e.max_excess, d - rel_allowance * std::fabs(static_cast<double>(y[i])));
    }
    out.push_back(e);
  }
  return out;
}

gpu_bounds gpu_vs_reference_bounds(int calls) {
  const double n = calls;
  gpu_bounds b;
  b.q = 8e-9 * n;
  b.th = 2.6e-4 * n;
  b.precip = 1e-6 * n;
  b.sr = 0;  // sr is compared weighted by the precipitation, within the allowance of compare_sr
  b.rel = 5e-7 * n;
  b.precip_rel = (5e-7 + gpu_precip_extra_rel()) * n;
  return b;
}

namespace {

/// sr = snowncv / (rainncv + 1e-12) compared where it is well conditioned: weighted by the reference's
/// precipitation. With s, r the snow and rain amounts, eps = 1e-12 mm and ds, dr their errors,
///   (sr_a - sr_b)(r_b + eps) = s_a (r_b + eps) / (r_a + eps) - s_b + rounding = ds - sr_a dr + rounding,
/// so |sr_a - sr_b| (r_b + eps) <= |ds| + |sr_a| |dr| + 4 u |sr_a| (r_b + eps): the precipitation
/// bounds of s and r (abs + rel |value|) carry over, plus the two divisions' rounding (2 u each, u =
/// 2^-24, for the approximate division of the CUDA build; 0.5 u each in IEEE). The ratio itself is
/// ill-conditioned where r ~ eps (1.1e-3 after one call on valid soundings at r ~ 1e-9 mm): there the
/// weighted difference is as small as the amounts, which is what matters to a user. max_abs keeps the
/// plain max |sr_a - sr_b| for the report; max_excess is the weighted difference beyond its allowance.
field_error compare_sr(const domain& a, const domain& b, const gpu_bounds& bounds) {
  field_error e;
  e.name = "sr";
  e.max_excess = -std::numeric_limits<double>::infinity();
  const double u = std::ldexp(1.0, -24), eps = 1e-12;
  if (a.sr.size() != b.sr.size() || a.sr.empty()) {
    e.max_abs = e.max_excess = a.sr.size() == b.sr.size() ? 0.0 : std::numeric_limits<double>::infinity();
    return e;
  }
  for (std::size_t c = 0; c < a.sr.size(); ++c) {
    const double sa = a.sr[c], sb = b.sr[c], rb = b.rainncv[c], snb = b.snowncv[c];
    const double diff = std::fabs(sa - sb);
    const double d = std::isnan(diff) ? std::numeric_limits<double>::infinity() : diff;
    if (d > e.max_abs || e.worst < 0) {
      e.max_abs = std::max(e.max_abs, d);
      e.worst = static_cast<std::int64_t>(c);
    }
    const double ds = bounds.precip + bounds.precip_rel * std::fabs(snb);
    const double dr = bounds.precip + bounds.precip_rel * std::fabs(rb);
    const double allowed = ds + std::fabs(sa) * dr + 4 * u * std::fabs(sa) * (rb + eps);
    const double excess = d * (rb + eps) - allowed;
    e.max_excess = std::max(e.max_excess, std::isnan(excess) ? std::numeric_limits<double>::infinity() : excess);
    e.max_rel = std::max(e.max_rel, d / std::max(std::fabs(sb), 1e-6));
  }
  return e;
}

}  // namespace

std::vector<field_error> compare_with_bounds(const domain& gpu, const domain& ref, const gpu_bounds& b, bool& ok) {
  auto errors = compare(gpu, ref, b.rel);
  const auto precip_errors = compare(gpu, ref, b.precip_rel);
  ok = true;
  for (std::size_t f = 0; f < errors.size(); ++f) {
    auto& e = errors[f];
    const bool precip = e.name == "rain" || e.name == "snow" || e.name == "rainncv" || e.name == "snowncv";
    if (precip) e = precip_errors[f];
    if (e.name == "sr") e = compare_sr(gpu, ref, b);
    const double bound = e.name == "th" ? b.th : e.name[0] == 'q' ? b.q : e.name == "sr" ? b.sr : b.precip;
    if (!(e.max_excess <= bound)) ok = false;
  }
  return errors;
}

double column_water(const domain& d, std::int64_t col) {
  const std::int64_t i = col % d.nx, j = col / d.nx;
  double w = 0;
  for (std::int64_t k = 0; k < d.nz; ++k) {
    const auto x = static_cast<std::size_t>(d.at(i, k, j));
    const double q = static_cast<double>(std::max(d.qv[x], 0.f)) + std::max(d.qc[x], 0.f) + std::max(d.qr[x], 0.f) +
                     std::max(d.qi[x], 0.f) + std::max(d.qs[x], 0.f);
    w += static_cast<double>(d.den[x]) * q * static_cast<double>(d.delz[x]);
  }
  return w;
}

budget_result water_budget(const domain& before, const domain& after, int calls) {
  budget_result r;
  const double u = std::ldexp(1.0, -24);
  for (std::int64_t c = 0; c < before.columns(); ++c) {
    const double wb = column_water(before, c), wa = column_water(after, c);
    const auto cc = static_cast<std::size_t>(c);
    const double resid = wb - wa - (static_cast<double>(after.rain[cc]) - static_cast<double>(before.rain[cc]));
    const double bound = calls * (16.0 * u * (wb + wa) + 4.0 * u * static_cast<double>(after.rain[cc]));
    if (!std::isfinite(resid)) {  // a NaN would pass through std::max unseen: count it and fail
      if (r.nonfinite_columns++ == 0) r.worst_column = c;
      r.ok = false;
      continue;
    }
    if (std::fabs(resid) > r.max_abs_residual) {
      r.max_abs_residual = std::fabs(resid);
      if (r.nonfinite_columns == 0) r.worst_column = c;
    }
    r.bound = std::max(r.bound, bound);
    if (!(std::fabs(resid) <= bound)) r.ok = false;
  }
  return r;
}

}  // namespace wsm5

namespace wsm5 {

std::optional<nonfinite_value> find_nonfinite(const domain& d) {
  for (const char* n : {"th", "qv", "qc", "qr", "qi", "qs"}) {
    const std::vector<float>& f = field(d, n);
    for (std::size_t x = 0; x < f.size(); ++x)
      if (!std::isfinite(f[x])) {
        const auto flat = static_cast<std::int64_t>(x);
        const std::int64_t i = flat % d.nx, k = flat / d.nx % d.nz, j = flat / (d.nx * d.nz);
        return nonfinite_value{n, i, j, k, f[x]};
      }
  }
  for (const std::string& n : field_names_2d()) {
    const std::vector<float>& f = field(d, n);
    for (std::size_t x = 0; x < f.size(); ++x)
      if (!std::isfinite(f[x])) {
        const auto flat = static_cast<std::int64_t>(x);
        return nonfinite_value{n, flat % d.nx, flat / d.nx, -1, f[x]};
      }
  }
  return std::nullopt;
}

std::string to_string(const nonfinite_value& v) {
  std::string s = v.field + " is " + (std::isnan(v.value) ? "NaN" : v.value > 0 ? "+Inf" : "-Inf") + " at column (i, j) = (" +
                  std::to_string(v.i) + ", " + std::to_string(v.j) + ")";
  if (v.level >= 0) s += ", level k = " + std::to_string(v.level) + " (0 = lowest)";
  return s;
}

}  // namespace wsm5
