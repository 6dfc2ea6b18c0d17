// `wsm5 bench --crossover`: both GPU variants timed over column counts (powers of two), the measured
// crossover and what variant::automatic picks at each size, as a table and a JSON report.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <ostream>
#include <string>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "file_guard.hpp"
#include "gpukit/error.hpp"
#include "report.hpp"
#include "wsm5/wsm5.hpp"

namespace wsm5_app {
namespace {

double median_ms(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2] * 1e3;
}

/// Median ms per call of `v` on a fresh copy of d (3 warm-up calls).
double time_variant_ms(const wsm5::domain& d, wsm5::variant v, int repeats) {
  wsm5::gpu_domain g(d);
  return median_ms(wsm5::time_gpu_steps(g, v, 3, repeats));
}

struct crossover_point {
  std::int64_t columns = 0;
  double thread_ms = 0, warp_ms = 0;
  wsm5::variant automatic = wsm5::variant::automatic;
  double best_ms() const { return std::min(thread_ms, warp_ms); }
  double chosen_ms() const { return automatic == wsm5::variant::thread_per_column ? thread_ms : warp_ms; }
};

/// The smallest column count from which thread_per_column is faster at every larger measured size
/// (-1: never).
std::int64_t measured_crossover(const std::vector<crossover_point>& pts) {
  std::int64_t from = -1;
  for (auto it = pts.rbegin(); it != pts.rend() && it->thread_ms < it->warp_ms; ++it) from = it->columns;
  return from;
}

}  // namespace

int bench_command(const bench_options& opt) {
  if (!opt.crossover) throw gpukit::bad_input("bench: give --crossover (the only benchmark of this command)");
  gpukit::check_output_paths({}, {opt.json});
  if (!reduce::cuda_device_available()) throw gpukit::no_cuda_device("bench --crossover needs a GPU: " + reduce::cuda_unavailable_reason());
  std::ostream& out = gpukit::output_stream(opt.quiet);
  const wsm5::gpu_capacity cap = wsm5::current_gpu_capacity();
  out << "device    " << reduce::cuda_device_description() << " (" << cap.sms << " SMs, " << cap.max_warps_per_sm
      << " resident warps per SM); nz = " << opt.nz << ", dt = " << opt.dt << " s, median of " << opt.repeats
      << " calls after 3 warm-up calls\n";
  out << "columns     thread_per_column ms  warp_per_column ms  faster             automatic          automatic/best\n";
  std::vector<crossover_point> pts;
  nlohmann::json records = nlohmann::json::array();
  for (std::int64_t cols = 64; cols <= opt.max_columns; cols *= 2) {
    const std::int64_t nx = std::min<std::int64_t>(cols, 512), ny = cols / nx;  // powers of two: exact
    const wsm5::domain d = wsm5::generate(nx, ny, opt.nz, 1, static_cast<float>(opt.dt));
    crossover_point p;
    p.columns = cols;
    p.thread_ms = time_variant_ms(d, wsm5::variant::thread_per_column, opt.repeats);
    p.warp_ms = time_variant_ms(d, wsm5::variant::warp_per_column, opt.repeats);
    p.automatic = wsm5::choose_variant(cols, opt.nz, cap);
    pts.push_back(p);
    const char* faster = p.thread_ms < p.warp_ms ? "thread_per_column" : "warp_per_column";
    out << std::left << std::setw(12) << cols << std::setw(22) << std::setprecision(4) << p.thread_ms << std::setw(20)
        << p.warp_ms << std::setw(19) << faster << std::setw(19) << wsm5::to_string(p.automatic) << std::setprecision(3)
        << p.chosen_ms() / p.best_ms() << "\n";
    records.push_back({{"columns_count", cols},
                       {"nx", nx},
                       {"ny", ny},
                       {"thread_per_column_ms", p.thread_ms},
                       {"warp_per_column_ms", p.warp_ms},
                       {"faster", faster},
                       {"automatic", wsm5::to_string(p.automatic)},
                       {"automatic_over_best_ratio", p.chosen_ms() / p.best_ms()}});
  }
  const std::int64_t crossover = measured_crossover(pts);
  const std::int64_t threshold = wsm5::automatic_threshold_columns(opt.nz, cap);
  out << "crossover measured: thread_per_column faster from " << crossover << " columns on (-1: never); "
      << "automatic switches at " << threshold << "\n";
  if (!opt.json.empty()) {
    nlohmann::json j = gpukit::report::make("wsm5", "bench");
    j["inputs"] = {{"nz", opt.nz}, {"dt_s", opt.dt}, {"repeats", opt.repeats}, {"max_columns_count", opt.max_columns},
                   {"warmup_calls", 3}};
    j["results"] = {{"points", records},
                    {"measured_crossover_columns_count", crossover},
                    {"automatic_threshold_columns_count", threshold},
                    {"sms_count", cap.sms},
                    {"max_warps_per_sm_count", cap.max_warps_per_sm}};
    gpukit::report::write(opt.json, j);
  }
  return gpukit::exit_ok;
}

}  // namespace wsm5_app
