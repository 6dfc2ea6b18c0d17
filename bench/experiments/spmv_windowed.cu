// Experiment (not part of the default build; -DGPUKIT_BUILD_EXPERIMENTS=ON): can an SM's L1 catch the
// repeated x gathers of random rows, if every SM walks x window by window?
//
//   spmv_windowed [--classes random16] [--once]
//
// Why: on random16 every random 4-byte gather of x costs one 32-byte L2 sector, and CSR kernels (ours and
// cuSPARSE ALG1) read 32M of them for 32M entries: the L2's sector rate is the bound (README, spmv_variants).
// But each SM runs 1/132 of the rows, 242k gathers into the 250k sectors of x: about 0.97 gathers per
// sector, so only 1 - e^-0.97 = 62 % of the sectors are distinct per SM. A row-ordered walk cannot use
// that (an SM's L1 holds 3 % of x); a walk in column order can: if all warps of an SM gather from the
// same 2^w-column window of x at a time, the window stays in L1 and every later gather to one of its
// sectors hits. The L2 then serves about 20M x sectors instead of 32M.
//
// Layout ("windowed", built once on the host): the rows are split into one contiguous range per warp of
// a single wave (balanced by entries); a warp's entries are stored sorted by (column window, row, column)
// as a 32-bit word (row within the warp's range << 22 | column) and the value. A row's entries thus stay
// in column order, so summing each one into the row's shared-memory accumulator in list order gives
// scalar's order, hence bitwise scalar's result (checked below). Lanes of one 32-entry group that hit
// the same row (__match_any_sync) add in lane order.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpukit/cuda_timer.hpp"
#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"
#include "sparse/csr.hpp"
#include "sparse/generate.hpp"
#include "sparse/spmv.hpp"
#include "spmv_harness.hpp"

