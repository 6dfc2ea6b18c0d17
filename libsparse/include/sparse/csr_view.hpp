// The non-owning view of a CSR matrix that kernels take by value. Trivially copyable, no CUDA syntax.
#pragma once
#include <cstdint>
#include <type_traits>

namespace sparse {

/// CSR matrix view: row i holds entries row_ptr[i] .. row_ptr[i+1]-1 of col_idx/values (0-based).
/// Pointers refer to host or device memory depending on who made the view (the owner says which).
/// Index is std::int32_t or std::int64_t and types both row_ptr and col_idx (as cuSPARSE's CSR does);
/// counts are always 64-bit.
template <class Value, class Index>
struct csr_view {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  const Index* row_ptr = nullptr;  // rows + 1 entries
  const Index* col_idx = nullptr;  // nnz entries
  const Value* values = nullptr;   // nnz entries
};

static_assert(std::is_trivially_copyable_v<csr_view<float, std::int32_t>>);

}  // namespace sparse
