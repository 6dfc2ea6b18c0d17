// WSM5 V3.1 CUDA kernels: thread_per_column and warp_per_column. Same pointwise physics as the CPU
// reference (physics.hpp); each variant owns its sedimentation and loop structure.
#pragma once
#include <cstdint>

#include "physics.hpp"
#include "thread_per_column.hpp"
#include "tpc_launch.hpp"
#include "reduce/cuda/warp_reduce.cuh"
#include "reduce/operators.hpp"

namespace wsm5::detail {

// thread_per_column kernel: consecutive threads = consecutive columns i of row j, in blocks of tpc_block
// columns x tpc_rows_per_block rows (tpc_launch.hpp).
template <int MaxNz>
__global__ void __launch_bounds__(tpc_block * tpc_block_rows, 1) thread_per_column_kernel(view v) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int row = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= v.nx || row >= v.rows) return;
  thread_per_column_column<MaxNz, inline_substeps, false>(v, i, v.j0 + static_cast<std::int64_t>(row));
}

// ------------------------------------------------------------------------------------------------------
// warp_per_column: W lanes per column (a warp, or a half warp: W = 16 puts 2 columns in a warp), levels
// across the lanes (lane l holds k = l + W m, m < Lpl = ceil(nz / W)), state in registers. Within a
// sub-step every level's flux comes from the sub-step's starting state, so all levels update at once;
// the flux of the level above comes from the neighbouring lane (a shuffle: data movement, not a
// reduction). The sub-step counts are libreduce warp max-reductions over the column's W lanes, the
// column water sums libreduce warp sums.
// ------------------------------------------------------------------------------------------------------
// Lanes per column for 32 < nz <= 48 (16: half warps, 3 levels per lane; 32: 2 levels per lane).
// H200, CONUS nz = 35: 16 -> 1.09 ms, 32 -> 1.41 ms (libwsm5/README.md).
#ifndef WSM5_WPC_WIDTH
#define WSM5_WPC_WIDTH 16
#endif

template <int W, int Lpl>
__device__ __forceinline__ float from_level_above(const float (&a)[Lpl], int m, int lane) {
  // level k + 1 of (lane, m) is (lane + 1, m), or (0, m + 1) for lane W - 1. Every lane calls this.
  const float same = __shfl_down_sync(reduce::warp::full_mask, a[m], 1, W);
  const float next = (m + 1 < Lpl) ? __shfl_sync(reduce::warp::full_mask, a[m + 1 < Lpl ? m + 1 : m], 0, W) : 0.f;
  return lane == W - 1 ? next : same;
}

