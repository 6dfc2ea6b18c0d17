// Output files that are never seen half-written (common layer; every library and app writes through it):
// the content goes to a temporary next to the destination whose name is unique per process and call
// (PATH.<pid>.<n>.partial), is flushed to disk (fsync) and renamed over PATH only when complete. A failure
// or an exception before commit() removes the temporary; SIGINT, SIGTERM and SIGHUP (at their default
// action) remove every live temporary before the process dies of the signal; SIGKILL leaves at most the
// temporary, never a partial PATH.
//
//   gpukit::atomic_output out(path);
//   write_my_format(out.temp());   // any writer that creates a file by name (stdio, HDF5, ...)
//   out.commit();                  // fsync + rename; throws std::runtime_error naming `path` on failure
#pragma once
#include <string>

namespace gpukit {

class atomic_output {
public:
  explicit atomic_output(std::string path);
  atomic_output(const atomic_output&) = delete;
  atomic_output& operator=(const atomic_output&) = delete;
  /// Removes the temporary unless commit() succeeded.
  ~atomic_output();
  /// The temporary to write to.
  const std::string& temp() const noexcept { return temp_; }
  /// The destination.
  const std::string& path() const noexcept { return path_; }
  /// fsync of the temporary, then rename over path(); throws std::runtime_error naming path() (the
  /// temporary is removed).
  void commit();

private:
  std::string path_, temp_;
  int slot_ = -1;  ///< where the signal handler finds temp_ (-1: not registered)
  bool committed_ = false;
};

/// Writes `text` to `path` through an atomic_output.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace gpukit
