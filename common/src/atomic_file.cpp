#include "gpukit/atomic_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
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

// Temporaries of live atomic_outputs, for the SIGINT/SIGTERM/SIGHUP handler: fixed storage (no
// allocation in the handler) and lock-free states, so the handler only reads memory and calls unlink(),
// both async-signal-safe. 64 slots cover every app (each writes at most 3 files at once); a 65th writer
// or a name of PATH_MAX bytes or more is written all the same, only not cleaned up on a signal.
constexpr int temp_slots = 64;
enum slot_state : int { slot_free = 0, slot_filling = 1, slot_live = 2 };
struct temp_slot {
  std::atomic<int> state{slot_free};
  char name[PATH_MAX];
};
temp_slot registry[temp_slots];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads these states");

extern "C" void unlink_temporaries_and_reraise(int sig) {
  for (auto& s : registry)
    if (s.state.load(std::memory_order_acquire) == slot_live) ::unlink(s.name);
  ::signal(sig, SIG_DFL);  // then die of the same signal: the exit status still says what killed us
  ::raise(sig);
}

/// Installs the handler for SIGINT, SIGTERM and SIGHUP, once, where the signal is at its default
/// action (an ignored signal stays ignored; a handler of the program's own is left alone).
void install_cleanup_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = unlink_temporaries_and_reraise;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

/// The slot now holding `temp`, or -1 when none is free or the name does not fit.
int register_temporary(const std::string& temp) {
  if (temp.size() >= PATH_MAX) return -1;
  install_cleanup_handler();
  for (int i = 0; i < temp_slots; ++i) {
    int expected = slot_free;
    if (registry[i].state.compare_exchange_strong(expected, slot_filling, std::memory_order_acquire)) {
      std::memcpy(registry[i].name, temp.c_str(), temp.size() + 1);
      registry[i].state.store(slot_live, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void unregister_temporary(int slot) {
  if (slot >= 0) registry[slot].state.store(slot_free, std::memory_order_release);
}

}  // namespace

atomic_output::atomic_output(std::string path)
    : path_(std::move(path)), temp_(unique_temporary(path_)), slot_(register_temporary(temp_)) {}

atomic_output::~atomic_output() {
  if (!committed_) std::remove(temp_.c_str());
  unregister_temporary(slot_);
}

void atomic_output::commit() {
  sync_to_disk(temp_, path_);
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw std::runtime_error(path_ + ": cannot rename the finished file into place");
  committed_ = true;
  unregister_temporary(slot_);  // a signal before this line unlinks the temporary's name, gone since the rename
  slot_ = -1;
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
