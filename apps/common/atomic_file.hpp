// Writing a report file so that a failure never leaves a partial one behind: the text goes to
// PATH.partial, which is renamed over PATH only once it is complete.
#pragma once
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

namespace gpukit {

inline void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".partial";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error(path + ": cannot open for writing");
    f << text;
    if (!f.flush()) {
      f.close();
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename the finished file into place");
  }
}

}  // namespace gpukit
