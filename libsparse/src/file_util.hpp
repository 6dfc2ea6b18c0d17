// Private helper of the I/O sources: whole-file reads. (Outputs go through gpukit::atomic_output.)
#pragma once
#include <cstdio>
#include <string>

#include "sparse/csr.hpp"

namespace sparse::detail {

/// Reads the whole file into a string; io_error naming the file if it cannot be opened or read.
std::string read_file(const std::string& path);

}  // namespace sparse::detail
