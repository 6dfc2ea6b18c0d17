// `reduce sum FILE`: the toolkit's first end-to-end path (file -> backend -> checked result -> report).
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "file_guard.hpp"
#include "gpukit/device_buffer.hpp"
#include "gpukit/quote.hpp"
#include "reduce/device.hpp"
#include "reduce/reduce.hpp"
#include "report.hpp"

namespace reduce_app {
namespace {

// One token as a T; throws std::out_of_range / std::invalid_argument (or leaves `used` short).
// Floating point: strtod's IEEE result (C locale), so an underflow (1e-400, 1e-310) keeps its correctly
// rounded subnormal or zero, where std::stod throws; an overflow of double, or of float when T is
// float (1e300 would round to inf), is out of range.
template <class T>
T parse_token(const std::string& token, std::size_t& used) {
  if constexpr (std::is_floating_point_v<T>) {
    errno = 0;
    char* end = nullptr;
    const double d = std::strtod(token.c_str(), &end);
    used = static_cast<std::size_t>(end - token.c_str());
    if (used == 0) throw std::invalid_argument("");
    if (errno == ERANGE && std::isinf(d)) throw std::out_of_range("");
    const T v = static_cast<T>(d);
    if (std::isfinite(d) && std::isinf(v)) throw std::out_of_range("");
    return v;
  } else if constexpr (std::is_signed_v<T>) {
    const long long x = std::stoll(token, &used);
    if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) throw std::out_of_range("");
    return static_cast<T>(x);
  } else {
    if (token[0] == '-') throw std::invalid_argument("");
    const unsigned long long x = std::stoull(token, &used);
    if (x > std::numeric_limits<T>::max()) throw std::out_of_range("");
    return static_cast<T>(x);
  }
}

// Reads every whitespace-separated token of `path` as a T; names the file, line and token on failure
// (gpukit::bad_input: exit 2). NaN and Inf are refused unless `allow_nonfinite`.
template <class T>
std::vector<T> read_values(const std::string& path, bool allow_nonfinite) {
  std::ifstream in(path);
  if (!in) throw gpukit::bad_input(path + ": cannot open file");
  std::vector<T> values;
  std::string line, token;
  for (std::int64_t line_no = 1; std::getline(in, line); ++line_no) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    std::istringstream tokens(line);
    const std::string at = path + ":" + std::to_string(line_no) + ": ";
    while (tokens >> token) {
      std::size_t used = 0;
      T v{};
      try {
        v = parse_token<T>(token, used);
      } catch (const std::out_of_range&) {
        throw gpukit::bad_input(at + "value " + gpukit::quote_token(token) + " out of range");
      } catch (const std::invalid_argument&) {
        used = 0;
      }
      if (used != token.size()) throw gpukit::bad_input(at + gpukit::quote_token(token) + " is not a number");
      if constexpr (std::is_floating_point_v<T>) {
        if (!std::isfinite(v) && !allow_nonfinite)
          throw gpukit::bad_input(at + "value " + gpukit::quote_token(token) +
                                  " is not finite (NaN and Inf are refused unless allowed: --allow-nonfinite)");
      }
      values.push_back(v);
    }
  }
  if (in.bad()) throw gpukit::bad_input(path + ": read error");
  return values;
}

struct check_result {
  bool ok = true;
  std::string text;              // "|error| 1.2e-07 <= bound 3.4e-06" or "exact match"
  double error_over_bound = -1;  // floats: |error| / bound; integers: not applicable (< 0)
};

