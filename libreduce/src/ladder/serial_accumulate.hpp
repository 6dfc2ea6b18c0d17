// The serial rung's loop, shared by the GPU kernel (one thread) and its CPU twin
// reduce::reference::ladder_serial_sum, so the two run the same code in the same order.
#pragma once
#include <cstdint>
#include <type_traits>

#include "reduce/operators.hpp"

namespace reduce::detail {

/// sum of in[0..n) in index order, in T. Integers accumulate unsigned so overflow wraps modulo 2^bits
/// (signed overflow would be undefined behaviour on both host and device).
template <class T>
REDUCE_HD T serial_accumulate(const T* in, std::int64_t n) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    U acc = 0;
    for (std::int64_t i = 0; i < n; ++i) acc = static_cast<U>(acc + static_cast<U>(in[i]));
    return static_cast<T>(acc);
  } else {
    T acc = T(0);
    for (std::int64_t i = 0; i < n; ++i) acc = acc + in[i];
    return acc;
  }
}

}  // namespace reduce::detail
