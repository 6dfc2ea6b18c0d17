// spmv convert IN OUT   and   spmv generate CLASS OUT [options]
#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>

#include "cli.hpp"
#include "commands.hpp"
#include "sparse/generate.hpp"
#include "sparse/io.hpp"

namespace spmv_app {
namespace {

const char* convert_help =
    "usage: spmv convert IN OUT [--precision float|double] [--index 32|64]\n"
    "  Converts between Matrix Market (.mtx) and HDF5 (.h5, .hdf5), by extension. Values are stored as\n"
    "  double and indices as int32 unless --precision/--index say otherwise. The output is written to\n"
    "  OUT.partial and renamed, so a failure leaves no partial file.\n";

const char* generate_help =
    "usage: spmv generate CLASS OUT.h5|OUT.mtx [--n N] [--rows R] [--cols C] [--k K] [--seed S]\n"
    "                     [--max-length L] [--dense-length D] [--precision float|double] [--index 32|64]\n"
    "  CLASS: laplace2d (--n: n x n grid, 5-point)  laplace3d (--n: n^3 grid, 7-point)\n"
    "         random (--rows --cols --k: k columns per row drawn with replacement, deduplicated)\n"
    "         powerlaw (--rows --cols: length min(L, floor(2 u^-0.7)), L = --max-length, default 200000)\n"
    "         denserow (--rows --cols --k: short rows plus row rows/2 with --dense-length distinct entries)\n"
    "  --cols defaults to --rows; --seed defaults to 20261121. Same seed -> same matrix everywhere.\n"
    "  Example: spmv generate laplace2d lap.h5 --n 2048   (4,194,304 rows, 20,963,328 entries)\n";

template <class Value, class Index>
void convert_as(const std::string& in, const std::string& out) {
  const auto t0 = std::chrono::steady_clock::now();
  auto a = sparse::read_matrix<Value, Index>(in);
  sparse::write_matrix(out, a, "converted from " + in + " by spmv convert");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << in << " -> " << out << ": " << a.rows() << " x " << a.cols() << ", " << a.nnz() << " entries ("
            << s << " s)\n";
}

template <class Value, class Index>
void generate_as(const sparse::generate_params& p, const std::string& out, const std::string& description) {
  const auto t0 = std::chrono::steady_clock::now();
  auto a = sparse::generate<Value, Index>(p);
  const auto t1 = std::chrono::steady_clock::now();
  sparse::write_matrix(out, a, description);
  const auto t2 = std::chrono::steady_clock::now();
  std::cout << out << ": " << sparse::class_name(p.kind) << " " << a.rows() << " x " << a.cols() << ", " << a.nnz()
            << " entries (generated in " << std::chrono::duration<double>(t1 - t0).count() << " s, written in "
            << std::chrono::duration<double>(t2 - t1).count() << " s)\n";
}

/// Calls f<Value, Index>() for the --precision / --index options.
template <template <class, class> class F, class... Args>
void dispatch(const gpukit::cli::args& args, Args&&... a) {
  const std::string precision = args.get("precision", "double");
  const std::int64_t index = args.get_int("index", 32);
  if (precision != "float" && precision != "double")
    throw gpukit::cli::usage_error("--precision must be float or double, not '" + precision + "'");
  if (index != 32 && index != 64) throw gpukit::cli::usage_error("--index must be 32 or 64");
  if (precision == "float" && index == 32) F<float, std::int32_t>::run(a...);
  if (precision == "float" && index == 64) F<float, std::int64_t>::run(a...);
  if (precision == "double" && index == 32) F<double, std::int32_t>::run(a...);
  if (precision == "double" && index == 64) F<double, std::int64_t>::run(a...);
}

template <class V, class I>
struct convert_fn {
  static void run(const std::string& in, const std::string& out) { convert_as<V, I>(in, out); }
};
template <class V, class I>
struct generate_fn {
  static void run(const sparse::generate_params& p, const std::string& out, const std::string& d) {
    generate_as<V, I>(p, out, d);
  }
};

bool wants_help(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") return true;
  }
  return false;
}

}  // namespace

int convert_command(int argc, char** argv) {
  if (wants_help(argc, argv)) {
    std::cout << convert_help;
    return 0;
  }
  gpukit::cli::args args(argc, argv, 2, {"precision", "index"}, {});
  if (args.positional().size() != 2) throw gpukit::cli::usage_error("convert needs IN and OUT\n" + std::string(convert_help));
  const std::string in = args.positional()[0], out = args.positional()[1];
  sparse::format_of(in);  // unknown extensions fail before any work
  sparse::format_of(out);
  if (in == out) throw gpukit::cli::usage_error("convert: IN and OUT are the same file");
  dispatch<convert_fn>(args, in, out);
  return 0;
}

int generate_command(int argc, char** argv) {
  if (wants_help(argc, argv)) {
    std::cout << generate_help;
    return 0;
  }
  gpukit::cli::args args(argc, argv, 2,
                         {"n", "rows", "cols", "k", "seed", "max-length", "dense-length", "precision", "index"}, {});
  if (args.positional().size() != 2)
    throw gpukit::cli::usage_error("generate needs CLASS and OUT\n" + std::string(generate_help));
  sparse::generate_params p;
  try {
    p.kind = sparse::parse_class(args.positional()[0]);
  } catch (const std::invalid_argument& e) {
    throw gpukit::cli::usage_error(e.what());
  }
  const std::string out = args.positional()[1];
  sparse::format_of(out);
  const bool grid = p.kind == sparse::matrix_class::laplace_2d || p.kind == sparse::matrix_class::laplace_3d;
  if (grid && !args.has("n")) throw gpukit::cli::usage_error(std::string(sparse::class_name(p.kind)) + " needs --n");
  if (!grid && !args.has("rows")) throw gpukit::cli::usage_error(std::string(sparse::class_name(p.kind)) + " needs --rows");
  if ((p.kind == sparse::matrix_class::random_k || p.kind == sparse::matrix_class::dense_row) && !args.has("k"))
    throw gpukit::cli::usage_error(std::string(sparse::class_name(p.kind)) + " needs --k");
  p.n = args.get_int("n", 0);
  p.rows = args.get_int("rows", 0);
  p.cols = args.get_int("cols", 0);
  p.k = args.get_int("k", 0);
  p.max_length = args.get_int("max-length", p.max_length);
  p.dense_length = args.get_int("dense-length", p.dense_length);
  const std::int64_t seed = args.get_int("seed", static_cast<std::int64_t>(p.seed));
  p.seed = static_cast<std::uint64_t>(seed);
  if (p.n < 0 || p.rows < 0 || p.cols < 0 || p.k < 0 || p.max_length < 0 || p.dense_length < 0)
    throw gpukit::cli::usage_error("sizes must be non-negative");
  std::string description = std::string("spmv generate ") + sparse::class_name(p.kind);
  for (int i = 4; i < argc; ++i) description += std::string(" ") + argv[i];
  try {
    dispatch<generate_fn>(args, p, out, description);
  } catch (const std::invalid_argument& e) {
    throw gpukit::cli::usage_error(e.what());
  }
  return 0;
}

}  // namespace spmv_app
