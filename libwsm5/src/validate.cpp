// wsm5::check_physical: the first physically impossible value of a domain (bounds in validate.hpp,
// documented with their sources in libwsm5/README.md, "Input validation").
#include "validate.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "wsm5/wsm5.hpp"

namespace wsm5 {
namespace {

constexpr double rd = 287.0, g = 9.81, rcp = 2.0 / 7.0;  // Rd, g, Rd/cp as WRF passes them

/// A problem at a cell (or, with i = j = level = -1, of the whole domain).
input_problem problem(std::string field, std::string quantity, std::string unit, double value, double lo, double hi,
                      std::int64_t i = -1, std::int64_t j = -1, std::int64_t level = -1) {
  input_problem p;
  p.field = std::move(field);
  p.quantity = std::move(quantity);
  p.unit = std::move(unit);
  p.value = value;
  p.min = lo;
  p.max = hi;
  p.i = i;
  p.j = j;
  p.level = level;
  return p;
}

bool inside(double v, double lo, double hi) { return v >= lo && v <= hi; }

struct mixing_ratio {
  const char* name;
  double max;
};
constexpr mixing_ratio mixing_ratios[] = {{"qv", bounds::qv_max}, {"qc", bounds::qc_max}, {"qr", bounds::qr_max},
                                          {"qi", bounds::qi_max}, {"qs", bounds::qs_max}};

/// The pointwise bounds of one cell (temperature, pressure, thickness, density, Exner, mixing ratios).
std::optional<input_problem> check_cell(const domain& d, std::int64_t i, std::int64_t k, std::int64_t j) {
  const auto x = static_cast<std::size_t>(d.at(i, k, j));
  const double p = d.p[x], t = static_cast<double>(d.th[x]) * d.pii[x];
  if (!inside(t, bounds::t_min_k, bounds::t_max_k))
    return problem("th", "temperature th * pii", "K", t, bounds::t_min_k, bounds::t_max_k, i, j, k);
  const double p_lo = k == 0 ? bounds::p_surface_min_pa : bounds::p_min_pa;
  if (!inside(p, p_lo, bounds::p_max_pa))
    return problem("p", k == 0 ? "pressure of the lowest level" : "pressure", "Pa", p, p_lo, bounds::p_max_pa, i, j, k);
  if (!inside(d.delz[x], bounds::delz_min_m, bounds::delz_max_m))
    return problem("delz", "layer thickness", "m", d.delz[x], bounds::delz_min_m, bounds::delz_max_m, i, j, k);
  const double ideal = p / (rd * t);
  const double den_lo = bounds::den_ratio_min * ideal, den_hi = bounds::den_ratio_max * ideal;
  if (!inside(d.den[x], den_lo, den_hi))
    return problem("den", "density (0.85-1.05 of p / (Rd T))", "kg m-3", d.den[x], den_lo, den_hi, i, j, k);
  const double exner = std::pow(p / 1e5, rcp);
  const double pii_lo = bounds::pii_ratio_min * exner, pii_hi = bounds::pii_ratio_max * exner;
  if (!inside(d.pii[x], pii_lo, pii_hi))
    return problem("pii", "Exner function (0.99-1.01 of (p / 1e5)^(Rd/cp))", "", d.pii[x], pii_lo, pii_hi, i, j, k);
  for (const mixing_ratio& q : mixing_ratios) {
    const double v = field(d, q.name)[x];
    if (!inside(v, -bounds::q_roundoff, q.max))
      return problem(q.name, "mixing ratio", "kg/kg", v, -bounds::q_roundoff, q.max, i, j, k);
  }
  return std::nullopt;
}

/// Pressure falls with height, and adjacent levels are as far apart as their pressures say (hypsometric).
std::optional<input_problem> check_pair(const domain& d, std::int64_t i, std::int64_t k, std::int64_t j) {
  const auto x = static_cast<std::size_t>(d.at(i, k, j)), xu = static_cast<std::size_t>(d.at(i, k + 1, j));
  const double p = d.p[x], pu = d.p[xu];
  if (!(pu < p))
    return problem("p", "pressure, which must fall with height (below the level beneath)", "Pa", pu, bounds::p_min_pa, p,
                   i, j, k + 1);
  const double tmean = 0.5 * (static_cast<double>(d.th[x]) * d.pii[x] + static_cast<double>(d.th[xu]) * d.pii[xu]);
  const double distance = 0.5 * (static_cast<double>(d.delz[x]) + d.delz[xu]);
  const double hypsometric = rd * tmean / g * std::log(p / pu);
  const double ratio = distance / hypsometric;
  if (!inside(ratio, bounds::hypsometric_min, bounds::hypsometric_max))
    return problem("delz", "ratio of the distance to the level beneath, (delz(k-1) + delz(k)) / 2, to Rd T / g ln(p(k-1) / p(k))",
                   "", ratio, bounds::hypsometric_min, bounds::hypsometric_max, i, j, k + 1);
  return std::nullopt;
}

std::string number(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

}  // namespace

std::optional<input_problem> check_physical(const domain& d) {
  if (d.columns() < 1)
    return problem("columns", "number of columns nx * ny", "", static_cast<double>(d.columns()), 1, HUGE_VAL);
  if (d.nz < 1) return problem("levels", "number of levels nz", "", static_cast<double>(d.nz), 1, HUGE_VAL);
  if (!inside(d.dt, bounds::dt_min_s, bounds::dt_max_s))
    return problem("dt", "time step dt", "s", d.dt, bounds::dt_min_s, bounds::dt_max_s);
  for (std::int64_t j = 0; j < d.ny; ++j)
    for (std::int64_t i = 0; i < d.nx; ++i) {
      for (std::int64_t k = 0; k < d.nz; ++k)
        if (auto p = check_cell(d, i, k, j)) return p;
      for (std::int64_t k = 0; k + 1 < d.nz; ++k)
        if (auto p = check_pair(d, i, k, j)) return p;
      const auto c = static_cast<std::size_t>(j * d.nx + i);
      for (const char* n : {"rain", "snow"}) {
        const double v = field(d, n)[c];
        if (!(v >= 0)) return problem(n, "accumulated precipitation", "mm", v, 0, HUGE_VAL, i, j);
      }
    }
  return std::nullopt;
}

std::string to_string(const input_problem& p) {
  std::string where;
  if (p.i >= 0) where = "column (i, j) = (" + std::to_string(p.i) + ", " + std::to_string(p.j) + ")";
  if (p.level >= 0) where += ", level k = " + std::to_string(p.level) + " (0 = lowest)";
  if (!where.empty()) where += ": ";
  const std::string unit = p.unit.empty() ? "" : " " + p.unit;
  const std::string hi = std::isinf(p.max) ? "inf" : number(p.max);
  return where + p.field + ": " + p.quantity + " " + number(p.value) + unit + " is outside the allowed range [" +
         number(p.min) + ", " + hi + "]" + unit;
}

input_error::input_error(const std::string& file, input_problem p)
    : std::runtime_error(file + ": " + to_string(p)), problem_(std::move(p)) {}

void check_physical_or_throw(const domain& d, const std::string& file) {
  if (auto p = check_physical(d)) throw input_error(file, std::move(*p));
}

}  // namespace wsm5
