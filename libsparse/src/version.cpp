#include "sparse/csr_view.hpp"

namespace sparse {
const char* version() { return "0.1.0"; }
}  // namespace sparse
