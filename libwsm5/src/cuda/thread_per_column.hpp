// thread_per_column's per-column code: one thread owns one column. __host__ __device__ so that the same
// loop structure also runs on the CPU (emulation::thread_per_column_step, used by the tests without a
// GPU). No CUDA intrinsics here.
#pragma once
#include <cmath>
#include <cstdint>

#include "physics.hpp"
#include "wsm5/wsm5.hpp"

// Fully unrolled on the device (the per-sub-step fluxes must stay in registers); host compilers that do
// not know the pragma would warn.
#if defined(__CUDA_ARCH__)
#define WSM5_UNROLL _Pragma("unroll")
#else
#define WSM5_UNROLL
#endif

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
  int rows;                 // rows of this launch (from j0)
  float dt;
};

/// Most levels a column may have on the GPU (and in the emulation): WRF grids run 30-100 levels, a few
/// research grids ~200. thread_per_column keeps 9 per-level arrays in local memory (the fall rates, cpm
/// and xl, the general path's state): 2,304 bytes a thread in the instantiation for nz <= tpc_shallow_levels,
/// 9,216 in the one for deeper columns (CUDA reserves the stack for every resident thread: 2.5 GB on a
/// 132-SM GPU, so the shallow one stays the common case). warp_per_column holds ceil(nz / 32) levels per
/// lane in registers: up to 2 without spills; 4 (nz <= 128) spill 140 bytes, 8 (nz <= 256) 1,108 (ptxas,
/// sm_90).
constexpr int max_levels = static_cast<int>(gpu_max_levels);
constexpr int tpc_shallow_levels = 64;
/// Sub-steps that thread_per_column runs per top-down pass (their fluxes handed down in registers): the
/// sweep's inline ones and each pre-pass's. The CONUS test domain needs at most 3 after its first calls;
/// a column needing more runs pre-passes first. 8 per pass in the 256-level instantiation spilled 28 B
/// and was slower on 100 levels (H200, 200 x 200 x 100: 1.61-1.64 against 1.31-1.32 ms).
#ifndef WSM5_TPC_INLINE_SUBSTEPS
#define WSM5_TPC_INLINE_SUBSTEPS 4
#endif
constexpr int inline_substeps = WSM5_TPC_INLINE_SUBSTEPS;
/// Software prefetch (1): both passes load level k's inputs into registers one level ahead, so the loads
/// are in flight during the previous level's arithmetic. The compiler cannot do this itself: the sweep
/// stores to the same fields (no restrict), and it does not pipeline a loop body this long. The values
/// are the same (level k-1 is not written before it is processed), so the results are bitwise equal.
/// H200, CONUS, IEEE build: 0.747 -> 0.721 ms at 6 blocks/SM (80 registers), 0.692 ms at 5 (95, no
/// spills); fast-math build 0.443 -> 0.410 ms (6 blocks/SM).
#ifndef WSM5_TPC_PREFETCH
#define WSM5_TPC_PREFETCH 1
#endif

/// One level's inputs as stored (th not yet converted; pii only where it is used).
struct level_in {
  float p, den, dz, th, pii, qv, qc, qr, qi, qs;
};
WSM5_HD level_in load_in(const view& v, std::int64_t x, bool need_pii) {
  return {v.p[x], v.den[x], v.delz[x], v.th[x], need_pii ? v.pii[x] : 1.f, v.qv[x], v.qc[x], v.qr[x], v.qi[x], v.qs[x]};
}
/// Loop-start state from the loaded inputs (entry: T = th * pii and condensates clamped at 0).
WSM5_HD phys::level start_state(const level_in& a, bool entry) {
  using phys::fmax_;
  if (entry) return {a.th * a.pii, a.qv, fmax_(a.qc, 0.f), fmax_(a.qr, 0.f), fmax_(a.qi, 0.f), fmax_(a.qs, 0.f)};
  return {a.th, a.qv, a.qc, a.qr, a.qi, a.qs};
}
/// What pass 1 reads of a level (T only where there is snow: the load is issued, the value used rarely).
struct fall_in {
  float den, dz, qr, qs, qi, th, pii;
};
WSM5_HD fall_in load_fall(const view& v, std::int64_t x, bool entry) {
  return {v.den[x], v.delz[x], v.qr[x], v.qs[x], v.qi[x], v.th[x], entry ? v.pii[x] : 1.f};
}

