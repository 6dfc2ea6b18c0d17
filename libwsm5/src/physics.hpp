// WSM5 V3.1 ("classic") pointwise physics, shared by the CPU reference and the CUDA variants.
// Equations restated from the WSM5 specification of the project's shared material (WRF phys/module_mp_wsm5.F at V3.1); every
// expression keeps Fortran's left-to-right evaluation order so that float32 rounding matches
// gfortran -O2 (no FMA contraction: the including TUs are built with -ffp-contract=off / -fmad=false).
// Only sedimentation couples levels; it is NOT here: each variant owns its loop structure.
#pragma once
#include <cmath>

#include "glibc_float_math.hpp"
#include "host_device.hpp"

namespace wsm5::phys {

// ---- constants as WRF's microphysics driver passes them (module_model_constants) ------------------
constexpr float g = 9.81f;
constexpr float rd = 287.f;
constexpr float rv = 461.6f;
constexpr float cpd = 7.f * rd / 2.f;  // 1004.5
constexpr float cpv = 4.f * rv;        // 1846.4
constexpr float cliq = 4190.f;
constexpr float cice = 2106.f;
constexpr float t0c = 273.15f;
constexpr float psat = 610.78f;
constexpr float ep2 = rd / rv;
constexpr float qmin = 1.e-15f;  // WRF `epsilon`
constexpr float xls = 2.85e6f;
constexpr float xlv0 = 2.5e6f;   // the argument XLV0 receives xlv = 2.5e6
constexpr float xlf0 = 3.5e5f;
constexpr float den0 = 1.28f;
constexpr float denr = 1000.f;
constexpr float pi = 3.14159274f;  // 4 * atan(1.) in float32

// ---- scheme parameters ----------------------------------------------------------------------------
constexpr float dtcldcr = 120.f;
constexpr float n0r = 8.e6f;
constexpr float bvtr = 0.8f;
constexpr float bvts = 0.41f;
constexpr float n0s = 2.e6f;
constexpr float n0smax = 1.e11f;
constexpr float alpha = 0.12f;
constexpr float dicon = 11.9f;
constexpr float dimax = 500.e-6f;
constexpr float pfrz1 = 100.f;
constexpr float pfrz2 = 0.66f;
constexpr float qcrmin = 1.e-9f;
constexpr float xncr = 3.e8f;

// ---- wsm5init values, float32 exactly as WRF's initialisation produces them (9 significant digits,
//      so each literal round-trips to the same float). Gamma is WRF's rgmma (a 10000-factor product,
//      e.g. g4pbr = 17.817297 vs Gamma(4.8) = 17.837862), so these are hard-coded, not tgamma'd.
//      Computed once with glibc expf/powf in the Fortran expression order of wsm5init. -----------
constexpr float xlv1 = cliq - cpv;  // 2343.6
constexpr float qc0 = 5.02654817e-4f;
constexpr float qck1 = 6.77389431f;
constexpr float pvtr = 2500.06372f;
constexpr float pvts = 20.0516376f;
constexpr float pacrr = 2.48134042e10f;
constexpr float pacrc = 55442112.f;
constexpr float precr1 = 39207076.f;
constexpr float precr2 = 825853568.f;
constexpr float precs1 = 5200000.f;
constexpr float precs2 = 18681944.f;
constexpr float pidn0r = 2.51327427e10f;
constexpr float pidn0s = 628318528.f;
constexpr float roqimax = 8.12500366e-5f;
constexpr float rslopermax = 1.24999997e-5f;
constexpr float rslopesmax = 9.99999975e-6f;
constexpr float rsloperbmax = 1.19544042e-4f;
constexpr float rslopesbmax = 8.91250931e-3f;
constexpr float rsloper2max = 1.56249985e-10f;
constexpr float rslopes2max = 9.99999944e-11f;
constexpr float rsloper3max = 1.95312478e-15f;
constexpr float rslopes3max = 9.99999898e-16f;

// ---- inlined fpvs ---------------------------------------------------------------------------------
constexpr float ttp = t0c + 0.01f;
constexpr float xa = -(cpv - cliq) / rv;
constexpr float xb = xa + xlv0 / (rv * ttp);
constexpr float xai = -(cpv - cice) / rv;
constexpr float xbi = xai + xls / (rv * ttp);

// Fortran MAX/MIN on non-NaN floats (inputs are validated finite).
WSM5_HD float fmax_(float a, float b) { return a < b ? b : a; }
WSM5_HD float fmin_(float a, float b) { return b < a ? b : a; }
WSM5_HD int imax_(int a, int b) { return a < b ? b : a; }
/// Fortran NINT for the (non-negative, finite) Courant numbers: round half away from zero.
WSM5_HD int nint_(float x) { return static_cast<int>(::roundf(x)); }

/// a / b correctly rounded even where the CUDA variants are built with -prec-div=false
/// (-DWSM5_GPU_PREC_DIV_SQRT=OFF, where a plain `/` is div.full.f32, <= 2 ulp). Used where a quotient's
/// error is amplified or must round-trip: T_r = T_tp / T inside exp() (d ln e_s / d T_r = xa/T_r - xb
/// ~ -20, so 1 ulp of T_r would be ~20 ulp of q_s), q_s itself (the saturation adjustment passes its error
/// straight to qv and qc), theta = T / pii (a dry column must come back within 1 ulp) and the surface
/// precipitation. Everywhere else the quotient's <= 2-ulp error enters once, unamplified.
#if defined(__CUDA_ARCH__)
WSM5_HD float div_rn(float a, float b) { return __fdiv_rn(a, b); }
#else
WSM5_HD float div_rn(float a, float b) { return a / b; }
#endif

/// a / b for a divisor that is a normal float below 2^126 in magnitude, as each call's divisor is: the
/// validated inputs (delz in [1, 25000] m, den in [8.5e-4, 2.7] kg m-3 from p and T), the
/// minor step (>= 0.01 s / 30 loops), sub-step counts, cpm (1004.5-1846.4), the crystal number
/// (1e3-1e6), the transport terms and q_s (>= qmin, bounded by finite p - e_s), the slope quantities
/// (their branches hold q > qcrmin). Where a `/` is div.full.f32 (the CUDA variants' default,
/// -prec-div=false) it costs 9 instructions: two range tests on b and four predicated scalings, for b
/// outside that range, around MUFU.RCP(b) times a. For such b this is that product alone, bitwise the
/// same quotient; b's reciprocal is one pure operation, so the compiler can take it once for every
/// quotient by the same b. Nsight Compute, H200, CONUS, one call: the division sequences were ~18 % of
/// thread_per_column's instructions. Elsewhere (host, the IEEE build) a / b.
#if defined(__CUDA_ARCH__) && defined(WSM5_GPU_APPROX_DIV_SQRT) && WSM5_GPU_APPROX_DIV_SQRT
WSM5_HD float div_normal(float a, float b) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(b));  // MUFU.RCP alone (b is normal: nothing to flush)
  return a * r;
}
#else
WSM5_HD float div_normal(float a, float b) { return a / b; }
#endif

