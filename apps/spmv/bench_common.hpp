// What `spmv bench` (the ANCHORS classes, bench_command.cpp) and `spmv bench --corpus` (corpus_command.cpp)
// share: one matrix timed with every algorithm and cuSPARSE ALG1/ALG2 in the same run, each result
// checked against the reference within its derived per-row bound, and the report records of it.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "report.hpp"
#include "sparse/csr.hpp"

namespace spmv_app {

struct timing {
  std::string name;  // algorithm or peer
  std::string plan;
  double us = 0;
  double gbs = 0;
  bool within_bound = true;
  double worst_ratio = 0;
};

/// One matrix's measurements (a benchmark class or a corpus matrix).
struct class_result {
  std::string name;
  bool anchor = true;  // one of the six ANCHORS classes (targets apply)
  std::int64_t rows = 0, cols = 0, nnz = 0;
  double bytes = 0;
  double stencil_bytes = 0;      // what stencil moves (no col_idx)
  std::string stencil_why_not;   // non-empty: stencil does not apply (not timed)
  std::string windowed_why_not;  // non-empty: windowed does not apply (not timed)
  std::string column_blocks_why_not;  // non-empty: column_blocks does not apply (not timed)
  std::string automatic_plan;
  std::string automatic_choice;  // the algorithm automatic runs (its plan's algorithm())
  std::string csr_choice;        // choose_algorithm(): automatic's pick among the CSR kernels (stencil aside)
  std::vector<timing> t;
  const timing* find(const std::string& n) const {
    for (const auto& x : t)
      if (x.name == n) return &x;
    return nullptr;
  }
  const timing& get(const std::string& n) const {
    if (const timing* x = find(n)) return *x;
    throw std::logic_error("no timing named " + n);
  }
};

/// ALG1 (ALG2) time over automatic's: above 1, automatic is faster.
inline double alg1_speedup(const class_result& c) { return c.get("cusparse_alg1").us / c.get("automatic").us; }
inline double alg2_speedup(const class_result& c) { return c.get("cusparse_alg2").us / c.get("automatic").us; }

/// Warm-up and timed calls per figure: --quick 3 and 25, else 10 and 200; bench_one takes at least 200 of a
/// call under 50 us, and 0.5 s of calls (at least 5) where they would take longer (runs_for).
struct bench_calls {
  int warmup, reps;
};
inline bench_calls calls_for(bool quick) { return quick ? bench_calls{3, 25} : bench_calls{10, 200}; }

/// Times y = A x (float values, int32 indices) with cuSPARSE ALG1 and ALG2, every concrete algorithm that
/// applies and automatic (and, with `explore`, vector at every forced width), their calls interleaved, each
/// the median of its samples after `calls.warmup`, and checks each result against the reference within its
/// bound.
class_result bench_one(const sparse::host_csr<float, std::int32_t>& a, const std::string& name, bool anchor,
                       bench_calls calls, bool explore);

/// The records of `results`: results["matrices"] (one per matrix: its facts and automatic's choice) and
/// results["timings"] (one per matrix and algorithm).
void add_matrices_json(nlohmann::json& res, const std::vector<class_result>& results);

std::string fixed(double v, int precision);

}  // namespace spmv_app
