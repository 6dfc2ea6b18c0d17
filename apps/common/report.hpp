// One JSON report format for every app and benchmark (schema: apps/README.md, "JSON reports"), written
// with nlohmann-json:
//
//   nlohmann::json r = gpukit::report::make("spmv", "run");   // schema_version, tool, version, ...
//   r["inputs"]["matrix"] = path;
//   r["results"]["time_us"] = 12.5;                             // units in the key names
//   gpukit::report::write(json_path, r);                        // temp + fsync + rename: never partial
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpukit::report {

/// Version of the report layout below; bumped on any incompatible change.
inline constexpr int schema_version = 1;

/// A report with every top-level key filled: schema_version, tool, command, version, git_commit,
/// device (see device_json), host {name, cpu_threads}, timestamp (UTC, ISO 8601), inputs {} and
/// results {} (empty objects for the caller to fill).
nlohmann::json make(const std::string& tool, const std::string& command);

/// {"backend": "cuda", "name", "sm", "sms", "memory_bytes", "driver_version", "cuda_runtime_version"}
/// for the current CUDA device, or {"backend": "cpu", "driver_version", "cuda_runtime_version"} (versions
/// "none" where absent) when no device is usable.
nlohmann::json device_json();

/// Writes `report` (2-space indented) to `path` atomically: a unique temporary in the same folder,
/// fsync, then rename. Throws std::runtime_error naming the path on failure; refuses non-finite numbers
/// (nlohmann writes them as null) by throwing before anything is written.
void write(const std::string& path, const nlohmann::json& report);

/// Problems of `report` against the documented schema (empty when it conforms): missing or mistyped
/// top-level keys, and numbers under "results" whose key carries no unit suffix (units_ok).
std::vector<std::string> schema_problems(const nlohmann::json& report);

/// True when a numeric result key names its unit: it ends in one of _us _ms _s _ns _bytes _gb_per_s
/// _per_s _ratio _percent _count _k _kg_per_kg _mm _pa, or is a dimensionless count or index (n, rows,
/// cols, nnz, calls, steps, iterations, seed, nx, ny, nz, segments, repeats, index).
bool units_ok(const std::string& key);

}  // namespace gpukit::report
