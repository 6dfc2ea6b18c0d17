// The CPU path: plain loops, vectors in Value, scalars in double, every dot compensated (detail::dot2 of krylov_loops.hpp, close
// to the exactly rounded dot). Each method is written as the GPU path runs it (same updates, same scalar
// formulas, same stopping, breakdown and replacement tests, same iteration numbering), so the two differ only
// by the rounding of the dots (and of the updates, where nvcc contracts a * b + c into one fma).
#include "solve/reference.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "input_checks.hpp"
#include "krylov_loops.hpp"

namespace solve::reference {
namespace {

template <class Value, class Index>
void apply(const sparse::host_csr<Value, Index>& a, const std::vector<Value>& x, std::vector<Value>& y) {
  const auto& rp = a.row_ptr();
  const auto& ci = a.col_idx();
  const auto& v = a.values();
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double acc = 0;
    for (Index e = rp[i]; e < rp[i + 1]; ++e) acc += static_cast<double>(v[e]) * static_cast<double>(x[ci[e]]);
    y[i] = static_cast<Value>(acc);
  }
}

/// The serial space of krylov_loops.hpp: the host matrix, compensated dots, no communication.
template <class Value, class Index>
struct serial_space {
  const sparse::host_csr<Value, Index>& a;
  using accumulator = detail::dot2;
  void apply(const std::vector<Value>& x, std::vector<Value>& y) const { reference::apply(a, x, y); }
  accumulator accumulator_for(std::size_t) const { return {}; }
  template <int N>
  void finish(accumulator (&acc)[N], double (&out)[N]) const {
    for (int j = 0; j < N; ++j) out[j] = acc[j].value();
  }
  template <int N>
  struct pending {
    double sums[N];
  };
  template <int N>
  void start(accumulator (&acc)[N], pending<N>& p) const {
    finish(acc, p.sums);
  }
  template <int N>
  void wait(pending<N>& p, double (&out)[N]) const {
    for (int j = 0; j < N; ++j) out[j] = p.sums[j];
  }
  template <int N>
  void dots(const std::pair<const std::vector<Value>*, const std::vector<Value>*> (&xy)[N], double (&out)[N]) const {
    for (int j = 0; j < N; ++j) out[j] = dot(*xy[j].first, *xy[j].second);
  }
  double dot(const std::vector<Value>& x, const std::vector<Value>& y) const {
    detail::dot2 s;
    for (std::size_t i = 0; i < x.size(); ++i) s.add(static_cast<double>(x[i]), static_cast<double>(y[i]));
    return s.value();
  }
  std::vector<Value> jacobi_inverse() const { return detail::jacobi_inverse(a); }
};

}  // namespace

template <class Value, class Index>
void check_matrix(const sparse::host_csr<Value, Index>& a, bool need_diagonal) {
  detail::check_shape(a.rows(), a.cols());
  a.validate();
  for (std::int64_t i = 0; i < a.rows(); ++i)
    for (Index e = a.row_ptr()[i]; e < a.row_ptr()[i + 1]; ++e)
      if (!std::isfinite(static_cast<double>(a.values()[e])))
        throw std::invalid_argument("the matrix holds NaN or Inf (row " + std::to_string(i) + ", column " +
                                    std::to_string(a.col_idx()[e]) + ")");
  if (need_diagonal) (void)detail::jacobi_inverse(a);
}

template <class Value, class Index>
double true_relative_residual(const sparse::host_csr<Value, Index>& a, const std::vector<Value>& b,
                              const std::vector<Value>& x) {
  double num = 0, den = 0;
  const auto& rp = a.row_ptr();
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double acc = 0;
    for (Index e = rp[i]; e < rp[i + 1]; ++e)
      acc += static_cast<double>(a.values()[e]) * static_cast<double>(x[a.col_idx()[e]]);
    const double d = static_cast<double>(b[i]) - acc;
    num += d * d;
    den += static_cast<double>(b[i]) * b[i];
  }
  return den > 0 ? std::sqrt(num / den) : 0.0;
}

template <class Value, class Index>
result solve(const sparse::host_csr<Value, Index>& a, const std::vector<Value>& b, std::vector<Value>& x,
             const options& opt, bool use_guess) {
  detail::check_options(opt);
  check_matrix(a, opt.method == krylov_method::pcg);
  detail::check_vector_size("right-hand side", static_cast<std::int64_t>(b.size()), a.rows());
  for (std::size_t i = 0; i < b.size(); ++i)
    if (!std::isfinite(static_cast<double>(b[i])))
      throw std::invalid_argument("the right-hand side holds NaN or Inf (entry " + std::to_string(i) + ")");
  if (use_guess) detail::check_vector_size("initial guess", static_cast<std::int64_t>(x.size()), a.rows());
  else x.assign(b.size(), Value(0));

  serial_space<Value, Index> sp{a};
  result res = detail::run_krylov(sp, b, x, opt);
  res.true_relative_residual = true_relative_residual(a, b, x);
  return res;
}

#define SOLVE_REFERENCE(V, I)                                                                                    \
  template result solve<V, I>(const sparse::host_csr<V, I>&, const std::vector<V>&, std::vector<V>&,            \
                              const options&, bool);                                                            \
  template double true_relative_residual<V, I>(const sparse::host_csr<V, I>&, const std::vector<V>&,            \
                                               const std::vector<V>&);                                          \
  template void check_matrix<V, I>(const sparse::host_csr<V, I>&, bool);
SOLVE_REFERENCE(float, std::int32_t)
SOLVE_REFERENCE(float, std::int64_t)
SOLVE_REFERENCE(double, std::int32_t)
SOLVE_REFERENCE(double, std::int64_t)
#undef SOLVE_REFERENCE

}  // namespace solve::reference
