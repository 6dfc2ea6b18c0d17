// CPU reference of WSM5 V3.1 in WRF's own order: one row (j) at a time, every process a pass
// `for k { for i }` over the columns of the row (i innermost, as wsm52D vectorises it), sedimentation
// with per-column sub-step counts mstep(i) and the row's maximum bounding the sub-step loop.
// Built with -ffp-contract=off (CMakeLists.txt) to round like gfortran -O2 on x86-64.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "physics.hpp"
#include "wsm5/wsm5.hpp"

// reference_contracted.cpp compiles this file a second time, with FMA contraction, into its own namespace.
#ifndef WSM5_REFERENCE_NAMESPACE
#define WSM5_REFERENCE_NAMESPACE reference
#endif

namespace wsm5::WSM5_REFERENCE_NAMESPACE {
namespace {

using namespace wsm5::phys;

/// Scratch arrays of one row, [k * nx + i] (WRF's (i,k) with i fastest).
struct row_work {
  std::vector<float> t, cpm, xl, denfac, qs1, qs2, rh1, rh2, n0sfac, rs_r, w_r, w_s, w_i, falk_r, falk_s,
      falk_i, xni;
  std::vector<slope> slope_r, slope_s;
  std::vector<float> fall_r1, fall_s1, fall_i1;  // surface fluxes summed over sub-steps, per column
  std::vector<int> mstep;
  void resize(std::size_t n, std::size_t nx) {
    for (auto* v : {&t, &cpm, &xl, &denfac, &qs1, &qs2, &rh1, &rh2, &n0sfac, &rs_r, &w_r, &w_s, &w_i, &falk_r,
                    &falk_s, &falk_i, &xni})
      v->assign(n, 0.f);
    slope_r.assign(n, slope{});
    slope_s.assign(n, slope{});
    fall_r1.assign(nx, 0.f);
    fall_s1.assign(nx, 0.f);
    fall_i1.assign(nx, 0.f);
    mstep.assign(nx, 1);
  }
};

struct row_result {
  int max_substeps = 1;
  float max_residual = 0;
  double rain = 0, snow = 0;
};

row_result wsm5_row(domain& d, std::int64_t j, row_work& w) {
  const std::int64_t nx = d.nx, nz = d.nz;
  const std::int64_t base = j * nz * nx;
  float* th = d.th.data() + base;
  float* qv = d.qv.data() + base;
  float* qc = d.qc.data() + base;
  float* qr = d.qr.data() + base;
  float* qi = d.qi.data() + base;
  float* qs = d.qs.data() + base;
  const float* p = d.p.data() + base;
  const float* den = d.den.data() + base;
  const float* delz = d.delz.data() + base;
  const float* pii = d.pii.data() + base;
  float* rain = d.rain.data() + j * nx;
  float* snow = d.snow.data() + j * nx;
  float* rainncv = d.rainncv.data() + j * nx;
  float* snowncv = d.snowncv.data() + j * nx;
  float* sr = d.sr.data() + j * nx;
  w.resize(static_cast<std::size_t>(nx * nz), static_cast<std::size_t>(nx));
  row_result res;

  // Entry: T, clipping, cpm and xl (fixed for the whole call), column water for the budget.
  std::vector<double> water_before(static_cast<std::size_t>(nx), 0.0), rain_before(rain, rain + nx);
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t i = 0; i < nx; ++i) {
      const std::int64_t x = k * nx + i;
      w.t[x] = th[x] * pii[x];
      qc[x] = fmax_(qc[x], 0.f);
      qr[x] = fmax_(qr[x], 0.f);
      qi[x] = fmax_(qi[x], 0.f);
      qs[x] = fmax_(qs[x], 0.f);
      w.cpm[x] = cpmcal(qv[x]);
      w.xl[x] = xlcal(w.t[x]);
      water_before[i] += static_cast<double>(den[x]) * (static_cast<double>(qv[x]) + qc[x] + qr[x] + qi[x] + qs[x]) *
                         static_cast<double>(delz[x]);
    }