/// sqrt(x) for a normal x (each call says why x is one). Where sqrtf is sqrt.approx.f32 (the CUDA
/// variants' default, -prec-sqrt=false) it scales a subnormal x before MUFU.SQRT and the result after
/// (4 instructions); for a normal x that is MUFU.SQRT(x) alone, as here. Elsewhere sqrtf.
#if defined(__CUDA_ARCH__) && defined(WSM5_GPU_APPROX_DIV_SQRT) && WSM5_GPU_APPROX_DIV_SQRT
WSM5_HD float sqrt_normal(float x) {
  float r;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
#else
WSM5_HD float sqrt_normal(float x) { return ::sqrtf(x); }
#endif

/// x^b for x > 0 and a constant exponent b. The CPU reference and the host emulation use powf (V3.1's
/// `**`, which the golden match needs). The CUDA variants may opt out of CUDA's powf, whose
/// extended-precision log costs several times more (WSM5_GPU_FAST_POW, on by default), in two forms:
///  * pow_const_fast(x, b) = exp2f(b log2f(x)), for the powers evaluated per level and sub-step in the
///    sedimentation loops: the rain and snow slopes (bvtr, bvts) and the ice fall speed (diameter^1.31).
///    Its error grows with |b log2 x|: the argument carries b ulp(log2 x) (log2f, 1 ulp) +
///    ulp(b log2 x)/2 (the product), times ln 2 in the result, plus exp2f's 2 ulp: <= 14 ulp for the
///    slope^0.8 (|b log2 x| <= 13), ~20 for diameter^1.31.
///  * pow_const(x, b), for the once-per-cell rates: qc^(7/3) (autoconversion), the ice diameter^1.31 of
///    psaci, xni0^1.33 (up to ~8e8): glibc's powf itself (glibc_float_math.hpp, double arithmetic), so
///    these are the CPU reference's bits. Its domain holds: x is a normal positive float (qc > qc0, the
///    diameter >= dicon sqrt(8.5e-25) = 1.1e-11, xni0 >= 1e3) and x^b neither overflows nor underflows.
///    It replaced a split form (b (e + log2f m) in double, 2^n exp2f(t - n): <= ~4 ulp), which had taken
///    qc from 1.50x to 1.00x the CPU reference's distance from WRF and qi from 1.89x to 1.77x (H200,
///    golden columns after one call).
#if defined(__CUDA_ARCH__) && defined(WSM5_GPU_FAST_POW) && WSM5_GPU_FAST_POW
WSM5_HD float pow_const_fast(float x, float b) { return ::exp2f(b * ::log2f(x)); }
WSM5_HD float pow_const(float x, float b) { return glibc::powf(x, b); }
#else
WSM5_HD float pow_const_fast(float x, float b) { return ::powf(x, b); }
WSM5_HD float pow_const(float x, float b) { return ::powf(x, b); }
#endif

/// exp and log of the saturation vapour pressure, rounded as the CPU reference's glibc expf/logf round.
/// CUDA's expf is a 2-ulp and logf a 1-ulp function; here their error is amplified: q_s = ep2 e_s / (p -
/// e_s) carries e_s's relative error 1:1, the saturation adjustment passes q_s's error to qv and qc (up to
/// ulp(0.03 kg/kg) = 1.9e-9 each) and, through L/cp, to T, whose next q_s moves by L/(Rv T^2) = 6.5 %/K;
/// after one call that made the GPU variants 2-4x further from WRF than the reference (qc 1.45e-8 vs
/// 3.3e-9 kg/kg, th 6.1e-5 vs 3.1e-5 K). On the device (WSM5_GPU_GLIBC_QSAT, on by default) they are
/// glibc's own algorithms (glibc_float_math.hpp: double arithmetic, a 32- and a 16-entry table, rounded
/// once), so e_s has the reference's bits. Three q_s per level and minor loop, two of them at one T
/// (qsat_water_ice: one ln T_r for both).
#if defined(__CUDA_ARCH__) && defined(WSM5_GPU_GLIBC_QSAT) && WSM5_GPU_GLIBC_QSAT
WSM5_HD float exp_qsat(float x) { return glibc::expf(x); }
WSM5_HD float log_qsat(float x) { return glibc::logf(x); }
#else
WSM5_HD float exp_qsat(float x) { return ::expf(x); }
WSM5_HD float log_qsat(float x) { return ::logf(x); }
#endif

/// Saturation vapour pressure over water and over ice from T_r = T_tp / T and ln T_r.
WSM5_HD float es_water(float tr, float ln_tr) { return psat * exp_qsat(ln_tr * xa + xb * (1.f - tr)); }
WSM5_HD float es_ice(float tr, float ln_tr) { return psat * exp_qsat(ln_tr * xai + xbi * (1.f - tr)); }
/// Saturation mixing ratio from the saturation vapour pressure es at pressure p.
WSM5_HD float qsat_of_es(float es, float p) { return fmax_(div_rn(ep2 * es, p - es), qmin); }

/// Saturation mixing ratio over water (ice = false) or ice (ice = true; the water formula at T >= ttp).
WSM5_HD float qsat(float t, float p, bool ice) {
  const float tr = div_rn(ttp, t);
  const float ln_tr = log_qsat(tr);
  return qsat_of_es(ice && t < ttp ? es_ice(tr, ln_tr) : es_water(tr, ln_tr), p);
}

/// Both of a level's q_s, over water and over ice, bitwise qsat(t, p, false) and qsat(t, p, true): T_r
/// and ln T_r are taken once (one division and one double log fewer on the device, where the log is in
/// double: WSM5_GPU_CR_QSAT), and at T >= ttp the ice value is the water value. H200, CONUS, 20-call
/// medians, three runs alternated (2026-11-29): thread_per_column 0.470-0.476 ms against 0.491-0.499,
/// warp_per_column 0.736-0.746 against 0.805-0.814; the check's and the golden distances unchanged.
struct qsat_pair {
  float water, ice;
};
WSM5_HD qsat_pair qsat_water_ice(float t, float p) {
  const float tr = div_rn(ttp, t);
  const float ln_tr = log_qsat(tr);
  const float water = qsat_of_es(es_water(tr, ln_tr), p);
  if (!(t < ttp)) return {water, water};
  return {water, qsat_of_es(es_ice(tr, ln_tr), p)};
}

// ---- the loop-start saturation as process_rates reads it ---------------------------------------------
// WRF's qs1, qs2 (q_s over water and ice) and rh1, rh2 of a level, from its T and qv at the start of the
// minor loop. process_rates reads them only where a rate needs them: q_s,w and rh1 for prevp (rain), q_s,i
// and rh2 below T0 for pidep and psdep (ice, snow), q_s,i alone for pigen's test qv > q_s,i. The reference
// and warp_per_column compute all four for every level; thread_per_column only those its level will read
// (needed_start_saturation), so a level without rain, ice or snow that is surely below saturation
// (surely_subsaturated) skips the double log and exps of e_s. The values it computes are bitwise
// qsat_water_ice's and the reference's rh.

/// The fast screen's functions: on the device the SFU forms (__logf: absolute error <= 2^-21.41 on
/// [0.5, 2]; __expf: <= 2 + 1.173 |x| ulp; __fdividef: 2 ulp), on the host the libm ones.
#if defined(__CUDA_ARCH__)
WSM5_HD float screen_log(float x) { return __logf(x); }
WSM5_HD float screen_exp(float x) { return __expf(x); }
WSM5_HD float screen_div(float a, float b) { return __fdividef(a, b); }
#else
WSM5_HD float screen_log(float x) { return ::logf(x); }
WSM5_HD float screen_exp(float x) { return ::expf(x); }
WSM5_HD float screen_div(float a, float b) { return a / b; }
#endif

/// Whether max(qv, qmin) is surely below q_s at (t, p) over water (ice = false) or ice (ice = true, the
/// water value at T >= T_tp), decided from a fast estimate q_f of q_s: true only where
/// max(qv, qmin) < 0.99 q_f and e_s < p / 2. Bound, device (the host's libm is closer): T_r = T_tp / T
/// in [0.5, 2] (T from 137 to 546 K), so ln T_r is within 2^-21.41 = 3.6e-7; T_r within 2 ulp (2.4e-7
/// relative) moves the exponent a = ln T_r xa + xb (1 - T_r) by |xa / T_r - xb| T_r 2.4e-7 <= 1.2e-5;
/// xa = 5.08 takes ln T_r's error to 1.8e-6; the float products and sums of a (|a| <= 25) round apart
/// by <= 4 ulp of [16, 32) = 7.6e-6; __expf adds <= 2 + 1.173 x 25 ulp = 3.7e-6. So e_s is within
/// 2.5e-5 relative of the exact path's; with e_s < p / 2, p - e_s within 2.5e-5 + 1 ulp, and the quotient's 2 ulp:
/// q_f within 6e-5 of q_s (q_s's clamp at qmin only raises q_s). The margin, 1e-2, is 160x that: a
/// level the screen passes has max(qv, qmin) - q_s < 0 exactly as the exact path computes it.
WSM5_HD bool surely_subsaturated(float t, float p, float qv, bool ice) {
  const float tr = screen_div(ttp, t);
  const float ln_tr = screen_log(tr);
  const float a = ice && t < ttp ? ln_tr * xai + xbi * (1.f - tr) : ln_tr * xa + xb * (1.f - tr);
  const float es = psat * screen_exp(a);
  if (!(es < 0.5f * p)) return false;
  return fmax_(qv, qmin) < 0.99f * screen_div(ep2 * es, p - es);
}

struct start_saturation {
  float qs1, qs2, rh1, rh2;
  bool below_ice;  ///< qv surely below q_s,i (qs2 then unset): pigen's test is not evaluated
};

/// sqrt(rho0/rho) as WRF V3.1 computes it (VREC then VSQRT: 1/rho first, then * rho0).
WSM5_HD float denfac_of(float den) { return sqrt_normal(div_normal(1.f, den) * den0); }  // den0 / den in [0.48, 1506]
WSM5_HD float cpmcal(float qv) { return cpd * (1.f - fmax_(qv, qmin)) + fmax_(qv, qmin) * cpv; }
WSM5_HD float xlcal(float t) { return xlv0 - xlv1 * (t - t0c); }
WSM5_HD float n0sfac_of(float t) { return fmax_(fmin_(::expf(alpha * (t0c - t)), n0smax / n0s), 1.f); }

/// Slope quantities of the rain or snow size distribution: rslope = 1/lambda and its powers.
struct slope {
  float r, rb, r2, r3;
};
WSM5_HD slope rain_slope(float qr, float den) {
  if (qr <= qcrmin) return {rslopermax, rsloperbmax, rsloper2max, rsloper3max};
  slope s;
  // 1 / sqrtf stays a `/`: the compiler makes it one rsqrt (which a reciprocal of the root would not round alike).
  s.r = 1.f / ::sqrtf(sqrt_normal(div_normal(pidn0r, qr * den)));  // qr > qcrmin: the quotient <= 3e22
  s.rb = pow_const_fast(s.r, bvtr);  // V3.1: rslope**bvtr (the accel file's exp(log) form rounds differently)
  s.r2 = s.r * s.r;
  s.r3 = s.r2 * s.r;
  return s;
}
WSM5_HD slope snow_slope(float qs, float den, float n0sfac) {
  if (qs <= qcrmin) return {rslopesmax, rslopesbmax, rslopes2max, rslopes3max};
  slope s;
  s.r = 1.f / ::sqrtf(sqrt_normal(div_normal(pidn0s * n0sfac, qs * den)));  // as rain_slope; qs > qcrmin: <= 4e25
  s.rb = pow_const_fast(s.r, bvts);
  s.r2 = s.r * s.r;
  s.r3 = s.r2 * s.r;
  return s;
}
WSM5_HD float coeres_of(const slope& s) { return s.r2 * sqrt_normal(s.r * s.rb); }  // r, rb: slopes of q > qcrmin or their caps

/// Ice crystal number concentration [m-3] (HDC 5c).
WSM5_HD float ice_number(float den, float qi) {
  float temp = den * fmax_(qi, qmin);
  temp = ::sqrtf(::sqrtf(temp * temp * temp));
  return fmin_(fmax_(5.38e7f * temp, 1.e3f), 1.e6f);
}

// Transport coefficients (WRF statement functions diffus, viscos, xka, diffac, venfac; the *_of forms
// take diffus and viscos computed once). The divisions of diffus and viscos (the vapour diffusivity and
// the kinematic viscosity, inputs of xka, diffac and venfac, hence of every deposition and evaporation
// rate) are IEEE on the device (div_rn). Measured on an
// H200, golden columns after one call, GPU's max |x - WRF| over the CPU reference's: qi 1.77x with them
// approximate, 1.33x with them IEEE (or with diffus's and diffac's), every other field unchanged; diffus's
// alone, or venfac's, left qi at 1.77x. Cost: thread_per_column +2 % (0.479-0.483 against 0.468-0.476
// ms on CONUS), warp_per_column none.
WSM5_HD float diffus(float t, float p) { return div_rn(8.794e-5f * ::expf(::logf(t) * 1.81f), p); }
WSM5_HD float viscos(float t, float den) { return div_rn(div_rn(1.496e-6f * (t * sqrt_normal(t)), t + 120.f), den); }  // T > 0
WSM5_HD float xka_of(float vis, float den) { return 1.414e3f * vis * den; }
WSM5_HD float xka(float t, float den) { return xka_of(viscos(t, den), den); }
/// diffac with latent heat xl and saturation mixing ratio qs, from conduction = xka rv T^2 and the
/// diffusivity dif.
WSM5_HD float diffac_of(float xl, float den, float qs, float conduction, float dif) {
  return div_normal(den * xl * xl, conduction) + div_normal(1.f, qs * dif);
}
/// venfac from the kinematic viscosity vis and the diffusivity dif.
WSM5_HD float venfac_of(float vis, float dif, float den) {
  // vis / dif, den0 / den: positive and bounded (T, p, den validated); den0 / den in [0.48, 1506]
  // (x / sqrtf(vis) stays a `/`: the compiler makes it x times rsqrt(vis).)
  return ::expf(::logf(div_normal(vis, dif)) * 0.3333333f) / ::sqrtf(vis) * sqrt_normal(sqrt_normal(div_normal(den0, den)));
}
WSM5_HD float venfac(float p, float t, float den) { return venfac_of(viscos(t, den), diffus(t, p), den); }
/// process_rates' transport terms at one (T, p, rho), each only where asked for: diffac over water
/// (work1_w) and over ice (work1_i), venfac (work2); diffus, viscos and xka once for all three.
struct transport_terms {
  float work1_w, work1_i, work2;
};
WSM5_HD transport_terms transport_of(float xl, float p, float t, float den, float qs1, float qs2, bool water, bool ice,
                                     bool ventilation) {
  transport_terms w{0.f, 0.f, 0.f};
  if (!(water || ice || ventilation)) return w;
  const float dif = diffus(t, p), vis = viscos(t, den);
  const float conduction = xka_of(vis, den) * rv * t * t;
  if (water) w.work1_w = diffac_of(xl, den, qs1, conduction, dif);
  if (ice) w.work1_i = diffac_of(xls, den, qs2, conduction, dif);
  if (ventilation) w.work2 = venfac_of(vis, dif, den);
  return w;
}

/// Fall rates w = V / dz [s-1] of rain and snow (mass-weighted speeds from the slopes).
WSM5_HD float rain_fall_rate(const slope& s, float denfac, float delz) { return div_normal(pvtr * s.rb * denfac, delz); }
WSM5_HD float snow_fall_rate(const slope& s, float denfac, float delz) { return div_normal(pvts * s.rb * denfac, delz); }
/// Ice fall rate [s-1]; 0 where there is no ice.
WSM5_HD float ice_fall_rate(float qi, float den, float xni, float delz) {
  if (qi <= 0.f) return 0.f;
  const float xmi = div_normal(den * qi, xni);
  const float diameter = fmax_(fmin_(dicon * ::sqrtf(xmi), dimax), 1.e-25f);
  return div_normal(1.49e4f * pow_const_fast(diameter, 1.31f), delz);  // per level and sub-step: the fast form
}
/// The sub-step count of one level: max(nint(w dt + 0.5), 1) (an integer Courant number n gives n + 1).
WSM5_HD int substeps(float w, float dtcld) {
  const int n = nint_(w * dtcld + .5f);
  return n > 1 ? n : 1;
}

/// psmlt inside sedimentation sub-step (T > T0 and qs > 0): snow -> rain, V3.1 (no 1/rho factor).
/// Slopes and n0sfac are those of the start of sedimentation; t is current.
WSM5_HD void snow_melt(float& t, float& qr, float& qs, float p, float den, float cpm, float n0sfac,
                       const slope& ss, int mstep, float dtcld) {
  if (!(t > t0c && qs > 0.f)) return;
  const float work2 = venfac(p, t, den);
  const float coeres = coeres_of(ss);
  float psmlt = xka(t, den) / xlf0 * (t0c - t) * pi / 2.f * n0sfac * (precs1 * ss.r2 + precs2 * work2 * coeres);
  const float fm = static_cast<float>(mstep);
  psmlt = fmin_(fmax_(div_normal(psmlt * dtcld, fm), div_normal(-qs, fm)), 0.f);
  qs = qs + psmlt;
  qr = qr - psmlt;
  t = t + div_normal(xlf0, cpm) * psmlt;
}

/// One level's prognostic state during a call.
struct level {
  float t, qv, qc, qr, qi, qs;
};

/// The values process_rates will read for a level whose state after sedimentation and phase changes is
/// `s` (t, p, qv: its loop-start T, pressure and qv); the others 0.
WSM5_HD start_saturation needed_start_saturation(float t, float p, float qv, const level& s) {
  start_saturation sat{0.f, 0.f, 0.f, 0.f, false};
  const bool water = s.qr > 0.f;
  const bool cold = t0c - s.t > 0.f;  // process_rates' supcol > 0
  if (cold && !(s.qi > 0.f || s.qs > 0.f)) sat.below_ice = surely_subsaturated(t, p, qv, true);
  const bool ice = cold && !sat.below_ice;
  if (!water && !ice) return sat;
  const float tr = div_rn(ttp, t);
  const float ln_tr = log_qsat(tr);
  const float qs_water = water || !(t < ttp) ? qsat_of_es(es_water(tr, ln_tr), p) : 0.f;
  if (water) {
    sat.qs1 = qs_water;
    sat.rh1 = fmax_(div_normal(qv, qs_water), qmin);
  }
  if (ice) {
    sat.qs2 = t < ttp ? qsat_of_es(es_ice(tr, ln_tr), p) : qs_water;
    sat.rh2 = fmax_(div_normal(qv, sat.qs2), qmin);
  }
  return sat;
}

/// 4.5: instantaneous phase changes (pimlt, pihmf, pihtf, psfrz), in this order. rslope_r is the
/// pre-sedimentation rain slope (classic quirk).
WSM5_HD void phase_changes(level& s, float den, float xl, float cpm, float rslope_r, float dtcld) {
  const float supcol = t0c - s.t;
  float xlf = xls - xl;
  if (supcol < 0.f) xlf = xlf0;
  if (supcol < 0.f && s.qi > 0.f) {  // pimlt
    s.qc = s.qc + s.qi;
    s.t = s.t - div_normal(xlf, cpm) * s.qi;
    s.qi = 0.f;
  }
  if (supcol > 40.f && s.qc > 0.f) {  // pihmf
    s.qi = s.qi + s.qc;
    s.t = s.t + div_normal(xlf, cpm) * s.qc;
    s.qc = 0.f;
  }
  if (supcol > 0.f && s.qc > 0.f) {  // pihtf
    const float supcolt = fmin_(supcol, 50.f);
    const float pfrzdtc =
        fmin_(pfrz1 * (::expf(pfrz2 * supcolt) - 1.f) * den / denr / xncr * s.qc * s.qc * dtcld, s.qc);
    s.qi = s.qi + pfrzdtc;
    s.t = s.t + div_normal(xlf, cpm) * pfrzdtc;
    s.qc = s.qc - pfrzdtc;
  }
  if (supcol > 0.f && s.qr > 0.f) {  // psfrz
    const float supcolt = fmin_(supcol, 50.f);
    const float r3 = rslope_r * rslope_r * rslope_r;
    const float temp = r3 * r3 * rslope_r;
    const float pfrzdtr = fmin_(div_normal(20.f * (pi * pi) * pfrz1 * n0r * denr, den) * (::expf(pfrz2 * supcolt) - 1.f) *
                                    temp * dtcld,
                                s.qr);
    s.qs = s.qs + pfrzdtr;
    s.t = s.t + div_normal(xlf, cpm) * pfrzdtr;
    s.qr = s.qr - pfrzdtr;
  }
}

/// 4.6-4.9: refreshed slopes, warm and cold process rates, the mass limiter and the update. `sat` holds
/// qs1/qs2 and rh1/rh2 of the start of the minor loop (classic quirk); n0sfac is that of sedimentation
/// (read only where there is snow). OnlyWhereRead (thread_per_column): the transport terms are evaluated
/// only where a rate reads them (diffac over water: prevp; over ice: pidep, psdep; venfac: prevp, psdep),
/// so a level without rain, ice or snow skips them; nothing else reads them, so the values are the same.
/// warp_per_column (its lanes are levels, whose needs differ) and the reference evaluate all three.
template <bool OnlyWhereRead>
WSM5_HD void process_rates(level& s, float p, float den, float denfac, float xl, float cpm, float n0sfac,
                           const start_saturation& sat, float dtcld) {
  // 4.6 refresh
  const slope sr = rain_slope(s.qr, den);
  const slope ss = snow_slope(s.qs, den, n0sfac);
  const bool cold = t0c - s.t > 0.f;  // supcol > 0 below
  const bool cold_deposition = cold && (s.qi > 0.f || s.qs > 0.f);
  const bool all = !OnlyWhereRead;
  const transport_terms tt = transport_of(xl, p, s.t, den, sat.qs1, sat.qs2, all || s.qr > 0.f, all || cold_deposition,
                                          all || s.qr > 0.f || (cold && s.qs > 0.f));
  const float work1_w = tt.work1_w, work1_i = tt.work1_i, work2 = tt.work2;

  float praut = 0.f, pracw = 0.f, prevp = 0.f, psaci = 0.f, psacw = 0.f, pidep = 0.f, psdep = 0.f,
        pigen = 0.f, psaut = 0.f, psevp = 0.f;
  // 4.7 warm rain
  {
    if (s.qc > qc0) {
      praut = qck1 * pow_const(s.qc, 7.f / 3.f);
      praut = fmin_(praut, div_normal(s.qc, dtcld));
    }
    if (s.qr > qcrmin && s.qc > qmin) pracw = fmin_(pacrr * sr.r3 * sr.rb * s.qc * denfac, div_normal(s.qc, dtcld));
    if (s.qr > 0.f) {
      const float supsat = fmax_(s.qv, qmin) - sat.qs1;
      const float satdt = div_normal(supsat, dtcld);
      const float coeres = coeres_of(sr);
      prevp = div_normal((sat.rh1 - 1.f) * (precr1 * sr.r2 + precr2 * work2 * coeres), work1_w);
      if (prevp < 0.f) {
        prevp = fmax_(prevp, div_normal(-s.qr, dtcld));
        prevp = fmax_(prevp, satdt / 2.f);
      } else {
        prevp = fmin_(prevp, satdt / 2.f);
      }
    }
  }
  // 4.8 cold processes
  {
    const float supcol = t0c - s.t;
    int ifsat = 0;
    if (supcol > 0.f && s.qs > qcrmin && s.qi > qmin) {  // psaci
      const float xni = ice_number(den, s.qi);
      const float eacrs = ::expf(0.07f * (-supcol));
      const float xmi = div_normal(den * s.qi, xni);
      const float diameter = fmin_(dicon * sqrt_normal(xmi), dimax);  // qi > qmin: xmi >= 8.5e-25
      const float vt2i = 1.49e4f * pow_const(diameter, 1.31f);
      const float vt2s = pvts * ss.rb * denfac;
      const float acrfac = 2.f * ss.r3 + 2.f * diameter * ss.r2 + diameter * diameter * ss.r;
      psaci = pi * s.qi * eacrs * n0s * n0sfac * ::fabsf(vt2s - vt2i) * acrfac / 4.f;
    }
    if (s.qs > qcrmin && s.qc > qmin)  // psacw
      psacw = fmin_(pacrc * n0sfac * ss.r3 * ss.rb * s.qc * denfac, div_normal(s.qc, dtcld));
    // Below T0 with ice or snow (pidep, psdep), or where pigen's qv > q_s,i may hold: a dry level
    // surely below ice saturation (below_ice) has no deposition rate.
    if (supcol > 0.f && (cold_deposition || !sat.below_ice)) {
      const float supsat = fmax_(s.qv, qmin) - sat.qs2;
      const float satdt = div_normal(supsat, dtcld);
      if (s.qi > 0.f && ifsat != 1) {  // pidep
        const float xni = ice_number(den, s.qi);
        const float xmi = div_normal(den * s.qi, xni);
        const float diameter = dicon * ::sqrtf(xmi);
        pidep = div_normal(4.f * diameter * xni * (sat.rh2 - 1.f), work1_i);
        const float supice = satdt - prevp;
        if (pidep < 0.f) {
          pidep = fmax_(fmax_(pidep, satdt / 2.f), supice);
          pidep = fmax_(pidep, div_normal(-s.qi, dtcld));
        } else {
          pidep = fmin_(fmin_(pidep, satdt / 2.f), supice);
        }
        if (::fabsf(prevp + pidep) >= ::fabsf(satdt)) ifsat = 1;
      }
      if (s.qs > 0.f && ifsat != 1) {  // psdep
        const float coeres = coeres_of(ss);
        psdep = div_normal((sat.rh2 - 1.f) * n0sfac * (precs1 * ss.r2 + precs2 * work2 * coeres), work1_i);
        const float supice = satdt - prevp - pidep;
        if (psdep < 0.f) {
          psdep = fmax_(psdep, div_normal(-s.qs, dtcld));
          psdep = fmax_(fmax_(psdep, satdt / 2.f), supice);
        } else {
          psdep = fmin_(fmin_(psdep, satdt / 2.f), supice);
        }
        if (::fabsf(prevp + pidep + psdep) >= ::fabsf(satdt)) ifsat = 1;
      }
      if (supsat > 0.f && ifsat != 1) {  // pigen
        const float supice = satdt - prevp - pidep - psdep;
        const float xni0 = 1.e3f * ::expf(0.1f * supcol);
        const float roqi0 = 4.92e-11f * pow_const(xni0, 1.33f);
        pigen = fmax_(0.f, div_normal(div_normal(roqi0, den) - fmax_(s.qi, 0.f), dtcld));
        pigen = fmin_(fmin_(pigen, satdt), supice);
      }
    }
    if (supcol > 0.f && s.qi > 0.f) {  // psaut
      const float qimax = div_normal(roqimax, den);
      psaut = fmax_(0.f, div_normal(s.qi - qimax, dtcld));
    }
    if (supcol < 0.f) {  // psevp
      // WRF: if (qs > 0 && rh1 < 1) psevp = psdep * work1_i / work1_w. psdep is only set below T0, so
      // that is +0 (work1_i and work1_w are finite and positive) and psevp stays +0 either way; not
      // evaluated, since it would need q_s,w and both diffacs on every warm level with snow.
      psevp = fmin_(fmax_(psevp, div_normal(-s.qs, dtcld)), 0.f);
    }
  }
  // 4.9 limiter and update (sequential scalings)
  if (s.t <= t0c) {
    float value = fmax_(qmin, s.qc);
    float source = (praut + pracw + psacw) * dtcld;
    if (source > value) {
      const float factor = value / source;
      praut = praut * factor; pracw = pracw * factor; psacw = psacw * factor;
    }
    value = fmax_(qmin, s.qi);
    source = (psaut + psaci - pigen - pidep) * dtcld;
    if (source > value) {
      const float factor = value / source;
      psaut = psaut * factor; psaci = psaci * factor; pigen = pigen * factor; pidep = pidep * factor;
    }
    value = fmax_(qmin, s.qr);
    source = (-praut - pracw - prevp) * dtcld;
    if (source > value) {
      const float factor = value / source;
      praut = praut * factor; pracw = pracw * factor; prevp = prevp * factor;
    }
    value = fmax_(qmin, s.qs);
    source = (-psdep - psaut - psaci - psacw) * dtcld;
    if (source > value) {
      const float factor = value / source;
      psdep = psdep * factor; psaut = psaut * factor; psaci = psaci * factor; psacw = psacw * factor;
    }
    const float work2q = -(prevp + psdep + pigen + pidep);
    s.qv = s.qv + work2q * dtcld;
    s.qc = fmax_(s.qc - (praut + pracw + psacw) * dtcld, 0.f);
    s.qr = fmax_(s.qr + (praut + pracw + prevp) * dtcld, 0.f);
    s.qi = fmax_(s.qi - (psaut + psaci - pigen - pidep) * dtcld, 0.f);
    s.qs = fmax_(s.qs + (psdep + psaut + psaci + psacw) * dtcld, 0.f);
    const float xlf = xls - xl;
    const float xlwork2 = -xls * (psdep + pidep + pigen) - xl * prevp - xlf * psacw;
    s.t = s.t - div_normal(xlwork2, cpm) * dtcld;
  } else {
    float value = fmax_(qmin, s.qc);
    float source = (praut + pracw + psacw) * dtcld;
    if (source > value) {
      const float factor = value / source;
      praut = praut * factor; pracw = pracw * factor; psacw = psacw * factor;
    }
    value = fmax_(qmin, s.qr);
    source = (-praut - pracw - prevp - psacw) * dtcld;
    if (source > value) {
      const float factor = value / source;
      praut = praut * factor; pracw = pracw * factor; prevp = prevp * factor; psacw = psacw * factor;
    }
    value = fmax_(qcrmin, s.qs);
    source = (-psevp) * dtcld;
    if (source > value) {
      const float factor = value / source;
      psevp = psevp * factor;
    }
    const float work2q = -(prevp + psevp);
    s.qv = s.qv + work2q * dtcld;
    s.qc = fmax_(s.qc - (praut + pracw + psacw) * dtcld, 0.f);
    s.qr = fmax_(s.qr + (praut + pracw + prevp + psacw) * dtcld, 0.f);
    s.qs = fmax_(s.qs + psevp * dtcld, 0.f);
    const float xlwork2 = -xl * (prevp + psevp);
    s.t = s.t - div_normal(xlwork2, cpm) * dtcld;
  }
}

/// 4.10-4.11: saturation adjustment with q_s,w from the current T, then tiny qc, qi set to zero.
/// Screen (thread_per_column): a level without cloud water that is surely below water saturation
/// (surely_subsaturated) skips q_s,w: there work1 < 0 makes pcond +0 and, without qc, nothing
/// evaporates, so qv and T keep their bits and qc (+0 or -0) becomes +0, as below.
template <bool Screen = false>
WSM5_HD void condensation(level& s, float p, float xl, float cpm, float dtcld) {
  if (Screen && !(s.qc > 0.f) && surely_subsaturated(s.t, p, s.qv, false)) {
    s.qc = 0.f;
    if (s.qi <= qmin) s.qi = 0.f;
    return;
  }
  const float qs1 = qsat(s.t, p, false);
  // IEEE divisions (div_rn): work1 is the condensed amount itself, moved 1:1 into qv and qc.
  const float work1 = div_rn(fmax_(s.qv, qmin) - qs1, 1.f + div_rn(div_rn(xl * xl, rv * cpm) * qs1, s.t * s.t));
  float pcond = fmin_(fmax_(div_rn(work1, dtcld), 0.f), div_rn(fmax_(s.qv, 0.f), dtcld));
  if (s.qc > 0.f && work1 < 0.f) pcond = div_rn(fmax_(work1, -s.qc), dtcld);
  s.qv = s.qv - pcond * dtcld;
  s.qc = fmax_(s.qc + pcond * dtcld, 0.f);
  s.t = s.t + div_normal(pcond * xl, cpm) * dtcld;
  if (s.qc <= qmin) s.qc = 0.f;
  if (s.qi <= qmin) s.qi = 0.f;
}

/// Surface precipitation of one minor loop [mm] from the summed surface fluxes (kg m-3 s-1).
WSM5_HD float precip_mm(float fallsum, float delz1, float dtcld) { return div_rn(fallsum * delz1, denr) * dtcld * 1000.f; }

/// Surface precipitation of one minor loop from the lowest level's fluxes (rain, snow, ice), WRF V3.1
/// classic: rainncv, snowncv and sr are reset in every minor loop; rain and snow accumulate. Shared by the
/// GPU variants (the CPU reference keeps WRF's loop over the row's columns).
WSM5_HD void surface_precipitation(float fall_r1, float fall_s1, float fall_i1, float dz1, float dtcld, float& rain,
                                   float& snow, float& rainncv, float& snowncv, float& sr) {
  const float fallsum = fall_r1 + fall_s1 + fall_i1;
  const float fallsum_qsi = fall_s1 + fall_i1;
  float rncv = 0.f, sncv = 0.f, srv = 0.f;
  if (fallsum > 0.f) {
    rncv = precip_mm(fallsum, dz1, dtcld);
    rain = precip_mm(fallsum, dz1, dtcld) + rain;
  }
  if (fallsum_qsi > 0.f) {
    sncv = precip_mm(fallsum_qsi, dz1, dtcld);
    snow = precip_mm(fallsum_qsi, dz1, dtcld) + snow;
  }
  if (fallsum > 0.f) srv = div_rn(precip_mm(fallsum_qsi, dz1, dtcld), rncv + 1.e-12f);
  rainncv = rncv;
  snowncv = sncv;
  sr = srv;
}

/// Minor time step: loops = max(nint(delt/120), 1), dtcld = delt/loops (dtcld = delt if delt <= 120).
WSM5_HD int minor_loops(float delt) {
  const int n = nint_(delt / dtcldcr);
  return n > 1 ? n : 1;
}
WSM5_HD float minor_dt(float delt, int loops) { return delt <= dtcldcr ? delt : delt / static_cast<float>(loops); }

}  // namespace wsm5::phys