// Oracle: long double, serial. Float bound, derived per backend (libreduce/README.md):
//  * cuda: the single-pass kernel's longest accumulation chain has k terms
//    (reduce::single_pass_chain_length), so |error| <= gamma_T(k) * sum|x|;
//  * cpu: double accumulation in any order, then one rounding to T:
//    |error| <= gamma_double(n - 1) * sum|x| + u_T * |exact|.
// Integers: exact, modulo 2^bits.
template <class T>
check_result check_sum(const std::vector<T>& values, T result, reduce::backend be) {
  check_result c;
  std::ostringstream text;
  const auto n = static_cast<std::int64_t>(values.size());
  if constexpr (std::is_floating_point_v<T>) {
    long double exact = 0, abs_sum = 0;
    for (T v : values) {
      exact += static_cast<long double>(v);
      abs_sum += std::fabs(static_cast<long double>(v));
    }
    auto gamma = [](long double k, long double u) {
      return k * u < 1 ? k * u / (1 - k * u) : std::numeric_limits<long double>::infinity();
    };
    const long double u_t = std::numeric_limits<T>::epsilon() / 2.0L;
    const long double bound =
        be == reduce::backend::cuda
            ? gamma(static_cast<long double>(reduce::single_pass_chain_length(n, sizeof(T))), u_t) * abs_sum
            : gamma(static_cast<long double>(n > 0 ? n - 1 : 0), std::numeric_limits<double>::epsilon() / 2.0L) *
                      abs_sum + u_t * std::fabs(exact);
    const long double err = std::fabs(static_cast<long double>(result) - exact);
    c.ok = err <= bound;
    if (!std::isfinite(exact)) {  // NaN or Inf among the inputs (--allow-nonfinite): the class must match
      c.ok = std::isnan(exact) ? std::isnan(result) : static_cast<long double>(result) == exact;
      c.text = std::string("non-finite input: the sum must be ") + (std::isnan(exact) ? "nan" : exact > 0 ? "inf" : "-inf");
      return c;
    }
    if (std::isfinite(static_cast<double>(bound)) && bound > 0) c.error_over_bound = static_cast<double>(err / bound);
    text << std::scientific << std::setprecision(3) << "|error| " << static_cast<double>(err) << " <= bound "
         << static_cast<double>(bound);
  } else {
    using U = std::make_unsigned_t<T>;
    U wrapped = 0;
    for (T v : values) wrapped = static_cast<U>(wrapped + static_cast<U>(v));
    c.ok = static_cast<U>(result) == wrapped;
    text << "exact match";
  }
  c.text = text.str();
  return c;
}

template <class T>
std::string exact_text(T v) {
  std::ostringstream o;
  o << std::setprecision(std::numeric_limits<T>::max_digits10) << +v;
  return o.str();
}

void write_report(const sum_options& opt, reduce::backend be, std::int64_t n, const std::string& sum,
                  const check_result& c) {
  nlohmann::json r = gpukit::report::make("reduce", "sum");
  r["device"]["backend"] = reduce::to_string(be);  // the backend used, not only the one present
  r["inputs"] = {{"file", opt.file}, {"type", opt.type}, {"device", opt.device}};
  r["results"] = {{"n", n}, {"sum", sum}, {"check", c.text}, {"check_passed", c.ok}};
  if (c.error_over_bound >= 0) r["results"]["error_over_bound_ratio"] = c.error_over_bound;
  gpukit::report::write(opt.json, r);
}

/// With --allow-nonfinite, the NaN/Inf count on stderr: a NaN sum is never silent.
template <class T>
void note_nonfinite(const std::vector<T>& values, const std::string& file) {
  if constexpr (std::is_floating_point_v<T>) {
    std::int64_t nan = 0, inf = 0;
    for (T v : values) {
      nan += std::isnan(v);
      inf += std::isinf(v);
    }
    if (nan + inf > 0)
      std::cerr << "reduce: note: " << file << " holds " << nan << " NaN and " << inf
                << " infinite values: the sum is not a finite number\n";
  }
}

template <class T>
int run(const sum_options& opt, reduce::backend be) {
  const std::vector<T> values = read_values<T>(opt.file, opt.allow_nonfinite);
  note_nonfinite(values, opt.file);
  const auto n = static_cast<std::int64_t>(values.size());
  T result{};
  if (be == reduce::backend::cuda) {
    gpukit::device_buffer<T> d(values);
    result = reduce::sum(d.data(), n);
  } else {
    result = reduce::reference::sum(values.data(), n);
  }
  const check_result c = check_sum(values, result, be);
  gpukit::output_stream(opt.quiet)
      << "file      " << opt.file << "\n"
      << "type      " << opt.type << "\n"
      << "elements  " << n << "\n"
      << "backend   " << reduce::to_string(be)
      << (be == reduce::backend::cuda ? " (" + reduce::cuda_device_description() + ")" : std::string()) << "\n"
      << "sum       " << exact_text(result) << "\n"
      << "check     " << c.text << (c.ok ? "  [ok]" : "  [FAILED]") << "\n";
  if (!opt.json.empty()) write_report(opt, be, n, exact_text(result), c);
  if (!c.ok) throw gpukit::check_failed("sum of " + opt.file + " outside its bound: " + c.text);
  return gpukit::exit_ok;
}

}  // namespace

int sum_command(const sum_options& opt) {
  { std::ifstream probe(opt.file); if (!probe) throw gpukit::bad_input(opt.file + ": cannot open file"); }
  gpukit::check_output_paths({opt.file}, {opt.json});
  const reduce::backend be = gpukit::select_backend_announced("reduce", opt.device);
  if (opt.type == "float") return run<float>(opt, be);
  if (opt.type == "double") return run<double>(opt, be);
  if (opt.type == "int32") return run<std::int32_t>(opt, be);
  if (opt.type == "int64") return run<std::int64_t>(opt, be);
  if (opt.type == "uint32") return run<std::uint32_t>(opt, be);
  return run<std::uint64_t>(opt, be);
}

}  // namespace reduce_app
