// libdist's private helpers: MPI error checks and the MPI / NCCL datatypes of the value types.
#pragma once
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <vector>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace dist::detail {

/// Throws std::runtime_error "WHAT: <MPI error string>" unless rc is MPI_SUCCESS. (MPI's default error
/// handler aborts before this sees an error; a communicator with MPI_ERRORS_RETURN gets here.)
inline void mpi_check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(std::string(what) + ": " + std::string(text, static_cast<std::size_t>(length)));
}

template <class T>
MPI_Datatype mpi_type() {
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, std::int32_t>) return MPI_INT32_T;
  else if constexpr (std::is_same_v<T, std::int64_t>) return MPI_INT64_T;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return MPI_UINT32_T;
  else {
    static_assert(std::is_same_v<T, std::uint64_t>, "a type libdist reduces");
    return MPI_UINT64_T;
  }
}

/// Element counts travel as MPI int; a count past INT_MAX is refused rather than truncated.
inline int mpi_count(std::int64_t n, const char* what) {
  if (n < 0 || n > 2147483647)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(n) +
                                " elements in one MPI message (the MPI-3 interface takes int counts)");
  return static_cast<int>(n);
}

/// sqrt(sum_k nk^2) of the P local norms, in double. nk^2 can overflow double only for double data with
/// a norm past 1e154, so the norms are scaled by the largest (exact power-of-two scaling would be the
/// same; a division by the max costs one rounding, covered by the 2^-52 of the bound).
template <class T>
T combine_norms(const std::vector<T>& norms) {
  double largest = 0;
  for (T v : norms) {
    if (std::isnan(static_cast<double>(v))) return v;
    largest = std::fmax(largest, static_cast<double>(v));
  }
  if (largest == 0 || std::isinf(largest)) return static_cast<T>(largest);
  double s = 0;
  for (T v : norms) {
    const double r = static_cast<double>(v) / largest;
    s += r * r;
  }
  return static_cast<T>(largest * std::sqrt(s));
}
}  // namespace dist::detail
