// Dispatch of sparse::spmv: grid sizing, the launch of the plan's algorithm, error checks.
#include <algorithm>
#include <cstdint>

#include "reduce/cuda/check.hpp"
#include "sparse/spmv.hpp"
#include "spmv_adaptive.cuh"
#include "spmv_plan_state.hpp"
#include "spmv_row_kernels.cuh"

namespace sparse {
namespace detail {

int current_sm_count() {
  int device = 0, sms = 0;
  REDUCE_CUDA_CHECK(cudaGetDevice(&device));
  REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

namespace {
constexpr int block_threads = 256;

// Grid for `items` work items of `per_block` each: enough blocks for every item, capped at 16 blocks of
// 256 per SM (two full residencies of 8 blocks); grid-stride loops cover the rest.
int grid_for(std::int64_t items, std::int64_t per_block, int sm_count) {
  const std::int64_t wanted = (items + per_block - 1) / per_block;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(wanted, std::int64_t{16} * sm_count)));
}

template <class Value, class Index>
void launch_vector(int width, const csr_view<Value, Index>& a, Value alpha, const Value* x, Value beta, Value* y,
                   int sms, cudaStream_t s) {
  const int grid = grid_for(a.rows, block_threads / width, sms);
  switch (width) {
    case 2: spmv_vector_kernel<2><<<grid, block_threads, 0, s>>>(a, alpha, x, beta, y); break;
    case 4: spmv_vector_kernel<4><<<grid, block_threads, 0, s>>>(a, alpha, x, beta, y); break;
    case 8: spmv_vector_kernel<8><<<grid, block_threads, 0, s>>>(a, alpha, x, beta, y); break;
    case 16: spmv_vector_kernel<16><<<grid, block_threads, 0, s>>>(a, alpha, x, beta, y); break;
    default: spmv_vector_kernel<32><<<grid, block_threads, 0, s>>>(a, alpha, x, beta, y); break;
  }
  REDUCE_CHECK_LAUNCH();
}
}  // namespace
}  // namespace detail

template <class Value, class Index>
void spmv(const spmv_plan<Value, Index>& plan, Value alpha, const Value* d_x, Value beta, Value* d_y, stream_t stream) {
  const csr_view<Value, Index>& a = plan.matrix();
  if (a.rows == 0) return;
  const auto& st = plan.state();
  const int sms = st.sm_count;
  const cudaStream_t s = stream;
  using namespace detail;
  switch (plan.algorithm()) {
    case spmv_algorithm::scalar:
      spmv_scalar_kernel<<<grid_for(a.rows, block_threads, sms), block_threads, 0, s>>>(a, alpha, d_x, beta, d_y);
      REDUCE_CHECK_LAUNCH();
      break;
    case spmv_algorithm::shared_cached:
      spmv_shared_cached_kernel<block_threads>
          <<<grid_for(a.rows, block_threads, sms), block_threads, 0, s>>>(a, alpha, d_x, beta, d_y);
      REDUCE_CHECK_LAUNCH();
      break;
    case spmv_algorithm::warp_per_row:
      spmv_warp_per_row_kernel<<<grid_for(a.rows, block_threads / 32, sms), block_threads, 0, s>>>(a, alpha, d_x,
                                                                                                    beta, d_y);
      REDUCE_CHECK_LAUNCH();
      break;
    case spmv_algorithm::vector:
      launch_vector(plan.vector_width(), a, alpha, d_x, beta, d_y, sms, s);
      break;
    case spmv_algorithm::adaptive:
    case spmv_algorithm::automatic: {  // automatic never reaches here (resolved in the plan)
      const auto& part = st.partition;
      auto* partials = reinterpret_cast<Value*>(const_cast<double*>(st.partials.data()));
      // One block per tile (the plan checks that the tile count fits gridDim.x).
      spmv_adaptive_kernel<<<static_cast<unsigned>(part.tiles.size()), tile_threads, 0, s>>>(
          a, alpha, d_x, beta, d_y, st.tiles.data(), st.segments.data(), st.warp_rows.data(), partials);
      REDUCE_CHECK_LAUNCH();
      if (!part.split_rows.empty()) {
        const auto n = static_cast<std::int64_t>(part.split_rows.size());
        spmv_combine_split_kernel<<<static_cast<unsigned>((n + 127) / 128), 128, 0, s>>>(
            st.split_rows.data(), n, partials, alpha, beta, d_y);
        REDUCE_CHECK_LAUNCH();
      }
      break;
    }
  }
}

#define SPARSE_SPMV_INSTANTIATE(V, I) \
  template void spmv<V, I>(const spmv_plan<V, I>&, V, const V*, V, V*, stream_t);
SPARSE_SPMV_INSTANTIATE(float, std::int32_t)
SPARSE_SPMV_INSTANTIATE(float, std::int64_t)
SPARSE_SPMV_INSTANTIATE(double, std::int32_t)
SPARSE_SPMV_INSTANTIATE(double, std::int64_t)
#undef SPARSE_SPMV_INSTANTIATE

}  // namespace sparse