namespace {
using V = float;
using I = std::int32_t;
constexpr int kRowBits = 10;                 // rows per warp <= 1024
constexpr int kColBits = 32 - kRowBits;      // columns < 2^22
constexpr std::uint32_t kColMask = (1u << kColBits) - 1;

template <int U, bool Stream, bool Free>
__global__ void __launch_bounds__(1024)
spmv_windowed_kernel(const std::uint32_t* __restrict__ packed, const V* __restrict__ val,
                     const std::int64_t* __restrict__ warp_begin, const int* __restrict__ warp_row0, int warps,
                     const V* __restrict__ x, V* __restrict__ y) {
  extern __shared__ V acc[];
  const int wpb = static_cast<int>(blockDim.x) / 32;
  const int g0 = static_cast<int>(blockIdx.x) * wpb;
  const int gl = min(g0 + wpb, warps);
  const int row0 = warp_row0[g0], row1 = warp_row0[gl];
  for (int i = threadIdx.x; i < row1 - row0; i += blockDim.x) acc[i] = V(0);
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int g = g0 + static_cast<int>(threadIdx.x / 32);
  const unsigned lt = (1u << lane) - 1u;
  if (g < warps) {
    V* mine = acc + (warp_row0[g] - row0);
    const std::int64_t e0 = warp_begin[g], e1 = warp_begin[g + 1];
    for (std::int64_t k = e0; k < e1; k += 32 * U) {
      std::uint32_t p[U];
      V v[U], xv[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t i = k + u * 32 + lane;
        p[u] = 0xFFFFFFFFu;
        v[u] = V(0);
        if (i < e1) {
          p[u] = Stream ? __ldcs(packed + i) : __ldg(packed + i);
          v[u] = Stream ? __ldcs(val + i) : __ldg(val + i);
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) xv[u] = p[u] != 0xFFFFFFFFu ? __ldg(x + (p[u] & kColMask)) : V(0);
#pragma unroll
      for (int u = 0; u < U && Free; ++u) {  // no row twice in a group: every lane adds at once
        if (p[u] != 0xFFFFFFFFu) {
          const int row = static_cast<int>(p[u] >> kColBits);
          mine[row] = fmaf(v[u], xv[u], mine[row]);
        }
        __syncwarp();
      }
#pragma unroll
      for (int u = 0; u < U && !Free; ++u) {
        const bool live = p[u] != 0xFFFFFFFFu;
        const int row = static_cast<int>(p[u] >> kColBits);
        const unsigned same = __match_any_sync(0xFFFFFFFFu, live ? row : (1 << kRowBits) + lane);
        const int rank = __popc(same & lt);
        const int top = __reduce_max_sync(0xFFFFFFFFu, static_cast<unsigned>(rank));
        for (int r = 0; r <= top; ++r) {
          if (live && rank == r) mine[row] = fmaf(v[u], xv[u], mine[row]);  // fmaf: the multiply must not be hoisted
          __syncwarp();
        }
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < row1 - row0; i += blockDim.x) y[row0 + i] = acc[i];
}

using variant = experiments::spmv_variant<V>;

// The windowed layout for `warps` warps and windows of 2^wbits columns.
struct windowed_matrix {
  std::unique_ptr<gpukit::device_buffer<std::uint32_t>> packed;
  std::unique_ptr<gpukit::device_buffer<V>> val;
  std::unique_ptr<gpukit::device_buffer<std::int64_t>> warp_begin;
  std::unique_ptr<gpukit::device_buffer<int>> warp_row0;
  int max_block_rows = 0;
  std::int64_t padding = 0;  // entries added by the conflict-free grouping
};

// Conflict-free groups (free = true): the warp's window-ordered list is cut into groups of 32 in which no
// row appears twice, so the 32 lanes of a group can add into their rows at once. An entry whose row is
// already in the group, or has an earlier entry still waiting, waits for a later group (first come,
// first served), so each row keeps its column order. A group the list cannot fill is padded with
// entries that add nothing (0xFFFFFFFF).
windowed_matrix build_windowed(const sparse::host_csr<V, I>& h, int warps, int wpb, int wbits, bool free) {
  const auto& rp = h.row_ptr();
  const auto& ci = h.col_idx();
  const auto& va = h.values();
  const std::int64_t rows = static_cast<std::int64_t>(rp.size()) - 1, nnz = rp.back();
  if (h.cols() > (std::int64_t{1} << kColBits)) throw std::runtime_error("more than 2^22 columns");
  std::vector<int> row0(static_cast<std::size_t>(warps) + 1);
  for (int g = 0; g <= warps; ++g) {  // first row whose entries start at or after g/warps of nnz
    const std::int64_t target = nnz * g / warps;
    row0[static_cast<std::size_t>(g)] = g == warps ? static_cast<int>(rows)
        : static_cast<int>(std::lower_bound(rp.begin(), rp.end(), static_cast<I>(target)) - rp.begin());
    if (g > 0) row0[static_cast<std::size_t>(g)] = std::max(row0[static_cast<std::size_t>(g)], row0[static_cast<std::size_t>(g) - 1]);
  }
  row0[0] = 0;
  std::vector<std::uint32_t> packed(static_cast<std::size_t>(nnz));
  std::vector<V> val(static_cast<std::size_t>(nnz));
  std::vector<std::int64_t> begin(static_cast<std::size_t>(warps) + 1);
  const int windows = static_cast<int>((h.cols() >> wbits) + 1);
  std::vector<std::int64_t> count(static_cast<std::size_t>(windows) + 1);
  windowed_matrix out;
  for (int g = 0; g < warps; ++g) {
    const int r0 = row0[static_cast<std::size_t>(g)], r1 = row0[static_cast<std::size_t>(g) + 1];
    if (r1 - r0 > (1 << kRowBits))
      throw std::runtime_error("warp " + std::to_string(g) + " has " + std::to_string(r1 - r0) + " rows (at most 1024)");
    const std::int64_t b = rp[static_cast<std::size_t>(r0)], e = rp[static_cast<std::size_t>(r1)];
    begin[static_cast<std::size_t>(g)] = b;
    std::fill(count.begin(), count.end(), 0);
    auto slot = [&](std::uint32_t c) { return static_cast<std::size_t>(c >> wbits); };
    for (std::int64_t k = b; k < e; ++k) ++count[slot(static_cast<std::uint32_t>(ci[static_cast<std::size_t>(k)])) + 1];
    for (int w = 0; w < windows; ++w) count[static_cast<std::size_t>(w) + 1] += count[static_cast<std::size_t>(w)];
    for (int r = r0; r < r1; ++r)  // stable: rows ascending, then columns ascending within each window
      for (std::int64_t k = rp[static_cast<std::size_t>(r)]; k < rp[static_cast<std::size_t>(r) + 1]; ++k) {
        const auto c = static_cast<std::uint32_t>(ci[static_cast<std::size_t>(k)]);
        const std::int64_t at = b + count[slot(c)]++;
        packed[static_cast<std::size_t>(at)] = (static_cast<std::uint32_t>(r - r0) << kColBits) | c;
        val[static_cast<std::size_t>(at)] = va[static_cast<std::size_t>(k)];
      }
  }
  begin[static_cast<std::size_t>(warps)] = nnz;
  if (free) {
    std::vector<std::uint32_t> p2;
    std::vector<V> v2;
    std::vector<std::int64_t> b2(begin.size());
    p2.reserve(packed.size() + packed.size() / 8);
    v2.reserve(packed.size() + packed.size() / 8);
    std::vector<int> in_group(1 << kRowBits, -1), blocked(1 << kRowBits, -1), pending(1 << kRowBits, 0);
    std::vector<std::int64_t> waiting, still;
    for (int g = 0; g < warps; ++g) {
      b2[static_cast<std::size_t>(g)] = static_cast<std::int64_t>(p2.size());
      std::int64_t pos = begin[static_cast<std::size_t>(g)];
      const std::int64_t end = begin[static_cast<std::size_t>(g) + 1];
      waiting.clear();
      for (int gid = 0; pos < end || !waiting.empty(); ++gid) {
        int taken = 0;
        auto take = [&](std::int64_t k) {
          in_group[packed[static_cast<std::size_t>(k)] >> kColBits] = gid;
          p2.push_back(packed[static_cast<std::size_t>(k)]);
          v2.push_back(val[static_cast<std::size_t>(k)]);
          ++taken;
        };
        still.clear();
        for (const std::int64_t k : waiting) {
          const std::uint32_t r = packed[static_cast<std::size_t>(k)] >> kColBits;
          if (taken < 32 && in_group[r] != gid && blocked[r] != gid) {
            take(k);
            --pending[r];
          } else {
            blocked[r] = gid;
            still.push_back(k);
          }
        }
        waiting.swap(still);
        for (; taken < 32 && pos < end; ++pos) {
          const std::uint32_t r = packed[static_cast<std::size_t>(pos)] >> kColBits;
          if (in_group[r] != gid && pending[r] == 0) take(pos);
          else {
            ++pending[r];
            waiting.push_back(pos);
          }
        }
        for (; taken < 32; ++taken) {
          p2.push_back(0xFFFFFFFFu);
          v2.push_back(V(0));
        }
      }
    }
    b2[static_cast<std::size_t>(warps)] = static_cast<std::int64_t>(p2.size());
    out.padding = static_cast<std::int64_t>(p2.size()) - nnz;
    packed.swap(p2);
    val.swap(v2);
    begin.swap(b2);
  }
  for (int g = 0; g < warps; g += wpb)
    out.max_block_rows = std::max(out.max_block_rows, row0[static_cast<std::size_t>(std::min(g + wpb, warps))] - row0[static_cast<std::size_t>(g)]);
  auto up = [](auto& dst, const auto& src) {
    using T = typename std::decay_t<decltype(src)>::value_type;
    dst = std::make_unique<gpukit::device_buffer<T>>(src.size());
    GPUKIT_CUDA_CHECK(cudaMemcpy(dst->data(), src.data(), sizeof(T) * src.size(), cudaMemcpyHostToDevice));
  };
  up(out.packed, packed);
  up(out.val, val);
  up(out.warp_begin, begin);
  up(out.warp_row0, row0);
  return out;
}

template <int U, bool Stream, bool Free>
variant windowed_variant(const sparse::host_csr<V, I>& h, int threads, int blocks_per_sm, int wbits, const V* x, V* y,
                         std::vector<std::shared_ptr<windowed_matrix>>& keep, const std::vector<V>* scalar_y) {
  cudaDeviceProp prop{};
  GPUKIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int wpb = threads / 32;
  const int blocks = prop.multiProcessorCount * blocks_per_sm;
  const int warps = blocks * wpb;
  auto m = std::make_shared<windowed_matrix>(build_windowed(h, warps, wpb, wbits, Free));
  keep.push_back(m);
  auto* k = spmv_windowed_kernel<U, Stream, Free>;
  const int smem = static_cast<int>(sizeof(V)) * m->max_block_rows;
  GPUKIT_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 << 10));
  const int per_sm = blocks_per_sm * (smem + 1024);
  const int carve = std::min(100, (per_sm * 100 + static_cast<int>(prop.sharedMemPerMultiprocessor) - 1) /
                                      static_cast<int>(prop.sharedMemPerMultiprocessor));
  GPUKIT_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, carve));
  int fit = 0;
  GPUKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, k, threads, static_cast<std::size_t>(smem)));
  const std::uint32_t* pk = m->packed->data();
  const V* vl = m->val->data();
  const std::int64_t* wb = m->warp_begin->data();
  const int* wr = m->warp_row0->data();
  char name[160];
  char grouping[48] = "match_any";
  if (Free)
    std::snprintf(grouping, sizeof grouping, "free groups (+%.2f%%)",
                  100.0 * static_cast<double>(m->padding) / static_cast<double>(h.nnz()));
  std::snprintf(name, sizeof name, "windowed 2^%d cols, U=%d, %s, %s, %dx%d thr/SM (fits %d), %d KB smem", wbits, U,
                grouping, Stream ? "ldcs" : "ldg", blocks_per_sm, threads, fit, smem >> 10);
  return {name, [=](cudaStream_t s) {
            // The attributes are the kernel's, shared by every variant of this instance: set them per launch.
            GPUKIT_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, carve));
            k<<<blocks, threads, static_cast<std::size_t>(smem), s>>>(pk, vl, wb, wr, warps, x, y);
            GPUKIT_CUDA_CHECK(cudaGetLastError());
          }, scalar_y};
}

