// Writing an output file so that a failure or a kill never leaves a partial one at its path: the text
// goes to a temporary in the same folder whose name is unique per process and call
// (PATH.<pid>.<n>.partial), is flushed to disk (fsync), and is renamed over PATH only once complete.
#pragma once
#include <string>

namespace gpukit {

/// Writes `text` to `path` as above; throws std::runtime_error naming `path` on any failure (the
/// temporary is removed).
void write_file_atomically(const std::string& path, const std::string& text);

/// A unique temporary name next to `path` for writers that produce the file themselves (HDF5):
/// PATH.<pid>.<n>.partial.
std::string temporary_path_for(const std::string& path);

/// fsync of an existing file (the temporary, before the rename); throws naming `path` on failure.
void sync_file(const std::string& path);

}  // namespace gpukit
