// Every GPU method against the CPU path (solve::reference) on the validation problems, in double and float;
// the reproducible mode's bitwise history across runs and launch shapes; breakdown and non-finite detection;
// bad inputs; the callback operator; many right-hand sides on one solver; check_every not changing results.
#include <boost/mpl/list.hpp>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpukit/cuda_check.hpp"
#include "gpukit/cuda_timer.hpp"
#include "gpukit/device_buffer.hpp"
#include "solve/solve.hpp"
#include "solve_test_problems.hpp"
#include "sparse/spmv.hpp"
#include "test_support.hpp"

using solve::krylov_method;
using solve_test::csr;

namespace {

template <class V>
struct gpu_run {
  solve::result r;
  std::vector<V> x;
};

/// One GPU solve of b through an operator.
template <class V>
gpu_run<V> gpu_solve_by(const solve::linear_operator<V>& op, const std::vector<V>& b, const solve::options& opt) {
  solve::solver<V> s(op, opt);
  gpukit::device_buffer<V> db(b), dx(op.rows());
  gpu_run<V> out;
  out.r = s.solve(db, dx);
  out.x = dx.download();
  return out;
}

/// One GPU solve of a host matrix through csr_operator (automatic SpMV plan).
template <class V>
gpu_run<V> gpu_solve(const sparse::host_csr<V, std::int32_t>& a, const std::vector<V>& b, const solve::options& opt) {
  const sparse::device_csr<V, std::int32_t> d(a);
  return gpu_solve_by(solve::csr_operator<V, std::int32_t>(d), b, opt);
}

template <class T>
std::vector<T> cast_vector(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// memcmp on an empty vector's data() (may be null) is undefined even for 0 bytes: empty vectors are
// compared by size alone.
template <class V>
bool same_bits_v(const std::vector<V>& a, const std::vector<V>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(V)) == 0);
}
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) { return same_bits_v(a, b); }

