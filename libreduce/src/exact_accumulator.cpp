// Host operations on the public exact accumulator state (reduce/exact_accumulator.hpp): merging,
// normalization and the single rounding, on the same integer arithmetic as the reproducible sum's
// kernel and CPU twin (include/reduce/detail/exact_sum.hpp).
#include "reduce/exact_accumulator.hpp"

#include "reduce/detail/exact_sum.hpp"

namespace reduce {

template <class T>
void normalize(exact_accumulator<T>& a) {
  detail::normalize_limbs(a.limb, exact_accumulator<T>::limbs);
}

template <class T>
void merge(exact_accumulator<T>& into, const exact_accumulator<T>& from) {
  // Two normalized states: each lower limb sum < 2^33, far inside int64. Non-normalized inputs are
  // fine too as long as the caller's limb sums stay below 2^63 (see the header).
  for (int i = 0; i < exact_accumulator<T>::limbs; ++i) into.limb[i] += from.limb[i];
  into.nan += from.nan;
  into.pos_inf += from.pos_inf;
  into.neg_inf += from.neg_inf;
  normalize(into);
}

template <class T>
T round_exact(const exact_accumulator<T>& a) {
  using tr = detail::exact_traits<T>;
  static_assert(tr::limbs == exact_accumulator<T>::limbs, "the public state holds the private limbs");
  const unsigned flags = (a.nan != 0 ? detail::exact_nan : 0u) | (a.pos_inf != 0 ? detail::exact_pos_inf : 0u) |
                         (a.neg_inf != 0 ? detail::exact_neg_inf : 0u);
  std::uint32_t digits[tr::limbs];
  return detail::exact_to_float<T>(a.limb, flags, digits);
}

template void normalize<float>(exact_accumulator<float>&);
template void normalize<double>(exact_accumulator<double>&);
template void merge<float>(exact_accumulator<float>&, const exact_accumulator<float>&);
template void merge<double>(exact_accumulator<double>&, const exact_accumulator<double>&);
template float round_exact<float>(const exact_accumulator<float>&);
template double round_exact<double>(const exact_accumulator<double>&);

}  // namespace reduce
