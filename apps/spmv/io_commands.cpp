// spmv convert IN OUT   and   spmv generate CLASS OUT [options] (host only: libsparse I/O and generators).
#include <chrono>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>

#include "app.hpp"
#include "commands.hpp"
#include "file_guard.hpp"
#include "sparse/generate.hpp"
#include "sparse/io.hpp"

namespace spmv_app {
namespace {

template <class Value, class Index>
struct convert_fn {
  static void run(const convert_options& o) {
    const auto t0 = std::chrono::steady_clock::now();
    sparse::read_options ro;
    ro.allow_nonfinite = o.allow_nonfinite;
    auto a = sparse::read_matrix<Value, Index>(o.in, ro);
    sparse::write_matrix(o.out, a, "converted from " + o.in + " by spmv convert");
    gpukit::output_stream(o.quiet) << o.in << " -> " << o.out << ": " << a.rows() << " x " << a.cols() << ", "
                                   << a.nnz() << " entries (" << gpukit::seconds_since(t0) << " s)\n";
  }
};

template <class Value, class Index>
struct generate_fn {
  static void run(const generate_options& o) {
    const auto t0 = std::chrono::steady_clock::now();
    auto a = sparse::generate<Value, Index>(o.params);
    const double generated_s = gpukit::seconds_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    sparse::write_matrix(o.out, a, o.description);
    gpukit::output_stream(o.quiet) << o.out << ": " << sparse::class_name(o.params.kind) << " " << a.rows() << " x "
                                   << a.cols() << ", " << a.nnz() << " entries (generated in " << generated_s
                                   << " s, written in " << gpukit::seconds_since(t1) << " s)\n";
  }
};

/// F<Value, Index>::run(o) for the --precision / --index options (checked when parsed).
template <template <class, class> class F, class Options>
void dispatch(const Options& o) {
  const bool single = o.storage.precision == "float", wide = o.storage.index == 64;
  if (single && !wide) F<float, std::int32_t>::run(o);
  if (single && wide) F<float, std::int64_t>::run(o);
  if (!single && !wide) F<double, std::int32_t>::run(o);
  if (!single && wide) F<double, std::int64_t>::run(o);
}

}  // namespace

std::string generate_command_line(const sparse::generate_params& p) {
  std::string d = std::string("spmv generate ") + sparse::class_name(p.kind);
  auto add = [&d](const char* name, std::int64_t v) {
    if (v > 0) d += std::string(" --") + name + " " + std::to_string(v);
  };
  const bool grid = p.kind == sparse::matrix_class::laplace_2d || p.kind == sparse::matrix_class::laplace_3d;
  if (grid) return d + " --n " + std::to_string(p.n);
  add("rows", p.rows);
  add("cols", p.cols);
  if (p.kind != sparse::matrix_class::power_law) add("k", p.k);
  if (p.kind == sparse::matrix_class::power_law) add("max-length", p.max_length);
  if (p.kind == sparse::matrix_class::dense_row) add("dense-length", p.dense_length);
  return d + " --seed " + std::to_string(p.seed);
}

int convert_command(const convert_options& opt) {
  sparse::format_of(opt.in);  // unknown extensions fail before any work
  sparse::format_of(opt.out);
  gpukit::check_output_paths({opt.in}, {opt.out});
  dispatch<convert_fn>(opt);
  return gpukit::exit_ok;
}

int generate_command(const generate_options& opt) {
  generate_options o = opt;
  sparse::generate_params& p = o.params;
  p.kind = sparse::parse_class(o.class_name);
  sparse::format_of(o.out);
  gpukit::check_output_paths({}, {o.out});
  const std::string name = sparse::class_name(p.kind);
  const bool grid = p.kind == sparse::matrix_class::laplace_2d || p.kind == sparse::matrix_class::laplace_3d;
  if (grid && p.n == 0) throw gpukit::bad_input(name + " needs --n");
  if (!grid && p.rows == 0) throw gpukit::bad_input(name + " needs --rows");
  if (p.kind != sparse::matrix_class::power_law && !grid && p.k == 0)
    throw gpukit::bad_input(name + " needs --k");
  o.description = generate_command_line(p);  // written into the file: what made it
  dispatch<generate_fn>(o);
  return gpukit::exit_ok;
}

}  // namespace spmv_app