bool runs_on(const solve_test::problem& p, krylov_method m) {
  if (p.jacobi_only && m != krylov_method::pcg) return false;
  return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(solve_gpu)

// Double: the true residual within residual_bound (derived in solve_test_problems.hpp) and the iteration
// count within 2 % of the CPU path (bicgstab: 15 %, see bicgstab_iterations_close; pipecg: only where neither
// path replaced its residual, see pipecg_follows_cg) for every method, in the default mode (block-tree
// dots) and the reproducible mode (exactly rounded sums), with the vector passes walking up and walking down
// (options::pass_direction; automatic picks up on these small problems); iterations_close says why 2 % is
// the band.
GPU_TEST_CASE(gpu_matches_reference_in_double) {
  for (const auto& p : solve_test::spd_problems()) {
    const auto b = solve_test::rhs(p.a.rows());
    for (krylov_method m : solve::all_krylov_methods()) {
      if (!runs_on(p, m)) continue;
      solve::options opt;
      opt.method = m;
      opt.rtol = solve_test::rtol_for(p);
      opt.max_iterations = p.max_iterations * (m == krylov_method::pipecg ? 4 : 1);
      std::vector<double> xr;
      const auto ref = solve::reference::solve(p.a, b, xr, opt);
      for (int variant = 0; variant < 4; ++variant) {
        const bool reproducible = variant & 1;
        const bool down = variant & 2;
        BOOST_TEST_CONTEXT(p.name << " " << solve::to_string(m) << (reproducible ? " reproducible" : " default")
                                  << (down ? ", passes walking down" : ", passes walking up")) {
          opt.reproducible = reproducible;
          opt.pass_direction = down ? solve::pass_order::downward : solve::pass_order::upward;
          const auto g = gpu_solve(p.a, b, opt);
          BOOST_TEST_MESSAGE(p.name << " " << solve::to_string(m) << (reproducible ? " reproducible" : "")
                                    << ": gpu " << g.r.iterations << ", cpu " << ref.iterations << "; "
                                    << g.r.summary() << " | cpu: " << ref.summary());
          BOOST_TEST(g.r.history.size() == static_cast<std::size_t>(g.r.iterations) + 1);
          BOOST_TEST(solve_test::solution_ok(p.a, b, g.x, g.r, opt.rtol));
          if (m == krylov_method::bicgstab)
            BOOST_TEST(solve_test::bicgstab_iterations_close(g.r.iterations, ref.iterations));
          else if (m != krylov_method::pipecg || (solve_test::pipecg_follows_cg(g.r) && solve_test::pipecg_follows_cg(ref)))
            BOOST_TEST(solve_test::iterations_close(g.r.iterations, ref.iterations));
        }
      }
    }
  }
}

// Float on the well-conditioned problems, rtol 1e-5: the true residual within residual_bound<float> (the
// same derivation with u = 2^-24; e.g. poisson2d_48, k ~ 100, m = 5: 4 * 101 * gamma_7 * |||A||x||| / ||b||
// ~ 4e-4 * |||A||x||| / ||b||, and |||A||x||| / ||b|| ~ 10-100 here, so the bound is ~1e-2 at worst: loose, but
// a perturbed x (checkers_reject_wrong_answers) or a wrong method fails it by orders of magnitude). The
// count: within 10 % of the CPU path in float (the float vector updates round identically on both paths;
// only the dot order differs, whose effect on a float count is not derived: a sanity band; pipecg: where
// neither path replaced its residual, see pipecg_follows_cg). pipecg must converge on every one of them:
// before residual replacement it stopped on p.Ap <= 0 on poisson2d_48 (iteration 120) and
// anisotropic2d_40_eps0.01 (195) on an H100.
GPU_TEST_CASE(gpu_solves_in_float) {
  for (const auto& p : solve_test::spd_problems()) {
    if (!p.float_ok) continue;
    const auto af = p.a.cast<float, std::int32_t>();
    const auto b = cast_vector<float>(solve_test::rhs(p.a.rows()));
    for (krylov_method m : solve::all_krylov_methods()) {
      BOOST_TEST_CONTEXT(p.name << " float " << solve::to_string(m)) {
        solve::options opt;
        opt.method = m;
        opt.rtol = 1e-5;
        opt.max_iterations = p.max_iterations;
        std::vector<float> xr;
        const auto ref = solve::reference::solve(af, b, xr, opt);
        const auto g = gpu_solve(af, b, opt);
        BOOST_TEST_MESSAGE(p.name << " float " << solve::to_string(m) << ": gpu " << g.r.iterations << ", cpu "
                                  << ref.iterations << "; " << g.r.summary());
        BOOST_TEST(solve_test::solution_ok(af, b, g.x, g.r, opt.rtol));
        if (m != krylov_method::pipecg || (solve_test::pipecg_follows_cg(g.r) && solve_test::pipecg_follows_cg(ref)))
          BOOST_TEST(solve_test::bicgstab_iterations_close(g.r.iterations, ref.iterations));
      }
    }
  }
}

// Regression: pipecg in float diverged on the H100 bench (poisson3d_160: 20000 iterations, ||b - A x|| =
// 2e9 ||b||; poisson2d_2048: NaN; poisson3d_64: 20000 iterations). On poisson3d_64 float, b random,
// rtol 1e-5 it must converge on the recomputed residual, with cg's count within 10 % (the CPU path, b from
// another seed: pipecg 157 with 10 refreshes, cg 157), and within 10 % of the CPU path's count.
GPU_TEST_CASE(pipecg_float_converges_on_poisson3d_64) {
  const auto a = solve::problems::poisson_3d<float, std::int32_t>(64);
  const auto b = test::random_vector<float>(a.rows(), -1.0f, 1.0f, 5);
  solve::options opt;
  opt.method = krylov_method::pipecg;
  opt.rtol = 1e-5;
  opt.max_iterations = 2000;
  const auto g = gpu_solve(a, b, opt);
  std::vector<float> xr;
  const auto ref = solve::reference::solve(a, b, xr, opt);
  opt.method = krylov_method::cg;
  const auto c = gpu_solve(a, b, opt);
  BOOST_TEST_MESSAGE("poisson3d_64 float pipecg: gpu " << g.r.summary() << " | cpu " << ref.summary() << " | cg "
                                                       << c.r.summary());
  BOOST_TEST(g.r.converged);
  BOOST_TEST(g.r.true_relative_residual <= 1.01e-5);
  BOOST_TEST(std::abs(g.r.iterations - c.r.iterations) <= std::max(2, c.r.iterations / 10));
  BOOST_TEST(std::abs(g.r.iterations - ref.iterations) <= std::max(2, ref.iterations / 10));
}

using value_types = boost::mpl::list<float, double>;

// Reproducible mode: residual history and x bitwise identical across 3 runs, two launch shapes
// (256 threads x automatic grid, 128 threads x 7 blocks) and both pass directions, for every method. The
// default mode: bitwise identical run to run for one shape.
GPU_TEST_CASE_TEMPLATE(reproducible_history_is_bitwise_identical, V, value_types) {
  const auto a = solve::problems::poisson_2d<V, std::int32_t>(test::reduced_sizes() ? 12 : 40);  // 12: sanitizers' pass
  const auto b = cast_vector<V>(solve_test::rhs(a.rows()));
  for (krylov_method m : solve::all_krylov_methods()) {
    BOOST_TEST_CONTEXT(solve::to_string(m)) {
      solve::options opt;
      opt.method = m;
      opt.rtol = std::is_same_v<V, float> ? 1e-5 : 1e-10;
      opt.reproducible = true;
      std::vector<gpu_run<V>> runs;
      for (int k = 0; k < 3; ++k) runs.push_back(gpu_solve(a, b, opt));
      opt.block_size = 128;
      opt.grid_blocks = 7;
      runs.push_back(gpu_solve(a, b, opt));
      for (solve::pass_order d : {solve::pass_order::upward, solve::pass_order::downward}) {
        opt.pass_direction = d;
        runs.push_back(gpu_solve(a, b, opt));
      }
      opt.pass_direction = solve::pass_order::automatic;
      for (std::size_t k = 1; k < runs.size(); ++k) {
        BOOST_TEST(runs[k].r.iterations == runs[0].r.iterations);
        BOOST_TEST(same_bits(runs[k].r.history, runs[0].r.history));
        BOOST_TEST(same_bits_v(runs[k].x, runs[0].x));
      }
      BOOST_TEST(runs[0].r.converged);
      // Default mode, one shape: run to run.
      opt.reproducible = false;
      const auto d0 = gpu_solve(a, b, opt), d1 = gpu_solve(a, b, opt);
      BOOST_TEST(same_bits(d0.r.history, d1.r.history));
      BOOST_TEST(same_bits_v(d0.x, d1.x));
    }
  }
}

// The history checker itself: a history with one bit flipped is told apart.
CPU_TEST_CASE(bitwise_checker_rejects_one_flipped_bit) {
  std::vector<double> h = {1.0, 0.5, 0.25};
  std::vector<double> g = h;
  std::uint64_t bits;
  std::memcpy(&bits, &g[1], 8);
  bits ^= 1;
  std::memcpy(&g[1], &bits, 8);
  BOOST_TEST(!same_bits(h, g));
  BOOST_TEST(same_bits(h, h));
}

// The sanitizers' pass (test::reduced_sizes()) solves a 6^3 cube: the 12^3 one took 173 s under memcheck.
GPU_TEST_CASE(check_every_does_not_change_the_result) {
  const auto a = solve::problems::poisson_3d<double, std::int32_t>(test::reduced_sizes() ? 6 : 12);
  const auto b = solve_test::rhs(a.rows());
  for (krylov_method m : solve::all_krylov_methods()) {
    BOOST_TEST_CONTEXT(solve::to_string(m)) {
      solve::options opt;
      opt.method = m;
      opt.check_every = 1;
      const auto one = gpu_solve(a, b, opt);
      for (int k : {3, 8, 1000}) {
        opt.check_every = k;
        const auto other = gpu_solve(a, b, opt);
        BOOST_TEST(other.r.iterations == one.r.iterations);
        BOOST_TEST(same_bits(other.r.history, one.r.history));
        BOOST_TEST(same_bits_v(other.x, one.x));
      }
      // The limit inside a segment: cg, pcg and bicgstab count what they enqueued while their status
      // check lags two iterations (segments 4, 4, then 2 with a synchronizing check; 3, 3, 3, all lagged).
      for (auto [every, limit] : {std::pair{4, 10}, std::pair{3, 9}}) {
        opt.check_every = every;
        opt.max_iterations = limit;
        const auto capped = gpu_solve(a, b, opt);
        BOOST_TEST(!capped.r.converged);
        BOOST_TEST(capped.r.reason == solve::stop_reason::max_iterations);
        BOOST_TEST(capped.r.iterations == limit);
      }
    }
  }
}

// The hot passes (cg, pcg, pipecg) read and write their vectors 16 bytes at a time when every vector is
// 16-byte aligned, else one entry at a time: b and x at an element offset (a 16-byte load there faults,
// so a wrong alignment test fails this case with a CUDA error) must solve as the aligned run does. n = 11^3
// = 1331 is not a multiple of 4 or 2, so the aligned run also takes the vector passes' tail.
template <class V>
void check_offset_vectors_solve_as_aligned_ones() {
  const auto a = solve::problems::poisson_3d<V, std::int32_t>(11);
  const std::int64_t n = a.rows();
  const auto b = cast_vector<V>(solve_test::rhs(n));
  const sparse::device_csr<V, std::int32_t> d(a);
  const solve::csr_operator<V, std::int32_t> op(d);
  for (krylov_method m : {krylov_method::cg, krylov_method::pcg, krylov_method::pipecg}) {
    BOOST_TEST_CONTEXT(solve::to_string(m) << (sizeof(V) == 4 ? " float" : " double")) {
      solve::options opt;
      opt.method = m;
      opt.rtol = sizeof(V) == 4 ? 1e-5 : 1e-10;
      const auto aligned = gpu_solve(a, b, opt);
      std::vector<V> b1(b);
      b1.insert(b1.begin(), V(7));
      gpukit::device_buffer<V> db(b1), dx(std::vector<V>(n + 1, V(0)));  // x[-1] defined: the whole buffer is read back
      solve::solver<V> s(op, opt);
      const auto r = s.solve(db.data() + 1, dx.data() + 1, n);
      std::vector<V> x = dx.download();
      x.erase(x.begin());
      BOOST_TEST(r.converged);
      BOOST_TEST(aligned.r.converged);
      BOOST_TEST(solve_test::solution_ok(a, b, x, r, opt.rtol));
      // Only the order of the double sums differs between the two runs (see gpu_solves_in_float for float's band).
      if (sizeof(V) == 8) BOOST_TEST(solve_test::iterations_close(r.iterations, aligned.r.iterations));
      else BOOST_TEST(solve_test::bicgstab_iterations_close(r.iterations, aligned.r.iterations));
    }
  }
}
GPU_TEST_CASE(offset_vectors_solve_as_aligned_ones_float) { check_offset_vectors_solve_as_aligned_ones<float>(); }
GPU_TEST_CASE(offset_vectors_solve_as_aligned_ones_double) { check_offset_vectors_solve_as_aligned_ones<double>(); }

// cg takes p.q, q.r and q.q from the SpMV's epilogue where the plan fuses them (sparse::spmv_dots, the
// stencil plan) and from its own dots pass otherwise (scalar plan): the same scalar update from the same
// three sums, so both must solve, count and break down as the CPU path does.
template <class V>
gpu_run<V> gpu_solve_with(const sparse::host_csr<V, std::int32_t>& a, const std::vector<V>& b,
                          const solve::options& opt, sparse::spmv_algorithm algorithm, bool fused) {
  const sparse::device_csr<V, std::int32_t> d(a);
  const solve::csr_operator<V, std::int32_t> op(d, algorithm);
  BOOST_TEST(op.fuses_dots() == fused);  // else this case would not test the path it names
  return gpu_solve_by(op, b, opt);
}

GPU_GRAPH_TEST_CASE(cg_with_the_dots_in_the_spmv_matches_cg_without) {
  using alg = sparse::spmv_algorithm;
  for (int n : {5, test::reduced_sizes() ? 7 : 13}) {  // 7: the sanitizers' pass (13 ran past 100 s in racecheck)
    const auto a = solve::problems::poisson_3d<double, std::int32_t>(n);
    const auto b = solve_test::rhs(a.rows());
    solve::options opt;
    opt.rtol = 1e-10;
    std::vector<double> xr;
    const auto ref = solve::reference::solve(a, b, xr, opt);
    for (bool graph : {false, true}) {
      if (graph && !test::conditional_graphs_checkable()) {
        BOOST_TEST_MESSAGE("graph mode skipped: not checkable under this synccheck (test::conditional_graphs_checkable)");
        continue;
      }
      BOOST_TEST_CONTEXT("poisson_3d(" << n << ")" << (graph ? " graph" : "")) {
        opt.graph = graph;
        const auto fused = gpu_solve_with(a, b, opt, alg::stencil, true);
        const auto apart = gpu_solve_with(a, b, opt, alg::scalar, false);
        for (const auto* g : {&fused, &apart}) {
          BOOST_TEST(g->r.converged);
          BOOST_TEST(solve_test::solution_ok(a, b, g->x, g->r, opt.rtol));
          BOOST_TEST(solve_test::iterations_close(g->r.iterations, ref.iterations));
        }
      }
    }
  }
  // Breakdowns: the quantity and iteration of the CPU path, x and the history as far as it got.
  for (const auto& c : {std::pair{solve_test::indefinite_3(), std::vector<double>{1, 1, 0}},
                        std::pair{solve_test::indefinite_6(), std::vector<double>(6, 1.0)}}) {
    std::vector<double> xr;
    const auto ref = solve::reference::solve(c.first, c.second, xr, solve::options{});
    const auto g = gpu_solve_with(c.first, c.second, solve::options{}, alg::stencil, true);
    BOOST_TEST(g.r.reason == solve::stop_reason::breakdown);
    BOOST_TEST(g.r.breakdown.quantity == "p.Ap");
    BOOST_TEST(g.r.breakdown.iteration == ref.breakdown.iteration);
    BOOST_TEST(g.r.iterations == ref.iterations);
    BOOST_TEST(g.r.history.size() == ref.history.size());
  }
  // Non-finite: float A = 1e30 I, b = 1e20: p.Ap = inf at iteration 1, found in the epilogue's sums.
  const sparse::host_csr<float, std::int32_t> big(2, 2, {0, 1, 2}, {0, 1}, {1e30f, 1e30f});
  const auto g = gpu_solve_with(big, std::vector<float>{1e20f, 1e20f}, solve::options{}, alg::stencil, true);
  BOOST_TEST(g.r.reason == solve::stop_reason::non_finite);
  BOOST_TEST(g.r.breakdown.quantity == "p.Ap");
  BOOST_TEST(g.r.breakdown.iteration == 1);
  BOOST_TEST(g.x == std::vector<float>(2, 0.0f), boost::test_tools::per_element());
}

// Reproducible cg takes its dots from the stencil SpMV's epilogue summed exactly (sparse::dots_summation::
// exact) or, on a scalar plan, from its own exact dots pass: the same terms (each product rounded to Value,
// the stencil's y bitwise scalar's) summed exactly, so the same history, solution and count, bit for bit.
// Host loop and graph mode are two cases: the graph half is labelled `graph`, which gpu-check runs under each
// sanitizer in a process of its own (with other sanitized processes on the GPU, memcheck stops kernels of a
// conditional graph body at valid addresses).
template <class V>
void check_reproducible_cg_with_the_dots_in_the_spmv(bool graph) {
  using alg = sparse::spmv_algorithm;
  // Reduced (the sanitizers' pass): 5^3 only; racecheck follows every shared-memory atomic of the exact sums,
  // and 7^3 in float ran past 330 s beside other sanitized processes.
  const std::vector<int> sides = test::reduced_sizes() ? std::vector<int>{5} : std::vector<int>{5, 17};
  for (int n : sides) {
    const auto a = solve::problems::poisson_3d<V, std::int32_t>(n);
    const auto b = cast_vector<V>(solve_test::rhs(a.rows()));
    solve::options opt;
    opt.rtol = std::is_same_v<V, float> ? 1e-5 : 1e-10;
    opt.reproducible = true;
    opt.graph = graph;
    BOOST_TEST_CONTEXT("poisson_3d(" << n << ")" << (graph ? " graph" : "")) {
      const auto fused = gpu_solve_with(a, b, opt, alg::stencil, true);
      const auto apart = gpu_solve_with(a, b, opt, alg::scalar, false);
      BOOST_TEST(fused.r.converged);
      BOOST_TEST(fused.r.iterations == apart.r.iterations);
      BOOST_TEST(same_bits(fused.r.history, apart.r.history));
      BOOST_TEST(same_bits_v(fused.x, apart.x));
    }
  }
}
GPU_TEST_CASE_TEMPLATE(reproducible_cg_with_the_dots_in_the_spmv_is_bitwise_cg_without, V, value_types) {
  check_reproducible_cg_with_the_dots_in_the_spmv<V>(false);
}
GPU_GRAPH_TEST_CASE_TEMPLATE(reproducible_cg_graph_with_the_dots_in_the_spmv_is_bitwise_cg_without, V, value_types) {
  check_reproducible_cg_with_the_dots_in_the_spmv<V>(true);
}

// options::graph: the loop as one graph launch gives bitwise the host loop's history, solution, count and
// reason (converged, iteration limit, breakdown), in both precisions and the reproducible mode; the graph is
// reused across right-hand sides and rebuilt for another x; the legacy default stream works; pipecg is
// refused.
template <class V>
void check_graph_matches_host_loop() {
  const auto a = solve::problems::poisson_3d<V, std::int32_t>(test::reduced_sizes() ? 6 : 12);  // 6: sanitizers' pass
  const auto b = cast_vector<V>(solve_test::rhs(a.rows()));
  for (krylov_method m : {krylov_method::cg, krylov_method::pcg, krylov_method::bicgstab}) {
    for (bool reproducible : {false, true}) {
      for (int max_iterations : {0, 1, 7, 1000}) {
        BOOST_TEST_CONTEXT(solve::to_string(m) << (reproducible ? " reproducible" : "") << ", max " << max_iterations) {
          solve::options opt;
          opt.method = m;
          opt.rtol = sizeof(V) == 4 ? 1e-5 : 1e-10;
          opt.reproducible = reproducible;
          opt.max_iterations = max_iterations;
          const auto host = gpu_solve(a, b, opt);
          opt.graph = true;
          const auto graph = gpu_solve(a, b, opt);
          BOOST_TEST(graph.r.iterations == host.r.iterations);
          BOOST_TEST((graph.r.reason == host.r.reason));
          BOOST_TEST(same_bits(graph.r.history, host.r.history));
          BOOST_TEST(same_bits_v(graph.x, host.x));
          if (max_iterations == 1000) BOOST_TEST(graph.r.converged);
        }
      }
    }
  }
}
GPU_GRAPH_TEST_CASE(graph_mode_matches_the_host_loop_bitwise_float) { check_graph_matches_host_loop<float>(); }
GPU_GRAPH_TEST_CASE(graph_mode_matches_the_host_loop_bitwise_double) { check_graph_matches_host_loop<double>(); }

GPU_GRAPH_TEST_CASE(graph_mode_reuses_and_rebuilds_and_refuses_pipecg) {
  const auto a = solve::problems::poisson_2d<double, std::int32_t>(30);
  const sparse::device_csr<double, std::int32_t> d(a);
  const solve::csr_operator<double, std::int32_t> op(d);
  solve::options opt;
  const std::vector<double> b1 = solve_test::rhs(a.rows());
  std::vector<double> b2(b1.rbegin(), b1.rend());
  solve::solver<double> host(op, opt);
  opt.graph = true;
  solve::solver<double> graph(op, opt);
  gpukit::device_buffer<double> db1(b1), db2(b2), x1(a.rows()), x2(a.rows()), xh(a.rows());
  // The same x for two right-hand sides (graph reused), then another x (rebuilt), on the legacy stream 0.
  for (const auto* db : {&db1, &db2, &db1}) {
    for (auto* x : {&x1, &x1, &x2}) {
      const auto rg = graph.solve(*db, *x, nullptr);
      const auto rh = host.solve(*db, xh, nullptr);
      BOOST_TEST(rg.converged);
      BOOST_TEST(rg.iterations == rh.iterations);
      BOOST_TEST(same_bits(rg.history, rh.history));
      BOOST_TEST(same_bits_v(x->download(), xh.download()));
    }
  }
  // A breakdown inside the graph stops it at the same iteration as the host loop.
  const auto g = [] {
    solve::options o;
    o.graph = true;
    return o;
  }();
  const auto bd = gpu_solve(solve_test::indefinite_6(), std::vector<double>(6, 1.0), g);
  BOOST_TEST((bd.r.reason == solve::stop_reason::breakdown));
  BOOST_TEST(bd.r.breakdown.iteration == 2);
  opt.method = krylov_method::pipecg;
  BOOST_CHECK_THROW((solve::solver<double>(op, opt)), std::invalid_argument);
}

GPU_TEST_CASE(breakdowns_are_detected_and_named_as_on_the_cpu) {
  struct case_t {
    csr a;
    std::vector<double> b;
    krylov_method m;
    const char* quantity;
    int iteration;
  };
  const std::vector<case_t> cases = {
      {solve_test::indefinite_3(), {1, 1, 0}, krylov_method::cg, "p.Ap", 1},
      {solve_test::indefinite_6(), std::vector<double>(6, 1.0), krylov_method::cg, "p.Ap", 2},
      {solve_test::indefinite_6(), std::vector<double>(6, 1.0), krylov_method::pipecg, "p.Ap", 0},
      {solve_test::bicg_omega_zero(), {1, 0}, krylov_method::bicgstab, "omega", 1},
      {solve_test::bicg_rho_zero(), {1, 0, 0}, krylov_method::bicgstab, "rho", 1},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(solve::to_string(c.m) << " " << c.quantity) {
      solve::options opt;
      opt.method = c.m;
      std::vector<double> xr;
      const auto ref = solve::reference::solve(c.a, c.b, xr, opt);
      const auto g = gpu_solve(c.a, c.b, opt);
      BOOST_TEST(g.r.reason == solve::stop_reason::breakdown);
      BOOST_TEST(g.r.breakdown.quantity == c.quantity);
      BOOST_TEST(g.r.breakdown.iteration == ref.breakdown.iteration);
      if (c.iteration > 0) BOOST_TEST(g.r.breakdown.iteration == c.iteration);
      BOOST_TEST(g.r.iterations == ref.iterations);
    }
  }
  // Non-finite: float A = 1e30 I, b = 1e20: q = A p = 1e50 overflows float, p.Ap = inf at iteration 1.
  const sparse::host_csr<float, std::int32_t> big(2, 2, {0, 1, 2}, {0, 1}, {1e30f, 1e30f});
  const auto g = gpu_solve(big, std::vector<float>{1e20f, 1e20f}, solve::options{});
  BOOST_TEST(g.r.reason == solve::stop_reason::non_finite);
  BOOST_TEST(g.r.breakdown.quantity == "p.Ap");
  BOOST_TEST(g.r.breakdown.iteration == 1);
}

GPU_TEST_CASE(bad_inputs_throw_invalid_argument) {
  auto throws_with = [](auto&& f, const std::string& words) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      BOOST_TEST_CONTEXT(e.what()) { BOOST_TEST(std::string(e.what()).find(words) != std::string::npos); }
      return;
    }
    BOOST_ERROR("no std::invalid_argument for '" << words << "'");
  };
  solve::options opt;
  // Non-square.
  const csr rect(2, 3, {0, 1, 2}, {0, 1}, {1.0, 1.0});
  const sparse::device_csr<double, std::int32_t> drect(rect);
  const solve::csr_operator<double, std::int32_t> oprect(drect);
  throws_with([&] { solve::solver<double> s(oprect, opt); }, "not square");
  // Empty.
  const solve::callback_operator<double> empty(0, [](const double*, double*, solve::stream_t) {});
  throws_with([&] { solve::solver<double> s(empty, opt); }, "empty");
  // Size mismatch, NaN/Inf in b.
  const auto a = solve::problems::poisson_2d<double, std::int32_t>(4);
  const sparse::device_csr<double, std::int32_t> da(a);
  const solve::csr_operator<double, std::int32_t> op(da);
  solve::solver<double> s(op, opt);
  gpukit::device_buffer<double> b15(std::vector<double>(15, 1.0)), x16(16);
  throws_with([&] { s.solve(b15, x16); }, "size mismatch");
  std::vector<double> hb(16, 1.0);
  hb[9] = std::numeric_limits<double>::quiet_NaN();
  gpukit::device_buffer<double> bnan(hb);
  throws_with([&] { s.solve(bnan, x16); }, "right-hand side holds NaN or Inf");
  // The solver is still usable after a rejected right-hand side.
  gpukit::device_buffer<double> bok(std::vector<double>(16, 1.0));
  BOOST_TEST(s.solve(bok, x16).converged);
  // NaN/Inf in A.
  csr inf_a = a;
  inf_a.values()[3] = std::numeric_limits<double>::infinity();
  const sparse::device_csr<double, std::int32_t> dinf(inf_a);
  throws_with([&] { solve::csr_operator<double, std::int32_t> o(dinf); }, "NaN or Inf");
  // Zero diagonal with Jacobi, and an operator without a diagonal.
  const csr zero_diag(2, 2, {0, 1, 3}, {1, 0, 1}, {1.0, 1.0, 2.0});
  const sparse::device_csr<double, std::int32_t> dz(zero_diag);
  const solve::csr_operator<double, std::int32_t> opz(dz);
  opt.method = krylov_method::pcg;
  throws_with([&] { solve::solver<double> p(opz, opt); }, "zero on the diagonal at row 0");
  const solve::callback_operator<double> nodiag(16, [](const double*, double*, solve::stream_t) {});
  throws_with([&] { solve::solver<double> p(nodiag, opt); }, "diagonal");
  opt = {};
  opt.block_size = 64;
  throws_with([&] { solve::solver<double> p(op, opt); }, "block_size");
}

