// Matrix Market reader/writer. The whole file is read into memory and parsed with std::from_chars
// (locale-independent, no allocation per token): about 100 MB/s on one core, so a 30M-entry file
// takes seconds, not minutes as with iostreams.
#include "sparse/matrix_market.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include "file_util.hpp"
#include "gpukit/atomic_file.hpp"
#include "gpukit/host_memory.hpp"
#include "gpukit/quote.hpp"
#include "instantiate.hpp"

namespace sparse {
namespace detail {

std::string read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw io_error(path + ": cannot open for reading (" + std::strerror(errno) + ")");
  std::string data;
  std::array<char, 1 << 16> buf;
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) data.append(buf.data(), n);
  const bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) throw io_error(path + ": read error");
  return data;
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace detail

namespace {

enum class field_kind { real, integer, pattern };
enum class symmetry_kind { general, symmetric, skew };

/// Line-by-line walk over the file text, with 1-based line numbers for error messages.
class line_reader {
public:
  line_reader(const std::string& path, const std::string& text) : path_(path), p_(text.data()), end_(p_ + text.size()) {}
  /// Next line (without the newline); false at end of file.
  bool next(std::string_view& line) {
    if (p_ >= end_) return false;
    const char* nl = static_cast<const char*>(std::memchr(p_, '\n', static_cast<std::size_t>(end_ - p_)));
    const char* e = nl ? nl : end_;
    line = std::string_view(p_, static_cast<std::size_t>(e - p_));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    p_ = nl ? nl + 1 : end_;
    ++line_no_;
    return true;
  }
  /// Next line that is neither blank nor a comment; false at end of file.
  bool next_data(std::string_view& line) {
    while (next(line)) {
      const auto first = line.find_first_not_of(" \t");
      if (first == std::string_view::npos || line[first] == '%') continue;
      return true;
    }
    return false;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw io_error(path_ + ":" + std::to_string(line_no_) + ": " + what);
  }
  std::int64_t line_no() const { return line_no_; }
  std::size_t bytes_left() const { return static_cast<std::size_t>(end_ - p_); }

private:
  const std::string& path_;
  const char* p_;
  const char* end_;
  std::int64_t line_no_ = 0;
};

/// Splits a line into at most N whitespace-separated tokens; returns how many there were (may exceed N).
template <std::size_t N>
std::size_t split(std::string_view line, std::array<std::string_view, N>& tok) {
  std::size_t count = 0, i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) break;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (count < N) tok[count] = line.substr(i, j - i);
    ++count;
    i = j;
  }
  return count;
}

using detail::number_text;
using gpukit::quote_token;

std::int64_t parse_int(const line_reader& in, std::string_view t, const char* what) {
  const std::string_view token = t;
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  std::int64_t v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (r.ec == std::errc::result_out_of_range) in.fail(std::string(what) + " " + quote_token(token) + " does not fit a 64-bit integer");
  if (r.ec != std::errc() || r.ptr != t.data() + t.size())
    in.fail(std::string(what) + ": non-numeric token " + quote_token(token));
  return v;
}

/// What a value must be beyond a number: finite unless allowed, and within the range of the value type
/// the matrix is read into (1e300 is a double but overflows float).
struct value_rules {
  bool allow_nonfinite = false;
  bool single = false;  ///< read into float
  const char* type_name() const { return single ? "float" : "double"; }
};

