// GPU-vs-reference field comparison and the per-column water budget.
#include <algorithm>
#include <cmath>
#include <limits>

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
  b.sr = 1e-5 * n;
  b.rel = 5e-7 * n;
  b.precip_rel = (5e-7 + gpu_precip_extra_rel()) * n;
  return b;
}

std::vector<field_error> compare_with_bounds(const domain& gpu, const domain& ref, const gpu_bounds& b, bool& ok) {
  auto errors = compare(gpu, ref, b.rel);
  const auto precip_errors = compare(gpu, ref, b.precip_rel);
  ok = true;
  for (std::size_t f = 0; f < errors.size(); ++f) {
    auto& e = errors[f];
    const bool precip = e.name == "rain" || e.name == "snow" || e.name == "rainncv" || e.name == "snowncv";
    if (precip) e = precip_errors[f];
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
    if (std::fabs(resid) > r.max_abs_residual) {
      r.max_abs_residual = std::fabs(resid);
      r.worst_column = c;
    }
    r.bound = std::max(r.bound, bound);
    if (!(std::fabs(resid) <= bound)) r.ok = false;
  }
  return r;
}

}  // namespace wsm5
