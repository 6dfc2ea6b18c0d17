// Private helpers of the I/O sources: whole-file reads and the write-to-temp-then-rename guard.
#pragma once
#include <cstdio>
#include <string>

#include "sparse/csr.hpp"

namespace sparse::detail {

/// Reads the whole file into a string; io_error naming the file if it cannot be opened or read.
std::string read_file(const std::string& path);

/// Output goes to `path + ".partial"`; commit() renames it to `path`. If commit() was not reached (an
/// exception), the destructor removes the partial file, so no half-written output remains.
class partial_file {
public:
  explicit partial_file(std::string path) : path_(std::move(path)), temp_(path_ + ".partial") {}
  partial_file(const partial_file&) = delete;
  partial_file& operator=(const partial_file&) = delete;
  ~partial_file() {
    if (!committed_) std::remove(temp_.c_str());
  }
  const std::string& temp() const { return temp_; }
  const std::string& path() const { return path_; }
  void commit() {
    if (std::rename(temp_.c_str(), path_.c_str()) != 0)
      throw io_error(path_ + ": cannot rename " + temp_ + " to it");
    committed_ = true;
  }

private:
  std::string path_, temp_;
  bool committed_ = false;
};

}  // namespace sparse::detail
