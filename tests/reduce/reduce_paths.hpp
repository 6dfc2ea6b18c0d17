// Helpers shared by the libreduce tests: the four ways of running one operation (CPU reference, CUDA
// with the result to the host, to device memory with pool scratch, to device memory with a workspace)
// and the error bound of the single-pass kernels.
#pragma once
#include <cstdint>
#include <string>
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
/// device (reduce.hpp derives it), or n - 1 for the CPU reference, whose double accumulation is
/// bounded by gamma_double(n - 1) <= gamma_T(n - 1) in any order.
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

}  // namespace test
