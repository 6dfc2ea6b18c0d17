// Experiment (not part of the default build; -DGPUKIT_BUILD_EXPERIMENTS=ON): cache-policy variants of
// the SpMV kernels on the gather-bound ANCHORS classes, each timed against cuSPARSE ALG1 in the same run.
//
//   spmv_variants [--once] [--classes random16,powerlaw,random1000,random2]
//
// Question: random16, powerlaw and random1000 are bound by random 4-byte gathers of x from L2 (about
// 125-133 G gathers/s for every variant and for cuSPARSE). Does keeping x resident in L2 (evict_last
// policy), streaming the matrix entries past it (evict_first, L1::no_allocate), or bypassing L1 for x
// move that bound? Each variant runs the same arithmetic in the same order as the library's kernel, so
// its y must be BITWISE equal to the library default's; every variant is also compared with cuSPARSE.
// --once: one call per variant, no timing (for ncu).
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cuda_timer.hpp"
#include "reduce/cuda/check.hpp"
#include "reduce/device_buffer.hpp"
#include "sparse/csr.hpp"
#include "sparse/generate.hpp"
#include "sparse/spmv.hpp"
#include "spmv_adaptive.cuh"
#include "spmv_plan_state.hpp"
#include "spmv_row_kernels.cuh"

namespace {
using V = float;
using I = std::int32_t;
using sparse::detail::entry_load;
using sparse::detail::gather;

const char* name_of(entry_load e) {
  return e == entry_load::cached ? "cached" : e == entry_load::streaming ? "cs" : "once";
}
const char* name_of(gather g) {
  return g == gather::ldg ? "ldg" : g == gather::l2_only ? "cg" : g == gather::l2_keep ? "keep" : "keep_noL1";
}

struct variant {
  std::string name;
  std::function<void(cudaStream_t)> launch;
  bool is_reference = false;  // the first of its family: the others of the family must match it bitwise
  std::string family;          // variants that run the same arithmetic in the same order
};

int sm_count() {
  int d = 0, s = 0;
  REDUCE_CUDA_CHECK(cudaGetDevice(&d));
  REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&s, cudaDevAttrMultiProcessorCount, d));
  return s;
}

int grid_for(std::int64_t items, std::int64_t per_block) {
  const std::int64_t wanted = (items + per_block - 1) / per_block;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(wanted, 16 * sm_count())));
}

template <int W, bool Chunked, entry_load E, gather G>
variant vector_variant(const sparse::csr_view<V, I>& a, const V* x, V* y, bool ref = false) {
  const int grid = grid_for(a.rows, 256 / W);
  return {"vector W=" + std::to_string(W) + (Chunked ? " chunked" : "") + " entries=" + name_of(E) + " x=" + name_of(G),
          [=](cudaStream_t s) {
            sparse::detail::spmv_vector_kernel<W, Chunked, E, G><<<grid, 256, 0, s>>>(a, V(1), x, V(0), y);
            REDUCE_CHECK_LAUNCH();
          },
          ref, "vector" + std::to_string(W) + (Chunked ? "c" : "")};
}

template <gather G>
variant block_variant(const sparse::csr_view<V, I>& a, const V* x, V* y, bool ref = false) {
  const int grid = grid_for(a.rows, 1);
  return {std::string("block_per_row 128 x=") + name_of(G),
          [=](cudaStream_t s) {
            sparse::detail::spmv_block_per_row_kernel<128, G><<<grid, 128, 0, s>>>(a, V(1), x, V(0), y);
            REDUCE_CHECK_LAUNCH();
          },
          ref, "block"};
}

template <entry_load E, gather G>
variant adaptive_variant(const sparse::spmv_plan<V, I>& plan, const V* x, V* y, bool ref = false) {
  const auto& st = plan.state();
  const auto a = plan.matrix();
  return {std::string("adaptive entries=") + name_of(E) + " x=" + name_of(G),
          [=, &st](cudaStream_t s) {
            auto* partials = reinterpret_cast<V*>(const_cast<double*>(st.partials.data()));
            sparse::detail::spmv_adaptive_kernel<E, G><<<static_cast<unsigned>(st.partition.tiles.size()),
                                                        sparse::detail::tile_threads, 0, s>>>(
                a, V(1), x, V(0), y, st.tiles.data(), st.segments.data(), st.warp_rows.data(), partials);
            REDUCE_CHECK_LAUNCH();
            const auto n = static_cast<std::int64_t>(st.partition.split_rows.size());
            if (n > 0) {
              sparse::detail::spmv_combine_split_kernel<<<static_cast<unsigned>((n + 127) / 128), 128, 0, s>>>(
                  st.split_rows.data(), n, partials, V(1), V(0), y);
              REDUCE_CHECK_LAUNCH();
            }
          },
          ref, "adaptive"};
}

