// Deterministic synthetic WSM5 domains: smooth mixtures of the five golden regimes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "wsm5/wsm5.hpp"

namespace wsm5 {
namespace {

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double uniform(std::uint64_t& s) { return static_cast<double>(splitmix(s) >> 11) * 0x1.0p-53; }

/// A smooth field in [0, 1] over the unit square: a sum of three seeded plane waves.
struct smooth_field {
  double a[3], b[3], ph[3];
  explicit smooth_field(std::uint64_t& s) {
    for (int m = 0; m < 3; ++m) {
      a[m] = 2.0 + 4.0 * uniform(s);
      b[m] = 2.0 + 4.0 * uniform(s);
      ph[m] = 6.283185307179586 * uniform(s);
    }
  }
  double operator()(double x, double y) const {
    double v = 0;
    for (int m = 0; m < 3; ++m) v += std::sin(a[m] * x + b[m] * y * (m % 2 ? -1 : 1) + ph[m]);
    return 0.5 + v / 6.0;
  }
};

double es_water(double t) { return 611.2 * std::exp(17.67 * (t - 273.15) / (t - 29.65)); }  // Bolton 1980, Pa

}  // namespace

domain generate(std::int64_t nx, std::int64_t ny, std::int64_t nz, std::uint64_t seed, float dt) {
  if (nx <= 0 || ny <= 0 || nz <= 1) throw std::invalid_argument("generate: need nx >= 1, ny >= 1, nz >= 2");
  if (!(dt > 0.f)) throw std::invalid_argument("generate: dt must be positive");
  domain d;
  d.resize(nx, ny, nz);
  d.dt = dt;
  std::uint64_t s = seed * 0xD1B54A32D192ED03ull + 12345;
  const smooth_field f_ts(s), f_rh(s), f_cloud(s), f_rain(s), f_ice(s), f_dry(s);
  const double rd = 287.0, cp = 1004.5, g = 9.81, ep2 = 287.0 / 461.6;
  // Layer thickness 100 + 30 (k - 1) m for 35 levels (a 25.6 km column), stretched for other nz.
  std::vector<double> dz(static_cast<std::size_t>(nz));
  for (std::int64_t k = 0; k < nz; ++k) dz[static_cast<std::size_t>(k)] = (100.0 + 30.0 * k * 34.0 / std::max<double>(nz - 1, 1)) * 35.0 / nz;
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) {
      const double x = (i + 0.5) / nx, y = (j + 0.5) / ny;
      const double ts = 263.0 + 40.0 * f_ts(x, y);             // 263..303 K at the surface
      const double dry = std::clamp(1.6 * f_dry(x, y) - 0.5, 0.0, 1.0);  // 1: the dry control regime
      const double rh0 = (0.3 + 0.7 * f_rh(x, y)) * (1.0 - 0.6 * dry);
      const double cloud = (1.0 - dry) * std::clamp(2.0 * f_cloud(x, y) - 0.6, 0.0, 1.0);
      const double rainw = (1.0 - dry) * std::clamp(2.0 * f_rain(x, y) - 0.7, 0.0, 1.0);
      const double icew = (1.0 - dry) * std::clamp(2.0 * f_ice(x, y) - 0.5, 0.0, 1.0);
      double z = 0, p_bot = 1.0e5;  // interface height and pressure below the layer
      for (std::int64_t k = 0; k < nz; ++k) {
        const double h = dz[static_cast<std::size_t>(k)];
        const double zm = z + 0.5 * h;
        const double t = ts - 6.5e-3 * std::min(zm, 12000.0);
        // hydrostatic from the interface below to the mass level (isothermal within half a layer)
        const double p = p_bot * std::exp(-g * 0.5 * h / (rd * t));
        p_bot = p * std::exp(-g * 0.5 * h / (rd * t));
        z += h;
        const double den = p / (rd * t);
        const double pii = std::pow(p / 1.0e5, rd / cp);
        const double es = std::min(es_water(t), 0.5 * p);
        const double qsat = ep2 * es / (p - es);
        // relative humidity: rh0 near the ground decreasing aloft, saturated in the cloud layer
        double rh = rh0 * std::exp(-zm / 8000.0);
        const bool in_cloud = zm > 1000.0 && zm < 3000.0 + 4000.0 * icew;
        if (in_cloud) rh = std::max(rh, 0.98 * cloud + rh * (1.0 - cloud));
        rh = std::min(rh, 1.0);  // saturation-bounded
        const double qv = std::max(rh * qsat, 1.0e-7);
        const double qc = in_cloud && t > 233.15 ? 1.0e-3 * cloud * (t > 273.15 ? 1.0 : 0.3) : 0.0;
        const double qr = zm < 4500.0 && t > 268.0 ? 5.0e-3 * rainw * rainw + 5.0e-4 * rainw : 0.0;
        const double qs = t < 275.0 && zm < 9000.0 ? 3.0e-4 * icew : 0.0;
        const double qi = t < 263.0 && zm < 11000.0 ? 1.0e-4 * icew : 0.0;
        const std::size_t at = static_cast<std::size_t>(d.at(i, k, j));
        d.p[at] = static_cast<float>(p);
        d.den[at] = static_cast<float>(den);
        d.delz[at] = static_cast<float>(h);
        d.pii[at] = static_cast<float>(pii);
        d.th[at] = static_cast<float>(t / pii);
        d.qv[at] = static_cast<float>(qv);
        d.qc[at] = static_cast<float>(qc);
        d.qr[at] = static_cast<float>(qr);
        d.qi[at] = static_cast<float>(qi);
        d.qs[at] = static_cast<float>(qs);
      }
    }
  return d;
}

}  // namespace wsm5
