// Inputs are never destroyed: every app checks its output paths against its inputs and each other
// before doing any work, by file identity (device and inode of files that exist; the resolved path of
// those that do not), so `spmv convert M.mtx ./M.mtx`, a hard link or a symlink to the input is caught
// as well as the same string.
#pragma once
#include <string>
#include <vector>

namespace gpukit {

/// Throws gpukit::bad_input (exit 2), naming the path, when an output (empty strings are skipped)
///  - is the same file as an input ("OUT is the same file as the input IN"),
///  - is the same file as another output,
///  - is an existing directory, or lies in a directory that does not exist or cannot be written.
/// Inputs that do not exist are left to their readers (which name them).
void check_output_paths(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs);

}  // namespace gpukit
