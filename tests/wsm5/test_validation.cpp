// libwsm5: physical input validation (each bound rejects a value just outside and accepts one just
// inside), non-finite detection, and the --check comparison on randomized soundings (tests/wsm5/
// soundings.hpp): it passes on valid results and a perturbed field trips it. GPU: the variants against
// the CPU reference on the soundings, and their distance from WRF against the reference's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <cstdlib>
#include <iomanip>
#include <sstream>
#include <tuple>
#include <utility>
#include <limits>
#include <string>
#include <vector>

#include "gpukit_paths.hpp"
#include "soundings.hpp"
#include "test_support.hpp"
#include "wsm5/wsm5.hpp"

namespace {

constexpr double rd = 287.0, grav = 9.81;

/// A hand-made column of len(p) levels at temperatures t (K), everything else derived consistently:
/// den = p / (Rd T), pii = (p / 1e5)^(2/7), delz from the hypsometric distances (delz_0 = d_0,
/// delz_k+1 = 2 d_k - delz_k), dry (qv 1e-4 kg/kg).
wsm5::domain column(const std::vector<double>& p, const std::vector<double>& t) {
  wsm5::domain d;
  const auto nz = static_cast<std::int64_t>(p.size());
  d.resize(1, 1, nz);
  d.dt = 60.f;
  d.delz[0] = 100.f;  // nz = 1
  for (std::int64_t k = 0; k + 1 < nz; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    const double dist = rd * 0.5 * (t[kk] + t[kk + 1]) / grav * std::log(p[kk] / p[kk + 1]);
    if (k == 0) d.delz[0] = static_cast<float>(dist);
    d.delz[kk + 1] = static_cast<float>(2 * dist - d.delz[kk]);
  }
  for (std::int64_t k = 0; k < nz; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    const double pii = std::pow(p[kk] / 1e5, 2.0 / 7.0);
    d.p[kk] = static_cast<float>(p[kk]);
    d.den[kk] = static_cast<float>(p[kk] / (rd * t[kk]));
    d.pii[kk] = static_cast<float>(pii);
    d.th[kk] = static_cast<float>(t[kk] / pii);
    d.qv[kk] = 1e-4f;
  }
  return d;
}
wsm5::domain column2(double p0, double p1, double t) { return column({p0, p1}, {t, t}); }

/// Writes d to a temporary HDF5 file and returns what read_hdf5 refuses it with (fails the test if accepted).
std::optional<wsm5::input_error> refusal_on_reading(const wsm5::domain& d, const std::string& name) {
  const std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/test_wsm5_" + name;
  wsm5::write_hdf5(d, path, false);
  try {
    (void)wsm5::read_hdf5(path);
  } catch (const wsm5::input_error& e) {
    std::remove(path.c_str());
    return e;
  }
  std::remove(path.c_str());
  BOOST_ERROR(name << ": accepted");
  return std::nullopt;
}

std::string num(double v) {
  std::ostringstream s;
  s << std::setprecision(9) << v;
  return s.str();
}

/// The domain passes, or check_physical names `field`.
void expect_ok(const wsm5::domain& d, const std::string& what) {
  const auto p = wsm5::check_physical(d);
  BOOST_TEST(!p.has_value(), what << ": rejected: " << (p ? wsm5::to_string(*p) : ""));
}
void expect_rejected(const wsm5::domain& d, const std::string& field, const std::string& what) {
  const auto p = wsm5::check_physical(d);
  BOOST_TEST(p.has_value(), what << ": accepted");  // not REQUIRE: every bound is checked on its own
  if (p) BOOST_TEST(p->field == field, what << ": " << wsm5::to_string(*p));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(wsm5_validation)

CPU_TEST_CASE(bundled_and_generated_inputs_are_valid) {
  expect_ok(wsm5::read_columns_text(std::string(gpukit::data_dir) + "/wsm5/columns.txt"), "golden columns");
  for (std::int64_t nz : {2, 10, 35, 64, 200}) expect_ok(wsm5::generate(9, 3, nz, 5), "generate nz " + std::to_string(nz));
  for (std::uint64_t seed = 1; seed <= 40; ++seed) expect_ok(test_wsm5::random_soundings(10, seed), "soundings seed " + std::to_string(seed));
}

CPU_TEST_CASE(each_bound_rejects_just_outside_and_accepts_just_inside) {
  // temperature [150, 350] K
  expect_ok(column2(1e5, 9e4, 150.01), "T 150.01");
  expect_rejected(column2(1e5, 9e4, 149.99), "th", "T 149.99");
  expect_ok(column2(1e5, 9e4, 349.99), "T 349.99");
  expect_rejected(column2(1e5, 9e4, 350.01), "th", "T 350.01");
  // lowest level >= 30000 Pa, any level <= 110000 and >= 100 Pa
  expect_ok(column2(30000.5, 20000, 250), "p0 30000.5");
  expect_rejected(column2(29999.5, 20000, 250), "p", "p0 29999.5");
  expect_ok(column2(109999, 90000, 290), "p0 109999");
  expect_rejected(column2(110001, 90000, 290), "p", "p0 110001");
  expect_ok(column({30000, 1000, 100.01}, {200, 200, 200}), "top 100.01 Pa");
  expect_rejected(column({30000, 1000, 99.99}, {200, 200, 200}), "p", "top 99.99 Pa");
  // pressure falls with height (equal pressures: rejected as not falling)
  {
    wsm5::domain d = column2(90000, 89000, 280);
    d.p[1] = d.p[0];
    expect_rejected(d, "p", "equal pressures");
  }
  // layer thickness [1, 25000] m: a 2-level column whose hypsometric distance is d has delz = d
  const double h = rd * 280 / grav;  // scale height at 280 K
  expect_ok(column2(90000, 90000 * std::exp(-1.01 / h), 280), "delz 1.01 m");
  expect_rejected(column2(90000, 90000 * std::exp(-0.99 / h), 280), "delz", "delz 0.99 m");
  expect_ok(column2(90000, 90000 * std::exp(-24990 / h), 280), "delz 24990 m");
  expect_rejected(column2(90000, 90000 * std::exp(-25010 / h), 280), "delz", "delz 25010 m");
  // hypsometric ratio [2/3, 3/2]
  for (const auto& [scale, ok] : {std::pair{1.499, true}, std::pair{1.501, false}, std::pair{0.6668, true}, std::pair{0.6665, false}}) {
    wsm5::domain d = column2(90000, 80000, 280);
    for (float& z : d.delz) z = static_cast<float>(z * scale);
    if (ok) expect_ok(d, "hypsometric x" + num(scale));
    else expect_rejected(d, "delz", "hypsometric x" + num(scale));
  }
  // density [0.85, 1.05] of p / (Rd T); Exner [0.99, 1.01] of (p / 1e5)^(2/7)
  for (const auto& [name, lo, hi] : {std::tuple{"den", 0.85, 1.05}, std::tuple{"pii", 0.99, 1.01}}) {
    for (const auto& [factor, ok] : {std::pair{lo * 1.0002, true}, std::pair{lo * 0.9998, false}, std::pair{hi * 0.9998, true},
                                     std::pair{hi * 1.0002, false}}) {
      wsm5::domain d = column2(90000, 80000, 280);
      float& v = wsm5::field(d, name)[1];
      if (std::string(name) == "pii") d.th[1] = static_cast<float>(d.th[1] * v / (v * factor));  // keep T
      v = static_cast<float>(v * factor);
      if (ok) expect_ok(d, std::string(name) + " x" + num(factor));
      else expect_rejected(d, name, std::string(name) + " x" + num(factor));
    }
  }
  // mixing ratios [-1e-8, max]
  for (const auto& [name, max] : {std::pair{"qv", 0.05}, std::pair{"qc", 0.01}, std::pair{"qr", 0.02}, std::pair{"qi", 0.01},
                                  std::pair{"qs", 0.02}}) {
    for (const auto& [v, ok] : {std::pair{max * 0.999, true}, std::pair{max * 1.001, false}, std::pair{-0.99e-8, true},
                                std::pair{-1.01e-8, false}}) {
      wsm5::domain d = column2(90000, 80000, 280);
      wsm5::field(d, name)[0] = static_cast<float>(v);
      if (std::string(name) == "qv") d.den[0] = static_cast<float>(d.den[0] / (1.0 + 1.608 * std::max(v, 0.0)));
      if (ok) expect_ok(d, std::string(name) + " = " + num(v));
      else expect_rejected(d, name, std::string(name) + " = " + num(v));
    }
  }
  // dt [0.01, 3600] s, columns >= 1, accumulations >= 0
  for (const auto& [dt, ok] : {std::pair{0.0101f, true}, std::pair{0.0099f, false}, std::pair{3599.9f, true}, std::pair{3600.1f, false}}) {
    wsm5::domain d = column2(90000, 80000, 280);
    d.dt = dt;
    if (ok) expect_ok(d, "dt " + num(dt));
    else expect_rejected(d, "dt", "dt " + num(dt));
  }
  {
    wsm5::domain d;
    d.resize(0, 1, 35);
    d.dt = 60.f;
    expect_rejected(d, "columns", "zero columns");
  }
  {
    wsm5::domain d = column2(90000, 80000, 280);
    d.rain[0] = 0.f;
    expect_ok(d, "rain 0");
    d.snow[0] = -1e-6f;
    expect_rejected(d, "snow", "snow -1e-6");
  }
}

CPU_TEST_CASE(reader_refuses_with_file_column_level_field_value_and_range) {
  wsm5::domain d = wsm5::generate(5, 2, 35, 1);
  d.qv[static_cast<std::size_t>(d.at(3, 7, 1))] = 0.9f;
  const auto e = refusal_on_reading(d, "qv09.h5");
  BOOST_TEST_REQUIRE(e.has_value());
  const std::string m = e->what();
  for (const std::string& part : std::vector<std::string>{"test_wsm5_qv09.h5: ", "column (i, j) = (3, 1)", "level k = 7", "qv", "0.9", "[-1e-08, 0.05]"})
    BOOST_TEST(m.find(part) != std::string::npos, "'" << m << "' lacks '" << part << "'");
  BOOST_TEST(e->problem().i == 3);
  BOOST_TEST(e->problem().j == 1);
  BOOST_TEST(e->problem().level == 7);
  BOOST_TEST(e->problem().field == "qv");
}

CPU_TEST_CASE(reader_refuses_a_file_with_zero_columns) {
  wsm5::domain d;
  d.resize(0, 1, 35);
  d.dt = 60.f;
  const auto e = refusal_on_reading(d, "zero_columns.h5");
  BOOST_TEST_REQUIRE(e.has_value());
  BOOST_TEST(e->problem().field == "columns");
  BOOST_TEST(std::string(e->what()).find("test_wsm5_zero_columns.h5: ") != std::string::npos);
}

CPU_TEST_CASE(automatic_switches_at_a_tenth_of_the_resident_threads) {
  const wsm5::gpu_capacity h100{132, 64};
  BOOST_TEST(wsm5::automatic_threshold_columns(35, h100) == 27033);
  BOOST_TEST((wsm5::choose_variant(400, 35, h100) == wsm5::variant::warp_per_column));      // 0.057 vs 1.44 ms
  BOOST_TEST((wsm5::choose_variant(27032, 35, h100) == wsm5::variant::warp_per_column));      // 16,384: 0.090 vs 0.125 ms
  BOOST_TEST((wsm5::choose_variant(27033, 35, h100) == wsm5::variant::thread_per_column));  // 32,768: 0.152 vs 0.175 ms
  BOOST_TEST((wsm5::choose_variant(65536, 35, h100) == wsm5::variant::thread_per_column));  // 0.262 vs 0.388 ms
  BOOST_TEST((wsm5::choose_variant(433 * 308, 35, h100) == wsm5::variant::thread_per_column));  // 0.407 vs 0.641 ms
  // Deeper than 48 levels: from 3/2 of the tenth (H200, nz = 100: 40,000 columns 1.02 vs 0.88 ms).
  BOOST_TEST(wsm5::automatic_threshold_columns(48, h100) == 27033);
  BOOST_TEST(wsm5::automatic_threshold_columns(49, h100) == 40549);
  BOOST_TEST((wsm5::choose_variant(200 * 200, 100, h100) == wsm5::variant::warp_per_column));
  BOOST_TEST((wsm5::choose_variant(40548, 100, h100) == wsm5::variant::warp_per_column));
  BOOST_TEST((wsm5::choose_variant(40549, 256, h100) == wsm5::variant::thread_per_column));
  BOOST_TEST((wsm5::parse_variant("automatic") == wsm5::variant::automatic));
  BOOST_TEST(std::string(wsm5::to_string(wsm5::variant::automatic)) == "automatic");
}

CPU_TEST_CASE(transfer_chunks_cover_every_row_once_and_shrink) {
  // CONUS, 8 chunks: shares 1, 0.7, 0.49, ... of 3.14 -> 98, 69, 48, 33, 24, 16, 12, 8 rows.
  const std::vector<std::int64_t> conus = wsm5::transfer_chunk_rows(308, 8);
  BOOST_TEST(conus == (std::vector<std::int64_t>{0, 98, 167, 215, 248, 272, 288, 300, 308}), boost::test_tools::per_element());
  for (std::int64_t ny : {1, 2, 3, 7, 9, 100, 308, 4097})
    for (int chunks : {-3, 0, 1, 2, 3, 8, 16, 64}) {
      const std::vector<std::int64_t> j = wsm5::transfer_chunk_rows(ny, chunks);
      BOOST_TEST_CONTEXT("ny " << ny << ", chunks " << chunks) {
        BOOST_TEST_REQUIRE(j.size() == static_cast<std::size_t>(std::clamp<std::int64_t>(chunks, 1, ny)) + 1);
        BOOST_TEST(j.front() == 0);
        BOOST_TEST(j.back() == ny);
        for (std::size_t c = 1; c < j.size(); ++c) BOOST_TEST(j[c] > j[c - 1]);  // no empty chunk, no overlap
        // Shrinking within rounding: a chunk holds at most 0.7 of the one before plus 2 rows (two roundings).
        for (std::size_t c = 2; c < j.size(); ++c) BOOST_TEST(j[c] - j[c - 1] <= 0.7 * (j[c - 1] - j[c - 2]) + 2.0);
      }
    }
  BOOST_TEST(wsm5::transfer_chunk_rows(0, 8).empty());
  // The shrink bound fails on a wrong split: equal chunks break it.
  const std::vector<std::int64_t> equal{0, 77, 154, 231, 308};
  BOOST_TEST(!(equal[2] - equal[1] <= 0.7 * (equal[1] - equal[0]) + 2.0));
}

CPU_TEST_CASE(tiny_negative_hydrometeors_are_clipped_as_wrf_does) {
  // Round-off negatives (>= -1e-8) are accepted; the scheme clips qc, qr, qi, qs to 0 at entry (WRF
  // V3.1) and leaves qv, which it reads only through max(qv, qmin) and max(qv, 0).
  wsm5::domain d = test_wsm5::random_soundings(5, 3, 40, 35, 60.f);
  for (const char* n : {"qc", "qr", "qi", "qs"}) wsm5::field(d, n)[static_cast<std::size_t>(d.at(0, 30, 0))] = -5e-9f;
  expect_ok(d, "tiny negatives");
  (void)wsm5::reference::step(d, 0);
  for (const char* n : {"qc", "qr", "qi", "qs"})
    for (float v : wsm5::field(d, n)) BOOST_TEST_REQUIRE(v >= 0.f, n);
}

CPU_TEST_CASE(nonfinite_values_are_found_and_fail_the_budget) {
  const wsm5::domain before = test_wsm5::random_soundings(7, 4, 40, 30, 120.f);
  wsm5::domain after = before;
  (void)wsm5::reference::step(after, 0);
  BOOST_TEST(!wsm5::find_nonfinite(after).has_value());
  BOOST_TEST(wsm5::water_budget(before, after).ok);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    wsm5::domain broken = after;
    broken.qr[static_cast<std::size_t>(broken.at(4, 12, 0))] = bad;
    const auto nf = wsm5::find_nonfinite(broken);
    BOOST_TEST_REQUIRE(nf.has_value());
    BOOST_TEST(nf->field == "qr");
    BOOST_TEST(nf->i == 4);
    BOOST_TEST(nf->level == 12);
    const wsm5::budget_result b = wsm5::water_budget(before, broken);
    BOOST_TEST(!b.ok);  // the verdict follows the NaN, not the max of the finite residuals
    BOOST_TEST(b.nonfinite_columns == 1);
    BOOST_TEST(b.worst_column == 4);
  }
  wsm5::domain broken = after;
  broken.sr[2] = std::numeric_limits<float>::quiet_NaN();
  const auto nf = wsm5::find_nonfinite(broken);
  BOOST_TEST_REQUIRE(nf.has_value());
  BOOST_TEST(nf->field == "sr");
  BOOST_TEST(nf->level == -1);
}

CPU_TEST_CASE(check_passes_on_valid_soundings_and_trips_on_a_perturbed_field) {
  // Valid: the GPU kernel's per-column code run on the host (another loop structure; bitwise here) and a
  // result whose precipitation amounts differ within their bounds, sr recomputed from them: the ratio
  // then moves by up to ~1e-3 where rain is ~1e-9 mm, and the precipitation-weighted comparison passes.
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const wsm5::domain in = test_wsm5::random_soundings(10, seed, 64);
    BOOST_TEST_CONTEXT("seed " << seed << ", nz " << in.nz << ", dt " << in.dt) {
      wsm5::domain ref = in, emu = in;
      (void)wsm5::reference::step(ref, 0);
      (void)wsm5::emulation::thread_per_column_step(emu);
      const wsm5::gpu_bounds b = wsm5::gpu_vs_reference_bounds(std::max(1, static_cast<int>(std::lround(in.dt / 120.f))));
      bool ok = false;
      (void)wsm5::compare_with_bounds(emu, ref, b, ok);
      BOOST_TEST(ok);
      wsm5::domain moved = ref;
      for (std::size_t c = 0; c < moved.sr.size(); ++c) {
        moved.rainncv[c] = static_cast<float>(moved.rainncv[c] + 0.9 * b.precip);
        moved.snowncv[c] = static_cast<float>(std::max(0.0, moved.snowncv[c] - 0.9 * b.precip));
        moved.sr[c] = moved.rainncv[c] > 0 ? moved.snowncv[c] / (moved.rainncv[c] + 1e-12f) : 0.f;
      }
      (void)wsm5::compare_with_bounds(moved, ref, b, ok);
      BOOST_TEST(ok);
      // A perturbed field trips it: each field at the column with the most rain, by twice its bound.
      std::size_t wet = 0;
      for (std::size_t c = 0; c < ref.rainncv.size(); ++c)
        if (ref.rainncv[c] > ref.rainncv[wet]) wet = c;
      const auto x = static_cast<std::size_t>(ref.at(static_cast<std::int64_t>(wet), 0, 0));
      for (const std::string f : {"th", "qv", "qc", "qr", "qi", "qs", "rain", "snow", "rainncv", "snowncv", "sr"}) {
        wsm5::domain bad = emu;
        const bool is3d = f[0] == 'q' || f == "th";
        float& v = wsm5::field(bad, f)[is3d ? x : wet];
        const double bound = f == "th" ? b.th : f[0] == 'q' ? b.q : b.precip;
        const double rel = f == "th" || f[0] == 'q' ? b.rel : b.precip_rel;
        // sr moves by 2 (2 precip bounds + rounding) / rain, past its precipitation-weighted allowance
        const double step = f == "sr" ? 4.0 * (b.precip + b.precip_rel) / std::max(1e-6, static_cast<double>(ref.rainncv[wet])) + 1e-3
                                      : 2.0 * (bound + rel * std::fabs(v));
        v = static_cast<float>(v + step);
        (void)wsm5::compare_with_bounds(bad, ref, b, ok);
        BOOST_TEST(!ok, f << " perturbed by " << step << " passed");
      }
    }
  }
}