// ------------------------------------------------------------------------------------------------------
// thread_per_column: one thread owns one column (coalesced: consecutive threads = consecutive i, so
// every level access of a warp is one 128-byte line). Per minor loop (one at dt <= 180 s):
//   1. a bottom-up pass reads what the fall speeds need (qr, qs, qi, den, delz; T only where qs > 0),
//      keeps the fall rates in local arrays and takes the column max of the sub-step counts
//      (reduction 1 and 2, sequential in the thread);
//   2. ONE top-down sweep does everything else at level k with the level in registers: loop-start T, q,
//      slopes; all rain/snow sub-steps with melting, then all ice sub-steps; the pointwise processes;
//      the output is written once. The sweep is exact (bitwise WRF's order of operations): within a
//      sub-step n, level k's flux depends only on level k's state after sub-step n-1, and the flux of
//      level k+1 in sub-step n; so level k can run its sub-steps 0..mstep-1 back to back if the level
//      above hands down one flux per sub-step (fr_up[n], registers: up to inline_substeps of them).
// So one call reads 7 of the 10 input fields twice (the second read can hit L2: the sweep starts where
// pass 1 ended) and writes each output once: ~23 field passes instead of ~70-80 through global scratch
// (H200, CONUS: 0.75 ms against 1.10 ms with global scratch). Columns with more sub-steps (CONUS's first
// calls need up to 6, thin-layered deep columns 10-20) run all but the last 1..S of them in pre-passes
// first: top-down passes of the same structure, S sub-steps each, the column's sedimentation state
// between passes in local arrays of MaxNz levels; the sweep then starts from that state. (WRF's loop,
// one pass per sub-step, costs S times the passes over the local arrays.)
// Between minor loops (dt > 180 s) the state stays in place in global memory (T in `th`), and cpm, xl
// (fixed for the call) in local arrays.
// ------------------------------------------------------------------------------------------------------

/// Loop-start state of one level: at entry T = th * pii and the condensates clamped at 0 (WRF's entry
/// code), in later minor loops the state as the previous loop wrote it.
WSM5_HD phys::level load_level(const view& v, std::int64_t x, bool entry) {
  using phys::fmax_;
  if (entry)
    return {v.th[x] * v.pii[x], v.qv[x], fmax_(v.qc[x], 0.f), fmax_(v.qr[x], 0.f), fmax_(v.qi[x], 0.f),
            fmax_(v.qs[x], 0.f)};
  return {v.th[x], v.qv[x], v.qc[x], v.qr[x], v.qi[x], v.qs[x]};
}

/// Loop-start T of one level (only where snow needs n0sfac).
WSM5_HD float load_t(const view& v, std::int64_t x, bool entry) { return entry ? v.th[x] * v.pii[x] : v.th[x]; }

/// Rain and snow fall rates [s-1] of one level from its loop-start state.
WSM5_HD void rain_snow_rates(float qr, float qs, float den, float delz, float n0sf, float& wr, float& ws) {
  using namespace wsm5::phys;
  const float denfac = denfac_of(den);
  wr = rain_fall_rate(rain_slope(qr, den), denfac, delz);
  ws = snow_fall_rate(snow_slope(qs, den, n0sf), denfac, delz);
}

/// Ice fall rate [s-1] of one level (Ni from qi, which sedimentation of rain and snow does not touch).
WSM5_HD float ice_rate(float qi, float den, float delz) {
  return phys::ice_fall_rate(qi, den, phys::ice_number(den, qi), delz);
}

/// One sedimentation update of q at one level (WRF's expression; no inflow at the top level).
WSM5_HD float settle(float q, float f, float f_up, float dz_up, float dz, float den, float dtcld, bool top) {
  using phys::fmax_;
  using phys::div_normal;  // dz, den: validated inputs
  if (top) return fmax_(q - div_normal(f * dtcld, den), 0.f);
  return fmax_(q - div_normal((f - div_normal(f_up * dz_up, dz)) * dtcld, den), 0.f);
}

