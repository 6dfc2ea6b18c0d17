#include "solve/types.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace solve {

const char* to_string(krylov_method m) {
  switch (m) {
    case krylov_method::cg: return "cg";
    case krylov_method::pcg: return "pcg";
    case krylov_method::bicgstab: return "bicgstab";
    case krylov_method::pipecg: return "pipecg";
  }
  return "?";
}

krylov_method parse_krylov_method(std::string_view name) {
  for (krylov_method m : all_krylov_methods())
    if (name == to_string(m)) return m;
  throw std::invalid_argument("unknown Krylov method '" + std::string(name) + "' (cg, pcg, bicgstab, pipecg)");
}

std::vector<krylov_method> all_krylov_methods() {
  return {krylov_method::cg, krylov_method::pcg, krylov_method::bicgstab, krylov_method::pipecg};
}

const char* to_string(stop_reason r) {
  switch (r) {
    case stop_reason::converged: return "converged";
    case stop_reason::max_iterations: return "max_iterations";
    case stop_reason::breakdown: return "breakdown";
    case stop_reason::non_finite: return "non_finite";
    case stop_reason::stagnated: return "stagnated";
  }
  return "?";
}

std::int64_t l2_window_bytes(std::int64_t vector_bytes, std::int64_t l2_bytes, std::int64_t persisting_max,
                             l2_window policy) {
  if (policy == l2_window::off || vector_bytes <= 0 || persisting_max <= 0) return 0;
  const bool in_range = vector_bytes * 16 >= l2_bytes && vector_bytes * 2 <= persisting_max;
  if (in_range) return vector_bytes;
  if (policy == l2_window::automatic) return 0;
  return std::min(vector_bytes, persisting_max / 4);
}

namespace {
std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}
}  // namespace

std::string result::summary() const {
  const std::string m = to_string(method);
  auto replaced = [this]() -> std::string {
    if (replacements == 0) return "";
    return " (" + std::to_string(replacements) + (replacements == 1 ? " residual replacement)" : " residual replacements)");
  };
  switch (reason) {
    case stop_reason::converged:
      return m + " converged in " + std::to_string(iterations) + " iterations" + replaced() +
             ", true relative residual " + sci(true_relative_residual);
    case stop_reason::max_iterations:
      return m + " did not converge in " + std::to_string(iterations) + " iterations" + replaced() + ": residual " +
             sci(rhs_norm > 0 ? residual_norm / rhs_norm : residual_norm) + " relative to ||b||, true relative residual " +
             sci(true_relative_residual);
    case stop_reason::stagnated:
      return m + " stagnated after " + std::to_string(iterations) + " iterations" + replaced() +
             ": the true relative residual " + sci(true_relative_residual) +
             " stopped falling above the tolerance (below what this precision attains here)";
    case stop_reason::breakdown: {
      std::string why = breakdown.quantity == "p.Ap" ? " <= 0 (is the matrix symmetric positive definite?)" : " == 0";
      return m + " breakdown at iteration " + std::to_string(breakdown.iteration) + ": " + breakdown.quantity +
             " = " + sci(breakdown.value) + why;
    }
    case stop_reason::non_finite:
      return m + " stopped at iteration " + std::to_string(breakdown.iteration) + ": " + breakdown.quantity + " = " +
             sci(breakdown.value) + " is not finite";
  }
  return m;
}

}  // namespace solve
