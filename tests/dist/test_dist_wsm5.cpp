// WSM5 split over 1..4 ranks (wsm5::distributed): each rank steps its part of the domain with the CPU
// reference, rank 0 gathers the parts, and every field must be bitwise the one-process reference's (each
// column's physics is independent of the others); the combined totals must be bitwise the reproducible sum
// over the whole domain, the maxima exact. The comparison helper itself is shown to catch a one-ulp change
// and a dropped part.
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "dist_test_support.hpp"
#include "gpukit_paths.hpp"
#include "reduce/reduce.hpp"
#include "wsm5/distributed.hpp"

namespace {

using test::dist_support::world;

/// The first field (3D prognostics and inputs, then the 2D fields) whose bits differ, with the index; nullopt
/// when a and b are bitwise equal.
std::optional<std::string> first_difference(const wsm5::domain& a, const wsm5::domain& b) {
  if (a.nx != b.nx || a.ny != b.ny || a.nz != b.nz) return std::string("shape");
  std::vector<std::string> names = wsm5::field_names_3d();
  names.insert(names.end(), wsm5::field_names_2d().begin(), wsm5::field_names_2d().end());
  for (const auto& n : names) {
    const auto& fa = wsm5::field(a, n);
    const auto& fb = wsm5::field(b, n);
    if (fa.size() != fb.size()) return n + " size";
    for (std::size_t x = 0; x < fa.size(); ++x)
      if (std::memcmp(&fa[x], &fb[x], sizeof(float)) != 0) return n + "[" + std::to_string(x) + "]";
  }
  return std::nullopt;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

double whole_total(const std::vector<float>& f) {
  const std::vector<double> wide(f.begin(), f.end());
  return reduce::reference::reproducible_sum(wide.data(), static_cast<std::int64_t>(wide.size()));
}

/// `calls` calls of the reference on d0 split over the world; checks the gathered state and the totals
/// against one process (every rank holds d0: generated, or read from the same file).
void check_split(const wsm5::domain& d0, int calls, const std::string& what, bool rains = true) {
  const auto& comm = world();
  wsm5::domain whole = d0;
  wsm5::diagnostics one;
  for (int s = 0; s < calls; ++s) one = wsm5::reference::step(whole, 0);

  wsm5::distributed::split sp;
  wsm5::domain part = wsm5::distributed::scatter(comm, d0, sp);
  wsm5::diagnostics many;
  for (int s = 0; s < calls; ++s) many = wsm5::distributed::combine(comm, part, wsm5::reference::step(part, 0));
  wsm5::domain gathered = d0;
  wsm5::distributed::gather(comm, part, sp, gathered);

  BOOST_TEST_CONTEXT(what << ", " << comm.size() << " ranks, split by " << (sp.by_rows ? "rows" : "columns")) {
    if (comm.rank() == 0) {
      const auto diff = first_difference(gathered, whole);
      BOOST_TEST(!diff.has_value(), "gathered state differs at " << diff.value_or(""));
    }
    BOOST_TEST(same_bits(many.rain_total, whole_total(whole.rainncv)));
    BOOST_TEST(same_bits(many.snow_total, whole_total(whole.snowncv)));
    BOOST_TEST(many.max_substeps == one.max_substeps);
    BOOST_TEST(std::memcmp(&many.max_budget_residual, &one.max_budget_residual, sizeof(float)) == 0);
    if (rains) BOOST_TEST(many.rain_total > 0.0);  // the totals compare something
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dist_wsm5)

CPU_TEST_CASE(split_balances_and_covers) {
  for (int parts = 1; parts <= 6; ++parts) {
    const auto rows = wsm5::distributed::split_columns(7, 5, 3, parts);
    BOOST_TEST(rows.by_rows == (parts <= 5));
    std::int64_t total = 0, lo = 1 << 30, hi = 0;
    for (int r = 0; r < rows.parts(); ++r) {
      total += rows.columns(r);
      lo = std::min(lo, rows.columns(r));
      hi = std::max(hi, rows.columns(r));
    }
    BOOST_TEST(total == 35);
    BOOST_TEST(hi - lo <= (rows.by_rows ? 7 : 1), parts << " parts: " << lo << " .. " << hi << " columns");
  }
  BOOST_CHECK_THROW(wsm5::distributed::split_columns(0, 5, 3, 2), std::invalid_argument);
}

CPU_TEST_CASE(parts_round_trip_and_the_comparison_fails_when_it_should) {
  const wsm5::domain d0 = wsm5::generate(6, 2, 12, 41);
  wsm5::domain stepped = d0;
  (void)wsm5::reference::step(stepped, 0);
  const auto s = wsm5::distributed::split_columns(6, 2, 12, 3);  // 2 rows, 3 parts: by columns
  BOOST_TEST(!s.by_rows);
  wsm5::domain rebuilt = d0;
  for (int r = 0; r < s.parts(); ++r) {
    const wsm5::domain part = wsm5::distributed::part_of(stepped, s, r);
    for (std::int64_t c = 0; c < part.columns(); ++c) {  // whole_column names the same column
      const auto w = wsm5::distributed::whole_column(s, r, c % part.nx, c / part.nx);
      BOOST_TEST(part.th[part.at(c % part.nx, 3, c / part.nx)] == stepped.th[stepped.at(w.i, 3, w.j)]);
    }
    wsm5::distributed::put_part(rebuilt, s, r, part);
  }
  BOOST_TEST(!first_difference(rebuilt, stepped).has_value());
  // A dropped part (rank 1's columns never put back) is caught ...
  wsm5::domain dropped = d0;
  for (int r : {0, 2}) wsm5::distributed::put_part(dropped, s, r, wsm5::distributed::part_of(stepped, s, r));
  BOOST_TEST(first_difference(dropped, stepped).has_value());
  // ... and so is one ulp in one cell of one field.
  wsm5::domain nudged = stepped;
  nudged.qr[17] = std::nextafter(nudged.qr[17], 1.0f);
  BOOST_TEST(first_difference(nudged, stepped).value_or("") == "qr[17]");
}

CPU_TEST_CASE(whole_column_of_a_split_by_rows) {
  const wsm5::domain d0 = wsm5::generate(4, 5, 6, 43);
  const auto s = wsm5::distributed::split_columns(4, 5, 6, 2);  // rows 0-1 and 2-4
  const wsm5::domain part = wsm5::distributed::part_of(d0, s, 1);
  BOOST_TEST(part.ny == 3);
  const auto w = wsm5::distributed::whole_column(s, 1, 3, 2);
  BOOST_TEST((w.i == 3 && w.j == 4));
  BOOST_TEST(part.qv[part.at(3, 5, 2)] == d0.qv[d0.at(3, 5, 4)]);
}

CPU_TEST_CASE(generated_domain_split_by_rows_is_bitwise_one_process) {
  check_split(wsm5::generate(9, 5, 20, 7), 3, "generated 9 x 5 x 20");
}

CPU_TEST_CASE(two_row_domain_split_by_columns_is_bitwise_one_process) {
  check_split(wsm5::generate(11, 2, 20, 8), 3, "generated 11 x 2 x 20");  // by columns from 3 ranks
}

CPU_TEST_CASE(fewer_columns_than_ranks_leaves_parts_empty_and_is_bitwise_one_process) {
  check_split(wsm5::generate(2, 1, 20, 9), 2, "generated 2 x 1 x 20", false);  // 3 and 4 ranks: empty parts
}

CPU_TEST_CASE(golden_columns_split_is_bitwise_one_process) {
  check_split(wsm5::read_hdf5(std::string(gpukit::data_dir) + "/wsm5/golden_columns.h5"), 2, "golden columns");
}

CPU_TEST_CASE(a_bad_file_on_one_rank_stops_every_rank_with_its_message) {
  // The last rank reads a file that does not exist, the others the golden columns: every rank throws the
  // same rank_failure naming that rank and the file (no rank waits in a collective).
  const auto& comm = world();
  const bool last = comm.rank() == comm.size() - 1;
  const std::string path = last ? "no_such_domain.h5" : std::string(gpukit::data_dir) + "/wsm5/golden_columns.h5";
  try {
    dist::all_or_none(comm, [&] { (void)wsm5::read_hdf5(path); });
    BOOST_TEST(false, "no rank_failure");
  } catch (const dist::rank_failure& e) {
    BOOST_TEST(e.failed_rank == comm.size() - 1);
    BOOST_TEST(std::string(e.what()).find("no_such_domain.h5") != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_SUITE_END()