CPU_TEST_CASE(check_passes_against_the_fma_contracted_reference_on_random_soundings) {
  // A different rounding of the same scheme (the reference with FMA contraction): the bounds derived for
  // GPU vs CPU must accept it on every sounding, for one call and for ten.
  if (!wsm5::reference_contracted::available()) {
    BOOST_TEST_MESSAGE("skipped: the contracted reference needs GCC on an x86-64 CPU with FMA");
    return;
  }
  double worst_q = 0, worst_th = 0;
  int differing = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    const wsm5::domain in = test_wsm5::random_soundings(25, seed);
    const int loops = std::max(1, static_cast<int>(std::lround(in.dt / 120.f)));
    wsm5::domain ref = in, fma = in;
    for (int calls = 1; calls <= 10; ++calls) {
      const wsm5::domain before = fma;
      (void)wsm5::reference::step(ref, 0);
      (void)wsm5::reference_contracted::step(fma, 0);
      BOOST_TEST(wsm5::water_budget(before, fma).ok);
      if (calls != 1 && calls != 10) continue;
      BOOST_TEST_CONTEXT("seed " << seed << ", nz " << in.nz << ", dt " << in.dt << ", " << calls << " calls") {
        bool ok = false;
        for (const auto& e : wsm5::compare_with_bounds(fma, ref, wsm5::gpu_vs_reference_bounds(calls * loops), ok)) {
          if (e.name == "th") worst_th = std::max(worst_th, e.max_abs);
          else if (e.name[0] == 'q') worst_q = std::max(worst_q, e.max_abs);
          if (e.max_abs > 0) ++differing;
          BOOST_TEST(e.max_excess <= (e.name == "th" ? wsm5::gpu_vs_reference_bounds(calls * loops).th
                                      : e.name[0] == 'q' ? wsm5::gpu_vs_reference_bounds(calls * loops).q
                                      : e.name == "sr" ? 0.0 : wsm5::gpu_vs_reference_bounds(calls * loops).precip),
                     e.name << " max |error| " << e.max_abs << ", beyond its allowance " << e.max_excess);
        }
        BOOST_TEST(ok);
      }
    }
  }
  BOOST_TEST(differing > 0);  // the contracted build does round differently (else this test shows nothing)
  BOOST_TEST_MESSAGE("FMA-contracted vs reference: max |dq| " << worst_q << " kg/kg, |dth| " << worst_th << " K");
}

