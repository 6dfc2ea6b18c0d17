// A token of an input file as an error line quotes it (common layer: the readers of every library and
// app): at most 60 characters, so a 100 MB token or a binary file's bytes never become the error line;
// bytes outside printable ASCII as \xNN; "... (N bytes)" when cut.
//   quote_token("abc") == "'abc'";  quote_token("\xEF\xBB\xBF%%") == "'\\xef\\xbb\\xbf%%'"
#pragma once
#include <cstdio>
#include <string>
#include <string_view>

namespace gpukit {

inline std::string quote_token(std::string_view token) {
  constexpr std::size_t shown = 60;
  std::string out = "'";
  for (std::size_t i = 0; i < token.size() && i < shown; ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
    }
  }
  out += "'";
  if (token.size() > shown) out += "... (" + std::to_string(token.size()) + " bytes)";
  return out;
}

}  // namespace gpukit
