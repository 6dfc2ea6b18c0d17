// Experiment (not part of the default build; -DGPUKIT_BUILD_EXPERIMENTS=ON): column blocks with x in
// shared memory, for matrices of few, long rows over many columns.
//
//   spmv_column_blocks [--classes random1000] [--once]
//
// Why: random1000 (20,000 rows of 1,000 random columns out of 2M, x 8 MB) is bound by the L2's rate of
// random 4-byte reads: every gather of x costs one 32-byte sector, and 20M of them at ~146 G/s take
// ~137 us (windowed 144, ALG1 166 on an H200). Cut the columns into P blocks of W = cols / P, one thread
// block each: the block copies its W values of x to shared memory (coalesced), and sums every row's
// entries in that column range from there, writing one partial per (block, row); a second kernel adds
// each row's P partials in block order. The gathers become shared-memory reads; the price is the
// partials (P x rows x 4 bytes, written and read) and each block's row starts (P x (rows + 1) x 4 bytes),
// so it pays where the mean row length is well above 2 P.
//
// Layout (built once on the host): block p holds a CSR of all rows over columns [p W, (p + 1) W), its
// row starts relative to the block's first entry, columns as 16-bit offsets from p W (W <= 65536), values.
// A row's entries stay in column order inside a block: each partial is summed in storage order, so the
// result is deterministic (not scalar's order: the row is summed block by block).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"
#include "sparse/csr.hpp"
#include "sparse/generate.hpp"
#include "sparse/spmv.hpp"
#include "spmv_harness.hpp"

namespace {
using V = float;
using I = std::int32_t;
bool once = false;

struct column_blocks {
  int blocks = 0;
  std::int64_t width = 0, rows = 0;
  gpukit::device_buffer<std::int64_t> base;   // blocks + 1: first entry of each block
  gpukit::device_buffer<std::uint32_t> start; // blocks x (rows + 1): row starts within the block
  gpukit::device_buffer<std::uint16_t> col;   // column - p W
  gpukit::device_buffer<V> val;
  gpukit::device_buffer<V> partial;           // blocks x rows
};

std::shared_ptr<column_blocks> build(const sparse::host_csr<V, I>& a, int blocks) {
  auto cb = std::make_shared<column_blocks>();
  cb->blocks = blocks;
  cb->rows = a.rows();
  cb->width = (a.cols() + blocks - 1) / blocks;
  const std::int64_t rows = a.rows(), w = cb->width;
  std::vector<std::vector<std::uint16_t>> c(static_cast<std::size_t>(blocks));
  std::vector<std::vector<V>> v(static_cast<std::size_t>(blocks));
  std::vector<std::uint32_t> start(static_cast<std::size_t>(blocks) * static_cast<std::size_t>(rows + 1), 0);
  const auto& rp = a.row_ptr();
  const auto& ci = a.col_idx();
  const auto& vv = a.values();
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t q = rp[static_cast<std::size_t>(r)]; q < rp[static_cast<std::size_t>(r) + 1]; ++q) {
      const std::int64_t j = ci[static_cast<std::size_t>(q)];
      const auto p = static_cast<std::size_t>(j / w);
      c[p].push_back(static_cast<std::uint16_t>(j - static_cast<std::int64_t>(p) * w));
      v[p].push_back(vv[static_cast<std::size_t>(q)]);
    }
    for (std::size_t p = 0; p < c.size(); ++p)
      start[p * static_cast<std::size_t>(rows + 1) + static_cast<std::size_t>(r) + 1] = static_cast<std::uint32_t>(c[p].size());
  }
  std::vector<std::int64_t> base(static_cast<std::size_t>(blocks) + 1, 0);
  std::vector<std::uint16_t> call;
  std::vector<V> vall;
  for (std::size_t p = 0; p < c.size(); ++p) {
    base[p + 1] = base[p] + static_cast<std::int64_t>(c[p].size());
    call.insert(call.end(), c[p].begin(), c[p].end());
    vall.insert(vall.end(), v[p].begin(), v[p].end());
  }
  cb->base = gpukit::device_buffer<std::int64_t>(base);
  cb->start = gpukit::device_buffer<std::uint32_t>(start);
  cb->col = gpukit::device_buffer<std::uint16_t>(call);
  cb->val = gpukit::device_buffer<V>(vall);
  cb->partial = gpukit::device_buffer<V>(static_cast<std::int64_t>(blocks) * rows);
  return cb;
}

/// Block p: x[p W .. p W + W) to shared memory, then Lanes lanes per row sum the row's entries of the
/// block (lane strides, then a fixed shuffle tree) into partial[p][row].
template <int Lanes>
__global__ void column_block_partials(const std::int64_t* __restrict__ base, const std::uint32_t* __restrict__ start,
                                      const std::uint16_t* __restrict__ col, const V* __restrict__ val,
                                      const V* __restrict__ x, std::int64_t cols, std::int64_t width, std::int64_t rows,
                                      V* __restrict__ partial) {
  extern __shared__ V xs[];
  const std::int64_t p = blockIdx.x, c0 = p * width;
  const std::int64_t w = std::min(width, cols - c0);
  for (std::int64_t j = threadIdx.x; j < w; j += blockDim.x) xs[j] = x[c0 + j];
  __syncthreads();
  const std::uint32_t* st = start + p * (rows + 1);
  const std::uint16_t* cp = col + base[p];
  const V* vp = val + base[p];
  const int lane = static_cast<int>(threadIdx.x) % Lanes;
  const int groups = static_cast<int>(blockDim.x) / Lanes;
  for (std::int64_t r0 = 0; r0 < rows; r0 += groups) {
    const std::int64_t r = r0 + static_cast<int>(threadIdx.x) / Lanes;
    V s = V(0);
    if (r < rows) {
      const std::uint32_t e = st[r + 1];
#pragma unroll 4
      for (std::uint32_t q = st[r] + lane; q < e; q += Lanes) s += vp[q] * xs[cp[q]];
    }
#pragma unroll
    for (int o = Lanes / 2; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o, Lanes);
    if (r < rows && lane == 0) partial[p * rows + r] = s;
  }
}

