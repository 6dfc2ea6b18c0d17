// Model problems for solver tests and benchmarks (host CSR, sorted unique columns, symmetric positive
// definite unless said otherwise). No CUDA syntax.
#pragma once
#include <cstdint>

#include "sparse/csr.hpp"

namespace solve::problems {

/// 5-point Laplacian on an n x n grid (Dirichlet): sparse::generate_laplace_2d, 4 / -1. cond ~ 0.4 n^2.
template <class Value, class Index>
sparse::host_csr<Value, Index> poisson_2d(std::int64_t n);
/// 7-point Laplacian on an n^3 grid: sparse::generate_laplace_3d, 6 / -1.
template <class Value, class Index>
sparse::host_csr<Value, Index> poisson_3d(std::int64_t n);
/// Anisotropic 2-D diffusion -eps u_xx - u_yy on an n x n grid: couplings -eps (x) and -1 (y), diagonal
/// 2 eps + 2. Small eps makes the x-coupling weak: Jacobi does not help and CG needs more iterations.
template <class Value, class Index>
sparse::host_csr<Value, Index> anisotropic_2d(std::int64_t n, double eps);
/// -div(k grad u) on an n x n grid, k = `contrast` in the centre square [n/4, 3n/4)^2 and 1 elsewhere, the
/// face coefficient the harmonic mean of its two cells: a jumping coefficient, where Jacobi pays off.
template <class Value, class Index>
sparse::host_csr<Value, Index> jumping_2d(std::int64_t n, double contrast);
/// L + I for the graph of a structurally symmetric matrix `pattern` (values ignored, diagonal ignored):
/// L = D - adjacency. SPD with eigenvalues in [1, 1 + 2 max degree].
template <class Value, class Index>
sparse::host_csr<Value, Index> graph_laplacian_plus_identity(const sparse::host_csr<Value, Index>& pattern);

}  // namespace solve::problems
