// Fuzz target: the HDF5 CSR loader (sparse::read_hdf5, and read_hdf5_vector on /matrix/x) on the bytes
// of a file, seeded with the small valid files of data/sparse. io_error / invalid_matrix are the
// documented rejections; anything else is a crash.
#include <cstdint>

#include "fuzz_input_file.hpp"
#include "sparse/hdf5_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = gpukit_fuzz::write_input(data, size, ".h5");
  try {
    (void)sparse::read_hdf5<float, std::int32_t>(path);
  } catch (const sparse::io_error&) {
  } catch (const sparse::invalid_matrix&) {
  }
  try {
    (void)sparse::read_hdf5_vector<double>(path, "/matrix/x");
  } catch (const sparse::io_error&) {
  }
  return 0;
}
