// Text formats of the WSM5 golden cases (data/wsm5, with provenance in data/wsm5/PROVENANCE): the input columns and WRF's golden output.
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "wsm5/wsm5.hpp"

namespace wsm5 {
namespace {

/// Line reader that skips '#' comments and blank lines and names file:line in errors.
class line_reader {
public:
  explicit line_reader(const std::string& path) : path_(path), in_(path) {
    if (!in_) throw std::runtime_error(path + ": cannot open file");
  }
  bool next(std::istringstream& out) {
    std::string line;
    while (std::getline(in_, line)) {
      ++line_no_;
      const auto hash = line.find('#');
      if (hash != std::string::npos) line.erase(hash);
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      out.clear();
      out.str(line);
      return true;
    }
    return false;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(path_ + ":" + std::to_string(line_no_) + ": " + what);
  }
  void need(std::istringstream& out, const std::string& what) {
    if (!next(out)) throw std::runtime_error(path_ + ": unexpected end of file, expected " + what);
  }

private:
  std::string path_;
  std::ifstream in_;
  long line_no_ = 0;
};

/// A count of the header: a positive whole number ("1.5" is not "1" followed by ".5").
long long read_count(const line_reader& r, std::istringstream& ls, const char* name) {
  std::string t;
  if (!(ls >> t)) r.fail(std::string("expected ") + name + " in the header");
  long long v = 0;
  const auto res = std::from_chars(t.data(), t.data() + t.size(), v);
  if (res.ec == std::errc::result_out_of_range) r.fail(std::string(name) + " = " + t.substr(0, 60) + " does not fit 64 bits");
  if (res.ec != std::errc() || res.ptr != t.data() + t.size())
    r.fail(std::string(name) + " = '" + t.substr(0, 60) + "' is not a whole number");
  if (v <= 0) r.fail(std::string(name) + " = " + t + " must be positive");
  return v;
}

}  // namespace

domain read_columns_text(const std::string& path) {
  line_reader r(path);
  std::istringstream ls;
  r.need(ls, "the header `ncol nz dt`");
  const long long ncol = read_count(r, ls, "ncol"), nz = read_count(r, ls, "nz");
  double dt = 0;
  if (!(ls >> dt)) r.fail("expected `ncol nz dt`");
  // A level line holds 10 numbers: at least 10 digits, 9 separators and a newline, 20 bytes. A header
  // declaring more levels than the file can hold is refused before the domain is allocated for them.
  std::error_code size_error;
  const std::uintmax_t file_bytes = std::filesystem::file_size(path, size_error);
  long long levels = 0;
  if (__builtin_mul_overflow(ncol, nz, &levels) ||
      (!size_error && static_cast<std::uintmax_t>(levels) > file_bytes / 20))
    r.fail("ncol * nz = " + std::to_string(ncol) + " * " + std::to_string(nz) +
           " level lines do not fit a file of " + std::to_string(file_bytes) + " bytes");
  domain d;
  try {
    d.resize(ncol, 1, nz);
  } catch (const std::invalid_argument& e) {
    r.fail(e.what());
  }
  d.dt = static_cast<float>(dt);
  d.columns_form = true;
  const std::vector<std::string>& names = field_names_3d();
  for (long long c = 0; c < ncol; ++c)
    for (long long k = 0; k < nz; ++k) {
      r.need(ls, "a level line of column " + std::to_string(c + 1));
      for (const auto& n : names) {
        double v = 0;
        if (!(ls >> v)) r.fail("expected 10 numbers `p den delz pii th qv qc qr qi qs`, missing " + n);
        field(d, n)[static_cast<std::size_t>(d.at(c, k, 0))] = static_cast<float>(v);
      }
      std::string extra;
      if (ls >> extra) r.fail("more than 10 numbers on a level line");
    }
  if (r.next(ls)) r.fail("unexpected data after the last column");
  d.validate(path);               // structure: sizes, finite values, positive p/den/delz/pii
  check_physical_or_throw(d, path);  // physics: validate.hpp's bounds, before any compute
  return d;
}

golden_file read_golden_text(const std::string& path) {
  line_reader r(path);
  std::istringstream ls;
  golden_file g;
  r.need(ls, "the header `ncol nz dt nsteps`");
  const long long ncol = read_count(r, ls, "ncol"), nz = read_count(r, ls, "nz");
  long long nsteps = 0;
  if (!(ls >> g.dt >> nsteps)) r.fail("expected `ncol nz dt nsteps`");
  g.ncol = ncol;
  g.nz = nz;
  g.nsteps = nsteps;
  for (long long c = 0; c < ncol; ++c) {
    golden_column col;
    r.need(ls, "a `C` line");
    std::string tag;
    long long icol = 0;
    if (!(ls >> tag >> icol >> col.rain >> col.rainncv >> col.snow >> col.snowncv >> col.sr >> col.dw) || tag != "C")
      r.fail("expected `C icol rain rainncv snow snowncv sr dW`");
    for (long long k = 0; k < nz; ++k) {
      r.need(ls, "an `L` line");
      long long kk = 0;
      double t, th, qv, qc, qr, qi, qs;
      if (!(ls >> tag >> kk >> t >> th >> qv >> qc >> qr >> qi >> qs) || tag != "L" || kk != k + 1)
        r.fail("expected `L k t th qv qc qr qi qs` for level " + std::to_string(k + 1));
      col.t.push_back(t); col.th.push_back(th); col.qv.push_back(qv); col.qc.push_back(qc);
      col.qr.push_back(qr); col.qi.push_back(qi); col.qs.push_back(qs);
    }
    g.cols.push_back(std::move(col));
  }
  return g;
}

}  // namespace wsm5
