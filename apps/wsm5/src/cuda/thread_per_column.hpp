// thread_per_column's per-column code: one thread owns one column. __host__ __device__ so that the same
// loop structure also runs on the CPU (emulation::thread_per_column_step, used by the tests without a
// GPU). No CUDA intrinsics here.
#pragma once
#include <cmath>
#include <cstdint>

#include "physics.hpp"

namespace wsm5::detail {

/// Trivially copyable view of the device domain. 3D: ((j * nz + k) * pitch + i); 2D: (j * pitch + i).
struct view {
  float *th, *qv, *qc, *qr, *qi, *qs;
  const float *p, *den, *delz, *pii;
  float *rain, *snow, *rainncv, *snowncv, *sr;
  std::int32_t* mstep_max;  // per column: max sub-step count of the call (rain/snow and ice)
  float* resid;             // per column: |water before - after - precip| [kg m-2]
  int nx, nz;
  std::int64_t pitch;
  int j0;                   // first row of this launch (row chunks for copy/compute overlap)
  float dt;
};

/// Most levels a column may have: warp_per_column holds ceil(nz/32) <= 2 levels per lane in registers.
constexpr int max_levels = 64;

// ------------------------------------------------------------------------------------------------------
// thread_per_column: one thread owns one column (coalesced: consecutive threads = consecutive i, so
// every level access of a warp is one 128-byte line). No local arrays (the build treats local memory as
// an error): the state is updated in place in the global arrays (T lives in `th` during the call), and
// the per-level values that must survive sedimentation sit in global scratch arrays; everything else
// (q_s, rh, n0sfac, slopes) is recomputed pointwise from the saved start-of-loop T, qv, qr, qs, which
// gives bitwise the values WRF stores.
// ------------------------------------------------------------------------------------------------------
struct scratch_view {
  float *t_start, *qv_start, *qr_start, *qs_start, *cpm, *xl, *w_r, *w_s;
};

WSM5_HD void thread_per_column_column(const view& v, const scratch_view& w, int i, std::int64_t j) {
  using namespace wsm5::phys;
  const int nz = v.nz;
  const std::int64_t pitch = v.pitch;
  const std::int64_t base = j * nz * pitch + i;  // level k at base + k * pitch
  const std::int64_t c2 = j * pitch + i;
  float* __restrict__ t = v.th + base;
  float* __restrict__ qv = v.qv + base;
  float* __restrict__ qc = v.qc + base;
  float* __restrict__ qr = v.qr + base;
  float* __restrict__ qi = v.qi + base;
  float* __restrict__ qs = v.qs + base;
  const float* __restrict__ p = v.p + base;
  const float* __restrict__ den = v.den + base;
  const float* __restrict__ delz = v.delz + base;
  const float* __restrict__ pii = v.pii + base;
  float* __restrict__ t0 = w.t_start + base;
  float* __restrict__ qv0 = w.qv_start + base;
  float* __restrict__ qr0 = w.qr_start + base;
  float* __restrict__ qs0 = w.qs_start + base;
  float* __restrict__ cpm = w.cpm + base;
  float* __restrict__ xl = w.xl + base;
  float* __restrict__ w_a = w.w_r + base;
  float* __restrict__ w_b = w.w_s + base;

  double water_before = 0;
  for (int k = 0; k < nz; ++k) {
    const std::int64_t x = k * pitch;
    const float tk = t[x] * pii[x];
    t[x] = tk;
    const float c = fmax_(qc[x], 0.f), r = fmax_(qr[x], 0.f), ic = fmax_(qi[x], 0.f), s = fmax_(qs[x], 0.f);
    qc[x] = c; qr[x] = r; qi[x] = ic; qs[x] = s;
    const float q = qv[x];
    cpm[x] = cpmcal(q);
    xl[x] = xlcal(tk);
    water_before += static_cast<double>(den[x]) * (static_cast<double>(q) + c + r + ic + s) * delz[x];
  }
  const float rain_before = v.rain[c2];
  const int loops = minor_loops(v.dt);
  const float dtcld = minor_dt(v.dt, loops);
  int mstep_seen = 1;
  for (int loop = 0; loop < loops; ++loop) {
    int mstep = 1;
    for (int k = 0; k < nz; ++k) {
      const std::int64_t x = k * pitch;
      const float tk = t[x], dk = den[x], r = qr[x], s = qs[x];
      t0[x] = tk; qv0[x] = qv[x]; qr0[x] = r; qs0[x] = s;
      const float denfac = denfac_of(dk);
      const float wr = rain_fall_rate(rain_slope(r, dk), denfac, delz[x]);
      const float ws = snow_fall_rate(snow_slope(s, dk, n0sfac_of(tk)), denfac, delz[x]);
      w_a[x] = wr;
      w_b[x] = ws;
      mstep = imax_(mstep, substeps(fmax_(wr, ws), dtcld));  // reduction 1, sequential in the thread
    }
    mstep_seen = imax_(mstep_seen, mstep);
    // Rain and snow sub-steps. Each level's flux uses that level's state at the start of the sub-step
    // (the level above hands its flux down in a register), and melting at level k only reads level k,
    // so melting is fused into the same top-down pass (bitwise the same as WRF's separate pass).
    float fall_r1 = 0.f, fall_s1 = 0.f;
    const float fm = static_cast<float>(mstep);
    for (int n = 0; n < mstep; ++n) {
      float fr_up = 0.f, fs_up = 0.f, dz_up = 0.f;
      for (int k = nz - 1; k >= 0; --k) {
        const std::int64_t x = k * pitch;
        const float dk = den[x], dz = delz[x];
        float r = qr[x], s = qs[x];
        const float fr = dk * r * w_a[x] / fm;
        const float fs = dk * s * w_b[x] / fm;
        if (k == nz - 1) {
          r = fmax_(r - fr * dtcld / dk, 0.f);
          s = fmax_(s - fs * dtcld / dk, 0.f);
        } else {
          r = fmax_(r - (fr - fr_up * dz_up / dz) * dtcld / dk, 0.f);
          s = fmax_(s - (fs - fs_up * dz_up / dz) * dtcld / dk, 0.f);
        }
        float tk = t[x];
        if (tk > t0c && s > 0.f) {  // psmlt with the start-of-sedimentation slope and n0sfac
          const float n0sf = n0sfac_of(t0[x]);
          snow_melt(tk, r, s, p[x], dk, cpm[x], n0sf, snow_slope(qs0[x], dk, n0sf), mstep, dtcld);
          t[x] = tk;
        }
        qr[x] = r;
        qs[x] = s;
        fr_up = fr;
        fs_up = fs;
        dz_up = dz;
        if (k == 0) {
          fall_r1 = fall_r1 + fr;
          fall_s1 = fall_s1 + fs;
        }
      }
    }
    // Ice: reduction 2 and its sub-steps (Ni from qi, unchanged since the start of sedimentation).
    int mstep_i = 1;
    for (int k = 0; k < nz; ++k) {
      const std::int64_t x = k * pitch;
      const float dk = den[x], q = qi[x];
      const float wi = ice_fall_rate(q, dk, ice_number(dk, q), delz[x]);
      w_a[x] = wi;
      mstep_i = imax_(mstep_i, substeps(wi, dtcld));
    }
    mstep_seen = imax_(mstep_seen, mstep_i);
    float fall_i1 = 0.f;
    const float fmi = static_cast<float>(mstep_i);
    for (int n = 0; n < mstep_i; ++n) {
      float f_up = 0.f, dz_up = 0.f;
      for (int k = nz - 1; k >= 0; --k) {
        const std::int64_t x = k * pitch;
        const float dk = den[x], dz = delz[x];
        float q = qi[x];
        const float f = dk * q * w_a[x] / fmi;
        if (k == nz - 1) q = fmax_(q - f * dtcld / dk, 0.f);
        else q = fmax_(q - (f - f_up * dz_up / dz) * dtcld / dk, 0.f);
        qi[x] = q;
        f_up = f;
        dz_up = dz;
        if (k == 0) fall_i1 = fall_i1 + f;
      }
    }
    // Surface precipitation (classic: reset in every minor loop).
    {
      const float fallsum = fall_r1 + fall_s1 + fall_i1;
      const float fallsum_qsi = fall_s1 + fall_i1;
      const float dz1 = delz[0];
      float rncv = 0.f, sncv = 0.f, srv = 0.f;
      if (fallsum > 0.f) {
        rncv = precip_mm(fallsum, dz1, dtcld);
        v.rain[c2] = precip_mm(fallsum, dz1, dtcld) + v.rain[c2];
      }
      if (fallsum_qsi > 0.f) {
        sncv = precip_mm(fallsum_qsi, dz1, dtcld);
        v.snow[c2] = precip_mm(fallsum_qsi, dz1, dtcld) + v.snow[c2];
      }
      if (fallsum > 0.f) srv = precip_mm(fallsum_qsi, dz1, dtcld) / (rncv + 1.e-12f);
      v.rainncv[c2] = rncv;
      v.snowncv[c2] = sncv;
      v.sr[c2] = srv;
    }
    // Pointwise processes, one pass; q_s, rh, n0sfac and the pre-sedimentation rain slope recomputed
    // from the saved start-of-loop state.
    for (int k = 0; k < nz; ++k) {
      const std::int64_t x = k * pitch;
      const float pk = p[x], dk = den[x], tk0 = t0[x], q0 = qv0[x];
      const float qs1 = qsat(tk0, pk, false), qs2 = qsat(tk0, pk, true);
      const float rh1 = fmax_(q0 / qs1, qmin), rh2 = fmax_(q0 / qs2, qmin);
      const float n0sf = n0sfac_of(tk0);
      const float rs_r = rain_slope(qr0[x], dk).r;
      const float cp = cpm[x], l = xl[x];
      level s{t[x], qv[x], qc[x], qr[x], qi[x], qs[x]};
      phase_changes(s, dk, l, cp, rs_r, dtcld);
      process_rates(s, pk, dk, denfac_of(dk), l, cp, n0sf, qs1, qs2, rh1, rh2, dtcld);
      condensation(s, pk, l, cp, dtcld);
      t[x] = s.t; qv[x] = s.qv; qc[x] = s.qc; qr[x] = s.qr; qi[x] = s.qi; qs[x] = s.qs;
    }
  }
  double water_after = 0;
  for (int k = 0; k < nz; ++k) {
    const std::int64_t x = k * pitch;
    t[x] = t[x] / pii[x];  // back to theta
    water_after += static_cast<double>(den[x]) *
                   (static_cast<double>(qv[x]) + qc[x] + qr[x] + qi[x] + qs[x]) * delz[x];
  }
  const double resid = water_before - water_after - (static_cast<double>(v.rain[c2]) - rain_before);
  v.resid[c2] = static_cast<float>(::fabs(resid));
  v.mstep_max[c2] = mstep_seen;
}

}  // namespace wsm5::detail
