// Private helpers of the I/O sources: whole-file reads, numbers in error lines. (Outputs go through
// gpukit::atomic_output; tokens are quoted by gpukit::quote_token.)
#pragma once
#include <cstdio>
#include <string>
#include <string_view>

#include "sparse/csr.hpp"

namespace sparse::detail {

/// Reads the whole file into a string; io_error naming the file if it cannot be opened or read.
std::string read_file(const std::string& path);

/// A value in an error line, to 9 significant digits: "1e+300", "nan" (std::to_string prints 1e300
/// with 300 digits).
std::string number_text(double v);

}  // namespace sparse::detail
