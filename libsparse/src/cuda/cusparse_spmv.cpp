// The cuSPARSE peer (cusparseSpMV, CSR): descriptors, buffer and preprocess once, then run().
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gpukit/cuda_check.hpp"
#include "instantiate.hpp"
#include "sparse/spmv.hpp"

// Every cuSPARSE call goes through this: a failure throws gpukit::cuda_error with the status name and
// text, the file, line and the call (as GPUKIT_CUDA_CHECK does for the runtime).
#define SPARSE_CUSPARSE_CHECK(call)                                                                   \
  do {                                                                                                \
    const cusparseStatus_t sparse_status_ = (call);                                                   \
    if (sparse_status_ != CUSPARSE_STATUS_SUCCESS)                                                    \
      throw ::gpukit::cuda_error(static_cast<int>(sparse_status_),                                    \
                                 std::string("cuSPARSE error ") + cusparseGetErrorName(sparse_status_) + \
                                     " (" + cusparseGetErrorString(sparse_status_) + ") at " + __FILE__ + \
                                     ":" + std::to_string(__LINE__) + " in " #call);                  \
  } while (0)

namespace sparse {

const char* to_string(cusparse_algorithm a) { return a == cusparse_algorithm::alg1 ? "cusparse_alg1" : "cusparse_alg2"; }

template <class Value, class Index>
struct cusparse_spmv<Value, Index>::impl {
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t mat = nullptr;
  cusparseDnVecDescr_t vx = nullptr, vy = nullptr;
  void* buffer = nullptr;
  cusparseSpMVAlg_t alg = CUSPARSE_SPMV_CSR_ALG1;
  ~impl() {  // destructor path: errors ignored
    if (buffer) cudaFree(buffer);
    if (vx) cusparseDestroyDnVec(vx);
    if (vy) cusparseDestroyDnVec(vy);
    if (mat) cusparseDestroySpMat(mat);
    if (handle) cusparseDestroy(handle);
  }
};

template <class Value, class Index>
cusparse_spmv<Value, Index>::cusparse_spmv(const csr_view<Value, Index>& a, cusparse_algorithm algorithm,
                                           const Value* d_x, Value* d_y, Value alpha, Value beta, stream_t stream)
    : impl_(std::make_unique<impl>()) {
  if (a.rows <= 0 || a.cols <= 0)
    throw std::invalid_argument("cusparse_spmv: the matrix is " + std::to_string(a.rows) + " x " +
                                std::to_string(a.cols) + "; cuSPARSE needs at least one row and one column");
  constexpr cudaDataType vt = std::is_same_v<Value, float> ? CUDA_R_32F : CUDA_R_64F;
  constexpr cusparseIndexType_t it = sizeof(Index) == 4 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
  auto& m = *impl_;
  m.alg = algorithm == cusparse_algorithm::alg1 ? CUSPARSE_SPMV_CSR_ALG1 : CUSPARSE_SPMV_CSR_ALG2;
  SPARSE_CUSPARSE_CHECK(cusparseCreate(&m.handle));
  SPARSE_CUSPARSE_CHECK(cusparseSetStream(m.handle, stream));
  SPARSE_CUSPARSE_CHECK(cusparseCreateCsr(&m.mat, a.rows, a.cols, a.nnz, const_cast<Index*>(a.row_ptr),
                                          const_cast<Index*>(a.col_idx), const_cast<Value*>(a.values), it, it,
                                          CUSPARSE_INDEX_BASE_ZERO, vt));
  SPARSE_CUSPARSE_CHECK(cusparseCreateDnVec(&m.vx, a.cols, const_cast<Value*>(d_x), vt));
  SPARSE_CUSPARSE_CHECK(cusparseCreateDnVec(&m.vy, a.rows, d_y, vt));
  std::size_t bytes = 0;
  SPARSE_CUSPARSE_CHECK(cusparseSpMV_bufferSize(m.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, m.mat, m.vx,
                                                &beta, m.vy, vt, m.alg, &bytes));
  if (bytes) GPUKIT_CUDA_CHECK(cudaMalloc(&m.buffer, bytes));
  SPARSE_CUSPARSE_CHECK(cusparseSpMV_preprocess(m.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, m.mat, m.vx,
                                                &beta, m.vy, vt, m.alg, m.buffer));
}

template <class Value, class Index>
cusparse_spmv<Value, Index>::~cusparse_spmv() = default;

template <class Value, class Index>
void cusparse_spmv<Value, Index>::run(Value alpha, Value beta, stream_t stream) {
  constexpr cudaDataType vt = std::is_same_v<Value, float> ? CUDA_R_32F : CUDA_R_64F;
  auto& m = *impl_;
  SPARSE_CUSPARSE_CHECK(cusparseSetStream(m.handle, stream));
  SPARSE_CUSPARSE_CHECK(cusparseSpMV(m.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, m.mat, m.vx, &beta, m.vy,
                                     vt, m.alg, m.buffer));
}

#define SPARSE_CUSPARSE_INSTANTIATE(V, I) template class cusparse_spmv<V, I>;
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_CUSPARSE_INSTANTIATE)
#undef SPARSE_CUSPARSE_INSTANTIATE

}  // namespace sparse
