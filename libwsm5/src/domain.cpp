// wsm5::domain helpers: shapes, field lookup, validation, variant names.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpukit/host_memory.hpp"
#include "wsm5/wsm5.hpp"

namespace wsm5 {

const std::vector<std::string>& field_names_3d() {
  static const std::vector<std::string> names = {"p", "den", "delz", "pii", "th", "qv", "qc", "qr", "qi", "qs"};
  return names;
}
const std::vector<std::string>& field_names_2d() {
  static const std::vector<std::string> names = {"rain", "snow", "rainncv", "snowncv", "sr"};
  return names;
}

std::vector<float>& field(domain& d, std::string_view name) {
  if (name == "p") return d.p;
  if (name == "den") return d.den;
  if (name == "delz") return d.delz;
  if (name == "pii") return d.pii;
  if (name == "th") return d.th;
  if (name == "qv") return d.qv;
  if (name == "qc") return d.qc;
  if (name == "qr") return d.qr;
  if (name == "qi") return d.qi;
  if (name == "qs") return d.qs;
  if (name == "rain") return d.rain;
  if (name == "snow") return d.snow;
  if (name == "rainncv") return d.rainncv;
  if (name == "snowncv") return d.snowncv;
  if (name == "sr") return d.sr;
  throw std::invalid_argument("unknown WSM5 field '" + std::string(name) + "'");
}
const std::vector<float>& field(const domain& d, std::string_view name) {
  return field(const_cast<domain&>(d), name);
}

void domain::resize(std::int64_t nx_, std::int64_t ny_, std::int64_t nz_) {
  if (nx_ < 0 || ny_ < 0 || nz_ < 0) throw std::invalid_argument("negative WSM5 domain size");
  // cells() and every index (j * nz + k) * nx + i stay below nx * ny * nz: checked here once, so no
  // product of the dimensions overflows later (a file declaring (1, 2^62, 4) wrapped to 0 cells).
  const std::string shape = std::to_string(nx_) + " x " + std::to_string(ny_) + " x " + std::to_string(nz_);
  std::int64_t columns_count = 0, cells_count = 0;
  if (!gpukit::checked_mul(nx_, ny_, columns_count) || !gpukit::checked_mul(columns_count, nz_, cells_count))
    throw std::invalid_argument("WSM5 domain " + shape + ": the number of cells overflows 64-bit sizes");
  const std::uint64_t bytes_3d = gpukit::saturating_bytes(cells_count, field_names_3d().size() * sizeof(float));
  const std::uint64_t bytes_2d = gpukit::saturating_bytes(columns_count, field_names_2d().size() * sizeof(float));
  if (auto why = gpukit::host_memory_shortfall(bytes_3d + bytes_2d < bytes_3d ? UINT64_MAX : bytes_3d + bytes_2d,
                                               "its fields"))
    throw std::invalid_argument("WSM5 domain " + shape + ": " + *why);
  nx = nx_;
  ny = ny_;
  nz = nz_;
  for (const auto& n : field_names_3d()) field(*this, n).assign(static_cast<std::size_t>(cells()), 0.f);
  for (const auto& n : field_names_2d()) field(*this, n).assign(static_cast<std::size_t>(columns()), 0.f);
}

void domain::validate(const std::string& what) const {
  if (!(dt > 0.f) || !std::isfinite(dt))
    throw std::runtime_error(what + ": attribute dt = " + std::to_string(dt) + " must be a positive number of seconds");
  for (const auto& n : field_names_3d()) {
    const auto& f = field(*this, n);
    if (static_cast<std::int64_t>(f.size()) != cells())
      throw std::runtime_error(what + ": dataset " + n + " has " + std::to_string(f.size()) + " values, expected " +
                               std::to_string(cells()));
    const bool positive = n == "p" || n == "den" || n == "delz" || n == "pii" || n == "th";
    for (std::size_t x = 0; x < f.size(); ++x) {
      if (!std::isfinite(f[x]))
        throw std::runtime_error(what + ": dataset " + n + " holds a non-finite value (NaN or Inf) at flat index " +
                                 std::to_string(x));
      if (positive && !(f[x] > 0.f))
        throw std::runtime_error(what + ": dataset " + n + " must be positive but holds " + std::to_string(f[x]) +
                                 " at flat index " + std::to_string(x));
    }
  }
  for (const auto& n : field_names_2d()) {
    const auto& f = field(*this, n);
    if (static_cast<std::int64_t>(f.size()) != columns())
      throw std::runtime_error(what + ": dataset " + n + " has " + std::to_string(f.size()) + " values, expected " +
                               std::to_string(columns()));
    for (std::size_t x = 0; x < f.size(); ++x)
      if (!std::isfinite(f[x]))
        throw std::runtime_error(what + ": dataset " + n + " holds a non-finite value (NaN or Inf) at flat index " +
                                 std::to_string(x));
  }
}

// The choice between the GPU variants, every threshold in one place.
//   thread_per_column: one thread per column, all levels and sub-steps in registers; its per-column
//     work is a long dependent chain (~35 levels x ~2400 flop), so it needs many resident warps per SM
//     to hide latency. With few columns most SMs idle and each thread's chain is exposed: 400 columns
//     took 1.44 ms per call on an H100 (4 blocks of 128 threads on 132 SMs).
//   warp_per_column: 16 or 32 lanes per column, levels across lanes; 16-32x more threads for the same
//     columns, so small domains fill the GPU (400 columns: 0.057 ms, 25x faster), but lanes idle past nz
//     and strided loads cost it on large ones (CONUS 433 x 308 = 133,364 columns: 0.641 against
//     thread_per_column's 0.407 ms, H200).
// The switch: thread_per_column from 32 x SMs x max_warps_per_sm / 10 columns (27,033 on 132 SMs x 64
// warps: a tenth of the resident threads, ~6 warps per SM) up to 48 levels, from 3/2 of that (40,549)
// for deeper columns. Measured by `wsm5 bench --crossover` (ms per call, thread / warp): on an H200
// (2026-12-03) at nz = 35, 16,384 columns 0.125 / 0.090, 32,768 0.152 / 0.175, 65,536 0.200 / 0.341:
// the straight line between the first two crosses at ~26k (an eighth, 33,792, left 32,768 on
// warp_per_column at 1.15x once thread_per_column's divisions lost their range tests). On an H100 at
// nz = 35, 16,384 columns 0.167 / 0.102, 32,768 0.198 / 0.202 (equal), 65,536 0.262 / 0.388, 131,072
// 0.524 / 0.755 (2026-11-25, the code of then): warp_per_column grows with the columns from ~8k on while
// thread_per_column stays flat until its grid fills the SMs. Deeper columns lengthen thread_per_column's
// per-column chain, so its flat time grows and the crossover moves out: on an H200 (2026-12-01, repeats
// 3), 32,768 / 65,536 columns, nz = 50: 0.405 / 0.318, 0.493 / 0.621; nz = 64: 0.524 / 0.357, 0.639 /
// 0.691; nz = 100: 1.103 / 0.744, 1.294 / 1.450; nz = 160: 2.267 / 2.113, 2.913 / 4.201; nz = 256:
// 4.883 / 3.174, 6.307 / 6.312; the straight lines between the two points cross at 36k-64k columns
// (nz = 50 45k, 64 57k, 80 57k, 100 54k, 160 36k, 200 47k, 256 64k; thread_per_column has become 17-20 %
// faster on deep columns since, which moves them in), hence 3/2 of the base. Where the rule missed by
// more than 10 % on those points (libwsm5/README.md, "Choosing a variant"): nz = 20 at 32,768 (1.38x
// under the eighth; the tenth takes thread_per_column there) and the depths that fill warp_per_column's
// lanes with 3-4 levels each (nz = 48 and 128: 1.17x and 1.26x at 65,536, within 11 % from 131,072 on).
std::int64_t automatic_threshold_columns(std::int64_t levels, const gpu_capacity& c) {
  const std::int64_t tenth = std::int64_t{32} * c.sms * c.max_warps_per_sm / 10;  // a tenth of the resident threads
  return levels > automatic_deep_levels ? tenth * 3 / 2 : tenth;
}
variant choose_variant(std::int64_t columns, std::int64_t levels, const gpu_capacity& c) {
  return columns >= automatic_threshold_columns(levels, c) ? variant::thread_per_column : variant::warp_per_column;
}

std::vector<std::int64_t> transfer_chunk_rows(std::int64_t ny, int chunks) {
  if (ny <= 0) return {};
  const std::int64_t n = std::clamp<std::int64_t>(chunks, 1, ny);
  constexpr double shrink = 0.7;  // wsm5.hpp: a chunk's download (0.6 of its upload) hides under the next upload
  std::vector<double> cumulative(static_cast<std::size_t>(n) + 1, 0.0);
  double share = 1.0;
  for (std::int64_t c = 0; c < n; ++c, share *= shrink)
    cumulative[static_cast<std::size_t>(c) + 1] = cumulative[static_cast<std::size_t>(c)] + share;
  std::vector<std::int64_t> rows(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t c = 1; c < n; ++c) {
    const auto k = static_cast<std::size_t>(c);
    const auto even = static_cast<std::int64_t>(std::llround(static_cast<double>(ny) * cumulative[k] / cumulative.back()));
    // at least one row per chunk, and room for one row in each chunk after it
    rows[k] = std::min(std::max(even, rows[k - 1] + 1), ny - (n - c));
  }
  rows.back() = ny;
  return rows;
}

const char* to_string(variant v) {
  switch (v) {
    case variant::cpu: return "cpu";
    case variant::thread_per_column: return "thread_per_column";
    case variant::warp_per_column: return "warp_per_column";
    case variant::automatic: return "automatic";
  }
  return "?";
}
variant parse_variant(const std::string& s) {
  if (s == "cpu") return variant::cpu;
  if (s == "thread_per_column") return variant::thread_per_column;
  if (s == "warp_per_column") return variant::warp_per_column;
  if (s == "automatic") return variant::automatic;
  throw std::invalid_argument("unknown variant '" + s + "' (cpu, thread_per_column, warp_per_column, automatic)");
}

}  // namespace wsm5
