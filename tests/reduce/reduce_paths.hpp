// Helpers shared by the libreduce tests: the four ways of running one operation (CPU reference, CUDA
// with the result to the host, to device memory with pool scratch, to device memory with a workspace)
// and the error bound of the single-pass kernels.
#pragma once
#include <cstdint>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "gpukit/device_buffer.hpp"
#include "reduce/reduce.hpp"
#include "test_support.hpp"

namespace test {

enum class path { reference, cuda_host_result, cuda_device_result, cuda_workspace };
inline const char* to_string(path p) {
  switch (p) {
    case path::reference: return "reference";
    case path::cuda_host_result: return "cuda (result to host)";
    case path::cuda_device_result: return "cuda (result on device, pool scratch)";
    case path::cuda_workspace: return "cuda (result on device, workspace)";
  }
  return "?";
}
inline const std::vector<path> cuda_paths = {path::cuda_host_result, path::cuda_device_result, path::cuda_workspace};
inline const std::vector<path> cpu_paths = {path::reference};

/// Runs one operation through path p on host vector x. ref(p, n) and host(p, n) return the result;
/// dev(p, n, out) and ws(p, n, out, workspace) write it to device memory, which is poisoned first.
/// The workspace path runs twice on one workspace: the second call checks that the first left it
/// ready (counters and accumulators back at zero).
template <class Out, class T, class Ref, class Host, class Dev, class Ws>
Out run_path(path p, const std::vector<T>& x, Ref ref, Host host, Dev dev, Ws ws_call) {
  const auto n = static_cast<std::int64_t>(x.size());
  if (p == path::reference) return ref(x.data(), n);
  gpukit::device_buffer<T> d(x);
  if (p == path::cuda_host_result) return host(d.data(), n);
  gpukit::device_buffer<Out> out(1);
  out.fill_bytes(poison_byte);
  if (p == path::cuda_workspace) {
    reduce::workspace ws;
    ws_call(d.data(), n, out.data(), ws);
    out.fill_bytes(poison_byte);
    ws_call(d.data(), n, out.data(), ws);
  } else {
    dev(d.data(), n, out.data());
  }
  return out.download()[0];
}

/// The k of gamma(k) for n elements of T: the single-pass kernels' longest rounding chain on this
/// device (reduce.hpp derives it), or n - 1 for the CPU reference's double accumulation (any order).
/// NOTE the reference's chain is in DOUBLE: bound it with reduction_bound(), not gamma_T(chain): for
/// float gamma_T(n - 1) sum|x| ~ 3e-8 n^2 / 2 outgrew a zero-mean sum from n ~ 1e5 on (issue 19).
template <class T>
double chain(path p, std::int64_t n) {
  if (p == path::reference) return static_cast<double>(n > 1 ? n - 1 : 0);
  return static_cast<double>(reduce::single_pass_chain_length(n, sizeof(T)));
}

/// Unit roundoff of T.
template <class T>
double unit_roundoff() {
  return std::numeric_limits<T>::epsilon() / 2.0;
}

/// Error bound of the reference backend's float reductions of n terms t_i (x_i, x_i^2 or x_i y_i; `extra`
/// = roundings to form one term in double: 0 for a sum, 1 for a product of doubles, 0 for a product of
/// floats, which is exact in double): the terms are summed in DOUBLE, so
///   |s_d - exact| <= gamma_double(n - 1 + extra) sum|t_i| =: e_d   (Higham 4.2, any order),
/// then rounded once to T: |fl_T(s_d) - s_d| <= u_T |s_d| <= u_T (|exact| + e_d).
template <class T>
double reference_bound(std::int64_t n, long double abs_sum, long double exact, int extra = 0) {
  const double e_d = gamma<double>(static_cast<double>(n > 1 ? n - 1 : 0) + extra) * static_cast<double>(abs_sum);
  return e_d + unit_roundoff<T>() * (std::fabs(static_cast<double>(exact)) + e_d);
}

/// Error bound of a float reduction of n terms through path p: the reference's (above), or for the CUDA
/// single-pass kernels gamma_T(k + extra) sum|t_i| with k = single_pass_chain_length(n) (reduce.hpp: no
/// term goes through more than k roundings in T; `extra` roundings form a term: 1 for x_i y_i or x_i^2).
/// On an H100 k(3000017 floats) ~ 130, so the bound is ~ 8e-6 sum|t|, not gamma_T(n) ~ 0.2 sum|t|.
template <class T>
double reduction_bound(path p, std::int64_t n, long double abs_sum, long double exact, int extra = 0) {
  if (p == path::reference) return reference_bound<T>(n, abs_sum, exact, std::is_same_v<T, double> ? extra : 0);
  return gamma<T>(chain<T>(p, n) + extra) * static_cast<double>(abs_sum);
}

}  // namespace test
