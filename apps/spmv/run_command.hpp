// Helpers shared by `spmv run` and `spmv bench`: GPU timing (CUDA events, warm-up, median), the minimum
// byte count of an SpMV, the plan of an algorithm that may not apply to the matrix, and error summaries
// against an oracle within the derived per-row bound; and what `spmv run` on one process shares with its
// distributed form (run_distributed.cpp): x, the y file, the header, table, report and check.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <functional>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>
#include <utility>

#include "app_errors.hpp"
#include "commands.hpp"
#include "gpukit/atomic_file.hpp"
#include "gpukit/cuda_timer.hpp"
#include "gpukit/cuda_check.hpp"
#include "sparse/hdf5_io.hpp"
#include "sparse/io.hpp"
#include "sparse/spmv.hpp"
#include "reduce/device.hpp"

namespace spmv_app {

/// Median time in microseconds of `reps` calls of f() on `stream`, after `warmup` untimed calls; each call
/// is bracketed by its own pair of events (so the median drops outliers such as a clock ramp).
template <class F>
double median_gpu_us(F&& f, int warmup, int reps, cudaStream_t stream = nullptr) {
  gpukit::cuda_timer timer(stream);
  return timer.time(std::forward<F>(f), {warmup, reps}).median_us;
}

/// n values in [-1, 1) from raw mt19937_64 draws (53-bit mantissa; no std:: distribution, whose
/// algorithm differs between standard libraries): the same x on every machine.
template <class Value>
std::vector<Value> pseudo_random_vector(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<Value> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = static_cast<Value>(static_cast<double>(g() >> 11) * 0x1.0p-52 - 1.0);
  return v;
}

/// The plan of `alg` for `d`, or nothing, with the reason in `why`, when the algorithm does not apply to
/// the matrix: only stencil, windowed and column_blocks refuse valid matrices; any other failure propagates.
template <class Value, class Index>
std::optional<sparse::spmv_plan<Value, Index>> plan_if_applicable(const sparse::device_csr<Value, Index>& d,
                                                                  sparse::spmv_algorithm alg, std::string& why) {
  try {
    return std::optional<sparse::spmv_plan<Value, Index>>(std::in_place, d, alg);
  } catch (const std::invalid_argument& e) {
    if (alg != sparse::spmv_algorithm::stencil && alg != sparse::spmv_algorithm::windowed &&
        alg != sparse::spmv_algorithm::column_blocks)
      throw;
    why = e.what();
    return std::nullopt;
  }
}

/// The least an SpMV must move: values and column indices once, row offsets once, x once, y once (twice
/// when beta != 0: read and written).
template <class Value, class Index>
double minimum_bytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz, bool beta_nonzero) {
  return static_cast<double>(nnz) * (sizeof(Value) + sizeof(Index)) + static_cast<double>(rows + 1) * sizeof(Index) +
         static_cast<double>(cols) * sizeof(Value) + static_cast<double>(rows) * sizeof(Value) * (beta_nonzero ? 2 : 1);
}

/// What the stencil algorithm moves instead: its matrix bytes (sparse::stencil_matrix_bytes: no col_idx),
/// x once, y once (twice when beta != 0).
template <class Value, class Index>
double stencil_bytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::int64_t longest_row,
                     bool beta_nonzero) {
  return sparse::stencil_matrix_bytes<Value, Index>(rows, nnz, longest_row) + static_cast<double>(cols) * sizeof(Value) +
         static_cast<double>(rows) * sizeof(Value) * (beta_nonzero ? 2 : 1);
}

/// The longest row of a host matrix (0 for none).
template <class Value, class Index>
std::int64_t longest_row(const sparse::host_csr<Value, Index>& a) {
  return sparse::compute_row_stats(a.rows(), a.cols(), a.row_ptr().data()).max_length;
}

