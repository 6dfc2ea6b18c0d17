// The (Value, Index) pairs that libsparse's templates are compiled for, listed once: each source file
// instantiates its templates with SPARSE_FOR_EACH_VALUE_INDEX(its macro). The public headers promise the
// same four (csr.hpp's extern templates; "Value is float or double, Index std::int32_t or std::int64_t").
#pragma once
#include <cstdint>

#define SPARSE_FOR_EACH_VALUE_INDEX(X) \
  X(float, std::int32_t)               \
  X(float, std::int64_t)               \
  X(double, std::int32_t)              \
  X(double, std::int64_t)