// A callback operator that calls libsparse itself gives bitwise the csr_operator's solve (over a scalar
// plan: a stencil plan takes cg's dots in its SpMV, summed in another order than cg's dots pass); one solver
// serves several right-hand sides, each bitwise equal to a fresh solver's answer; a guess that is the
// solution needs 0 iterations.
GPU_TEST_CASE(callback_operator_and_many_right_hand_sides) {
  const auto a = solve::problems::poisson_2d<double, std::int32_t>(30);
  const sparse::device_csr<double, std::int32_t> d(a);
  const solve::csr_operator<double, std::int32_t> op(d, sparse::spmv_algorithm::scalar);
  BOOST_TEST(!op.fuses_dots());
  const solve::callback_operator<double> cb(a.rows(), [&](const double* x, double* y, solve::stream_t s) {
    sparse::spmv(op.plan(), 1.0, x, 0.0, y, s);
  });
  solve::options opt;
  opt.method = krylov_method::cg;
  solve::solver<double> by_csr(op, opt), by_callback(cb, opt);
  gpukit::device_buffer<double> x1(a.rows()), x2(a.rows());
  for (std::uint64_t k = 0; k < 3; ++k) {
    gpukit::device_buffer<double> b(solve_test::rhs(a.rows(), 100 + k));
    const auto r1 = by_csr.solve(b, x1);
    const auto r2 = by_callback.solve(b, x2);
    BOOST_TEST(r1.converged);
    BOOST_TEST(same_bits(r1.history, r2.history));
    BOOST_TEST(same_bits_v(x1.download(), x2.download()));
    solve::solver<double> fresh(op, opt);
    gpukit::device_buffer<double> x3(a.rows());
    const auto r3 = fresh.solve(b, x3);
    BOOST_TEST(same_bits(r1.history, r3.history));
    const auto again = by_csr.solve_with_guess(b.data(), x1.data(), a.rows());
    BOOST_TEST(again.iterations == 0);
  }
  // Jacobi through a callback with its diagonal given.
  std::vector<double> diag(static_cast<std::size_t>(a.rows()), 4.0);
  const solve::callback_operator<double> cbd(a.rows(), [&](const double* x, double* y, solve::stream_t s) {
    sparse::spmv(op.plan(), 1.0, x, 0.0, y, s);
  }, diag);
  opt.method = krylov_method::pcg;
  solve::solver<double> jac(cbd, opt);
  gpukit::device_buffer<double> b(solve_test::rhs(a.rows()));
  BOOST_TEST(jac.solve(b, x1).converged);
}

