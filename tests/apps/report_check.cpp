// report_check FILE...: validates JSON reports against the schema of apps/README.md ("JSON reports");
// prints each problem and exits 1 when any file does not conform, 2 when one cannot be read or parsed.
#include <fstream>
#include <iostream>

#include "report.hpp"

int main(int argc, char** argv) {
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i]);
    if (!in) {
      std::cerr << argv[i] << ": cannot open\n";
      return 2;
    }
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      std::cerr << argv[i] << ": not JSON: " << e.what() << "\n";
      return 2;
    }
    for (const std::string& p : gpukit::report::schema_problems(j)) {
      std::cerr << argv[i] << ": " << p << "\n";
      status = 1;
    }
  }
  return status;
}
