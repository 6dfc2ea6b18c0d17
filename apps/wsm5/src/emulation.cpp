// thread_per_column's per-column code run on the CPU (one column after another, pitch = nx), so that
// the GPU variant's loop structure (in-place state, scratch arrays, fused melting, recomputed q_s and
// slopes) is tested where there is no GPU. Built with -ffp-contract=off like the reference.
#include <algorithm>
#include <vector>

#include "cuda/thread_per_column.hpp"
#include "wsm5/wsm5.hpp"

namespace wsm5::emulation {

diagnostics thread_per_column_step(domain& d) {
  diagnostics out;
  if (d.columns() == 0 || d.nz == 0) return out;
  const auto n3 = static_cast<std::size_t>(d.cells()), n2 = static_cast<std::size_t>(d.columns());
  std::vector<std::vector<float>> scratch(8, std::vector<float>(n3));
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
  v.dt = d.dt;
  const detail::scratch_view w{scratch[0].data(), scratch[1].data(), scratch[2].data(), scratch[3].data(),
                               scratch[4].data(), scratch[5].data(), scratch[6].data(), scratch[7].data()};
  for (std::int64_t j = 0; j < d.ny; ++j)
    for (int i = 0; i < v.nx; ++i) detail::thread_per_column_column(v, w, i, j);
  for (std::size_t c = 0; c < n2; ++c) {
    out.rain_total += d.rainncv[c];
    out.snow_total += d.snowncv[c];
    out.max_substeps = std::max(out.max_substeps, mstep[c]);
    out.max_budget_residual = std::max(out.max_budget_residual, resid[c]);
  }
  return out;
}

}  // namespace wsm5::emulation
