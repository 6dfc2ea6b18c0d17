#include "gpukit/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <utility>

namespace gpukit {
namespace {

/// PATH.<pid>.<n>.partial: two processes (or two writers in one) never share a temporary.
std::string unique_temporary(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + "." + std::to_string(static_cast<long>(::getpid())) + "." + std::to_string(counter++) + ".partial";
}

void sync_to_disk(const std::string& file, const std::string& path) {
  const int fd = ::open(file.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error(path + ": cannot reopen the written file to flush it to disk");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw std::runtime_error(path + ": fsync failed (disk full or I/O error)");
}

}  // namespace

atomic_output::atomic_output(std::string path) : path_(std::move(path)), temp_(unique_temporary(path_)) {}

atomic_output::~atomic_output() {
  if (!committed_) std::remove(temp_.c_str());
}

void atomic_output::commit() {
  sync_to_disk(temp_, path_);
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw std::runtime_error(path_ + ": cannot rename the finished file into place");
  committed_ = true;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  atomic_output out(path);
  {
    std::ofstream f(out.temp(), std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error(path + ": cannot open for writing");
    f << text;
    if (!f.flush()) throw std::runtime_error(path + ": write failed (disk full?)");
  }
  out.commit();
}

}  // namespace gpukit
