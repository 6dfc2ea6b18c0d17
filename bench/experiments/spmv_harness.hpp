// What the SpMV studies (spmv_variants, spmv_cluster) share: the class list from the command line, the
// fixed pseudo-random x, copies back to the host, cuSPARSE ALG1's result as the reference, and the main
// loop over the ANCHORS classes. Each study is one translation unit, hence the unnamed namespace.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "reduce/cuda/check.hpp"
#include "reduce/device_buffer.hpp"
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
  REDUCE_CUDA_CHECK(cudaMemcpy(h.data(), d, sizeof(V) * h.size(), cudaMemcpyDeviceToHost));
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
  REDUCE_CUDA_CHECK(cudaStreamSynchronize(stream));
  peer_reference<V, I> r;
  r.y = fetch(d_y, rows);
  for (V v : r.y) r.scale = std::max(r.scale, std::fabs(static_cast<double>(v)));
  return r;
}

/// Prints the GPU, runs `run_class(matrix, stream)` for each ANCHORS class named in `classes` (in the
/// set's order), prints "RESULT: <pass>" or "RESULT: FAIL"; returns main's exit code.
template <class RunClass>
int run_classes(const char* program, const std::vector<std::string>& classes, const char* pass, RunClass&& run_class,
                void (*before)(cudaStream_t) = nullptr) {
  try {
    cudaDeviceProp prop{};
    REDUCE_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("GPU: %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
    cudaStream_t stream;
    REDUCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (before) before(stream);
    bool ok = true;
    for (const auto& m : sparse::benchmark_matrices(false))
      for (const auto& c : classes)
        if (m.name == c) ok = run_class(m, stream) && ok;
    REDUCE_CUDA_CHECK(cudaStreamDestroy(stream));
    std::printf("\nRESULT: %s\n", ok ? pass : "FAIL");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    return 1;
  }
}

}  // namespace
}  // namespace experiments
