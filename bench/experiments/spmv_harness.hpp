// What the SpMV studies (spmv_variants, spmv_cluster, spmv_windowed) share: the class list from the
// command line, the fixed pseudo-random x, copies back to the host, cuSPARSE ALG1's result as the
// reference, the timing of variants against it, and the main loop over the ANCHORS classes. Each study is one translation unit, hence the unnamed namespace.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "gpukit/cuda_timer.hpp"

#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"
#include "sparse/csr.hpp"
#include "sparse/generate.hpp"
#include "sparse/spmv.hpp"

namespace experiments {
namespace {

/// "a,b,c" -> {"a", "b", "c"}.
inline std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> out;
  for (std::size_t p = 0; p <= list.size();) {
    const std::size_t q = std::min(list.find(',', p), list.size());
    out.push_back(list.substr(p, q - p));
    p = q + 1;
  }
  return out;
}

/// The x every SpMV study multiplies: uniform in [-1, 1) from a fixed LCG, so runs are comparable.
template <class V>
std::vector<V> fixed_random_x(std::int64_t n) {
  std::vector<V> x(static_cast<std::size_t>(n));
  std::uint64_t state = 12345;
  for (auto& v : x) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<V>(static_cast<double>(state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
  return x;
}

template <class V>
std::vector<V> fetch(const V* d, std::int64_t n) {
  std::vector<V> h(static_cast<std::size_t>(n));
  GPUKIT_CUDA_CHECK(cudaMemcpy(h.data(), d, sizeof(V) * h.size(), cudaMemcpyDeviceToHost));
  return h;
}

/// cuSPARSE ALG1's y = A x (the reference every variant is compared with) and max |y|.
template <class V, class I>
struct peer_reference {
  std::vector<V> y;
  double scale = 0;
  /// Within 1e-4 max|y| of the reference at every row, and no NaN.
  bool close(const std::vector<V>& got, double* worst_out) const {
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - y[i]));
    if (worst_out) *worst_out = worst;
    return worst <= 1e-4 * std::max(scale, 1e-30) && worst == worst;
  }
};

template <class V, class I>
peer_reference<V, I> run_peer(sparse::cusparse_spmv<V, I>& peer, V* d_y, std::int64_t rows, cudaStream_t stream) {
  peer.run(V(1), V(0), stream);
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  peer_reference<V, I> r;
  r.y = fetch(d_y, rows);
  for (V v : r.y) r.scale = std::max(r.scale, std::fabs(static_cast<double>(v)));
  return r;
}

/// A study's matrix of one ANCHORS class on the host and the device, the fixed x uploaded, and the y
/// buffers of the variants and of the peer.
template <class V, class I>
struct study_matrix {
  sparse::host_csr<V, I> host;
  sparse::device_csr<V, I> d;
  sparse::csr_view<V, I> a;
  std::vector<V> hx;
  gpukit::device_buffer<V> x, y, y_peer;
  explicit study_matrix(const sparse::benchmark_matrix& m)
      : host(sparse::generate<V, I>(m.params)), d(host), a(d.view()), hx(fixed_random_x<V>(a.cols)), x(hx),
        y(a.rows), y_peer(a.rows) {}
};

/// One kernel variant of a study: its name, its launch into y, and (optionally) the result it must equal
/// bit for bit.
template <class V>
struct spmv_variant {
  std::string name;
  std::function<void(cudaStream_t)> launch;
  const std::vector<V>* bitwise = nullptr;
};

/// Times cuSPARSE ALG1 (the reference `ref` came from it) and each variant: y poisoned, one checked call,
/// then the median of 41 timed calls after 5 warm-ups (`once`: the checked call only, for ncu). Prints
/// one line each; returns whether every variant is close to the reference (and bitwise where asked).
template <class V, class I>
bool time_variants(const std::string& matrix, const sparse::csr_view<V, I>& a, sparse::cusparse_spmv<V, I>& peer,
                   const peer_reference<V, I>& ref, V* y, const std::vector<spmv_variant<V>>& vs, cudaStream_t stream,
                   bool once = false, int width = 58) {
  gpukit::cuda_timer timer(stream);
  std::printf("\n%s: %lld rows, %lld cols, %lld entries\n", matrix.c_str(), static_cast<long long>(a.rows),
              static_cast<long long>(a.cols), static_cast<long long>(a.nnz));
  const double alg1 = once ? 1.0 : timer.time([&] { peer.run(V(1), V(0), stream); }, {5, 41}).median_us;
  std::printf("  %-*s %9.1f us\n", width, "cuSPARSE ALG1", alg1);
  bool ok = true;
  for (const auto& v : vs) {
    GPUKIT_CUDA_CHECK(cudaMemsetAsync(y, 0xFF, sizeof(V) * static_cast<std::size_t>(a.rows), stream));
    v.launch(stream);
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<V> got = fetch(y, a.rows);
    double worst = 0;
    const bool close = ref.close(got, &worst);
    const bool same = !v.bitwise || std::memcmp(got.data(), v.bitwise->data(), sizeof(V) * got.size()) == 0;
    ok = ok && close && same;
    const double us = once ? 1.0 : timer.time([&] { v.launch(stream); }, {5, 41}).median_us;
    std::printf("  %-*s %9.1f us  %.3fx ALG1  max|diff| %.2e%s%s\n", width, v.name.c_str(), us, alg1 / us, worst,
                close ? "" : "  FAR FROM cuSPARSE", !v.bitwise ? "" : same ? "  =scalar" : "  MISMATCH vs scalar");
  }
  return ok;
}

/// Prints the GPU, runs `run_class(matrix, stream)` for each ANCHORS class named in `classes` (in the
/// set's order), prints "RESULT: <pass>" or "RESULT: FAIL"; returns main's exit code.
template <class RunClass>
int run_classes(const char* program, const std::vector<std::string>& classes, const char* pass, RunClass&& run_class,
                void (*before)(cudaStream_t) = nullptr, const std::vector<sparse::benchmark_matrix>& extra = {}) {
  try {
    cudaDeviceProp prop{};
    GPUKIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("GPU: %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
    cudaStream_t stream;
    GPUKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (before) before(stream);
    bool ok = true;
    for (const auto& m : sparse::benchmark_matrices(false))
      for (const auto& c : classes)
        if (m.name == c) ok = run_class(m, stream) && ok;
    for (const auto& m : extra) ok = run_class(m, stream) && ok;
    GPUKIT_CUDA_CHECK(cudaStreamDestroy(stream));
    std::printf("\nRESULT: %s\n", ok ? pass : "FAIL");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    return 1;
  }
}

}  // namespace
}  // namespace experiments
