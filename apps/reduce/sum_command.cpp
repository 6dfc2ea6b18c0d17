// `reduce sum FILE`: the toolkit's first end-to-end path (file -> backend -> checked result).
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"
#include "run_main.hpp"
#include "reduce/device.hpp"
#include "gpukit/device_buffer.hpp"
#include "reduce/reduce.hpp"

namespace reduce_app {
namespace {

// Reads every whitespace-separated token of `path` as a T; names the file, line and token on failure.
template <class T>
std::vector<T> read_values(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open file");
  std::vector<T> values;
  std::string line, token;
  for (std::int64_t line_no = 1; std::getline(in, line); ++line_no) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    std::istringstream tokens(line);
    while (tokens >> token) {
      std::size_t used = 0;
      T v{};
      try {
        if constexpr (std::is_floating_point_v<T>) v = static_cast<T>(std::stod(token, &used));
        else if constexpr (std::is_signed_v<T>) {
          const long long x = std::stoll(token, &used);
          if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) throw std::out_of_range("");
          v = static_cast<T>(x);
        } else {
          if (token[0] == '-') throw std::invalid_argument("");
          const unsigned long long x = std::stoull(token, &used);
          if (x > std::numeric_limits<T>::max()) throw std::out_of_range("");
          v = static_cast<T>(x);
        }
      } catch (const std::out_of_range&) {
        throw std::runtime_error(path + ":" + std::to_string(line_no) + ": value '" + token + "' out of range");
      } catch (const std::invalid_argument&) {
        used = 0;
      }
      if (used != token.size())
        throw std::runtime_error(path + ":" + std::to_string(line_no) + ": '" + token + "' is not a number");
      values.push_back(v);
    }
  }
  if (in.bad()) throw std::runtime_error(path + ": read error");
  return values;
}

template <class T>
int run(const std::string& path, reduce::backend be, const std::string& type_name) {
  const std::vector<T> values = read_values<T>(path);
  const auto n = static_cast<std::int64_t>(values.size());

  T result{};
  if (be == reduce::backend::cuda) {
    gpukit::device_buffer<T> d(values);
    result = reduce::sum(d.data(), n);
  } else {
    result = reduce::reference::sum(values.data(), n);
  }

  // Oracle: long double, serial. Float bound, derived per backend (libreduce/README.md):
  //  * cuda: the single-pass kernel's longest accumulation chain has k terms
  //    (reduce::detail::single_pass_chain_length), so |error| <= gamma_T(k) * sum|x|;
  //  * cpu: double accumulation in any order, then one rounding to T:
  //    |error| <= gamma_double(n - 1) * sum|x| + u_T * |exact|.
  long double exact = 0, abs_sum = 0;
  for (T v : values) {
    exact += static_cast<long double>(v);
    abs_sum += std::fabs(static_cast<long double>(v));
  }
  bool ok = true;
  std::ostringstream check;
  if constexpr (std::is_floating_point_v<T>) {
    auto gamma = [](long double k, long double u) {
      return k * u < 1 ? k * u / (1 - k * u) : std::numeric_limits<long double>::infinity();
    };
    const long double u_t = std::numeric_limits<T>::epsilon() / 2.0L;
    const long double bound =
        be == reduce::backend::cuda
            ? gamma(static_cast<long double>(reduce::detail::single_pass_chain_length(n, sizeof(T))), u_t) * abs_sum
            : gamma(static_cast<long double>(n > 0 ? n - 1 : 0), std::numeric_limits<double>::epsilon() / 2.0L) *
                      abs_sum + u_t * std::fabs(exact);
    const long double err = std::fabs(static_cast<long double>(result) - exact);
    ok = err <= bound;
    check << std::scientific << std::setprecision(3) << "|error| " << static_cast<double>(err) << " <= bound "
          << static_cast<double>(bound);
  } else {
    // Integers: exact, modulo 2^bits.
    using U = std::make_unsigned_t<T>;
    U wrapped = 0;
    for (T v : values) wrapped = static_cast<U>(wrapped + static_cast<U>(v));
    ok = static_cast<U>(result) == wrapped;
    check << "exact match";
  }
  std::cout << "file      " << path << "\n"
            << "type      " << type_name << "\n"
            << "elements  " << n << "\n"
            << "backend   " << reduce::to_string(be)
            << (be == reduce::backend::cuda ? " (" + reduce::cuda_device_description() + ")" : std::string()) << "\n"
            << "sum       " << std::setprecision(std::numeric_limits<T>::max_digits10) << +result << "\n"
            << "check     " << check.str() << (ok ? "  [ok]" : "  [FAILED]") << "\n";
  return ok ? 0 : 1;
}

}  // namespace

int sum_command(int argc, char** argv) {
  gpukit::cli::args a(argc, argv, 2, {"type", "device"}, {});
  if (a.positional().size() != 1) throw gpukit::cli::usage_error("sum needs exactly one FILE");
  const std::string path = a.positional()[0];
  const std::string type = a.get("type", "float");
  reduce::device_choice choice;
  try {
    choice = reduce::parse_device_choice(a.get("device", "auto"));
  } catch (const std::invalid_argument& e) {
    throw gpukit::cli::usage_error(e.what());
  }
  if (type != "float" && type != "double" && type != "int32" && type != "int64" && type != "uint32" &&
      type != "uint64")
    throw gpukit::cli::usage_error("unknown --type '" + type + "'");
  { std::ifstream probe(path); if (!probe) throw std::runtime_error(path + ": cannot open file"); }
  const reduce::backend be = gpukit::select_backend_announced("reduce", choice);
  if (type == "float") return run<float>(path, be, type);
  if (type == "double") return run<double>(path, be, type);
  if (type == "int32") return run<std::int32_t>(path, be, type);
  if (type == "int64") return run<std::int64_t>(path, be, type);
  if (type == "uint32") return run<std::uint32_t>(path, be, type);
  return run<std::uint64_t>(path, be, type);
}

}  // namespace reduce_app