  const int loops = minor_loops(d.dt);
  const float dtcld = minor_dt(d.dt, loops);
  for (int loop = 0; loop < loops; ++loop) {
    // 4.1 denfac, saturation (not refreshed after sedimentation / phase changes: classic quirk)
    for (std::int64_t k = 0; k < nz; ++k)
      for (std::int64_t i = 0; i < nx; ++i) {
        const std::int64_t x = k * nx + i;
        w.denfac[x] = denfac_of(den[x]);
        const qsat_pair sat = qsat_water_ice(w.t[x], p[x]);
        w.qs1[x] = sat.water;
        w.rh1[x] = fmax_(qv[x] / w.qs1[x], qmin);
        w.qs2[x] = sat.ice;
        w.rh2[x] = fmax_(qv[x] / w.qs2[x], qmin);
      }
    // 4.2-4.3 slopes, n0sfac, ice number at the start of sedimentation
    for (std::int64_t k = 0; k < nz; ++k)
      for (std::int64_t i = 0; i < nx; ++i) {
        const std::int64_t x = k * nx + i;
        w.n0sfac[x] = n0sfac_of(w.t[x]);
        w.slope_r[x] = rain_slope(qr[x], den[x]);
        w.slope_s[x] = snow_slope(qs[x], den[x], w.n0sfac[x]);
        w.rs_r[x] = w.slope_r[x].r;
        w.xni[x] = ice_number(den[x], qi[x]);
      }
    // Reduction 1: mstep(i) = max over k of the rain/snow sub-step count; the row max bounds the loop.
    std::fill(w.mstep.begin(), w.mstep.end(), 1);
    for (std::int64_t k = nz - 1; k >= 0; --k)
      for (std::int64_t i = 0; i < nx; ++i) {
        const std::int64_t x = k * nx + i;
        w.w_r[x] = rain_fall_rate(w.slope_r[x], w.denfac[x], delz[x]);
        w.w_s[x] = snow_fall_rate(w.slope_s[x], w.denfac[x], delz[x]);
        w.mstep[i] = std::max(w.mstep[i], substeps(fmax_(w.w_r[x], w.w_s[x]), dtcld));
      }
    const int mstepmax = *std::max_element(w.mstep.begin(), w.mstep.end());
    std::fill(w.fall_r1.begin(), w.fall_r1.end(), 0.f);
    std::fill(w.fall_s1.begin(), w.fall_s1.end(), 0.f);
    std::fill(w.fall_i1.begin(), w.fall_i1.end(), 0.f);
    for (std::int64_t i = 0; i < nx; ++i) res.max_substeps = std::max(res.max_substeps, w.mstep[i]);
    for (int n = 1; n <= mstepmax; ++n) {
      for (std::int64_t k = nz - 1; k >= 0; --k)
        for (std::int64_t i = 0; i < nx; ++i) {
          if (n > w.mstep[i]) continue;
          const std::int64_t x = k * nx + i;
          const float fm = static_cast<float>(w.mstep[i]);
          w.falk_r[x] = den[x] * qr[x] * w.w_r[x] / fm;
          w.falk_s[x] = den[x] * qs[x] * w.w_s[x] / fm;
          if (k == 0) {
            w.fall_r1[i] = w.fall_r1[i] + w.falk_r[x];
            w.fall_s1[i] = w.fall_s1[i] + w.falk_s[x];
          }
          if (k == nz - 1) {
            qr[x] = fmax_(qr[x] - w.falk_r[x] * dtcld / den[x], 0.f);
            qs[x] = fmax_(qs[x] - w.falk_s[x] * dtcld / den[x], 0.f);
          } else {
            const std::int64_t xu = x + nx;  // level above
            qr[x] = fmax_(qr[x] - (w.falk_r[x] - w.falk_r[xu] * delz[xu] / delz[x]) * dtcld / den[x], 0.f);
            qs[x] = fmax_(qs[x] - (w.falk_s[x] - w.falk_s[xu] * delz[xu] / delz[x]) * dtcld / den[x], 0.f);
          }
        }
      for (std::int64_t k = nz - 1; k >= 0; --k)
        for (std::int64_t i = 0; i < nx; ++i) {
          if (n > w.mstep[i]) continue;
          const std::int64_t x = k * nx + i;
          snow_melt(w.t[x], qr[x], qs[x], p[x], den[x], w.cpm[x], w.n0sfac[x], w.slope_s[x], w.mstep[i], dtcld);
        }
    }
    // Reduction 2: ice sub-steps.
    std::fill(w.mstep.begin(), w.mstep.end(), 1);
    for (std::int64_t k = nz - 1; k >= 0; --k)
      for (std::int64_t i = 0; i < nx; ++i) {
        const std::int64_t x = k * nx + i;
        w.w_i[x] = ice_fall_rate(qi[x], den[x], w.xni[x], delz[x]);
        w.mstep[i] = std::max(w.mstep[i], substeps(w.w_i[x], dtcld));
      }
    const int mstepmax_i = *std::max_element(w.mstep.begin(), w.mstep.end());
    for (std::int64_t i = 0; i < nx; ++i) res.max_substeps = std::max(res.max_substeps, w.mstep[i]);
    for (int n = 1; n <= mstepmax_i; ++n)
      for (std::int64_t k = nz - 1; k >= 0; --k)
        for (std::int64_t i = 0; i < nx; ++i) {
          if (n > w.mstep[i]) continue;
          const std::int64_t x = k * nx + i;
          w.falk_i[x] = den[x] * qi[x] * w.w_i[x] / static_cast<float>(w.mstep[i]);
          if (k == 0) w.fall_i1[i] = w.fall_i1[i] + w.falk_i[x];
          if (k == nz - 1) {
            qi[x] = fmax_(qi[x] - w.falk_i[x] * dtcld / den[x], 0.f);
          } else {
            const std::int64_t xu = x + nx;
            qi[x] = fmax_(qi[x] - (w.falk_i[x] - w.falk_i[xu] * delz[xu] / delz[x]) * dtcld / den[x], 0.f);
          }
        }
    // 4.4 surface precipitation (reset in every minor loop: classic quirk)
    for (std::int64_t i = 0; i < nx; ++i) {
      const float fallsum = w.fall_r1[i] + w.fall_s1[i] + w.fall_i1[i];
      const float fallsum_qsi = w.fall_s1[i] + w.fall_i1[i];
      rainncv[i] = 0.f;
      if (fallsum > 0.f) {
        rainncv[i] = precip_mm(fallsum, delz[i], dtcld);
        rain[i] = precip_mm(fallsum, delz[i], dtcld) + rain[i];
      }
      snowncv[i] = 0.f;
      if (fallsum_qsi > 0.f) {
        snowncv[i] = precip_mm(fallsum_qsi, delz[i], dtcld);
        snow[i] = precip_mm(fallsum_qsi, delz[i], dtcld) + snow[i];
      }
      sr[i] = 0.f;
      if (fallsum > 0.f) sr[i] = precip_mm(fallsum_qsi, delz[i], dtcld) / (rainncv[i] + 1.e-12f);
    }
    // 4.5, 4.6-4.9, 4.10-4.11: pointwise passes, each over the whole row as in WRF.
    for (std::int64_t k = 0; k < nz; ++k)
      for (std::int64_t i = 0; i < nx; ++i) {
        const std::int64_t x = k * nx + i;
        level s{w.t[x], qv[x], qc[x], qr[x], qi[x], qs[x]};
        phase_changes(s, den[x], w.xl[x], w.cpm[x], w.rs_r[x], dtcld);
        w.t[x] = s.t; qv[x] = s.qv; qc[x] = s.qc; qr[x] = s.qr; qi[x] = s.qi; qs[x] = s.qs;
      }
    for (std::int64_t k = 0; k < nz; ++k)
      for (std::int64_t i = 0; i < nx; ++i) {
        const std::int64_t x = k * nx + i;
        level s{w.t[x], qv[x], qc[x], qr[x], qi[x], qs[x]};
        const start_saturation sat{w.qs1[x], w.qs2[x], w.rh1[x], w.rh2[x], false};
        process_rates<false>(s, p[x], den[x], w.denfac[x], w.xl[x], w.cpm[x], w.n0sfac[x], sat, dtcld);
        w.t[x] = s.t; qv[x] = s.qv; qc[x] = s.qc; qr[x] = s.qr; qi[x] = s.qi; qs[x] = s.qs;
      }
    for (std::int64_t k = 0; k < nz; ++k)
      for (std::int64_t i = 0; i < nx; ++i) {
        const std::int64_t x = k * nx + i;
        level s{w.t[x], qv[x], qc[x], qr[x], qi[x], qs[x]};
        condensation(s, p[x], w.xl[x], w.cpm[x], dtcld);
        w.t[x] = s.t; qv[x] = s.qv; qc[x] = s.qc; qr[x] = s.qr; qi[x] = s.qi; qs[x] = s.qs;
      }
  }
  // Exit: theta, and the diagnostics.
  std::vector<double> water_after(static_cast<std::size_t>(nx), 0.0);
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t i = 0; i < nx; ++i) {
      const std::int64_t x = k * nx + i;
      th[x] = w.t[x] / pii[x];
      water_after[i] += static_cast<double>(den[x]) * (static_cast<double>(qv[x]) + qc[x] + qr[x] + qi[x] + qs[x]) *
                        static_cast<double>(delz[x]);
    }
  for (std::int64_t i = 0; i < nx; ++i) {
    const double resid = water_before[i] - water_after[i] - (static_cast<double>(rain[i]) - rain_before[i]);
    res.max_residual = std::max(res.max_residual, static_cast<float>(std::fabs(resid)));
    res.rain += rainncv[i];
    res.snow += snowncv[i];
  }
  return res;
}

}  // namespace

diagnostics step(domain& d, int threads) {
  diagnostics out;
  if (d.columns() == 0 || d.nz == 0) return out;
  const std::int64_t ny = d.ny;
  std::vector<row_result> rows(static_cast<std::size_t>(ny));
#ifdef _OPENMP
  const int nt = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel num_threads(nt)
  {
    row_work w;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t j = 0; j < ny; ++j) rows[static_cast<std::size_t>(j)] = wsm5_row(d, j, w);
  }
#else
  (void)threads;
  row_work w;
  for (std::int64_t j = 0; j < ny; ++j) rows[static_cast<std::size_t>(j)] = wsm5_row(d, j, w);
#endif
  // Combined in row order: deterministic for any thread count.
  for (const auto& r : rows) {
    out.rain_total += r.rain;
    out.snow_total += r.snow;
    out.max_substeps = std::max(out.max_substeps, r.max_substeps);
    out.max_budget_residual = std::max(out.max_budget_residual, r.max_residual);
  }
  return out;
}

}  // namespace wsm5::WSM5_REFERENCE_NAMESPACE