double parse_value(const line_reader& in, std::string_view t, const value_rules& rules) {
  const std::string_view token = t;
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  double v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (r.ec != std::errc() && r.ec != std::errc::result_out_of_range) in.fail("value: non-numeric token " + quote_token(token));
  if (r.ptr != t.data() + t.size()) in.fail("value: non-numeric token " + quote_token(token));
  if (r.ec == std::errc::result_out_of_range) {
    // from_chars reports both ends of the range: 1e999 (overflow) and 1e-400 or 1e-310 (below the
    // normal range). strtod (C locale: the apps never call setlocale) gives the IEEE result of each:
    // +-HUGE_VAL for an overflow, refused; a subnormal or zero for an underflow, which is the correctly
    // rounded value and is kept.
    const std::string copy(t);
    v = std::strtod(copy.c_str(), nullptr);
    if (std::isinf(v)) in.fail("value " + quote_token(token) + " overflows double");
  }
  if (!std::isfinite(v) && !rules.allow_nonfinite)
    in.fail("value " + quote_token(token) + " is not finite (NaN and Inf are refused unless allowed)");
  if (rules.single && std::isfinite(v) && std::isinf(static_cast<float>(v)))
    in.fail("value " + quote_token(token) + " overflows float (largest 3.4028235e+38); read it as double");
  return v;
}

