#include "file_guard.hpp"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "app_errors.hpp"

namespace gpukit {
namespace {

/// What makes two paths one file: device and inode where the file exists, else its resolved path
/// (realpath of the folder + the name; the folder must exist for the file to be created at all).
struct file_identity {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string resolved;
  bool same_as(const file_identity& o) const {
    if (exists != o.exists) return false;
    return exists ? dev == o.dev && ino == o.ino : resolved == o.resolved;
  }
};

std::optional<file_identity> existing(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  file_identity id;
  id.exists = true;
  id.dev = st.st_dev;
  id.ino = st.st_ino;
  return id;
}

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

file_identity output_identity(const std::string& path) {
  struct stat target {};
  if (::stat(path.c_str(), &target) == 0 && S_ISDIR(target.st_mode))
    throw bad_input(path + ": is a directory, not an output file");
  const std::string folder = folder_of(path);
  char buf[PATH_MAX];
  if (!::realpath(folder.c_str(), buf))
    throw bad_input(path + ": output folder '" + folder + "' does not exist (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) throw bad_input(path + ": '" + folder + "' is not a folder");
  // The temporary is created beside the destination, so the folder itself must take new files.
  if (::access(buf, W_OK | X_OK) != 0)
    throw bad_input(path + ": cannot create files in folder '" + folder + "' (" + std::strerror(errno) + ")");
  if (auto id = existing(path)) return *id;
  file_identity id;
  const auto slash = path.find_last_of('/');
  id.resolved = std::string(buf) + "/" + (slash == std::string::npos ? path : path.substr(slash + 1));
  return id;
}

}  // namespace

void check_output_paths(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  std::vector<std::pair<std::string, file_identity>> ins, outs;
  for (const auto& p : inputs)
    if (!p.empty())
      if (auto id = existing(p)) ins.emplace_back(p, *id);
  for (const auto& p : outputs) {
    if (p.empty()) continue;
    const file_identity id = output_identity(p);
    for (const auto& [in, in_id] : ins)
      if (id.same_as(in_id))
        throw bad_input(p + ": is the same file as the input " + in + " (an output never overwrites an input)");
    for (const auto& [out, out_id] : outs)
      if (id.same_as(out_id)) throw bad_input(p + ": names the same file as the output " + out + " (two outputs)");
    outs.emplace_back(p, id);
  }
}

}  // namespace gpukit
