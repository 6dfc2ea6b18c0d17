// Randomized, physically plausible WSM5 soundings for the tests: nz 2..80, dt 10..600 s, each column
// one of five regimes (dry, saturated warm rain, supercooled cloud water, all ice, mixed), hydrostatic
// and hypsometrically consistent, every value inside wsm5::check_physical's bounds.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "wsm5/wsm5.hpp"

namespace test_wsm5 {

enum class regime { dry, saturated, supercooled, all_ice, mixed };
constexpr int regime_count = 5;

struct sounding_rng {
  std::uint64_t s;
  double uniform(double lo = 0, double hi = 1) {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return lo + (hi - lo) * static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
};

inline double es_water(double t) { return 611.2 * std::exp(17.67 * (t - 273.15) / (t - 29.65)); }  // Bolton 1980
inline double es_ice(double t) { return 611.2 * std::exp(22.46 * (t - 273.15) / (t - 0.53)); }    // Magnus, ice

/// Temperature at height z [m] above a surface at ts: 6.5 K/km to the tropopause (11 km), isothermal to
/// 20 km, +1 K/km above (the stratosphere), never below 185 K.
inline double temperature_at(double ts, double z) {
  const double trop = ts - 6.5e-3 * std::min(z, 11000.0);
  return std::max(185.0, trop + 1e-3 * std::max(z - 20000.0, 0.0));
}

/// One column into d at (i, j): layer interfaces z = H (k / nz)^1.5 (thin layers near the ground),
/// pressure integrated hydrostatically from ps, isothermal over each half layer (as wsm5::generate).
/// nz >= 8: H is set so that the top mass level lies at `p_top` (5-100 hPa); nz < 8: a surface slab of
/// 100-1000 m layers (a 2-level column spanning 5 hPa would need layers thicker than any grid has).
inline void fill_column(wsm5::domain& d, std::int64_t i, std::int64_t j, regime r, sounding_rng& g) {
  const std::int64_t nz = d.nz;
  const double rd = 287.0, grav = 9.81, ep2 = 287.0 / 461.6;
  double ts = 0;
  switch (r) {
    case regime::dry: ts = g.uniform(260, 310); break;
    case regime::saturated: ts = g.uniform(278, 303); break;
    case regime::supercooled: ts = g.uniform(255, 271); break;
    case regime::all_ice: ts = g.uniform(220, 250); break;
    case regime::mixed: ts = g.uniform(268, 300); break;
  }
  const double ps = g.uniform(85000, 103000), p_top = g.uniform(500, 10000);
  std::vector<double> zi(static_cast<std::size_t>(nz + 1)), p(static_cast<std::size_t>(nz)), t(p.size());
  const auto build = [&](double h) {  // interfaces, mass-level T and p for a column of height h
    for (std::int64_t k = 0; k <= nz; ++k) zi[static_cast<std::size_t>(k)] = h * std::pow(static_cast<double>(k) / nz, 1.5);
    double pb = ps;
    for (std::int64_t k = 0; k < nz; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      const double half = 0.5 * (zi[kk + 1] - zi[kk]);
      t[kk] = temperature_at(ts, zi[kk] + half);
      p[kk] = pb * std::exp(-grav * half / (rd * t[kk]));
      pb = p[kk] * std::exp(-grav * half / (rd * t[kk]));
    }
  };
  double h = nz >= 8 ? 30000.0 : nz * g.uniform(100, 1000) * 1.8;  // slab: mean layer 100-1000 m
  build(h);
  if (nz >= 8)
    for (int it = 0; it < 6; ++it) {  // scale H until the top mass level sits at p_top
      h *= std::log(ps / p_top) / std::log(ps / p[static_cast<std::size_t>(nz - 1)]);
      build(h);
    }
  const double cloud_base = g.uniform(500, 2000), cloud_top = cloud_base + g.uniform(1000, 6000);
  const double rh_dry = g.uniform(0.05, 0.4), amount = g.uniform(0.2, 1.0);
  for (std::int64_t k = 0; k < nz; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    const double zm = 0.5 * (zi[kk] + zi[kk + 1]), tk = t[kk], pk = p[kk];
    const double qsw = ep2 * std::min(es_water(tk), 0.5 * pk) / (pk - std::min(es_water(tk), 0.5 * pk));
    const double qsi = ep2 * std::min(es_ice(tk), 0.5 * pk) / (pk - std::min(es_ice(tk), 0.5 * pk));
    const bool in_cloud = zm > cloud_base && zm < cloud_top;
    double qv = rh_dry * qsw * std::exp(-zm / 8000.0), qc = 0, qr = 0, qi = 0, qs = 0;
    switch (r) {
      case regime::dry: break;
      case regime::saturated:  // saturated over water below the cloud top, warm cloud and rain
        if (zm < cloud_top) qv = qsw;
        if (in_cloud && tk > 253) qc = 2e-3 * amount;
        if (zm < cloud_top && tk > 268) qr = 3e-3 * amount * amount;
        if (in_cloud && tk < 273) qs = 5e-4 * amount;
        break;
      case regime::supercooled:  // water-saturated (ice-supersaturated) cloud below 0 C
        if (in_cloud) { qv = qsw; qc = tk > 238 ? 1e-3 * amount : 0; qs = 2e-4 * amount; }
        break;
      case regime::all_ice:  // ice-saturated, no liquid
        if (in_cloud) { qv = qsi; qi = 2e-4 * amount; qs = 1e-3 * amount; }
        break;
      case regime::mixed:
        if (in_cloud) { qv = 0.98 * qsw; qc = 8e-4 * amount; qi = tk < 263 ? 1e-4 * amount : 0; qs = tk < 275 ? 4e-4 * amount : 0; }
        if (zm < cloud_top && tk > 270) qr = 1e-3 * amount;
        break;
    }
    qv = std::max(qv, 1e-7);
    const std::size_t x = static_cast<std::size_t>(d.at(i, k, j));
    const double pii = std::pow(pk / 1e5, 2.0 / 7.0);
    d.p[x] = static_cast<float>(pk);
    d.den[x] = static_cast<float>(pk / (rd * tk * (1.0 + qv / ep2)));  // dry-air density, as WRF passes it
    d.delz[x] = static_cast<float>(zi[kk + 1] - zi[kk]);
    d.pii[x] = static_cast<float>(pii);
    d.th[x] = static_cast<float>(tk / pii);
    d.qv[x] = static_cast<float>(qv);
    d.qc[x] = static_cast<float>(qc);
    d.qr[x] = static_cast<float>(qr);
    d.qi[x] = static_cast<float>(qi);
    d.qs[x] = static_cast<float>(qs);
  }
}

/// A domain of `columns` random soundings (ny = 1), nz and dt drawn from [2, max_nz] and [10, 600] s
/// unless given (> 0); column c has regime c % 5, so every regime appears once columns >= 5.
inline wsm5::domain random_soundings(std::int64_t columns, std::uint64_t seed, std::int64_t max_nz = 80,
                                     std::int64_t nz = 0, float dt = 0) {
  sounding_rng g{seed * 0x2545F4914F6CDD1Dull + 77};
  wsm5::domain d;
  if (nz <= 0) nz = 2 + static_cast<std::int64_t>(g.uniform() * static_cast<double>(max_nz - 1));
  d.resize(columns, 1, std::min(nz, max_nz));
  d.dt = dt > 0 ? dt : static_cast<float>(g.uniform(10, 600));
  for (std::int64_t c = 0; c < columns; ++c) fill_column(d, c, 0, static_cast<regime>(c % regime_count), g);
  return d;
}

}  // namespace test_wsm5
