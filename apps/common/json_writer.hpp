// A small streaming JSON writer for benchmark and run reports (no third-party dependency).
// Output goes to a temporary file that is renamed into place on commit(), so a failure never leaves a
// partial report behind.
#pragma once
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "atomic_file.hpp"

namespace gpukit {

class json_writer {
public:
  json_writer() { first_.push_back(true); }

  json_writer& begin_object(const std::string& key = "") { prefix(key); out_ << '{'; first_.push_back(true); return *this; }
  json_writer& end_object() { out_ << '}'; first_.pop_back(); return *this; }
  json_writer& begin_array(const std::string& key = "") { prefix(key); out_ << '['; first_.push_back(true); return *this; }
  json_writer& end_array() { out_ << ']'; first_.pop_back(); return *this; }

  json_writer& field(const std::string& key, const std::string& v) { prefix(key); quoted(v); return *this; }
  json_writer& field(const std::string& key, const char* v) { return field(key, std::string(v)); }
  json_writer& field(const std::string& key, bool v) { prefix(key); out_ << (v ? "true" : "false"); return *this; }
  json_writer& field(const std::string& key, double v) {
    prefix(key);
    if (std::isfinite(v)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.9g", v);
      out_ << buf;
    } else {
      out_ << "null";  // JSON has no NaN/Inf
    }
    return *this;
  }
  json_writer& field(const std::string& key, long long v) { prefix(key); out_ << v; return *this; }
  json_writer& field(const std::string& key, int v) { return field(key, static_cast<long long>(v)); }
  json_writer& field(const std::string& key, long v) { return field(key, static_cast<long long>(v)); }
  json_writer& field(const std::string& key, unsigned long v) { return field(key, static_cast<long long>(v)); }

  std::string str() const { return out_.str(); }

  /// Writes the document to `path` atomically (temporary file + rename).
  void commit(const std::string& path) const { write_file_atomically(path, out_.str() + "\n"); }

private:
  void prefix(const std::string& key) {
    if (!first_.back()) out_ << ',';
    first_.back() = false;
    if (!key.empty()) {
      quoted(key);
      out_ << ':';
    }
  }
  void quoted(const std::string& s) {
    out_ << '"';
    for (char c : s) {
      switch (c) {
        case '"': out_ << "\\\""; break;
        case '\\': out_ << "\\\\"; break;
        case '\n': out_ << "\\n"; break;
        case '\t': out_ << "\\t"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out_ << buf;
          } else {
            out_ << c;
          }
      }
    }
    out_ << '"';
  }
  std::ostringstream out_;
  std::vector<bool> first_;
};

}  // namespace gpukit
