// thread_per_column's per-column code run on the CPU (one column after another, pitch = nx), so that
// the GPU variant's loop structure (sub-step pass, the single sweep with inline sub-steps, the general
// path's local arrays, state in place between minor loops) is tested where there is no GPU. Built with
// -ffp-contract=off like the reference.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/thread_per_column.hpp"
#include "wsm5/wsm5.hpp"

namespace wsm5::emulation {

diagnostics thread_per_column_step(domain& d, bool all_in_prepasses) {
  diagnostics out;
  if (d.columns() == 0 || d.nz == 0) return out;
  if (d.nz > detail::max_levels)
    throw std::invalid_argument("thread_per_column emulation: at most " + std::to_string(detail::max_levels) +
                                " levels, the domain has " + std::to_string(d.nz));
  const auto n2 = static_cast<std::size_t>(d.columns());
  std::vector<std::int32_t> mstep(n2, 0);
  std::vector<float> resid(n2, 0.f);
  detail::view v{};
  v.th = d.th.data(); v.qv = d.qv.data(); v.qc = d.qc.data(); v.qr = d.qr.data(); v.qi = d.qi.data(); v.qs = d.qs.data();
  v.p = d.p.data(); v.den = d.den.data(); v.delz = d.delz.data(); v.pii = d.pii.data();
  v.rain = d.rain.data(); v.snow = d.snow.data(); v.rainncv = d.rainncv.data(); v.snowncv = d.snowncv.data();
  v.sr = d.sr.data();
  v.mstep_max = mstep.data();
  v.resid = resid.data();
  v.nx = static_cast<int>(d.nx);
  v.nz = static_cast<int>(d.nz);
  v.pitch = d.nx;
  v.j0 = 0;
  v.rows = static_cast<int>(d.ny);
  v.dt = d.dt;
  // The GPU's two instantiations (local arrays of 64 or 256 levels), chosen by nz as the launch does.
  const auto column = [&](int i, std::int64_t j) {
    constexpr int shallow = detail::tpc_shallow_levels, deep = detail::max_levels, s = detail::inline_substeps;
    if (v.nz <= shallow) {
      if (all_in_prepasses) detail::thread_per_column_column<shallow, s, true>(v, i, j);
      else detail::thread_per_column_column<shallow, s, false>(v, i, j);
    } else {
      if (all_in_prepasses) detail::thread_per_column_column<deep, s, true>(v, i, j);
      else detail::thread_per_column_column<deep, s, false>(v, i, j);
    }
  };
  for (std::int64_t j = 0; j < d.ny; ++j)
    for (int i = 0; i < v.nx; ++i) column(i, j);
  for (std::size_t c = 0; c < n2; ++c) {
    out.rain_total += d.rainncv[c];
    out.snow_total += d.snowncv[c];
    out.max_substeps = std::max(out.max_substeps, mstep[c]);
    out.max_budget_residual = std::max(out.max_budget_residual, resid[c]);
  }
  return out;
}

}  // namespace wsm5::emulation