/// An entry of an 'integer' matrix: an integer token (1.5 or 1e3 is not one), held exactly by double up
/// to 2^53.
double parse_integer_value(const line_reader& in, std::string_view t) {
  if (!t.empty() && t.find_first_not_of("+-0123456789") != std::string_view::npos)
    in.fail("value " + quote_token(t) + " is not an integer (the banner says field 'integer')");
  return static_cast<double>(parse_int(in, t, "value"));
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

struct banner {
  bool coordinate = true;
  field_kind field = field_kind::real;
  symmetry_kind symmetry = symmetry_kind::general;
};

banner read_banner(line_reader& in) {
  std::string_view line;
  if (!in.next(line)) in.fail("empty file (expected a '%%MatrixMarket' banner)");
  if (line.substr(0, 3) == "\xEF\xBB\xBF")
    in.fail("the file starts with a UTF-8 byte-order mark (bytes EF BB BF) before the '%%MatrixMarket' banner");
  std::array<std::string_view, 6> t;
  const std::size_t n = split(line, t);
  if (n == 0 || lower(t[0]) != "%%matrixmarket")
    in.fail("bad banner: expected '%%MatrixMarket matrix coordinate|array FIELD SYMMETRY', found " + quote_token(line));
  if (n != 5) in.fail("bad banner: expected 5 words, found " + std::to_string(n));
  if (lower(t[1]) != "matrix") in.fail("bad banner: object " + quote_token(t[1]) + " is not 'matrix'");
  banner b;
  const std::string fmt = lower(t[2]), field = lower(t[3]), sym = lower(t[4]);
  if (fmt == "coordinate") b.coordinate = true;
  else if (fmt == "array") b.coordinate = false;
  else in.fail("bad banner: format " + quote_token(t[2]) + " is not 'coordinate' or 'array'");
  if (field == "real" || field == "double") b.field = field_kind::real;
  else if (field == "integer") b.field = field_kind::integer;
  else if (field == "pattern") b.field = field_kind::pattern;
  else if (field == "complex") in.fail("complex matrices are not supported (field 'complex')");
  else in.fail("bad banner: field " + quote_token(t[3]) + " is not real, integer or pattern");
  if (sym == "general") b.symmetry = symmetry_kind::general;
  else if (sym == "symmetric") b.symmetry = symmetry_kind::symmetric;
  else if (sym == "skew-symmetric") b.symmetry = symmetry_kind::skew;
  else if (sym == "hermitian") in.fail("hermitian matrices are not supported");
  else in.fail("bad banner: symmetry " + quote_token(t[4]) + " is not general, symmetric or skew-symmetric");
  if (!b.coordinate && b.field == field_kind::pattern) in.fail("bad banner: array format cannot be 'pattern'");
  return b;
}

template <class Index>
void check_fits(const line_reader& in, std::int64_t v, const char* what) {
  if (v > static_cast<std::int64_t>(std::numeric_limits<Index>::max()))
    in.fail(std::string(what) + " = " + std::to_string(v) + " does not fit the " + std::to_string(8 * sizeof(Index)) +
            "-bit index type");
}

template <class Value>
void append_value(std::string& out, Value v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back to v exactly
  out.append(buf, r.ptr);
}

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_comment(std::string& out, const std::string& comment) {
  std::size_t start = 0;
  while (start < comment.size()) {
    auto nl = comment.find('\n', start);
    if (nl == std::string::npos) nl = comment.size();
    out += "% ";
    out.append(comment, start, nl - start);
    out += '\n';
    start = nl + 1;
  }
}

void write_text(const std::string& path, const std::string& text) {
  try {
    gpukit::write_file_atomically(path, text);
  } catch (const std::runtime_error& e) {
    throw io_error(e.what());  // the library's error type, naming the path
  }
}

/// The size line of a coordinate file, checked against Index and against the bytes that follow.
struct coordinate_size {
  std::int64_t rows = 0, cols = 0, entries = 0;
  bool mirrored = false;  ///< symmetric or skew-symmetric storage: off-diagonal entries stand for two
  std::int64_t max_entries() const { return mirrored ? 2 * entries : entries; }
};

template <class Index>
coordinate_size read_size_line(line_reader& in, const banner& b) {
  std::string_view line;
  if (!in.next_data(line)) in.fail("file ends before the size line 'rows cols entries'");
  std::array<std::string_view, 4> t;
  if (split(line, t) != 3) in.fail("size line: expected 'rows cols entries'");
  coordinate_size z;
  z.rows = parse_int(in, t[0], "rows");
  z.cols = parse_int(in, t[1], "cols");
  z.entries = parse_int(in, t[2], "entries");
  if (z.rows < 0 || z.cols < 0 || z.entries < 0)
    in.fail("size line: negative size " + std::to_string(z.rows) + " " + std::to_string(z.cols) + " " + std::to_string(z.entries));
  // row_ptr holds rows + 1 entries and the largest column index is cols - 1.
  check_fits<Index>(in, z.rows, "rows");
  check_fits<Index>(in, z.cols, "cols");
  z.mirrored = b.symmetry != symmetry_kind::general;
  if (z.mirrored && z.rows != z.cols)
    in.fail("symmetric storage needs a square matrix, size is " + std::to_string(z.rows) + " x " + std::to_string(z.cols));
  // Each entry takes at least 4 bytes ("1 1\n"): a count past that is a wrong header or a truncated
  // file, and is reported before anything is allocated for it.
  if (static_cast<std::uint64_t>(z.entries) > in.bytes_left() / 4 + 1)
    in.fail("declares " + std::to_string(z.entries) + " entries but only " + std::to_string(in.bytes_left()) +
            " bytes follow (truncated file or wrong count)");
  check_fits<Index>(in, z.max_entries(), "entries");
  return z;
}

/// The entries as 0-based triplets, symmetric storage expanded (negated for skew-symmetric).
struct triplets {
  std::vector<std::int64_t> rows, cols;
  std::vector<double> values;
  void add(std::int64_t i, std::int64_t j, double v) {
    rows.push_back(i);
    cols.push_back(j);
    values.push_back(v);
  }
};

/// Symmetric storage keeps one triangle (the format's rule: the lower one; files that keep the upper
/// one are read alike). A file holding off-diagonal entries on both sides would have each pair counted
/// twice once expanded, so the second side's first entry is refused, naming both lines.
class one_triangle {
public:
  void check(const line_reader& in, std::int64_t i, std::int64_t j) {
    if (i == j) return;
    std::int64_t& mine = i > j ? first_lower_ : first_upper_;
    const std::int64_t other = i > j ? first_upper_ : first_lower_;
    if (other > 0)
      in.fail("symmetric storage holds one triangle, but entry (" + std::to_string(i) + ", " + std::to_string(j) +
              ") lies " + (i > j ? "below" : "above") + " the diagonal while line " + std::to_string(other) +
              " holds one " + (i > j ? "above" : "below") + " it (both triangles stored: expanding would double them)");
    if (mine == 0) mine = in.line_no();
  }

private:
  std::int64_t first_lower_ = 0, first_upper_ = 0;  // line numbers; 0: none yet
};

triplets read_entries(line_reader& in, const banner& b, const coordinate_size& z, const value_rules& rules) {
  triplets t;
  try {
    t.rows.reserve(static_cast<std::size_t>(z.max_entries()));
    t.cols.reserve(static_cast<std::size_t>(z.max_entries()));
    t.values.reserve(static_cast<std::size_t>(z.max_entries()));
  } catch (const std::bad_alloc&) {
    in.fail("cannot allocate memory for " + std::to_string(z.max_entries()) + " entries");
  }
  const std::size_t want = b.field == field_kind::pattern ? 2 : 3;
  std::array<std::string_view, 4> e;
  std::string_view line;
  one_triangle triangle;
  for (std::int64_t k = 0; k < z.entries; ++k) {
    if (!in.next_data(line))
      in.fail("file ends after " + std::to_string(k) + " of " + std::to_string(z.entries) + " entries (truncated?)");
    const std::size_t n = split(line, e);
    if (n != want)
      in.fail("entry " + std::to_string(k + 1) + ": expected " + std::to_string(want) + " fields, found " + std::to_string(n));
    const std::int64_t i = parse_int(in, e[0], "row index"), j = parse_int(in, e[1], "column index");
    if (i < 1 || i > z.rows) in.fail("row index " + std::to_string(i) + " out of range 1.." + std::to_string(z.rows));
    if (j < 1 || j > z.cols) in.fail("column index " + std::to_string(j) + " out of range 1.." + std::to_string(z.cols));
    const double v = b.field == field_kind::pattern ? 1.0
                     : b.field == field_kind::integer ? parse_integer_value(in, e[2])
                                                      : parse_value(in, e[2], rules);
    if (b.symmetry == symmetry_kind::skew && i == j)
      in.fail("skew-symmetric matrix stores a diagonal entry (" + std::to_string(i) + ", " + std::to_string(j) + ")");
    if (z.mirrored) triangle.check(in, i, j);
    t.add(i - 1, j - 1, v);
    if (z.mirrored && i != j) t.add(j - 1, i - 1, b.symmetry == symmetry_kind::skew ? -v : v);
  }
  while (in.next_data(line)) in.fail("more entries than the " + std::to_string(z.entries) + " declared");
  return t;
}

/// Host bytes read_matrix_market holds at its peak beyond the file text: the triplets (row, column,
/// value: 24 B an entry), the row-sorted copy (16 B) and the CSR arrays (row_ptr, col_idx, values).
template <class Value, class Index>
std::uint64_t peak_bytes(const coordinate_size& z) {
  const std::uint64_t per_entry = 24 + 16 + sizeof(Index) + sizeof(Value);
  const std::uint64_t entries = gpukit::saturating_bytes(z.max_entries(), per_entry);
  const std::uint64_t rows = gpukit::saturating_bytes(z.rows + 1, sizeof(Index));
  return entries > UINT64_MAX - rows ? UINT64_MAX : entries + rows;
}

/// Triplets -> CSR: count per row, scatter, then sort each row by column and sum duplicates (in double,
/// rounded once to Value). row_ptr is the only per-row array (4 or 8 B a row: a file declaring 5e8
/// empty rows needs 2 GB, not the 10 GB three int64 arrays took): it holds the counts, then each row's
/// end, which the backwards scatter moves to each row's start, which the compaction overwrites with
/// the final offsets one row behind its reads.
template <class Value, class Index>
host_csr<Value, Index> triplets_to_csr(const std::string& path, std::int64_t rows, std::int64_t cols, triplets t) {
  const std::size_t nt = t.rows.size();
  const auto nrows = static_cast<std::size_t>(rows);
  std::vector<Index> row_ptr(nrows + 1, Index{0});
  for (std::size_t k = 0; k < nt; ++k) ++row_ptr[static_cast<std::size_t>(t.rows[k]) + 1];
  for (std::size_t r = 0; r < nrows; ++r) row_ptr[r + 1] += row_ptr[r];  // row_ptr[r + 1] = end of row r
  std::vector<std::pair<std::int64_t, double>> slot(nt);
  for (std::size_t k = nt; k-- > 0;) {  // backwards: each row keeps the file's order, ends at its start
    auto& cursor = row_ptr[static_cast<std::size_t>(t.rows[k]) + 1];
    slot[static_cast<std::size_t>(--cursor)] = {t.cols[k], t.values[k]};
  }
  t = {};  // row_ptr[r + 1] = start of row r now
  std::vector<Index> col_idx;
  std::vector<Value> values;
  col_idx.reserve(nt);
  values.reserve(nt);
  for (std::size_t r = 0; r < nrows; ++r) {
    const auto first = slot.begin() + static_cast<std::ptrdiff_t>(row_ptr[r + 1]);
    const auto last = r + 1 < nrows ? slot.begin() + static_cast<std::ptrdiff_t>(row_ptr[r + 2]) : slot.end();
    std::stable_sort(first, last, [](const auto& a, const auto& c) { return a.first < c.first; });
    for (auto it = first; it != last;) {
      const std::int64_t c = it->first;
      double sum = 0;
      bool parts_finite = true;
      for (; it != last && it->first == c; ++it) {
        sum += it->second;
        parts_finite = parts_finite && std::isfinite(it->second);
      }
      if (parts_finite && !std::isfinite(static_cast<Value>(sum)))
        throw io_error(path + ": the duplicate entries of (" + std::to_string(r + 1) + ", " + std::to_string(c + 1) +
                       ") sum to " + (std::isfinite(sum) ? number_text(sum) : std::string("more than double holds")) +
                       ", which overflows " + (sizeof(Value) == 4 ? "float" : "double"));
      col_idx.push_back(static_cast<Index>(c));
      values.push_back(static_cast<Value>(sum));
    }
    row_ptr[r + 1] = static_cast<Index>(col_idx.size());
  }
  return host_csr<Value, Index>(rows, cols, std::move(row_ptr), std::move(col_idx), std::move(values));
}

}  // namespace