bool once = false;  // --once: one checked call per variant, no timing (for ncu)

// Rows longer than a group (random1000: 1000 entries, 4.7 rows per warp of a wave) cannot fill groups of
// 32 distinct rows. Cut into pieces of at most `piece` consecutive entries, each a row of its own, they
// can: this times the library's windowed kernel on the pieces and adds each row's piece sums on the host
// (in piece order) to check the result; the time leaves out that final sum (rows x pieces reads).
// strided = true: a row of L entries becomes S = ceil(L / piece) pieces, piece j holding entries j, j + S,
// j + 2S, ... (so a row's entries in one column window fall in different pieces: no group conflicts).
bool run_pieces(const sparse::benchmark_matrix& m, cudaStream_t stream, int piece, bool strided) {
  experiments::study_matrix<V, I> sm(m);
  const auto& h = sm.host;
  std::vector<I> ptr{0}, cols;
  std::vector<V> vals;
  std::vector<std::int64_t> first_piece{0};
  for (std::int64_t r = 0; r < h.rows(); ++r) {
    const I b = h.row_ptr()[static_cast<std::size_t>(r)], e = h.row_ptr()[static_cast<std::size_t>(r) + 1];
    const I count = std::max<I>(1, (e - b + piece - 1) / piece);
    for (I j = 0; j < count; ++j) {
      if (strided)
        for (I k = b + j; k < e; k += count) {
          cols.push_back(h.col_idx()[static_cast<std::size_t>(k)]);
          vals.push_back(h.values()[static_cast<std::size_t>(k)]);
        }
      else
        for (I k = b + j * piece; k < std::min<I>(e, b + (j + 1) * piece); ++k) {
          cols.push_back(h.col_idx()[static_cast<std::size_t>(k)]);
          vals.push_back(h.values()[static_cast<std::size_t>(k)]);
        }
      ptr.push_back(static_cast<I>(cols.size()));
    }
    first_piece.push_back(static_cast<std::int64_t>(ptr.size()) - 1);
  }
  const auto pieces = static_cast<std::int64_t>(ptr.size()) - 1;
  const sparse::host_csr<V, I> cut(pieces, h.cols(), ptr, cols, vals);
  const sparse::device_csr<V, I> dcut(cut);
  const sparse::spmv_plan<V, I> plan(dcut, sparse::spmv_algorithm::windowed);
  gpukit::device_buffer<V> y_pieces(pieces);
  sparse::cusparse_spmv<V, I> peer(sm.a, sparse::cusparse_algorithm::alg1, sm.x.data(), sm.y_peer.data(), V(1), V(0), stream);
  const auto ref = experiments::run_peer(peer, sm.y_peer.data(), sm.a.rows, stream);
  sparse::spmv(plan, V(1), sm.x.data(), V(0), y_pieces.data(), stream);
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::vector<V> yp = experiments::fetch(y_pieces.data(), pieces);
  std::vector<V> y(static_cast<std::size_t>(h.rows()), V(0));
  for (std::int64_t r = 0; r < h.rows(); ++r)
    for (std::int64_t q = first_piece[static_cast<std::size_t>(r)]; q < first_piece[static_cast<std::size_t>(r) + 1]; ++q)
      y[static_cast<std::size_t>(r)] += yp[static_cast<std::size_t>(q)];
  double worst = 0;
  const bool close = ref.close(y, &worst);
  gpukit::cuda_timer timer(stream);
  const double alg1 = once ? 1.0 : timer.time([&] { peer.run(V(1), V(0), stream); }, {5, 41}).median_us;
  const double us = once ? 1.0 : timer.time([&] { sparse::spmv(plan, V(1), sm.x.data(), V(0), y_pieces.data(), stream); }, {5, 41}).median_us;
  std::printf("\n%s cut into %lld %s pieces of <= %d entries: cuSPARSE ALG1 %.1f us, windowed on the pieces %.1f us "
              "(%.3fx ALG1; %s) max|diff| %.2e%s\n", m.name.c_str(), static_cast<long long>(pieces),
              strided ? "strided" : "consecutive", piece, alg1, us,
              alg1 / us, plan.describe().c_str(), worst, close ? "" : "  FAR FROM cuSPARSE");
  return close;
}

