// WSM5 over MPI ranks (wsm5/distributed.hpp): the split, the per-field packing into rank order, the
// scatter and gather with MPI_Scatterv / MPI_Gatherv, and the combined diagnostics.
#include "wsm5/distributed.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>

#include "dist/reductions.hpp"

namespace wsm5::distributed {
namespace {

/// Fields the scheme changes (the gather's): prognostics and the 2D fields.
const std::vector<std::string>& changed_3d() {
  static const std::vector<std::string> names = {"th", "qv", "qc", "qr", "qi", "qs"};
  return names;
}

/// The flat columns c = j nx + i of rank r: [c0, c1).
std::int64_t first_column(const split& s, int r) {
  return s.by_rows ? s.first[static_cast<std::size_t>(r)] * s.nx : s.first[static_cast<std::size_t>(r)];
}

/// Calls f(whole offset, part offset, length) for the contiguous runs of rank r's part of a field: one
/// run for a 2D field or a split by rows (the part's rows are a slab of the whole field), one value per
/// cell for a split by columns (the part is a (1, nz, count) domain).
template <class F>
void for_each_run(const split& s, int r, bool is_3d, F f) {
  const std::int64_t c0 = first_column(s, r), n = s.columns(r);
  if (!is_3d || s.by_rows) {
    if (n > 0) f(is_3d ? c0 * s.nz : c0, std::int64_t{0}, is_3d ? n * s.nz : n);
    return;
  }
  for (std::int64_t c = c0; c < c0 + n; ++c) {
    const std::int64_t i = c % s.nx, j = c / s.nx;
    for (std::int64_t k = 0; k < s.nz; ++k) f((j * s.nz + k) * s.nx + i, k * n + (c - c0), std::int64_t{1});
  }
}

/// Rank r's part of a whole field, and back.
void extract(const split& s, int r, bool is_3d, const float* whole, float* part) {
  for_each_run(s, r, is_3d, [&](std::int64_t w, std::int64_t p, std::int64_t len) {
    std::memcpy(part + p, whole + w, static_cast<std::size_t>(len) * sizeof(float));
  });
}
void insert(const split& s, int r, bool is_3d, const float* part, float* whole) {
  for_each_run(s, r, is_3d, [&](std::int64_t w, std::int64_t p, std::int64_t len) {
    std::memcpy(whole + w, part + p, static_cast<std::size_t>(len) * sizeof(float));
  });
}

/// A domain of rank r's shape (zeros).
domain empty_part(const split& s, int r, float dt, bool columns_form) {
  domain p;
  const std::int64_t rows = s.first[static_cast<std::size_t>(r) + 1] - s.first[static_cast<std::size_t>(r)];
  if (s.by_rows)
    p.resize(s.nx, rows, s.nz);
  else
    p.resize(s.columns(r), 1, s.nz);
  p.dt = dt;
  p.columns_form = columns_form;
  return p;
}

/// Counts and displacements in units of one column of the field (nz floats for 3D, 1 for 2D).
struct layout {
  std::vector<int> counts, displs;
};
layout column_layout(const split& s) {
  layout l;
  for (int r = 0; r < s.parts(); ++r) {
    l.counts.push_back(static_cast<int>(s.columns(r)));
    l.displs.push_back(static_cast<int>(first_column(s, r)));
  }
  return l;
}

/// One MPI datatype per column of a field: nz floats (3D) or one float (2D); freed at scope end.
struct column_type {
  MPI_Datatype t = MPI_FLOAT;
  explicit column_type(std::int64_t floats) {
    if (floats > 1) {
      MPI_Type_contiguous(static_cast<int>(floats), MPI_FLOAT, &t);
      MPI_Type_commit(&t);
    }
  }
  ~column_type() {
    if (t != MPI_FLOAT) MPI_Type_free(&t);
  }
  column_type(const column_type&) = delete;
  column_type& operator=(const column_type&) = delete;
};

/// Rank 0's whole field packed in rank order (each rank's part in its own layout).
std::vector<float> pack(const split& s, const std::vector<float>& whole, bool is_3d) {
  std::vector<float> packed(whole.size());
  const std::int64_t per = is_3d ? s.nz : 1;
  for (int r = 0; r < s.parts(); ++r) {
    extract(s, r, is_3d, whole.data(), packed.data() + first_column(s, r) * per);
  }
  return packed;
}
void unpack(const split& s, const std::vector<float>& packed, std::vector<float>& whole, bool is_3d) {
  const std::int64_t per = is_3d ? s.nz : 1;
  for (int r = 0; r < s.parts(); ++r) {
    insert(s, r, is_3d, packed.data() + first_column(s, r) * per, whole.data());
  }
}

void scatter_field(const dist::communicator& comm, const split& s, const layout& l, const std::vector<float>* whole,
                   std::vector<float>& part, bool is_3d) {
  const column_type type(is_3d ? s.nz : 1);
  std::vector<float> packed;
  if (comm.rank() == 0) packed = pack(s, *whole, is_3d);
  MPI_Scatterv(packed.data(), l.counts.data(), l.displs.data(), type.t, part.data(),
               l.counts[static_cast<std::size_t>(comm.rank())], type.t, 0, comm.mpi());
}

void gather_field(const dist::communicator& comm, const split& s, const layout& l, const std::vector<float>& part,
                  std::vector<float>* whole, bool is_3d) {
  const column_type type(is_3d ? s.nz : 1);
  std::vector<float> packed(comm.rank() == 0 ? whole->size() : 0);
  MPI_Gatherv(part.data(), l.counts[static_cast<std::size_t>(comm.rank())], type.t, packed.data(), l.counts.data(),
              l.displs.data(), type.t, 0, comm.mpi());
  if (comm.rank() == 0) unpack(s, packed, *whole, is_3d);
}

}  // namespace

std::int64_t split::columns(int r) const {
  const auto u = static_cast<std::size_t>(r);
  return (first[u + 1] - first[u]) * (by_rows ? nx : 1);
}

split split_columns(std::int64_t nx, std::int64_t ny, std::int64_t nz, int parts) {
  if (parts < 1 || nx < 1 || ny < 1 || nz < 1)
    throw std::invalid_argument("wsm5::distributed::split_columns: sizes and parts must be positive");
  if (nx * ny > INT_MAX) throw std::invalid_argument("wsm5::distributed: more than 2^31 - 1 columns");
  split s{nx, ny, nz, ny >= parts, {}};
  const std::int64_t units = s.by_rows ? ny : nx * ny;
  for (int r = 0; r <= parts; ++r) s.first.push_back(units * r / parts);
  return s;
}

column_index whole_column(const split& s, int r, std::int64_t i, std::int64_t j) {
  if (s.by_rows) return {i, s.first[static_cast<std::size_t>(r)] + j};
  const std::int64_t c = first_column(s, r) + i;  // a one-row part: i counts its columns
  return {c % s.nx, c / s.nx};
}

domain part_of(const domain& whole, const split& s, int r) {
  domain p = empty_part(s, r, whole.dt, whole.columns_form);
  for (const auto& n : field_names_3d()) extract(s, r, true, field(whole, n).data(), field(p, n).data());
  for (const auto& n : field_names_2d()) extract(s, r, false, field(whole, n).data(), field(p, n).data());
  return p;
}

void put_part(domain& whole, const split& s, int r, const domain& part) {
  for (const auto& n : field_names_3d()) insert(s, r, true, field(part, n).data(), field(whole, n).data());
  for (const auto& n : field_names_2d()) insert(s, r, false, field(part, n).data(), field(whole, n).data());
}

domain scatter(const dist::communicator& comm, const domain& whole, split& s) {
  std::int64_t shape[4] = {whole.nx, whole.ny, whole.nz, whole.columns_form ? 1 : 0};
  float dt = whole.dt;
  MPI_Bcast(shape, 4, MPI_INT64_T, 0, comm.mpi());
  MPI_Bcast(&dt, 1, MPI_FLOAT, 0, comm.mpi());
  s = split_columns(shape[0], shape[1], shape[2], comm.size());
  domain part = empty_part(s, comm.rank(), dt, shape[3] != 0);
  const layout l = column_layout(s);
  const bool root = comm.rank() == 0;
  for (const auto& n : field_names_3d())
    scatter_field(comm, s, l, root ? &field(whole, n) : nullptr, field(part, n), true);
  for (const auto& n : field_names_2d())
    scatter_field(comm, s, l, root ? &field(whole, n) : nullptr, field(part, n), false);
  return part;
}

void gather(const dist::communicator& comm, const domain& part, const split& s, domain& whole) {
  const layout l = column_layout(s);
  const bool root = comm.rank() == 0;
  for (const auto& n : changed_3d())
    gather_field(comm, s, l, field(part, n), root ? &field(whole, n) : nullptr, true);
  for (const auto& n : field_names_2d())
    gather_field(comm, s, l, field(part, n), root ? &field(whole, n) : nullptr, false);
}

diagnostics combine(const dist::communicator& comm, const domain& part, const diagnostics& local) {
  const auto total = [&](const std::vector<float>& f) {
    const std::vector<double> wide(f.begin(), f.end());
    return dist::reference::reproducible_sum(comm, wide.data(), static_cast<std::int64_t>(wide.size()));
  };
  diagnostics d;
  d.rain_total = total(part.rainncv);
  d.snow_total = total(part.snowncv);
  MPI_Allreduce(&local.max_substeps, &d.max_substeps, 1, MPI_INT32_T, MPI_MAX, comm.mpi());
  MPI_Allreduce(&local.max_budget_residual, &d.max_budget_residual, 1, MPI_FLOAT, MPI_MAX, comm.mpi());
  return d;
}

}  // namespace wsm5::distributed
