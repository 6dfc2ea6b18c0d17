// Physical bounds of a WSM5 input domain (validate.cpp; the public entry point is
// wsm5::check_physical in wsm5.hpp). Each bound, its value and its source are in libwsm5/README.md
// ("Input validation"); the tests put a value just inside and just outside each of them.
#pragma once

namespace wsm5::bounds {

// Temperature T = th * pii [K]. The coldest air a model meets is the polar winter stratosphere near
// 180 K and the warmest surface air on record 329.9 K (Death Valley, 1913); 30 K / 20 K beyond them.
constexpr double t_min_k = 150.0, t_max_k = 350.0;
// Pressure [Pa] at any level. 100 Pa (1 hPa, ~48 km) is below the lowest model top WRF configurations
// use; 110000 Pa is above the highest sea-level pressure on record (108380 Pa, Tosontsengel 2001).
constexpr double p_min_pa = 100.0, p_max_pa = 110000.0;
// The lowest level: a model's surface lies between ~33 kPa (Everest summit, the highest terrain) and the
// sea-level record; 30000 Pa leaves a margin.
constexpr double p_surface_min_pa = 30000.0;
// Layer thickness [m]: at least 1 m (LES grids) and at most 25 km (a 2-level column spanning the
// troposphere and lower stratosphere; no real grid has thicker layers).
constexpr double delz_min_m = 1.0, delz_max_m = 25000.0;
// Hypsometric consistency between adjacent mass levels k, k+1: their distance (delz_k + delz_k+1) / 2
// against Rd Tmean / g ln(p_k / p_k+1). Virtual temperature (qv <= 0.05: 1.608 qv <= 8 %) and the
// staggering of stretched grids (mass levels not at mid-layer) move the ratio by tens of percent at
// most; the golden columns give 1.000003. Outside [2/3, 3/2] delz and p describe different columns.
constexpr double hypsometric_min = 2.0 / 3.0, hypsometric_max = 1.5;
// Density against the ideal-gas value p / (Rd T): WRF passes the dry-air density p / (Rd T (1 + qv/ep2)),
// at least 1 / (1 + 1.608 * 0.05) = 0.926 of it; the golden columns give 0.985-1.000. [0.85, 1.05].
constexpr double den_ratio_min = 0.85, den_ratio_max = 1.05;
// Exner function against (p / 1e5)^(Rd/cp): WRF computes it from p with Rd/cp = 2/7 (the golden columns
// agree to 1e-7); 1 % allows other constants' Rd/cp (0.286 instead of 2/7 moves it 0.2 % at 100 Pa).
constexpr double pii_ratio_min = 0.99, pii_ratio_max = 1.01;
// Mixing ratios [kg/kg], upper bounds: vapour 0.05 (saturation at the record 35 C dew point and
// 1000 hPa is 0.037); cloud water and ice 0.01 (observed liquid / ice contents <= ~5 g m-3, i.e.
// 0.005 kg/kg near the ground: twice that); rain and snow (WSM5's snow holds graupel) 0.02 (the
// largest precipitation contents in convective cores, ~10 g m-3: twice that).
constexpr double qv_max = 0.05, qc_max = 0.01, qr_max = 0.02, qi_max = 0.01, qs_max = 0.02;
// Lower bound of every mixing ratio: round-off of a positive-definite advection in float leaves
// negatives of a few ulp of the largest neighbouring value (ulp(0.03) = 1.9e-9): -1e-8 is ~5 ulp.
// WRF V3.1 clips qc, qr, qi, qs at the scheme's entry (max(q, 0)) and leaves qv (used only through
// max(qv, qmin) and max(qv, 0)); the scheme here does the same.
constexpr double q_roundoff = 1e-8;
// Model time step [s]: 0.01 s (the smallest LES steps) to 3600 s (the longest physics steps of global
// models; `wsm5 generate --dt` has the same limit).
constexpr double dt_min_s = 0.01, dt_max_s = 3600.0;

}  // namespace wsm5::bounds
