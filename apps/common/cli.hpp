// Minimal command-line parsing shared by the apps: `app COMMAND [positional...] [--key value] [--flag]`.
// Unknown options are errors (never silently ignored). Header-only; no third-party dependency so the
// apps build where only the CUDA toolkit, Eigen, HDF5 and Boost headers exist.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpukit::cli {

/// Thrown for bad command lines; apps print it as one line with a usage hint and exit 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class args {
public:
  /// `valued` lists options that take a value (--steps 10); `flags` those that do not (--check).
  args(int argc, char** argv, int first, const std::set<std::string>& valued, const std::set<std::string>& flags) {
    for (int i = first; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) == 0 && a.size() > 2) {
        std::string key = a.substr(2), value;
        const auto eq = key.find('=');
        const bool inline_value = eq != std::string::npos;
        if (inline_value) {
          value = key.substr(eq + 1);
          key = key.substr(0, eq);
        }
        if (flags.count(key)) {
          if (inline_value) throw usage_error("option --" + key + " takes no value");
          flags_.insert(key);
        } else if (valued.count(key)) {
          if (!inline_value) {
            if (i + 1 >= argc) throw usage_error("option --" + key + " needs a value");
            value = argv[++i];
          }
          values_[key] = value;
        } else {
          throw usage_error("unknown option --" + key);
        }
      } else {
        positional_.push_back(a);
      }
    }
  }

  const std::vector<std::string>& positional() const { return positional_; }
  bool flag(const std::string& key) const { return flags_.count(key) != 0; }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  std::string get(const std::string& key, const std::string& fallback) const {
    auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }
  std::int64_t get_int(const std::string& key, std::int64_t fallback) const {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    return parse_int(key, it->second);
  }
  double get_double(const std::string& key, double fallback) const {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(it->second, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != it->second.size()) throw usage_error("option --" + key + ": '" + it->second + "' is not a number");
    return v;
  }
  static std::int64_t parse_int(const std::string& key, const std::string& text) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(text, &used, 0);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || text.empty())
      throw usage_error("option --" + key + ": '" + text + "' is not an integer");
    return v;
  }

private:
  std::vector<std::string> positional_;
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
};

}  // namespace gpukit::cli
