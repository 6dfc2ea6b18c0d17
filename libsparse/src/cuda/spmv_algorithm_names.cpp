// The names of the SpMV algorithms (command lines, reports, describe()).
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sparse/spmv.hpp"

namespace sparse {

const char* to_string(spmv_algorithm a) {
  switch (a) {
    case spmv_algorithm::automatic: return "automatic";
    case spmv_algorithm::scalar: return "scalar";
    case spmv_algorithm::shared_cached: return "shared_cached";
    case spmv_algorithm::warp_per_row: return "warp_per_row";
    case spmv_algorithm::vector: return "vector";
    case spmv_algorithm::adaptive: return "adaptive";
    case spmv_algorithm::block_per_row: return "block_per_row";
    case spmv_algorithm::merge: return "merge";
    case spmv_algorithm::warp_stream: return "warp_stream";
    case spmv_algorithm::stencil: return "stencil";
    case spmv_algorithm::windowed: return "windowed";
    case spmv_algorithm::column_blocks: return "column_blocks";
  }
  return "unknown";
}

std::vector<spmv_algorithm> concrete_spmv_algorithms() {
  return {spmv_algorithm::scalar, spmv_algorithm::shared_cached, spmv_algorithm::warp_per_row,
          spmv_algorithm::vector, spmv_algorithm::adaptive, spmv_algorithm::block_per_row, spmv_algorithm::merge,
          spmv_algorithm::warp_stream, spmv_algorithm::stencil, spmv_algorithm::windowed, spmv_algorithm::column_blocks};
}

spmv_algorithm parse_spmv_algorithm(std::string_view name) {
  if (name == "auto" || name == to_string(spmv_algorithm::automatic)) return spmv_algorithm::automatic;
  const auto all = concrete_spmv_algorithms();
  std::string expected = to_string(spmv_algorithm::automatic);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (name == to_string(all[i])) return all[i];
    expected += (i + 1 < all.size() ? ", " : " or ") + std::string(to_string(all[i]));
  }
  throw std::invalid_argument("unknown SpMV algorithm '" + std::string(name) + "' (expected " + expected + ")");
}

}  // namespace sparse