template <class Value, class Index>
host_csr<Value, Index> read_matrix_market(const std::string& path, const read_options& options) {
  const std::string text = detail::read_file(path);
  line_reader in(path, text);
  const banner b = read_banner(in);
  if (!b.coordinate)
    in.fail("array format holds a dense matrix or vector: use read_matrix_market_vector, or store the matrix "
            "in coordinate format");
  const coordinate_size z = read_size_line<Index>(in, b);
  if (auto why = gpukit::host_memory_shortfall(peak_bytes<Value, Index>(z), std::to_string(z.rows) + " rows and " +
                                                                            std::to_string(z.max_entries()) + " entries"))
    in.fail("size line declares a matrix that " + *why);
  const value_rules rules{options.allow_nonfinite, sizeof(Value) == 4};
  return triplets_to_csr<Value, Index>(path, z.rows, z.cols, read_entries(in, b, z, rules));
}

template <class Value, class Index>
void write_matrix_market(const std::string& path, const host_csr<Value, Index>& a, const std::string& comment) {
  try {
    a.validate();
  } catch (const invalid_matrix& e) {
    throw io_error(path + ": not written, the matrix is invalid: " + e.what());
  }
  std::string out;
  out.reserve(static_cast<std::size_t>(a.nnz()) * 28 + 256);
  out += "%%MatrixMarket matrix coordinate real general\n";
  append_comment(out, comment);
  append_int(out, a.rows());
  out += ' ';
  append_int(out, a.cols());
  out += ' ';
  append_int(out, a.nnz());
  out += '\n';
  for (std::int64_t r = 0; r < a.rows(); ++r) {
    for (std::int64_t p = a.row_ptr()[static_cast<std::size_t>(r)]; p < a.row_ptr()[static_cast<std::size_t>(r) + 1]; ++p) {
      append_int(out, r + 1);
      out += ' ';
      append_int(out, static_cast<std::int64_t>(a.col_idx()[static_cast<std::size_t>(p)]) + 1);
      out += ' ';
      append_value(out, a.values()[static_cast<std::size_t>(p)]);
      out += '\n';
    }
  }
  write_text(path, out);
}

