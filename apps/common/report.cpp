#include "report.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <ctime>
#include <stdexcept>
#include <thread>

#include "gpukit/atomic_file.hpp"
#include "gpukit_version.hpp"
#include "reduce/device.hpp"

namespace gpukit::report {
namespace {

std::string cuda_version_string(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

std::string host_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return buf.data();
}

bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Throws when any number in `j` is NaN or Inf (nlohmann would write it as null): a report never
/// carries a non-finite result.
void require_finite(const nlohmann::json& j, const std::string& where) {
  if (j.is_number_float() && !std::isfinite(j.get<double>()))
    throw std::runtime_error("non-finite value at " + where + " in the report");
  if (j.is_object())
    for (const auto& [k, v] : j.items()) require_finite(v, where + "." + k);
  if (j.is_array())
    for (std::size_t i = 0; i < j.size(); ++i) require_finite(j[i], where + "[" + std::to_string(i) + "]");
}

void collect_unit_problems(const nlohmann::json& j, const std::string& key, const std::string& where,
                           std::vector<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) collect_unit_problems(v, k, where + "." + k, out);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) collect_unit_problems(j[i], key, where + "[" + std::to_string(i) + "]", out);
  } else if (j.is_number() && !units_ok(key)) {
    out.push_back(where + ": numeric result key '" + key + "' names no unit");
  }
}

}  // namespace

nlohmann::json device_json() {
  int runtime = 0, driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  (void)cudaGetLastError();
  nlohmann::json d = {{"backend", "cpu"},
                      {"driver_version", cuda_version_string(driver)},
                      {"cuda_runtime_version", cuda_version_string(runtime)}};
  if (!reduce::cuda_device_available()) return d;
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return d;
  }
  d["backend"] = "cuda";
  d["name"] = prop.name;
  d["sm"] = std::to_string(prop.major) + std::to_string(prop.minor);
  d["sms"] = prop.multiProcessorCount;
  d["memory_bytes"] = static_cast<std::int64_t>(prop.totalGlobalMem);
  return d;
}

nlohmann::json make(const std::string& tool, const std::string& command) {
  return {{"schema_version", schema_version},
          {"tool", tool},
          {"command", command},
          {"version", version::number},
          {"git_commit", version::git_commit},
          {"device", device_json()},
          {"host", {{"name", host_name()}, {"cpu_threads", std::thread::hardware_concurrency()}}},
          {"timestamp", utc_timestamp()},
          {"inputs", nlohmann::json::object()},
          {"results", nlohmann::json::object()}};
}

void write(const std::string& path, const nlohmann::json& report) {
  require_finite(report, "report");
  write_file_atomically(path, report.dump(2) + "\n");
}

bool units_ok(const std::string& key) {
  static const char* const suffixes[] = {"_us", "_ms", "_s", "_ns", "_bytes", "_gb_per_s", "_per_s", "_ratio",
                                         "_percent", "_count", "_k", "_kg_per_kg", "_mm", "_pa"};
  static const char* const counts[] = {"n", "rows", "cols", "nnz", "calls", "steps", "iterations", "seed",
                                       "nx", "ny", "nz", "segments", "repeats", "index"};
  for (const char* s : suffixes)
    if (has_suffix(key, s)) return true;
  for (const char* c : counts)
    if (key == c) return true;
  return false;
}

std::vector<std::string> schema_problems(const nlohmann::json& r) {
  std::vector<std::string> out;
  if (!r.is_object()) return {"the report is not a JSON object"};
  const std::pair<const char*, nlohmann::json::value_t> required[] = {
      {"schema_version", nlohmann::json::value_t::number_unsigned}, {"tool", nlohmann::json::value_t::string},
      {"command", nlohmann::json::value_t::string},                 {"version", nlohmann::json::value_t::string},
      {"git_commit", nlohmann::json::value_t::string},              {"device", nlohmann::json::value_t::object},
      {"host", nlohmann::json::value_t::object},                    {"timestamp", nlohmann::json::value_t::string},
      {"inputs", nlohmann::json::value_t::object},                  {"results", nlohmann::json::value_t::object}};
  for (const auto& [key, type] : required) {
    if (!r.contains(key)) {
      out.push_back(std::string("missing key '") + key + "'");
    } else if (r[key].type() != type &&
               !(type == nlohmann::json::value_t::number_unsigned && r[key].is_number_integer())) {
      out.push_back(std::string("key '") + key + "' has type " + r[key].type_name());
    }
  }
  if (out.empty() && r["schema_version"] != schema_version) out.push_back("schema_version is not " + std::to_string(schema_version));
  if (out.empty() && !r["device"].contains("backend")) out.push_back("device.backend missing");
  if (out.empty()) collect_unit_problems(r["results"], "results", "results", out);
  return out;
}

}  // namespace gpukit::report