/// One pass's sub-steps 0..count-1 (at most S run) of rain and snow at one level: each settles with the
/// flux the level above handed down for that sub-step (fr_up[n], fs_up[n], replaced by this level's for
/// the level below), then snow melts where T > T0 (melt(t, qr, qs)); level 0 (bottom) sums its fluxes
/// into fall_r1 and fall_s1 in sub-step order. Shared by the pre-passes and the sweep.
template <int S, class Melt>
WSM5_HD void rain_snow_substeps(int count, float& t, float& r, float& s, float wr, float ws, float dk, float dz,
                                float dz_up, float fm, float dtcld, bool top, bool bottom, float (&fr_up)[S],
                                float (&fs_up)[S], float& fall_r1, float& fall_s1, Melt melt) {
WSM5_UNROLL
  for (int n = 0; n < S; ++n) {
    if (n < count) {
      const float fr = phys::div_normal(dk * r * wr, fm);
      const float fs = phys::div_normal(dk * s * ws, fm);
      r = settle(r, fr, fr_up[n], dz_up, dz, dk, dtcld, top);
      s = settle(s, fs, fs_up[n], dz_up, dz, dk, dtcld, top);
      if (t > phys::t0c && s > 0.f) melt(t, r, s);
      fr_up[n] = fr;
      fs_up[n] = fs;
      if (bottom) {
        fall_r1 = fall_r1 + fr;
        fall_s1 = fall_s1 + fs;
      }
    }
  }
}

/// The same for ice (no melting): sub-steps 0..count-1 (at most S) of q at one level.
template <int S>
WSM5_HD void ice_substeps(int count, float& q, float wi, float dk, float dz, float dz_up, float fmi, float dtcld,
                          bool top, bool bottom, float (&f_up)[S], float& fall_i1) {
WSM5_UNROLL
  for (int n = 0; n < S; ++n) {
    if (n < count) {
      const float f = phys::div_normal(dk * q * wi, fmi);
      q = settle(q, f, f_up[n], dz_up, dz, dk, dtcld, top);
      f_up[n] = f;
      if (bottom) fall_i1 = fall_i1 + f;
    }
  }
}

/// Sub-steps [0, n_end) of rain and snow sedimentation (with melting) of one column, S per top-down pass:
/// within a pass a level runs its S sub-steps back to back, the level above handing down one flux per
/// sub-step in registers (the sweep's structure), and the state between passes stays in local arrays
/// (t_l, qr_l, qs_l). The first pass starts from the loop-start state in global memory, which the sweep
/// has not written yet. Level 0's fluxes are summed into fall_r1 and fall_s1 in sub-step order.
template <int S>
WSM5_HD void rain_snow_prepasses(const view& v, std::int64_t base, bool entry, int n_end, int mstep, float dtcld,
                                 const float* wr_c, const float* ws_c, const float* cpm_l, float* t_l, float* qr_l,
                                 float* qs_l, float& fall_r1, float& fall_s1) {
  using namespace wsm5::phys;
  const float fm = static_cast<float>(mstep);
  for (int n0 = 0; n0 < n_end; n0 += S) {
    float fr_up[S] = {}, fs_up[S] = {};  // the top level has no inflow
    float dz_up = 0.f;
    for (int k = v.nz - 1; k >= 0; --k) {
      const std::int64_t x = base + k * v.pitch;
      const float dk = v.den[x], dz = v.delz[x];
      float t, r, s;
      if (n0 == 0) {
        const level s0 = load_level(v, x, entry);
        t = s0.t; r = s0.qr; s = s0.qs;
      } else {
        t = t_l[k]; r = qr_l[k]; s = qs_l[k];
      }
      // Melting's loop-start slope, n0sfac and cpm (re-read: unchanged), at the level's first melting.
      bool melt_inputs = false;
      float n0sf = 0.f, cp = 0.f;
      slope ss0{};
      const auto melt = [&](float& tm, float& rm, float& sm) {
        if (!melt_inputs) {
          const level s0 = load_level(v, x, entry);
          n0sf = n0sfac_of(s0.t);
          cp = entry ? cpmcal(s0.qv) : cpm_l[k];
          ss0 = snow_slope(s0.qs, dk, n0sf);
          melt_inputs = true;
        }
        snow_melt(tm, rm, sm, v.p[x], dk, cp, n0sf, ss0, mstep, dtcld);
      };
      rain_snow_substeps<S>(n_end - n0, t, r, s, wr_c[k], ws_c[k], dk, dz, dz_up, fm, dtcld, k == v.nz - 1, k == 0,
                            fr_up, fs_up, fall_r1, fall_s1, melt);
      t_l[k] = t; qr_l[k] = r; qs_l[k] = s;
      dz_up = dz;
    }
  }
}

