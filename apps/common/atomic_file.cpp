#include "atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace gpukit {

std::string temporary_path_for(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + "." + std::to_string(static_cast<long>(::getpid())) + "." + std::to_string(counter++) + ".partial";
}

void sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error(path + ": cannot reopen to flush it to disk");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw std::runtime_error(path + ": fsync failed (disk full or I/O error)");
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = temporary_path_for(path);
  try {
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      if (!f) throw std::runtime_error(path + ": cannot open for writing");
      f << text;
      if (!f.flush()) throw std::runtime_error(path + ": write failed (disk full?)");
    }
    sync_file(tmp);
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw std::runtime_error(path + ": cannot rename the finished file into place");
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

}  // namespace gpukit