template <class Value>
std::vector<Value> read_matrix_market_vector(const std::string& path, const read_options& options) {
  const std::string text = detail::read_file(path);
  line_reader in(path, text);
  const banner b = read_banner(in);
  if (b.coordinate) in.fail("a vector must be in array format ('%%MatrixMarket matrix array real general')");
  if (b.symmetry != symmetry_kind::general) in.fail("a vector must have symmetry 'general'");
  std::string_view line;
  if (!in.next_data(line)) in.fail("file ends before the size line 'rows cols'");
  std::array<std::string_view, 3> t;
  if (split(line, t) != 2) in.fail("size line: expected 'rows cols' (array format)");
  const std::int64_t m = parse_int(in, t[0], "rows"), n = parse_int(in, t[1], "cols");
  if (m < 0 || n < 0) in.fail("size line: negative size " + std::to_string(m) + " " + std::to_string(n));
  if (m != 1 && n != 1 && m != 0 && n != 0)
    in.fail("size " + std::to_string(m) + " x " + std::to_string(n) + " is not a vector (one of rows, cols must be 1)");
  const std::int64_t count = (m == 0 || n == 0) ? 0 : m * n;  // one of them is 1: no overflow
  if (static_cast<std::uint64_t>(count) > in.bytes_left() / 2 + 1)
    in.fail("declares " + std::to_string(count) + " values but only " + std::to_string(in.bytes_left()) +
            " bytes follow (truncated file or wrong count)");
  std::vector<Value> v;
  v.reserve(static_cast<std::size_t>(count));
  const value_rules rules{options.allow_nonfinite, sizeof(Value) == 4};
  std::array<std::string_view, 2> e;
  for (std::int64_t k = 0; k < count; ++k) {
    if (!in.next_data(line))
      in.fail("file ends after " + std::to_string(k) + " of " + std::to_string(count) + " values (truncated?)");
    if (split(line, e) != 1) in.fail("value " + std::to_string(k + 1) + ": expected one number per line");
    v.push_back(static_cast<Value>(b.field == field_kind::integer ? parse_integer_value(in, e[0]) : parse_value(in, e[0], rules)));
  }
  while (in.next_data(line)) in.fail("more values than the " + std::to_string(count) + " declared");
  return v;
}

template <class Value>
void write_matrix_market_vector(const std::string& path, const std::vector<Value>& v, const std::string& comment) {
  std::string out;
  out.reserve(v.size() * 26 + 128);
  out += "%%MatrixMarket matrix array real general\n";
  append_comment(out, comment);
  append_int(out, static_cast<std::int64_t>(v.size()));
  out += " 1\n";
  for (Value x : v) {
    append_value(out, x);
    out += '\n';
  }
  write_text(path, out);
}

#define SPARSE_MM_INSTANTIATE(V, I)                                                        \
  template host_csr<V, I> read_matrix_market<V, I>(const std::string&, const read_options&); \
  template void write_matrix_market<V, I>(const std::string&, const host_csr<V, I>&, const std::string&);
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_MM_INSTANTIATE)
#undef SPARSE_MM_INSTANTIATE
template std::vector<float> read_matrix_market_vector<float>(const std::string&, const read_options&);
template std::vector<double> read_matrix_market_vector<double>(const std::string&, const read_options&);
template void write_matrix_market_vector<float>(const std::string&, const std::vector<float>&, const std::string&);
template void write_matrix_market_vector<double>(const std::string&, const std::vector<double>&, const std::string&);

}  // namespace sparse