/// Sub-steps [0, n_end) of ice sedimentation of one column, S per top-down pass (as rain_snow_prepasses;
/// the state between passes in qi_l), level 0's fluxes summed into fall_i1.
template <int S>
WSM5_HD void ice_prepasses(const view& v, std::int64_t base, bool entry, int n_end, int mstep_i, float dtcld,
                           const float* wi_c, float* qi_l, float& fall_i1) {
  using phys::fmax_;
  const float fmi = static_cast<float>(mstep_i);
  for (int n0 = 0; n0 < n_end; n0 += S) {
    float f_up[S] = {};
    float dz_up = 0.f;
    for (int k = v.nz - 1; k >= 0; --k) {
      const std::int64_t x = base + k * v.pitch;
      const float dk = v.den[x], dz = v.delz[x];
      float q = n0 > 0 ? qi_l[k] : entry ? fmax_(v.qi[x], 0.f) : v.qi[x];
      ice_substeps<S>(n_end - n0, q, wi_c[k], dk, dz, dz_up, fmi, dtcld, k == v.nz - 1, k == 0, f_up, fall_i1);
      qi_l[k] = q;
      dz_up = dz;
    }
  }
}

/// The sub-steps of a count m that come before the sweep's inline ones: all but the last 1..S (so the
/// sweep always runs some), or all of them (AllInPrepasses: the tests' way to run the pre-passes on every
/// column).
template <int S, bool AllInPrepasses>
WSM5_HD int prepass_substeps(int m) {
  return AllInPrepasses ? m : S * ((m - 1) / S);
}

