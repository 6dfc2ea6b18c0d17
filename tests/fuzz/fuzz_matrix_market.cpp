// Fuzz target: the Matrix Market readers (coordinate matrix and array vector) on arbitrary bytes.
// Rejecting the input with sparse::io_error or sparse::invalid_matrix is the documented behaviour; any
// other exception (std::bad_alloc, std::length_error, ...) escapes and is reported as a crash, as is
// every ASan/UBSan finding.
#include <cstdint>

#include "fuzz_input_file.hpp"
#include "sparse/matrix_market.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = gpukit_fuzz::write_input(data, size, ".mtx");
  try {
    (void)sparse::read_matrix_market<double, std::int32_t>(path);
  } catch (const sparse::io_error&) {
  } catch (const sparse::invalid_matrix&) {
  }
  try {
    (void)sparse::read_matrix_market<float, std::int64_t>(path);
  } catch (const sparse::io_error&) {
  } catch (const sparse::invalid_matrix&) {
  }
  try {
    (void)sparse::read_matrix_market_vector<double>(path);
  } catch (const sparse::io_error&) {
  }
  return 0;
}
