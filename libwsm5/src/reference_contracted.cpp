// wsm5::reference_contracted: the CPU reference (reference.cpp) compiled a second time with FMA
// contraction, a*b+c fused with one rounding wherever GCC finds it, as WRF's Fortran built with -mfma
// -ffp-contract=fast. A different but valid rounding of the same scheme (the project's WSM5
// specification: contraction moved the Fortran's q by <= 1e-9 kg/kg after one call), so that tests can
// show the accuracy checks pass on valid variation without a GPU.
// The FMA target applies only to what is defined below the pragma (this file's functions and physics.hpp's
// static helpers), never to the standard library's templates instantiated elsewhere, so no FMA code can
// reach the rest of the program; step() runs only where the CPU has FMA (available()).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "wsm5/wsm5.hpp"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#pragma GCC target("fma")
#define WSM5_REFERENCE_NAMESPACE reference_contracted_impl
#include "reference.cpp"

namespace wsm5::reference_contracted {
bool available() { return __builtin_cpu_supports("fma"); }
diagnostics step(domain& d, int threads) {
  if (!available()) throw std::runtime_error("wsm5::reference_contracted::step: this CPU has no FMA");
  return reference_contracted_impl::step(d, threads);
}
}  // namespace wsm5::reference_contracted

#else
namespace wsm5::reference_contracted {
bool available() { return false; }
diagnostics step(domain&, int) {
  throw std::runtime_error("wsm5::reference_contracted::step: built only with GCC for x86-64");
}
}  // namespace wsm5::reference_contracted
#endif