template <int W, int Lpl>
__global__ void __launch_bounds__(256, 2) warp_per_column_kernel(view v) {
  using namespace wsm5::phys;
  constexpr int warp = reduce::warp::warp_size;
  const int lane = static_cast<int>(threadIdx.x) % W;
  const int i_raw = static_cast<int>(blockIdx.x * (blockDim.x / W) + threadIdx.x / W);
  // Whole warps past the last column leave together; with W < 32 a warp may straddle it: that segment
  // computes a copy of the last column (every lane must reach the shuffles) and stores nothing.
  if (static_cast<int>(blockIdx.x * (blockDim.x / W) + (threadIdx.x / warp) * (warp / W)) >= v.nx) return;
  const bool store = i_raw < v.nx;
  const int i = store ? i_raw : v.nx - 1;
  const std::int64_t j = v.j0 + static_cast<std::int64_t>(blockIdx.y);
  const int nz = v.nz;
  const std::int64_t pitch = v.pitch;
  const std::int64_t base = j * nz * pitch + i;
  const std::int64_t c2 = j * pitch + i;

  bool valid[Lpl];
  std::int64_t xk[Lpl];
  float t[Lpl], qv[Lpl], qc[Lpl], qr[Lpl], qi[Lpl], qs[Lpl], p[Lpl], den[Lpl], dz[Lpl], cpm[Lpl], xl[Lpl];
  double wpart = 0;
#pragma unroll
  for (int m = 0; m < Lpl; ++m) {
    const int k = lane + W * m;
    valid[m] = k < nz;
    xk[m] = base + static_cast<std::int64_t>(valid[m] ? k : 0) * pitch;
    if (valid[m]) {
      const std::int64_t x = xk[m];
      p[m] = v.p[x]; den[m] = v.den[x]; dz[m] = v.delz[x];
      t[m] = v.th[x] * v.pii[x];
      qv[m] = v.qv[x];
      qc[m] = fmax_(v.qc[x], 0.f); qr[m] = fmax_(v.qr[x], 0.f); qi[m] = fmax_(v.qi[x], 0.f); qs[m] = fmax_(v.qs[x], 0.f);
      cpm[m] = cpmcal(qv[m]);
      xl[m] = xlcal(t[m]);
      wpart += static_cast<double>(den[m]) * (static_cast<double>(qv[m]) + qc[m] + qr[m] + qi[m] + qs[m]) * dz[m];
    } else {
      p[m] = den[m] = dz[m] = 1.f;
      t[m] = qv[m] = qc[m] = qr[m] = qi[m] = qs[m] = cpm[m] = xl[m] = 0.f;
    }
  }
  const double water_before = reduce::warp::sum<W>(wpart);
  const float rain_before = v.rain[c2];
  // delz of the level above, fixed for the call.
  float dz_up[Lpl];
#pragma unroll
  for (int m = 0; m < Lpl; ++m) dz_up[m] = from_level_above<W, Lpl>(dz, m, lane);

  const int loops = minor_loops(v.dt);
  const float dtcld = minor_dt(v.dt, loops);
  int mstep_seen = 1;
  for (int loop = 0; loop < loops; ++loop) {
    float qs1[Lpl], qs2[Lpl], rh1[Lpl], rh2[Lpl], n0sf[Lpl], rs_r[Lpl], w_r[Lpl], w_s[Lpl];
    slope ss[Lpl];
    int my_steps = 1;
#pragma unroll
    for (int m = 0; m < Lpl; ++m) {
      const qsat_pair sat = qsat_water_ice(t[m], p[m]);
      qs1[m] = sat.water;
      rh1[m] = fmax_(qv[m] / qs1[m], qmin);
      qs2[m] = sat.ice;
      rh2[m] = fmax_(qv[m] / qs2[m], qmin);
      n0sf[m] = n0sfac_of(t[m]);
      const slope sr = rain_slope(qr[m], den[m]);
      ss[m] = snow_slope(qs[m], den[m], n0sf[m]);
      rs_r[m] = sr.r;
      const float denfac = denfac_of(den[m]);
      w_r[m] = valid[m] ? rain_fall_rate(sr, denfac, dz[m]) : 0.f;
      w_s[m] = valid[m] ? snow_fall_rate(ss[m], denfac, dz[m]) : 0.f;
      if (valid[m]) my_steps = max(my_steps, substeps(fmax_(w_r[m], w_s[m]), dtcld));
    }
    const int mstep = reduce::warp::max<W>(my_steps);  // reduction 1 (libreduce), over the column
    mstep_seen = max(mstep_seen, mstep);
    const float fm = static_cast<float>(mstep);
    float fall_r1 = 0.f, fall_s1 = 0.f;
    // The loop runs to the warp's max (every lane must reach the shuffles); a column with fewer steps
    // sits the extra ones out. With W = 32 the two counts are the same.
    const int mstep_warp = W == warp ? mstep : reduce::warp::max<warp>(mstep);
    for (int n = 0; n < mstep_warp; ++n) {
      const bool step = n < mstep;
      float fr[Lpl], fs[Lpl];
#pragma unroll
      for (int m = 0; m < Lpl; ++m) {
        fr[m] = den[m] * qr[m] * w_r[m] / fm;
        fs[m] = den[m] * qs[m] * w_s[m] / fm;
      }
#pragma unroll
      for (int m = 0; m < Lpl; ++m) {
        const float fr_up = from_level_above<W, Lpl>(fr, m, lane);
        const float fs_up = from_level_above<W, Lpl>(fs, m, lane);
        const int k = lane + W * m;
        if (!valid[m] || !step) continue;
        if (k == nz - 1) {
          qr[m] = fmax_(qr[m] - fr[m] * dtcld / den[m], 0.f);
          qs[m] = fmax_(qs[m] - fs[m] * dtcld / den[m], 0.f);
        } else {
          qr[m] = fmax_(qr[m] - (fr[m] - fr_up * dz_up[m] / dz[m]) * dtcld / den[m], 0.f);
          qs[m] = fmax_(qs[m] - (fs[m] - fs_up * dz_up[m] / dz[m]) * dtcld / den[m], 0.f);
        }
        snow_melt(t[m], qr[m], qs[m], p[m], den[m], cpm[m], n0sf[m], ss[m], mstep, dtcld);
      }
      if (lane == 0 && step) {
        fall_r1 = fall_r1 + fr[0];
        fall_s1 = fall_s1 + fs[0];
      }
    }
    // Ice fall: reduction 2 and its sub-steps.
    float w_i[Lpl];
    int my_steps_i = 1;
#pragma unroll
    for (int m = 0; m < Lpl; ++m) {
      w_i[m] = valid[m] ? ice_fall_rate(qi[m], den[m], ice_number(den[m], qi[m]), dz[m]) : 0.f;
      if (valid[m]) my_steps_i = max(my_steps_i, substeps(w_i[m], dtcld));
    }
    const int mstep_i = reduce::warp::max<W>(my_steps_i);
    mstep_seen = max(mstep_seen, mstep_i);
    const float fmi = static_cast<float>(mstep_i);
    float fall_i1 = 0.f;
    const int mstep_i_warp = W == warp ? mstep_i : reduce::warp::max<warp>(mstep_i);
    for (int n = 0; n < mstep_i_warp; ++n) {
      const bool step = n < mstep_i;
      float f[Lpl];
#pragma unroll
      for (int m = 0; m < Lpl; ++m) f[m] = den[m] * qi[m] * w_i[m] / fmi;
#pragma unroll
      for (int m = 0; m < Lpl; ++m) {
        const float f_up = from_level_above<W, Lpl>(f, m, lane);
        const int k = lane + W * m;
        if (!valid[m] || !step) continue;
        if (k == nz - 1) qi[m] = fmax_(qi[m] - f[m] * dtcld / den[m], 0.f);
        else qi[m] = fmax_(qi[m] - (f[m] - f_up * dz_up[m] / dz[m]) * dtcld / den[m], 0.f);
      }
      if (lane == 0 && step) fall_i1 = fall_i1 + f[0];
    }
    if (lane == 0 && store)
      surface_precipitation(fall_r1, fall_s1, fall_i1, dz[0], dtcld, v.rain[c2], v.snow[c2], v.rainncv[c2],
                            v.snowncv[c2], v.sr[c2]);
#pragma unroll
    for (int m = 0; m < Lpl; ++m) {
      if (!valid[m]) continue;
      level s{t[m], qv[m], qc[m], qr[m], qi[m], qs[m]};
      phase_changes(s, den[m], xl[m], cpm[m], rs_r[m], dtcld);
      const start_saturation sat{qs1[m], qs2[m], rh1[m], rh2[m], false};
      process_rates<false>(s, p[m], den[m], denfac_of(den[m]), xl[m], cpm[m], n0sf[m], sat, dtcld);
      condensation(s, p[m], xl[m], cpm[m], dtcld);
      t[m] = s.t; qv[m] = s.qv; qc[m] = s.qc; qr[m] = s.qr; qi[m] = s.qi; qs[m] = s.qs;
    }
  }
  wpart = 0;
#pragma unroll
  for (int m = 0; m < Lpl; ++m) {
    if (!valid[m]) continue;
    const std::int64_t x = xk[m];
    if (store) {
      v.th[x] = div_rn(t[m], v.pii[x]);
      v.qv[x] = qv[m]; v.qc[x] = qc[m]; v.qr[x] = qr[m]; v.qi[x] = qi[m]; v.qs[x] = qs[m];
    }
    wpart += static_cast<double>(den[m]) * (static_cast<double>(qv[m]) + qc[m] + qr[m] + qi[m] + qs[m]) * dz[m];
  }
  const double water_after = reduce::warp::sum<W>(wpart);
  __syncwarp();
  if (lane == 0 && store) {
    const double resid = water_before - water_after - (static_cast<double>(v.rain[c2]) - rain_before);
    v.resid[c2] = static_cast<float>(fabs(resid));
    v.mstep_max[c2] = mstep_seen;
  }
}

}  // namespace wsm5::detail