std::vector<V> fetch(const V* d, std::int64_t n) {
  std::vector<V> h(static_cast<std::size_t>(n));
  REDUCE_CUDA_CHECK(cudaMemcpy(h.data(), d, sizeof(V) * h.size(), cudaMemcpyDeviceToHost));
  return h;
}

bool run_class(const sparse::benchmark_matrix& m, bool once, cudaStream_t stream) {
  const auto host = sparse::generate<V, I>(m.params);
  sparse::device_csr<V, I> d(host);
  const auto a = d.view();
  std::vector<V> hx(static_cast<std::size_t>(a.cols));
  std::uint64_t state = 12345;
  for (auto& v : hx) {  // fixed pseudo-random x in [-1, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<V>(static_cast<double>(state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
  reduce::device_buffer<V> x(hx.size()), y(static_cast<std::size_t>(a.rows)), y_peer(static_cast<std::size_t>(a.rows));
  REDUCE_CUDA_CHECK(cudaMemcpy(x.data(), hx.data(), sizeof(V) * hx.size(), cudaMemcpyHostToDevice));
  const std::int64_t bytes = a.nnz * static_cast<std::int64_t>(sizeof(V) + sizeof(I)) + (a.rows + 1) * 4 +
                             a.cols * 4 + a.rows * 4;

  std::vector<variant> vs;
  std::unique_ptr<sparse::spmv_plan<V, I>> plan;
  if (m.name == "random16") {
    vs.push_back(vector_variant<4, false, entry_load::cached, gather::ldg>(a, x.data(), y.data(), true));
    vs.push_back(vector_variant<4, false, entry_load::cached, gather::l2_only>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::cached, gather::l2_keep>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::cached, gather::l2_keep_noalloc>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::streaming, gather::ldg>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::streaming, gather::l2_keep>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::once, gather::ldg>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::once, gather::l2_keep>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::once, gather::l2_keep_noalloc>(a, x.data(), y.data()));
    vs.push_back(vector_variant<8, false, entry_load::cached, gather::ldg>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, true, entry_load::cached, gather::ldg>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, true, entry_load::cached, gather::l2_only>(a, x.data(), y.data()));
  } else if (m.name == "random2") {
    vs.push_back(vector_variant<2, false, entry_load::streaming, gather::ldg>(a, x.data(), y.data(), true));
    vs.push_back(vector_variant<2, false, entry_load::streaming, gather::l2_keep>(a, x.data(), y.data()));
    vs.push_back(vector_variant<2, false, entry_load::once, gather::ldg>(a, x.data(), y.data()));
    vs.push_back(vector_variant<2, false, entry_load::once, gather::l2_keep>(a, x.data(), y.data()));
    vs.push_back(vector_variant<2, false, entry_load::once, gather::l2_keep_noalloc>(a, x.data(), y.data()));
  } else if (m.name == "random1000") {
    vs.push_back(block_variant<gather::l2_only>(a, x.data(), y.data(), true));
    vs.push_back(block_variant<gather::ldg>(a, x.data(), y.data()));
    vs.push_back(block_variant<gather::l2_keep>(a, x.data(), y.data()));
    vs.push_back(block_variant<gather::l2_keep_noalloc>(a, x.data(), y.data()));
  } else if (m.name == "powerlaw") {
    plan = std::make_unique<sparse::spmv_plan<V, I>>(d, sparse::spmv_algorithm::adaptive);
    vs.push_back(adaptive_variant<entry_load::cached, gather::ldg>(*plan, x.data(), y.data(), true));
    vs.push_back(adaptive_variant<entry_load::cached, gather::l2_only>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::cached, gather::l2_keep>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::cached, gather::l2_keep_noalloc>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::once, gather::ldg>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::once, gather::l2_keep>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::once, gather::l2_keep_noalloc>(*plan, x.data(), y.data()));
  } else {
    std::fprintf(stderr, "spmv_variants: no variants for class %s\n", m.name.c_str());
    return false;
  }

  sparse::cusparse_spmv<V, I> peer(a, sparse::cusparse_algorithm::alg1, x.data(), y_peer.data(), V(1), V(0), stream);
  peer.run(V(1), V(0), stream);
  REDUCE_CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto ref_peer = fetch(y_peer.data(), a.rows);
  double scale = 0;
  for (V v : ref_peer) scale = std::max(scale, std::fabs(static_cast<double>(v)));

  bool ok = true;
  std::map<std::string, std::vector<V>> ref_bits;
  gpukit::cuda_timer timer(stream);
  std::printf("\n%s: %lld rows, %lld cols, %lld entries, %.1f MB minimum traffic\n", m.name.c_str(),
              static_cast<long long>(a.rows), static_cast<long long>(a.cols), static_cast<long long>(a.nnz), bytes / 1e6);
  double alg1_us = 0;
  if (!once) {
    alg1_us = timer.time([&] { peer.run(V(1), V(0), stream); }, {5, 41}).median_us;
    std::printf("  %-52s %9.1f us %7.0f GB/s\n", "cuSPARSE ALG1", alg1_us, bytes / alg1_us / 1e3);
  }
  for (int round = 0; round < (once ? 1 : 2); ++round) {
    for (auto& v : vs) {
      REDUCE_CUDA_CHECK(cudaMemsetAsync(y.data(), 0xFF, sizeof(V) * static_cast<std::size_t>(a.rows), stream));  // NaN poison
      v.launch(stream);
      REDUCE_CUDA_CHECK(cudaStreamSynchronize(stream));
      const auto got = fetch(y.data(), a.rows);
      auto& ref = ref_bits[v.family];
      if (ref.empty()) ref = got;  // the family's first variant (the library's choice comes first)
      const bool same = std::memcmp(got.data(), ref.data(), sizeof(V) * got.size()) == 0;
      double worst = 0;
      for (std::size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - ref_peer[i]));
      const bool close = worst <= 1e-4 * std::max(scale, 1e-30) && worst == worst;
      if (!same || !close) ok = false;
      if (once) {
        std::printf("  %-52s %s\n", v.name.c_str(), same && close ? "ok" : "MISMATCH");
        continue;
      }
      const double us = timer.time([&] { v.launch(stream); }, {5, 41}).median_us;
      std::printf("  %-52s %9.1f us %7.0f GB/s  %.3fx ALG1  %s%s\n", v.name.c_str(), us, bytes / us / 1e3,
                  alg1_us / us, same ? "bitwise=ref" : "BITS DIFFER", close ? "" : "  FAR FROM cuSPARSE");
    }
  }
  return ok;
}
}  // namespace

int main(int argc, char** argv) {
  bool once = false;
  std::vector<std::string> classes{"random16", "powerlaw", "random1000", "random2"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--once") once = true;
    else if (a == "--classes" && i + 1 < argc) {
      classes.clear();
      std::string list = argv[++i];
      for (std::size_t p = 0; p <= list.size();) {
        const std::size_t q = std::min(list.find(',', p), list.size());
        classes.push_back(list.substr(p, q - p));
        p = q + 1;
      }
    } else {
      std::fprintf(stderr, "usage: spmv_variants [--once] [--classes a,b]\n");
      return 2;
    }
  }
  try {
    cudaDeviceProp prop{};
    REDUCE_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("GPU: %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
    cudaStream_t stream;
    REDUCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    bool ok = true;
    for (const auto& m : sparse::benchmark_matrices(false))
      for (const auto& c : classes)
        if (m.name == c) ok = run_class(m, once, stream) && ok;
    REDUCE_CUDA_CHECK(cudaStreamDestroy(stream));
    std::printf("\nRESULT: %s\n", ok ? "all variants bitwise equal to the library kernel and close to cuSPARSE" : "FAIL");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spmv_variants: error: %s\n", e.what());
    return 1;
  }
}