namespace {
std::size_t persisting_limit() {
  std::size_t v = 0;
  GPUKIT_CUDA_CHECK(cudaDeviceGetLimit(&v, cudaLimitPersistingL2CacheSize));
  return v;
}
std::size_t stream_window_bytes(cudaStream_t s) {
  cudaStreamAttrValue w{};
  GPUKIT_CUDA_CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &w));
  return w.accessPolicyWindow.num_bytes;
}
}  // namespace

// options::p_in_l2: the same bits with and without the window; the device's persisting limit and the
// stream's window put back after the solve (also a limit the caller set); a caller's window on the stream
// left alone (no window of ours then); none on the legacy default stream.
GPU_TEST_CASE(p_window_keeps_the_bits_and_puts_the_device_back) {
  int device = 0, persisting_max = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&persisting_max, cudaDevAttrMaxPersistingL2CacheSize, device));
  if (persisting_max == 0) {
    BOOST_TEST_MESSAGE("this GPU has no persisting L2: the window case is not run");
    return;
  }
  const auto a = solve::problems::poisson_3d<double, std::int32_t>(test::reduced_sizes() ? 6 : 20);
  const std::int64_t n = a.rows();
  const sparse::device_csr<double, std::int32_t> d(a);
  const solve::csr_operator<double, std::int32_t> op(d);
  const gpukit::device_buffer<double> b(solve_test::rhs(n));
  gpukit::owned_stream stream;
  auto run = [&](krylov_method m, solve::l2_window w, cudaStream_t s) {
    solve::options opt;
    opt.method = m;
    opt.p_in_l2 = w;
    solve::solver<double> solver(op, opt);
    gpukit::device_buffer<double> x(n);
    gpu_run<double> out;
    out.r = solver.solve(b.data(), x.data(), n, s);
    out.x = x.download();
    return out;
  };
  const std::size_t initial = persisting_limit();
  BOOST_TEST_MESSAGE("persisting L2 limit at the start: " << initial << " bytes");
  for (krylov_method m : {krylov_method::cg, krylov_method::pcg}) {
    BOOST_TEST_CONTEXT(solve::to_string(m)) {
      const auto off = run(m, solve::l2_window::off, stream.get());
      const auto on = run(m, solve::l2_window::on, stream.get());
      BOOST_TEST(off.r.l2_window_bytes == 0);
      BOOST_TEST(on.r.l2_window_bytes == n * 8);
      BOOST_TEST(on.r.converged);
      BOOST_TEST(same_bits(on.r.history, off.r.history));
      BOOST_TEST(same_bits_v(on.x, off.x));
      BOOST_TEST(persisting_limit() == initial);
      BOOST_TEST(stream_window_bytes(stream.get()) == 0u);
      BOOST_TEST(run(m, solve::l2_window::on, nullptr).r.l2_window_bytes == 0);
    }
  }
  // A limit the caller set: put back.
  GPUKIT_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1 << 20));
  const std::size_t callers = persisting_limit();
  BOOST_TEST(run(krylov_method::cg, solve::l2_window::on, stream.get()).r.l2_window_bytes == n * 8);
  BOOST_TEST(persisting_limit() == callers);
  GPUKIT_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, initial));
  // The caller's window on the stream: kept, and none of ours.
  cudaStreamAttrValue w{};
  w.accessPolicyWindow.base_ptr = const_cast<double*>(b.data());
  w.accessPolicyWindow.num_bytes = 4096;
  w.accessPolicyWindow.hitRatio = 1.0f;
  w.accessPolicyWindow.hitProp = cudaAccessPropertyNormal;
  w.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  GPUKIT_CUDA_CHECK(cudaStreamSetAttribute(stream.get(), cudaStreamAttributeAccessPolicyWindow, &w));
  BOOST_TEST(run(krylov_method::cg, solve::l2_window::on, stream.get()).r.l2_window_bytes == 0);
  BOOST_TEST(stream_window_bytes(stream.get()) == 4096u);
  BOOST_TEST(persisting_limit() == initial);
}

BOOST_AUTO_TEST_SUITE_END()
