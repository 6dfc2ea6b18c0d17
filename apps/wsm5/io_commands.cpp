// `wsm5 convert COLUMNS.txt OUT.h5 [--golden FILE]` and `wsm5 generate OUT.h5 [--nx --ny --nz --seed --dt]`
// (host only: libwsm5 I/O and the synthetic-domain generator).
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "app.hpp"
#include "commands.hpp"
#include "file_guard.hpp"
#include "wsm5/wsm5.hpp"

namespace wsm5_app {
namespace {

/// The WRF output after N calls in the output schema: `d` keeps its static fields and takes the golden
/// state (prognostics and the 2D outputs).
void take_golden_state(wsm5::domain& d, const std::string& columns_path, const std::string& golden_path) {
  const wsm5::golden_file g = wsm5::read_golden_text(golden_path);
  if (g.ncol != d.nx || g.nz != d.nz) throw gpukit::bad_input(golden_path + ": shape differs from " + columns_path);
  for (std::int64_t c = 0; c < d.nx; ++c) {
    const auto& gc = g.cols[static_cast<std::size_t>(c)];
    for (std::int64_t k = 0; k < d.nz; ++k) {
      const auto x = static_cast<std::size_t>(d.at(c, k, 0));
      const auto kk = static_cast<std::size_t>(k);
      d.th[x] = static_cast<float>(gc.th[kk]); d.qv[x] = static_cast<float>(gc.qv[kk]);
      d.qc[x] = static_cast<float>(gc.qc[kk]); d.qr[x] = static_cast<float>(gc.qr[kk]);
      d.qi[x] = static_cast<float>(gc.qi[kk]); d.qs[x] = static_cast<float>(gc.qs[kk]);
    }
    const auto cc = static_cast<std::size_t>(c);
    d.rain[cc] = static_cast<float>(gc.rain); d.rainncv[cc] = static_cast<float>(gc.rainncv);
    d.snow[cc] = static_cast<float>(gc.snow); d.snowncv[cc] = static_cast<float>(gc.snowncv);
    d.sr[cc] = static_cast<float>(gc.sr);
  }
}

}  // namespace

int convert_command(const convert_options& opt) {
  gpukit::check_output_paths({opt.in, opt.golden}, {opt.out});
  wsm5::domain d = wsm5::read_columns_text(opt.in);
  const bool golden = !opt.golden.empty();
  if (golden) take_golden_state(d, opt.in, opt.golden);
  wsm5::write_hdf5(d, opt.out, golden);
  gpukit::output_stream(opt.quiet) << "wrote " << opt.out << ": " << d.nx << " columns x " << d.nz
                                   << " levels, dt = " << d.dt << " s\n";
  return gpukit::exit_ok;
}

int generate_command(const generate_options& opt) {
  // Each size is range-checked when parsed (nx, ny <= 1e5, nz <= 1000): the product cannot overflow.
  if (opt.nx * opt.ny * opt.nz > max_cells)
    throw gpukit::bad_input("generate: " + std::to_string(opt.nx) + " x " + std::to_string(opt.ny) + " x " +
                            std::to_string(opt.nz) + " cells exceed the limit of " + std::to_string(max_cells));
  gpukit::check_output_paths({}, {opt.out});
  const wsm5::domain d = wsm5::generate(opt.nx, opt.ny, opt.nz, opt.seed, static_cast<float>(opt.dt));
  wsm5::write_hdf5(d, opt.out, false);
  gpukit::output_stream(opt.quiet) << "wrote " << opt.out << ": " << opt.nx << " x " << opt.ny << " columns x "
                                   << opt.nz << " levels, dt = " << opt.dt << " s, seed " << opt.seed << "\n";
  return gpukit::exit_ok;
}

}  // namespace wsm5_app
