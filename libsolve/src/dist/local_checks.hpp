// The checks every rank makes on its own part before a distributed solve (CPU and GPU paths), naming the
// global row, so that dist::all_or_none can report the first bad rank's words on every rank.
#pragma once
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "dist/csr.hpp"
#include "input_checks.hpp"

namespace solve::detail {

/// NaN / Inf in this rank's rows of A.
template <class Value, class Index>
void check_local_matrix(const dist::distributed_csr<Value, Index>& a) {
  for (const auto* part : {&a.interior(), &a.boundary()}) {
    const auto& rows = part == &a.interior() ? a.interior_rows() : a.boundary_rows();
    for (std::int64_t i = 0; i < part->rows(); ++i)
      for (Index e = part->row_ptr()[static_cast<std::size_t>(i)]; e < part->row_ptr()[static_cast<std::size_t>(i) + 1]; ++e)
        if (!std::isfinite(static_cast<double>(part->values()[static_cast<std::size_t>(e)])))
          throw std::invalid_argument("the matrix holds NaN or Inf (row " +
                                      std::to_string(a.first_row() + rows[static_cast<std::size_t>(i)]) + ")");
  }
}

/// NaN / Inf in this rank's rows or right-hand side, named by global row.
template <class Value, class Index>
void check_local_inputs(const dist::distributed_csr<Value, Index>& a, const std::vector<Value>& b, const std::vector<Value>& x,
                        bool use_guess) {
  check_vector_size("right-hand side", static_cast<std::int64_t>(b.size()), a.local_rows());
  if (use_guess) check_vector_size("initial guess", static_cast<std::int64_t>(x.size()), a.local_rows());
  check_local_matrix(a);
  for (std::size_t i = 0; i < b.size(); ++i)
    if (!std::isfinite(static_cast<double>(b[i])))
      throw std::invalid_argument("the right-hand side holds NaN or Inf (entry " +
                                  std::to_string(a.first_row() + static_cast<std::int64_t>(i)) + ")");
}

/// pcg: a zero or non-finite diagonal entry of this rank's rows, named by global row.
template <class Value, class Index>
void check_local_diagonal(const dist::distributed_csr<Value, Index>& a) {
  const auto& d = a.diagonal();
  for (std::size_t i = 0; i < d.size(); ++i)
    if (!(std::isfinite(static_cast<double>(d[i])) && d[i] != Value(0)))
      throw std::invalid_argument("diagonal entry " + std::to_string(static_cast<double>(d[i])) + " at row " +
                                  std::to_string(a.first_row() + static_cast<std::int64_t>(i)) +
                                  ": Jacobi preconditioning (pcg) needs a nonzero finite diagonal");
}

}  // namespace solve::detail
