#include "solve/problems.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "sparse/generate.hpp"

namespace solve::problems {
namespace {

/// A 5-point operator on an n x n grid from the face coefficients: kx(i, j) couples (i, j) and (i + 1, j),
/// ky(i, j) couples (i, j) and (i, j + 1); the boundary faces (Dirichlet) add their coefficient to the
/// diagonal only. Row index i + n j.
template <class Value, class Index, class Kx, class Ky>
sparse::host_csr<Value, Index> five_point(std::int64_t n, Kx kx, Ky ky) {
  if (n <= 0) throw std::invalid_argument("grid side must be positive");
  std::vector<Index> ptr{0}, col;
  std::vector<Value> val;
  col.reserve(static_cast<std::size_t>(5 * n * n));
  val.reserve(static_cast<std::size_t>(5 * n * n));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      const double w = kx(i - 1, j), e = kx(i, j), s = ky(i, j - 1), nn = ky(i, j);
      const std::int64_t row = i + n * j;
      auto put = [&](std::int64_t c, double v) {
        col.push_back(static_cast<Index>(c));
        val.push_back(static_cast<Value>(v));
      };
      if (j > 0) put(row - n, -s);
      if (i > 0) put(row - 1, -w);
      put(row, w + e + s + nn);
      if (i + 1 < n) put(row + 1, -e);
      if (j + 1 < n) put(row + n, -nn);
      ptr.push_back(static_cast<Index>(col.size()));
    }
  return sparse::host_csr<Value, Index>(n * n, n * n, std::move(ptr), std::move(col), std::move(val));
}

}  // namespace

template <class Value, class Index>
sparse::host_csr<Value, Index> poisson_2d(std::int64_t n) {
  return sparse::generate_laplace_2d<Value, Index>(n);
}
template <class Value, class Index>
sparse::host_csr<Value, Index> poisson_3d(std::int64_t n) {
  return sparse::generate_laplace_3d<Value, Index>(n);
}

template <class Value, class Index>
sparse::host_csr<Value, Index> anisotropic_2d(std::int64_t n, double eps) {
  if (!(eps > 0)) throw std::invalid_argument("anisotropy eps must be positive");
  return five_point<Value, Index>(n, [eps](std::int64_t, std::int64_t) { return eps; },
                                  [](std::int64_t, std::int64_t) { return 1.0; });
}

template <class Value, class Index>
sparse::host_csr<Value, Index> jumping_2d(std::int64_t n, double contrast) {
  if (!(contrast > 0)) throw std::invalid_argument("coefficient contrast must be positive");
  auto k = [n, contrast](std::int64_t i, std::int64_t j) {
    const bool inside = 4 * i >= n && 4 * i < 3 * n && 4 * j >= n && 4 * j < 3 * n;
    return inside ? contrast : 1.0;
  };
  auto harmonic = [](double a, double b) { return 2 * a * b / (a + b); };
  // Faces outside the grid take the cell's own coefficient (Dirichlet wall).
  auto kx = [=](std::int64_t i, std::int64_t j) {
    if (i < 0) return k(0, j);
    if (i + 1 >= n) return k(n - 1, j);
    return harmonic(k(i, j), k(i + 1, j));
  };
  auto ky = [=](std::int64_t i, std::int64_t j) {
    if (j < 0) return k(i, 0);
    if (j + 1 >= n) return k(i, n - 1);
    return harmonic(k(i, j), k(i, j + 1));
  };
  return five_point<Value, Index>(n, kx, ky);
}

template <class Value, class Index>
sparse::host_csr<Value, Index> graph_laplacian_plus_identity(const sparse::host_csr<Value, Index>& p) {
  if (p.rows() != p.cols()) throw std::invalid_argument("graph Laplacian of a non-square pattern");
  std::vector<Index> ptr{0}, col;
  std::vector<Value> val;
  for (std::int64_t i = 0; i < p.rows(); ++i) {
    std::vector<std::int64_t> nb;
    for (Index e = p.row_ptr()[i]; e < p.row_ptr()[i + 1]; ++e)
      if (p.col_idx()[e] != i) nb.push_back(p.col_idx()[e]);
    std::sort(nb.begin(), nb.end());
    nb.erase(std::unique(nb.begin(), nb.end()), nb.end());
    bool diag_done = false;
    for (std::int64_t c : nb) {
      if (!diag_done && c > i) {
        col.push_back(static_cast<Index>(i));
        val.push_back(static_cast<Value>(nb.size() + 1));
        diag_done = true;
      }
      col.push_back(static_cast<Index>(c));
      val.push_back(Value(-1));
    }
    if (!diag_done) {
      col.push_back(static_cast<Index>(i));
      val.push_back(static_cast<Value>(nb.size() + 1));
    }
    ptr.push_back(static_cast<Index>(col.size()));
  }
  return sparse::host_csr<Value, Index>(p.rows(), p.cols(), std::move(ptr), std::move(col), std::move(val));
}

#define SOLVE_PROBLEMS(V, I)                                                                        \
  template sparse::host_csr<V, I> poisson_2d<V, I>(std::int64_t);                                   \
  template sparse::host_csr<V, I> poisson_3d<V, I>(std::int64_t);                                   \
  template sparse::host_csr<V, I> anisotropic_2d<V, I>(std::int64_t, double);                       \
  template sparse::host_csr<V, I> jumping_2d<V, I>(std::int64_t, double);                           \
  template sparse::host_csr<V, I> graph_laplacian_plus_identity<V, I>(const sparse::host_csr<V, I>&);
SOLVE_PROBLEMS(float, std::int32_t)
SOLVE_PROBLEMS(float, std::int64_t)
SOLVE_PROBLEMS(double, std::int32_t)
SOLVE_PROBLEMS(double, std::int64_t)
#undef SOLVE_PROBLEMS

}  // namespace solve::problems