CPU_TEST_CASE(check_allows_rare_branch_outliers_and_still_trips) {
  // At 10,000 columns two valid roundings of the scheme (the reference and the FMA-contracted reference)
  // differ beyond the per-cell bounds in a few columns after 3 calls, where a threshold decision lay
  // within rounding of its threshold (checks.cpp: 4 columns of this domain, theta 1.1e-3 K against a
  // bound of 7.8e-4). The strict comparison calls that a failure; check_against_reference accepts up to
  // columns / 2000 such columns, each within a branch's jump, and must still trip on wrong results.
  if (!wsm5::reference_contracted::available()) {
    BOOST_TEST_MESSAGE("skipped: the contracted reference needs GCC on an x86-64 CPU with FMA");
    return;
  }
  const int calls = 3;
  const wsm5::domain in = wsm5::generate(100, 100, 35, 2);
  wsm5::domain ref = in, fma = in;
  for (int c = 0; c < calls; ++c) {
    (void)wsm5::reference::step(ref, 0);
    (void)wsm5::reference_contracted::step(fma, 0);
  }
  const wsm5::gpu_bounds b = wsm5::gpu_vs_reference_bounds(calls);
  bool strict = true;
  (void)wsm5::compare_with_bounds(fma, ref, b, strict);
  BOOST_TEST(!strict);  // else this domain shows no outlier and the test below nothing
  const wsm5::check_result valid = wsm5::check_against_reference(fma, ref, b);
  BOOST_TEST(valid.ok, valid.summary);
  BOOST_TEST(valid.outliers_allowed == 5);
  BOOST_TEST((valid.columns_beyond >= 1 && valid.columns_beyond <= 5));
  BOOST_TEST_MESSAGE("FMA-contracted vs reference, 100 x 100 x 35, 3 calls: " << valid.summary);

  const auto trips = [&](const wsm5::domain& bad, const std::string& what) {
    const wsm5::check_result r = wsm5::check_against_reference(bad, ref, b);
    BOOST_TEST(!r.ok, what << " passed: " << r.summary);
    BOOST_TEST(!r.summary.empty(), what);
    BOOST_TEST_MESSAGE(what << ": " << r.summary);
  };
  // The wettest column (largest condensate at one level) and the level where it holds it.
  std::int64_t wet_col = 0, wet_k = 0;
  double most = -1;
  for (std::int64_t c = 0; c < ref.columns(); ++c)
    for (std::int64_t k = 0; k < ref.nz; ++k) {
      const auto x = static_cast<std::size_t>(ref.at(c % ref.nx, k, c / ref.nx));
      const double q = static_cast<double>(ref.qc[x]) + ref.qr[x] + ref.qi[x] + ref.qs[x];
      if (q > most) most = q, wet_col = c, wet_k = k;
    }
  const auto wet = static_cast<std::size_t>(ref.at(wet_col % ref.nx, wet_k, wet_col / ref.nx));
  {  // one column moved by 20 % of its condensate: beyond a branch's jump (5 %)
    wsm5::domain bad = fma;
    bad.qc[wet] += static_cast<float>(0.2 * most);
    trips(bad, "qc + 20 % of the column's condensate");
  }
  {  // one column's theta moved by 10 bounds with no water to explain it
    wsm5::domain bad = fma;
    const std::size_t dry = 0;  // column 0, lowest level
    bad.th[dry] += static_cast<float>(10 * b.th);
    trips(bad, "theta + 10 bounds at column 0");
  }
  {  // more outliers than allowed: twice the qv bound in 6 columns at the lowest level
    wsm5::domain bad = fma;
    for (std::int64_t c = 0; c < 6; ++c) bad.qv[static_cast<std::size_t>(bad.at(c * 7, 0, c))] += static_cast<float>(2 * (b.q + b.rel * 0.02));
    trips(bad, "qv + 2 bounds in 6 columns");
  }
  {  // a field set to zero, a field perturbed everywhere
    wsm5::domain zero = fma, moved = fma;
    std::fill(zero.qr.begin(), zero.qr.end(), 0.f);
    trips(zero, "qr = 0");
    for (float& v : moved.qv) v = static_cast<float>(v + 2 * (b.q + b.rel * std::fabs(v)));
    trips(moved, "qv + 2 bounds everywhere");
  }
  {  // below 2000 columns no outlier is allowed: the strict comparison
    wsm5::domain small_in = wsm5::generate(40, 40, 35, 2), small_ref = small_in, small_bad = small_in;
    (void)wsm5::reference::step(small_ref, 0);
    (void)wsm5::reference::step(small_bad, 0);
    small_bad.qs[static_cast<std::size_t>(small_bad.at(3, 20, 5))] += static_cast<float>(2 * b.q);
    const wsm5::check_result r = wsm5::check_against_reference(small_bad, small_ref, wsm5::gpu_vs_reference_bounds(1));
    BOOST_TEST(r.outliers_allowed == 0);
    BOOST_TEST(!r.ok, r.summary);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---- GPU ------------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(wsm5_validation_gpu)

GPU_TEST_CASE(gpu_variants_pass_the_check_on_random_soundings) {
  const std::uint64_t seeds = test::reduced_sizes() ? 2 : 16;  // 2 in the sanitizers' pass
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const wsm5::domain in = test_wsm5::random_soundings(200, seed, 64);
    wsm5::domain ref = in;
    (void)wsm5::reference::step(ref, 0);
    const int loops = std::max(1, static_cast<int>(std::lround(in.dt / 120.f)));
    for (auto v : {wsm5::variant::thread_per_column, wsm5::variant::warp_per_column, wsm5::variant::automatic}) {
      wsm5::gpu_domain g(in);
      (void)g.step(v);
      BOOST_TEST(!g.find_nonfinite().has_value());
      wsm5::domain out = in;
      g.download(out);
      bool ok = false;
      for (const auto& e : wsm5::compare_with_bounds(out, ref, wsm5::gpu_vs_reference_bounds(loops), ok))
        BOOST_TEST_MESSAGE("seed " << seed << " " << wsm5::to_string(v) << " " << e.name << " max |error| " << e.max_abs
                                   << " excess " << e.max_excess);
      BOOST_TEST(ok, "seed " << seed << ", nz " << in.nz << ", dt " << in.dt << ": " << wsm5::to_string(v));
    }
  }
}

GPU_TEST_CASE(conus_thousand_calls_stay_finite_and_close_the_budget) {
  // CONUS 433 x 308 x 35, dt = 72 s, 1000 calls of variant::automatic: every call's state finite, and
  // the column water lost over the run equals the rain it produced within 1000 calls' budget bound. The
  // sanitizers' pass (test::reduced_sizes()) runs 64 x 48 columns for 10 calls: 1000 CONUS calls did not
  // finish in its 400 s under memcheck.
  const bool reduced = test::reduced_sizes();
  const int calls = reduced ? 10 : 1000;
  const wsm5::domain d0 = reduced ? wsm5::generate(64, 48, 35, 1) : wsm5::generate(433, 308, 35, 1);
  wsm5::gpu_domain g(d0);
  for (int call = 1; call <= calls; ++call) {
    (void)g.step(wsm5::variant::automatic);
    const auto nf = g.find_nonfinite();
    if (nf) BOOST_FAIL("call " << call << ": " << wsm5::to_string(*nf));  // *nf only when there is one
  }
  wsm5::domain d = d0;
  g.download(d);
  const wsm5::budget_result b = wsm5::water_budget(d0, d, calls);
  BOOST_TEST(b.ok, "residual " << b.max_abs_residual << " kg m-2 in column " << b.worst_column << " > " << b.bound);
  BOOST_TEST_MESSAGE("after " << calls << " calls: max |budget residual| " << b.max_abs_residual << " <= " << b.bound);
}

GPU_TEST_CASE(gpu_finds_a_planted_nan) {
  wsm5::domain d = test_wsm5::random_soundings(50, 2, 64, 35, 72.f);
  wsm5::gpu_domain g(d);
  BOOST_TEST(!g.find_nonfinite().has_value());
  d.qs[static_cast<std::size_t>(d.at(17, 9, 0))] = std::numeric_limits<float>::quiet_NaN();
  g.upload(d);
  const auto nf = g.find_nonfinite();
  BOOST_TEST_REQUIRE(nf.has_value());
  BOOST_TEST(nf->field == "qs");
  BOOST_TEST(nf->i == 17);
  BOOST_TEST(nf->level == 9);
}

GPU_TEST_CASE(gpu_distance_from_wrf_within_1_5x_the_cpu_reference) {
  // After one call on the golden columns: max |x - WRF| per field for the CPU reference and each GPU
  // variant, printed, and the GPU's asserted within 1.5x the CPU's (the real-inputs target). Measured on
  // an H200: th, qv, qc, qs 1.00x, qi 1.33x, qr 1.50x (2.79e-9 against 1.86e-9: 1.496x). What holds it
  // there: e_s's exp/log in double, IEEE divisions in the saturation adjustment and in the transport
  // coefficients diffus and viscos (libwsm5/README.md, "Accuracy"); with the float e_s the GPU was 2-4x,
  // with those divisions approximate qi was 1.77x. The CPU's distance is floored at what can be resolved:
  // the golden print resolution (9 significant digits, 5e-9 |x|) and one float ulp of the value (a float
  // result is at best half an ulp from the exact one; on these columns the reference matches WRF to the
  // print resolution, so without the ulp floor the test would ask for bitwise equality).
  const std::string dir = std::string(gpukit::data_dir) + "/wsm5/";
  const wsm5::domain in = wsm5::read_columns_text(dir + "columns.txt");
  const wsm5::golden_file gold = wsm5::read_golden_text(dir + "wrf_v31_1step.txt");
  const auto distance = [&](const wsm5::domain& d) {
    std::vector<std::pair<std::string, double>> out;
    for (const char* f : {"th", "qv", "qc", "qr", "qi", "qs"}) {
      double m = 0, res = 0;
      for (std::int64_t c = 0; c < d.nx; ++c) {
        const auto& gc = gold.cols[static_cast<std::size_t>(c)];
        const std::vector<double>& g = f == std::string("th") ? gc.th : f == std::string("qv") ? gc.qv : f == std::string("qc") ? gc.qc
                                     : f == std::string("qr") ? gc.qr : f == std::string("qi") ? gc.qi : gc.qs;
        for (std::int64_t k = 0; k < d.nz; ++k) {
          const double want = g[static_cast<std::size_t>(k)];
          m = std::max(m, std::fabs(wsm5::field(d, f)[static_cast<std::size_t>(d.at(c, k, 0))] - want));
          const float w = static_cast<float>(std::fabs(want));
          res = std::max({res, 5e-9 * std::fabs(want),
                          static_cast<double>(std::nextafter(w, std::numeric_limits<float>::infinity()) - w)});
        }
      }
      out.emplace_back(f, std::max(m, res));
    }
    return out;
  };
  wsm5::domain cpu = in;
  (void)wsm5::reference::step(cpu, 0);
  const auto cpu_d = distance(cpu);
  for (auto v : {wsm5::variant::thread_per_column, wsm5::variant::warp_per_column}) {
    wsm5::gpu_domain g(in);
    (void)g.step(v);
    wsm5::domain out = in;
    g.download(out);
    const auto gpu_d = distance(out);
    for (std::size_t f = 0; f < cpu_d.size(); ++f) {
      BOOST_TEST_MESSAGE(wsm5::to_string(v) << " " << cpu_d[f].first << ": max |GPU - WRF| " << gpu_d[f].second
                                            << ", max |CPU - WRF| " << cpu_d[f].second << ", ratio "
                                            << gpu_d[f].second / cpu_d[f].second);
      BOOST_TEST(gpu_d[f].second <= 1.5 * cpu_d[f].second, wsm5::to_string(v) << " " << cpu_d[f].first);
    }
    // The bound can fail: qi moved 3x the CPU's distance from WRF at every cell (float rounding of the
    // moved value is at most half the ulp floor) is beyond 1.5x.
    wsm5::domain moved = out;
    const double qi_cpu = cpu_d[4].second;
    for (std::int64_t c = 0; c < moved.nx; ++c)
      for (std::int64_t k = 0; k < moved.nz; ++k)
        moved.qi[static_cast<std::size_t>(moved.at(c, k, 0))] =
            static_cast<float>(gold.cols[static_cast<std::size_t>(c)].qi[static_cast<std::size_t>(k)] + 3.0 * qi_cpu);
    BOOST_TEST(!(distance(moved)[4].second <= 1.5 * qi_cpu));
  }
}

BOOST_AUTO_TEST_SUITE_END()
