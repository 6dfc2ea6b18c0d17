// WSM5 over MPI ranks (target wsm5::dist, built with GPUKIT_DISTRIBUTED): a domain's columns split into
// contiguous, count-balanced parts, one per rank; rank 0's domain scattered to the parts and gathered back;
// the domain totals of a call combined across ranks. Each column's physics is independent of the others,
// so a part stepped on its rank gives bitwise the columns of the whole domain stepped on one process, and
// the totals (reproducible sums, exact maxima) are the same bits for any rank count. Never prints.
//
// Example (every rank; `whole` read on rank 0 only):
//   wsm5::distributed::split s;
//   wsm5::domain part = wsm5::distributed::scatter(comm, whole, s);
//   const auto diag = wsm5::distributed::combine(comm, part, wsm5::reference::step(part));
//   wsm5::distributed::gather(comm, part, s, whole);  // rank 0: whole after one call
#pragma once
#include <cstdint>
#include <vector>

#include "dist/communicator.hpp"
#include "wsm5/wsm5.hpp"

namespace wsm5::distributed {

/// How the columns of an (nx, ny, nz) domain are split over `parts` ranks.
///  * by rows (ny >= parts): rank r holds the j-rows [first[r], first[r + 1]) as an (rows, nz, nx) domain,
///    so OpenMP still spreads each part's rows over threads;
///  * by columns (ny < parts, e.g. a one-row columns file): rank r holds the columns c = j nx + i in
///    [first[r], first[r + 1]) as a one-row (1, nz, count) domain.
/// first: parts + 1 offsets, unit r * units / parts (balanced by count; a part may be empty).
struct split {
  std::int64_t nx = 0, ny = 0, nz = 0;
  bool by_rows = true;
  std::vector<std::int64_t> first;
  int parts() const { return static_cast<int>(first.size()) - 1; }
  /// Columns held by rank r.
  std::int64_t columns(int r) const;
};
/// Throws std::invalid_argument for a non-positive size or part count, or more than 2^31 - 1 columns (the
/// MPI counts and displacements are ints, in columns).
split split_columns(std::int64_t nx, std::int64_t ny, std::int64_t nz, int parts);

/// The whole domain's column (i, j) of column (i, j) of rank r's part (to name a cell in a message).
struct column_index {
  std::int64_t i = 0, j = 0;
};
column_index whole_column(const split& s, int r, std::int64_t i, std::int64_t j);

/// Rank r's part of `whole` as a domain of its own (every field; dt and shape as split says).
domain part_of(const domain& whole, const split& s, int r);
/// Copies `part` (rank r's part) back into `whole` (prognostics, inputs and 2D fields).
void put_part(domain& whole, const split& s, int r, const domain& part);

/// Collective. Rank 0's `whole` (ignored on the other ranks) split over the communicator: the shape and
/// dt broadcast, every field sent with MPI_Scatterv. Returns this rank's part; `s` receives the split.
domain scatter(const dist::communicator& comm, const domain& whole, split& s);
/// Collective. The parts gathered into rank 0's `whole` (MPI_Gatherv per field; its shape and dt must be
/// the split's, e.g. the domain that was scattered); `whole` is not touched on the other ranks.
void gather(const dist::communicator& comm, const domain& part, const split& s, domain& whole);

/// Collective. The domain diagnostics of one call from each rank's part and its local diagnostics:
/// rain_total and snow_total are dist::reference::reproducible_sum of the parts' rainncv / snowncv (each
/// float widened to double, the exact sum rounded once: the same bits for any rank count and split, and
/// equal to reduce::reference::reproducible_sum over the whole domain); max_substeps and
/// max_budget_residual are MPI maxima (exact).
diagnostics combine(const dist::communicator& comm, const domain& part, const diagnostics& local);

}  // namespace wsm5::distributed
