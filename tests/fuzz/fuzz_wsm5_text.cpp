// Fuzz target: the WSM5 text readers (input columns, wsm5::read_columns_text, and WRF golden output,
// wsm5::read_golden_text), seeded with data/wsm5/*.txt. std::runtime_error naming the file and line is
// the documented rejection; anything else is a crash.
#include <cstdint>
#include <stdexcept>

#include "fuzz_input_file.hpp"
#include "wsm5/wsm5.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = gpukit_fuzz::write_input(data, size, ".txt");
  try {
    (void)wsm5::read_columns_text(path);
  } catch (const std::runtime_error&) {
  }
  try {
    (void)wsm5::read_golden_text(path);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
