// --plot for the apps: a report of the JSON format (report.hpp) with one record array becomes one PNG through
// bench/plot.py, the toolkit's one plotting path (python3 with matplotlib).
#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace gpukit {

/// Writes `report` to a temporary JSON file beside `png`, runs `python3 bench/plot.py TMP --out PNG --y
/// SUFFIX` (no shell: fork + execvp) and removes the temporary. Throws std::runtime_error (exit 3) naming
/// `png` when python3 cannot run or plot.py fails (e.g. no matplotlib); nothing is left at `png` then.
void plot_report(const nlohmann::json& report, const std::string& png, const std::string& y_suffix);

}  // namespace gpukit