/// MaxNz: size of the local arrays (nz <= MaxNz). S: sub-steps per pass (the sweep's inline ones, and
/// each pre-pass's). AllInPrepasses: every sub-step in the pre-passes, none in the sweep (the tests).
template <int MaxNz, int S, bool AllInPrepasses>
WSM5_HD void thread_per_column_column(const view& v, int i, std::int64_t j) {
  using namespace wsm5::phys;
  static_assert(S >= 1, "at least one sub-step per pass");
  const int nz = v.nz;
  const std::int64_t pitch = v.pitch;
  const std::int64_t base = j * nz * pitch + i;  // level k at base + k * pitch
  const std::int64_t c2 = j * pitch + i;

  // Fixed for the call, needed again only when there is more than one minor loop.
  float cpm_l[MaxNz], xl_l[MaxNz];
  double water_before = 0, water_after = 0;
  const float rain_before = v.rain[c2];
  const int loops = minor_loops(v.dt);
  const float dtcld = minor_dt(v.dt, loops);
  int mstep_seen = 1;
  for (int loop = 0; loop < loops; ++loop) {
    const bool entry = loop == 0, last = loop + 1 == loops;
    // ---- pass 1: sub-step counts (bottom-up, so that the sweep's first levels are the freshest in cache)
    int mstep = 1, mstep_i = 1;
    // The fall rates (3 powf, 6 sqrt per level) are kept for the sweep and the general path: local
    // arrays cost 3 x 4 bytes per level through L1/L2, recomputing them ~20 % more arithmetic.
    float wr_c[MaxNz], ws_c[MaxNz], wi_c[MaxNz];
#if WSM5_TPC_PREFETCH
    fall_in next_f = load_fall(v, base, entry);
#endif
    for (int k = 0; k < nz; ++k) {
      const std::int64_t x = base + k * pitch;
#if WSM5_TPC_PREFETCH
      const fall_in a = next_f;
      if (k + 1 < nz) next_f = load_fall(v, x + pitch, entry);
      const float dk = a.den, dz = a.dz;
      const float r = entry ? fmax_(a.qr, 0.f) : a.qr;
      const float s = entry ? fmax_(a.qs, 0.f) : a.qs;
      const float q = entry ? fmax_(a.qi, 0.f) : a.qi;
      const float n0sf = s > qcrmin ? n0sfac_of(entry ? a.th * a.pii : a.th) : 1.f;
#else
      const float dk = v.den[x], dz = v.delz[x];
      const float r = entry ? fmax_(v.qr[x], 0.f) : v.qr[x];
      const float s = entry ? fmax_(v.qs[x], 0.f) : v.qs[x];
      const float q = entry ? fmax_(v.qi[x], 0.f) : v.qi[x];
      // snow_slope ignores n0sfac at qs <= qcrmin: T (two loads and an exp) only where there is snow.
      const float n0sf = s > qcrmin ? n0sfac_of(load_t(v, x, entry)) : 1.f;
#endif
      float wr, ws;
      rain_snow_rates(r, s, dk, dz, n0sf, wr, ws);
      const float wi = ice_rate(q, dk, dz);
      wr_c[k] = wr;
      ws_c[k] = ws;
      wi_c[k] = wi;
      mstep = imax_(mstep, substeps(fmax_(wr, ws), dtcld));
      mstep_i = imax_(mstep_i, substeps(wi, dtcld));
    }
    mstep_seen = imax_(mstep_seen, imax_(mstep, mstep_i));
    const float fm = static_cast<float>(mstep), fmi = static_cast<float>(mstep_i);

    // ---- pre-passes (more sub-steps than the sweep runs inline): S sub-steps per top-down pass over
    // local arrays, until the last 1..S are left for the sweep. The global arrays still hold the
    // loop-start state; the sweep reads it from there as usual.
    const int n_pre = prepass_substeps<S, AllInPrepasses>(mstep), ni_pre = prepass_substeps<S, AllInPrepasses>(mstep_i);
    float t_l[MaxNz], qr_l[MaxNz], qs_l[MaxNz], qi_l[MaxNz];
    float fall_r1 = 0.f, fall_s1 = 0.f, fall_i1 = 0.f;
    if (n_pre > 0)
      rain_snow_prepasses<S>(v, base, entry, n_pre, mstep, dtcld, wr_c, ws_c, cpm_l, t_l, qr_l, qs_l, fall_r1, fall_s1);
    if (ni_pre > 0) ice_prepasses<S>(v, base, entry, ni_pre, mstep_i, dtcld, wi_c, qi_l, fall_i1);
    const int nr_inline = mstep - n_pre, ni_inline = mstep_i - ni_pre;

    // ---- the sweep: level k in registers from its loop-start state to its end-of-loop state
    float fr_up[S] = {}, fs_up[S] = {}, fi_up[S] = {};  // the top level has no inflow
    float dz_up = 0.f;
#if WSM5_TPC_PREFETCH
    level_in next_in = load_in(v, base + (nz - 1) * pitch, entry || last);
#endif
    for (int k = nz - 1; k >= 0; --k) {
      const std::int64_t x = base + k * pitch;
#if WSM5_TPC_PREFETCH
      const level_in in = next_in;
      if (k > 0) next_in = load_in(v, x - pitch, entry || last);
      const float pk = in.p, dk = in.den, dz = in.dz, piik = in.pii;
      level s = start_state(in, entry);
#else
      const float pk = v.p[x], dk = v.den[x], dz = v.delz[x];
      level s = load_level(v, x, entry);
#endif
      float cp, l;
      if (entry) {
        cp = cpmcal(s.qv);
        l = xlcal(s.t);
        water_before += static_cast<double>(dk) * (static_cast<double>(s.qv) + s.qc + s.qr + s.qi + s.qs) * dz;
        if (loops > 1) {
          cpm_l[k] = cp;
          xl_l[k] = l;
        }
      } else {
        cp = cpm_l[k];
        l = xl_l[k];
      }
      const float tk0 = s.t, qv0 = s.qv, qs0 = s.qs;
      // n0sfac (an exp of the loop-start T) only where snow reads it: snow at the start, after the
      // pre-passes or falling in (the melting in sedimentation), or after the phase changes
      // (process_rates). 0: not computed.
      float n0sf = 0.f;
      const slope sr0 = rain_slope(s.qr, dk);
      if (n_pre > 0) {
        s.t = t_l[k]; s.qr = qr_l[k]; s.qs = qs_l[k];
      }
      if (ni_pre > 0) s.qi = qi_l[k];
      const bool top = k == nz - 1;
      const float wr = wr_c[k], ws = ws_c[k], wi = wi_c[k];
      // Snow can only come from before or from above (settle keeps a 0 without inflow at 0).
      bool snow = qs0 > 0.f || s.qs > 0.f;
WSM5_UNROLL
      for (int n = 0; n < S; ++n)
        if (n < nr_inline) snow = snow || fs_up[n] > 0.f;
      if (snow) n0sf = n0sfac_of(tk0);
      // Melting needs T > T0; it only cools, so a level that starts at or below T0 never melts.
      slope ss0{};
      if (tk0 > t0c) ss0 = snow_slope(qs0, dk, n0sf);  // qs = 0: the constant slope, n0sf unread
      const auto melt = [&](float& tm, float& rm, float& sm) {
        snow_melt(tm, rm, sm, pk, dk, cp, n0sf, ss0, mstep, dtcld);
      };
      rain_snow_substeps<S>(nr_inline, s.t, s.qr, s.qs, wr, ws, dk, dz, dz_up, fm, dtcld, top, k == 0, fr_up, fs_up,
                            fall_r1, fall_s1, melt);
      ice_substeps<S>(ni_inline, s.qi, wi, dk, dz, dz_up, fmi, dtcld, top, k == 0, fi_up, fall_i1);
      dz_up = dz;
      // Pointwise processes: q_s and rh from the loop-start T and qv (when a rate asks for them: a dry
      // level below saturation skips the double log and exps), the pre-sedimentation rain slope.
      phase_changes(s, dk, l, cp, sr0.r, dtcld);
      const start_saturation sat = needed_start_saturation(tk0, pk, qv0, s);
      if (s.qs > 0.f && n0sf == 0.f) n0sf = n0sfac_of(tk0);  // the phase changes made snow; qs <= 0: unread
      process_rates<true>(s, pk, dk, denfac_of(dk), l, cp, n0sf, sat, dtcld);
      condensation<true>(s, pk, l, cp, dtcld);
#if WSM5_TPC_PREFETCH
      v.th[x] = last ? div_rn(s.t, piik) : s.t;  // back to theta after the last loop
#else
      v.th[x] = last ? div_rn(s.t, v.pii[x]) : s.t;  // back to theta after the last loop
#endif
      v.qv[x] = s.qv; v.qc[x] = s.qc; v.qr[x] = s.qr; v.qi[x] = s.qi; v.qs[x] = s.qs;
      if (last)
        water_after += static_cast<double>(dk) * (static_cast<double>(s.qv) + s.qc + s.qr + s.qi + s.qs) * dz;
    }
    // Surface precipitation (classic: reset in every minor loop).
    surface_precipitation(fall_r1, fall_s1, fall_i1, v.delz[base], dtcld, v.rain[c2], v.snow[c2], v.rainncv[c2],
                          v.snowncv[c2], v.sr[c2]);
  }
  const double resid = water_before - water_after - (static_cast<double>(v.rain[c2]) - rain_before);
  v.resid[c2] = static_cast<float>(::fabs(resid));
  v.mstep_max[c2] = mstep_seen;
}

}  // namespace wsm5::detail
