// test::temp_dir: a fresh directory per test case under the system temporary directory, removed at the
// end, with helpers to write a file into it and name a path in it.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace test {

struct temp_dir {
  std::filesystem::path path;
  /// <tmp>/gpukit_<tag>_<pid>_<n>: unique per process and per instance.
  explicit temp_dir(const std::string& tag) {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("gpukit_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  /// Writes `content` to the file `name` in the directory; returns its path.
  std::string file(const std::string& name, const std::string& content) const {
    const std::string p = (path / name).string();
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

}  // namespace test