bool run_class(const sparse::benchmark_matrix& m, cudaStream_t stream) {
  if (m.name != "random16") {
    bool ok = true;
    for (int piece : {16, 32, 64})
      for (bool strided : {false, true}) ok = run_pieces(m, stream, piece, strided) && ok;
    return ok;
  }
  experiments::study_matrix<V, I> sm(m);
  const auto& host = sm.host;
  const auto& d = sm.d;
  const auto& a = sm.a;
  const auto& hx = sm.hx;
  auto &x = sm.x, &y = sm.y, &y_peer = sm.y_peer;
  gpukit::device_buffer<V> y_scalar(a.rows);
  // The library's scalar result, which every windowed form must equal bit for bit; first checked
  // against scalar's order on the host (each row's fused multiply-adds in column order).
  sparse::spmv_plan<V, I> scalar(d, sparse::spmv_algorithm::scalar);
  sparse::spmv(scalar, V(1), x.data(), V(0), y_scalar.data(), stream);
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::vector<V> ys = experiments::fetch(y_scalar.data(), a.rows);
  std::size_t differ = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    V s = V(0);
    for (I k = host.row_ptr()[static_cast<std::size_t>(r)]; k < host.row_ptr()[static_cast<std::size_t>(r) + 1]; ++k)
      s = std::fma(host.values()[static_cast<std::size_t>(k)], hx[static_cast<std::size_t>(host.col_idx()[static_cast<std::size_t>(k)])], s);
    differ += s != ys[static_cast<std::size_t>(r)];
  }
  std::printf("  library scalar vs host fma chain: %zu rows differ\n", differ);

  std::vector<std::shared_ptr<windowed_matrix>> keep;
  std::vector<variant> vs;
  sparse::spmv_plan<V, I> plan(d, sparse::spmv_algorithm::automatic);
  vs.push_back({"library automatic (" + plan.describe() + ")",
                [&](cudaStream_t s) { sparse::spmv(plan, V(1), x.data(), V(0), y.data(), s); }});
  sparse::spmv_plan<V, I> vector(d, sparse::spmv_algorithm::vector);
  vs.push_back({"library vector (" + vector.describe() + ")",
                [&](cudaStream_t s) { sparse::spmv(vector, V(1), x.data(), V(0), y.data(), s); }});
  sparse::spmv_plan<V, I> windowed(d, sparse::spmv_algorithm::windowed);
  vs.push_back({"library windowed", [&](cudaStream_t s) { sparse::spmv(windowed, V(1), x.data(), V(0), y.data(), s); }, &ys});
  vs.push_back(windowed_variant<4, true, false>(host, 1024, 2, 22, x.data(), y.data(), keep, &ys));  // CSR order
  vs.push_back(windowed_variant<4, true, false>(host, 1024, 2, 12, x.data(), y.data(), keep, &ys));
  vs.push_back(windowed_variant<4, false, false>(host, 1024, 2, 12, x.data(), y.data(), keep, &ys));
  vs.push_back(windowed_variant<4, true, true>(host, 1024, 2, 12, x.data(), y.data(), keep, &ys));
  vs.push_back(windowed_variant<4, true, true>(host, 1024, 1, 12, x.data(), y.data(), keep, &ys));
  vs.push_back(windowed_variant<2, true, true>(host, 1024, 2, 12, x.data(), y.data(), keep, &ys));
  for (int wbits : {11, 12, 14})
    vs.push_back(windowed_variant<8, true, true>(host, 512, 2, wbits, x.data(), y.data(), keep, &ys));

  sparse::cusparse_spmv<V, I> peer(a, sparse::cusparse_algorithm::alg1, x.data(), y_peer.data(), V(1), V(0), stream);
  const auto ref = experiments::run_peer(peer, y_peer.data(), a.rows, stream);
  return experiments::time_variants(m.name, a, peer, ref, y.data(), vs, stream, once, 78) && differ == 0;
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> classes{"random16"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--classes" && i + 1 < argc) classes = experiments::split_commas(argv[++i]);
    else if (arg == "--once") once = true;
    else {
      std::fprintf(stderr, "usage: spmv_windowed [--classes a,b] [--once]\n");
      return 2;
    }
  }
  return experiments::run_classes("spmv_windowed", classes, "every variant close to cuSPARSE", run_class);
}
