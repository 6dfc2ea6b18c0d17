// The readers under fuzz take a path: each input's bytes are written to one temporary file per process
// (overwritten on every input, removed at exit) and the reader is called on it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

namespace gpukit_fuzz {

/// Writes `data` to this process's temporary file and returns its path. The suffix keeps readers that
/// look at the extension on the intended path. Aborts (a harness failure, not a finding) if the file
/// cannot be written.
inline const std::string& write_input(const std::uint8_t* data, std::size_t size, const char* suffix) {
  static const std::string path = [suffix] {
    const char* dir = std::getenv("TMPDIR");
    std::string p = std::string(dir && *dir ? dir : "/tmp") + "/gpukit-fuzz-" + std::to_string(::getpid()) + suffix;
    struct remover {
      std::string path;
      ~remover() { std::remove(path.c_str()); }
    };
    static remover remove_at_exit{p};
    return p;
  }();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

}  // namespace gpukit_fuzz