/// max |got - other| and max |got - other| / bound over the rows (bound from
/// sparse::reference::row_error_bounds: 2 gamma_{k+2} S_i). Rows with a non-finite bound count as within
/// it when both are NaN or both equal; any other mismatch (NaN against a number) gives ratio infinity.
struct error_summary {
  double max_abs = 0;
  double max_ratio = 0;  ///< <= 1: within the derived bound everywhere
};
template <class Value>
error_summary compare_rows(const std::vector<Value>& got, const std::vector<Value>& other, const std::vector<double>& bound) {
  error_summary e;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], o = other[i];
    if (!std::isfinite(bound[i])) {
      if (!((std::isnan(g) && std::isnan(o)) || g == o)) e.max_ratio = INFINITY;
      continue;
    }
    const double d = std::fabs(g - o);
    if (std::isnan(d)) {
      e.max_abs = e.max_ratio = INFINITY;
      continue;
    }
    e.max_abs = std::max(e.max_abs, d);
    e.max_ratio = std::max(e.max_ratio, bound[i] > 0 ? d / bound[i] : (d > 0 ? INFINITY : 0.0));
  }
  return e;
}

/// x: the file's /matrix/x when an HDF5 file carries one of the right length, else fixed pseudo-random
/// values in [-1, 1) (the same on every machine).
template <class V>
std::vector<V> input_x(const std::string& path, std::int64_t cols, const sparse::read_options& ro, std::string& origin) {
  if (sparse::format_of(path) == sparse::file_format::hdf5) {
    if (auto x = sparse::read_hdf5_vector<V>(path, "/matrix/x", ro)) {
      if (static_cast<std::int64_t>(x->size()) != cols)
        throw gpukit::bad_input(path + ": /matrix/x has " + std::to_string(x->size()) + " entries, the matrix " +
                                std::to_string(cols) + " columns");
      origin = "the file's /matrix/x";
      return *x;
    }
  }
  origin = "pseudo-random in [-1, 1), seed 2026";
  return pseudo_random_vector<V>(cols, 2026);
}

/// --output: y as text, one value per line with max_digits10 significant digits (reads back to the same
/// bits), written atomically.
template <class V>
void write_y(const std::string& path, const std::vector<V>& y) {
  std::ostringstream o;
  o << std::setprecision(std::numeric_limits<V>::max_digits10);
  for (const V v : y) o << static_cast<double>(v) << "\n";
  gpukit::write_file_atomically(path, o.str());
}

/// One row of the table: an algorithm (or peer), its median time and its errors against the oracles.
struct row_result {
  std::string name;    // algorithm (or peer) name
  std::string detail;  // plan description
  double us = 0;       // median time
  error_summary vs_ref, vs_eigen, vs_cusparse;
  bool have_cusparse = false;
  double worst() const {
    return std::max({vs_ref.max_ratio, vs_eigen.max_ratio, have_cusparse ? vs_cusparse.max_ratio : 0.0});
  }
};

/// The timings of one run: the rows and cuSPARSE's ALG1/ALG2 medians (the speedups' denominators).
struct run_rows {
  std::vector<row_result> rows;
  std::optional<double> alg1_us, alg2_us;
};

/// What the header and the report say of the problem.
struct run_summary {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::string x_origin;
  double bytes = 0, stencil_bytes = 0, flops = 0;
  int ranks = 1;  // > 1: reported as results.mpi_rank_count
};

/// Median time in microseconds of `reps` calls of f() after one warm-up call (host clock).
double median_cpu_us(const std::function<void()>& f, int reps);
/// The file, matrix, x and traffic lines every `spmv run` starts with.
void print_header(const run_options& opt, const run_summary& m, std::ostream& out);
/// The end of every `spmv run`: the table, the --json report, the --check verdict (gpukit::check_failed).
int finish_run(const run_options& opt, reduce::backend be, const run_summary& m, const run_rows& res, std::ostream& out);
/// The input can be opened, its extension is known, the outputs are not inputs (gpukit::bad_input).
void check_run_paths(const run_options& opt);
/// `spmv run` under mpirun with several ranks (run_distributed.cpp; built with GPUKIT_DISTRIBUTED).
int run_distributed_command(const run_options& opt);

}  // namespace spmv_app