__global__ void column_block_sum(const V* __restrict__ partial, int blocks, std::int64_t rows, V* __restrict__ y) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    V s = V(0);
    for (int p = 0; p < blocks; ++p) s += partial[p * rows + r];
    y[r] = s;
  }
}

template <int Lanes>
experiments::spmv_variant<V> variant(const sparse::host_csr<V, I>& a, int blocks, int threads, const V* x, V* y,
                                     std::vector<std::shared_ptr<column_blocks>>& keep) {
  auto cb = build(a, blocks);
  keep.push_back(cb);
  const std::int64_t cols = a.cols();
  const std::size_t smem = sizeof(V) * static_cast<std::size_t>(cb->width);
  int optin = 0;  // the most any variant asks for (the attribute is the kernel's, shared by its variants)
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  GPUKIT_CUDA_CHECK(cudaFuncSetAttribute(column_block_partials<Lanes>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  char name[160];
  std::snprintf(name, sizeof name, "column blocks: %d of %lld columns, %d threads, %d lanes per row, partials %.1f MB",
                blocks, static_cast<long long>(cb->width), threads, Lanes,
                4.0 * blocks * static_cast<double>(cb->rows) / 1e6);
  column_blocks* c = cb.get();
  return {name, [c, cols, threads, smem, x, y](cudaStream_t s) {
            column_block_partials<Lanes><<<c->blocks, threads, smem, s>>>(c->base.data(), c->start.data(), c->col.data(),
                                                                          c->val.data(), x, cols, c->width, c->rows,
                                                                          c->partial.data());
            GPUKIT_CUDA_CHECK(cudaGetLastError());
            const int sum_blocks = static_cast<int>(std::min<std::int64_t>((c->rows + 255) / 256, 4096));
            column_block_sum<<<sum_blocks, 256, 0, s>>>(c->partial.data(), c->blocks, c->rows, y);
            GPUKIT_CUDA_CHECK(cudaGetLastError());
          }};
}

bool run_class(const sparse::benchmark_matrix& m, cudaStream_t stream) {
  experiments::study_matrix<V, I> sm(m);
  int sms = 0;
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int optin = 0;
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  const auto smem_optin = static_cast<std::size_t>(optin);
  std::vector<std::shared_ptr<column_blocks>> keep;
  std::vector<experiments::spmv_variant<V>> vs;
  sparse::spmv_plan<V, I> plan(sm.d, sparse::spmv_algorithm::automatic);
  vs.push_back({"library automatic (" + plan.describe() + ")",
                [&](cudaStream_t s) { sparse::spmv(plan, V(1), sm.x.data(), V(0), sm.y.data(), s); }});
  for (int per_sm : {1, 2, 4}) {
    const int blocks = sms * per_sm;
    const std::int64_t width = (sm.a.cols + blocks - 1) / blocks;
    if (width > 65536 || static_cast<std::size_t>(width) * sizeof(V) > smem_optin) continue;  // 16-bit offsets, shared memory
    const int threads = per_sm == 4 ? 512 : 1024;
    vs.push_back(variant<1>(sm.host, blocks, threads, sm.x.data(), sm.y.data(), keep));
    vs.push_back(variant<2>(sm.host, blocks, threads, sm.x.data(), sm.y.data(), keep));
    vs.push_back(variant<4>(sm.host, blocks, threads, sm.x.data(), sm.y.data(), keep));
  }
  sparse::cusparse_spmv<V, I> peer(sm.a, sparse::cusparse_algorithm::alg1, sm.x.data(), sm.y_peer.data(), V(1), V(0), stream);
  const auto ref = experiments::run_peer(peer, sm.y_peer.data(), sm.a.rows, stream);
  return experiments::time_variants(m.name, sm.a, peer, ref, sm.y.data(), vs, stream, once, 92);
}

sparse::benchmark_matrix random_matrix(const char* name, std::int64_t rows, std::int64_t cols, std::int64_t k) {
  sparse::benchmark_matrix m;
  m.name = name;
  m.params.kind = sparse::matrix_class::random_k;
  m.params.rows = rows;
  m.params.cols = cols;
  m.params.k = k;
  return m;
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> classes{"random1000"};
  bool extra = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--classes" && i + 1 < argc) classes = experiments::split_commas(argv[++i]);
    else if (arg == "--once") once = true;
    else if (arg == "--no-extra") extra = false;
    else {
      std::fprintf(stderr, "usage: spmv_column_blocks [--classes a,b] [--once] [--no-extra]\n");
      return 2;
    }
  }
  std::vector<sparse::benchmark_matrix> more;
  if (extra) {
    more.push_back(random_matrix("random_20k_x_2m_k300", 20000, 2000000, 300));
    more.push_back(random_matrix("random_100k_x_2m_k200", 100000, 2000000, 200));
    more.push_back(random_matrix("random_5k_x_8m_k4000", 5000, 8000000, 4000));
    more.push_back(random_matrix("random_30k_x_200k_k500", 30000, 200000, 500));
  }
  return experiments::run_classes("spmv_column_blocks", classes, "every variant close to cuSPARSE", run_class, nullptr,
                                  more);
}
