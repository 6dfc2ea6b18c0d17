// Fuzz target: the WSM5 HDF5 loader (wsm5::read_hdf5) on the bytes of a file, seeded with data/wsm5/*.h5.
// std::runtime_error naming the file is the documented rejection; anything else is a crash.
#include <cstdint>
#include <stdexcept>

#include "fuzz_input_file.hpp"
#include "wsm5/wsm5.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = gpukit_fuzz::write_input(data, size, ".h5");
  try {
    (void)wsm5::read_hdf5(path);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
