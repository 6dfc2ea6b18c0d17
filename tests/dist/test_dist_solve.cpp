// Distributed CG, PCG, BiCGStab and pipelined CG (solve::distributed) under 1..4 ranks (CPU path) and 1, 2
// ranks (GPU path, label gpu).
// CPU path: against the same solver on a one-rank communicator (MPI_COMM_SELF, each rank solving the whole
// problem): bitwise in reproducible mode (history, iteration count, x); within the rounding band
// otherwise. On one rank and without reproducible mode, the distributed loop is the CPU path itself:
// bitwise equal to solve::reference::solve (the shared loops of krylov_loops.hpp, the same SpMV rounding).
// GPU path (device_operator under solve::solver), on both device transports: against solve::solver on one
// GPU with the whole matrix and against the CPU distributed solve (iteration band, x within a derived
// bound); in reproducible mode bitwise across two runs and equal to one GPU's reproducible solve over a
// scalar SpMV plan, for any rank count; breakdowns and bad input on every rank alike.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dist/csr.hpp"
#include "dist_test_support.hpp"
#include "gpukit/device_buffer.hpp"
#include "solve/distributed.hpp"
#include "solve/solver.hpp"
#include "solve_test_problems.hpp"  // tests/solve: the iteration bands of libsolve's CPU-GPU comparisons
#include "solve/problems.hpp"
#include "solve/reference.hpp"

namespace solve {  // stop_reason's is in solve_test_problems.hpp
inline std::ostream& operator<<(std::ostream& o, krylov_method m) { return o << to_string(m); }
}  // namespace solve

namespace {

using test::dist_support::world;

template <class V>
bool same_bits(const std::vector<V>& a, const std::vector<V>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(V)) == 0);
}

template <class V>
struct run {
  solve::result res;
  std::vector<V> x_local;
};

/// Solves on `comm` with each rank's rows of `a` (a partition by nonzeros of `comm`'s size).
template <class V>
run<V> solve_on(const dist::communicator& comm, const sparse::host_csr<V, std::int32_t>& a, const std::vector<V>& b,
                const solve::options& opt) {
  const auto d = dist::distribute(comm, a);
  std::vector<V> b_local(b.begin() + d.first_row(), b.begin() + d.first_row() + d.local_rows());
  run<V> out;
  out.res = solve::distributed::solve(comm, d, b_local, out.x_local, opt);
  return out;
}

template <class V>
void check_methods(const sparse::host_csr<V, std::int32_t>& a, double rtol) {
  const int p = world().size();
  const std::vector<V> b = test::random_vector<V>(a.rows(), V(-1), V(1), 3300);
  const dist::communicator self(MPI_COMM_SELF);
  const auto whole = dist::distribute(self, a);
  for (auto method : solve::all_krylov_methods()) {
    solve::options opt;
    opt.method = method;
    opt.rtol = rtol;
    opt.max_iterations = 3000;
    BOOST_TEST_CONTEXT(solve::to_string(method) << ", " << p << " ranks, " << sizeof(V) * 8 << "-bit") {
      // Reproducible: the P-rank solve is bitwise the one-rank solve.
      opt.reproducible = true;
      const auto one = solve_on(self, a, b, opt);
      const auto many = solve_on(world(), a, b, opt);
      BOOST_TEST(one.res.converged);
      BOOST_TEST(many.res.iterations == one.res.iterations);
      BOOST_TEST(many.res.reason == one.res.reason);
      BOOST_TEST(same_bits(many.res.history, one.res.history), "histories differ");
      const auto d = dist::distribute(world(), a);
      const std::vector<V> x_slice(one.x_local.begin() + d.first_row(), one.x_local.begin() + d.first_row() + d.local_rows());
      BOOST_TEST(same_bits(many.x_local, x_slice), "x differs from the one-rank solution");
      BOOST_TEST(many.res.true_relative_residual == one.res.true_relative_residual);
      // Not reproducible: on one rank, the CPU path's own bits; on P ranks, the same band of iterations
      // (rounding alone: libsolve's CPU-GPU comparisons allow 2 %, + 2 for short solves).
      opt.reproducible = false;
      std::vector<V> x_ref;
      const solve::result ref = solve::reference::solve(a, b, x_ref, opt);
      const auto one_plain = solve_on(self, a, b, opt);
      BOOST_TEST(one_plain.res.iterations == ref.iterations);
      BOOST_TEST(same_bits(one_plain.res.history, ref.history), "the distributed loop on one rank is not the CPU path");
      BOOST_TEST(same_bits(one_plain.x_local, x_ref));
      const auto many_plain = solve_on(world(), a, b, opt);
      BOOST_TEST(many_plain.res.converged);
      BOOST_TEST(std::abs(many_plain.res.iterations - ref.iterations) <= 2 + ref.iterations / 50,
                 many_plain.res.iterations << " vs " << ref.iterations << " iterations");
      // The solution meets the tolerance: ||b - A x|| <= rtol ||b|| for the recurrence, and the true
      // residual within 10 rtol (the recurrence's drift in this precision on these mild problems).
      BOOST_TEST(many_plain.res.true_relative_residual <= 10 * rtol);
    }
  }
}

// ---- GPU path ----------------------------------------------------------------------------------------------

/// MPI_COMM_WORLD with this rank's GPU and a device transport: NCCL when preferred and possible (one GPU
/// per rank, or one rank), else MPI with host staging.
dist::communicator device_world(bool prefer_nccl) {
  dist::communicator comm(MPI_COMM_WORLD);
  (void)dist::select_local_device(comm);
  comm.enable_device(prefer_nccl);
  return comm;
}

/// The distributed GPU solve: each rank's rows of `a`, b and x on its GPU.
template <class V>
run<V> solve_on_gpus(const dist::communicator& comm, const sparse::host_csr<V, std::int32_t>& a, const std::vector<V>& b,
                     const solve::options& opt) {
  const auto d = dist::distribute(comm, a);
  gpukit::device_buffer<V> db(std::vector<V>(b.begin() + d.first_row(), b.begin() + d.first_row() + d.local_rows()));
  gpukit::device_buffer<V> dx(d.local_rows());
  run<V> out;
  out.res = solve::distributed::solve(comm, d, db.data(), dx.data(), opt);
  out.x_local = dx.download();
  return out;
}

/// solve::solver on this rank's GPU with the whole matrix (the one-GPU oracle).
template <class V>
run<V> solve_on_one_gpu(const sparse::host_csr<V, std::int32_t>& a, const std::vector<V>& b, const solve::options& opt,
                        sparse::spmv_algorithm algorithm) {
  const sparse::device_csr<V, std::int32_t> d(a);
  const solve::csr_operator<V, std::int32_t> op(d, algorithm);
  solve::solver<V> s(op, opt);
  gpukit::device_buffer<V> db(b), dx(a.rows());
  run<V> out;
  out.res = s.solve(db, dx);
  out.x_local = dx.download();
  return out;
}

template <class V>
std::vector<V> local_slice(const std::vector<V>& whole, const dist::distributed_csr<V, std::int32_t>& d) {
  return std::vector<V>(whole.begin() + d.first_row(), whole.begin() + d.first_row() + d.local_rows());
}

double sq(double v) { return v * v; }

/// ||x_a - x_b||_2 over the whole vector (each rank its slice; one MPI all-reduce).
template <class V>
double distance(const std::vector<V>& a, const std::vector<V>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += sq(static_cast<double>(a[i]) - static_cast<double>(b[i]));
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(s);
}

/// The bound on ||x_a - x_b|| for two approximate solutions of A x = b (A SPD, smallest eigenvalue
/// lambda_min): x_a - x_b = A^-1 (r_b - r_a), so ||x_a - x_b|| <= (||r_a|| + ||r_b||) / lambda_min, with
/// ||r|| = true_relative_residual ||b|| as recomputed, plus what that recomputation may have missed: its
/// SpMV rows err by gamma_{k+2} S_i (S_i = sum_j |a_ij x_j|, k <= 7 entries per row), twice (two solutions).
template <class V>
double solution_bound(const sparse::host_csr<V, std::int32_t>& a, const std::vector<V>& x, double b_norm, double rel_a,
                      double rel_b, double lambda_min) {
  double s2 = 0;
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double si = 0;
    for (auto e = a.row_ptr()[i]; e < a.row_ptr()[i + 1]; ++e)
      si += std::fabs(static_cast<double>(a.values()[e]) * x[static_cast<std::size_t>(a.col_idx()[e])]);
    s2 += si * si;
  }
  return ((rel_a + rel_b) * b_norm + 2 * test::gamma<V>(9) * std::sqrt(s2)) / lambda_min;
}

/// libsolve's bands between two solves of one problem (tests/solve/solve_test_problems.hpp, where each is
/// derived): cg and pcg within 2 % in double; bicgstab 15 %, and every method 15 % in float (the dot
/// order's effect on a float count is not derived); pipecg held to them only where neither solve replaced
/// its residual (where a replacement happens depends on rounding), else only convergence is checked.
template <class V>
boost::test_tools::predicate_result in_band(const solve::result& ours, const solve::result& theirs) {
  if (ours.method == solve::krylov_method::pipecg &&
      !(solve_test::pipecg_follows_cg(ours) && solve_test::pipecg_follows_cg(theirs)))
    return true;
  if (ours.method == solve::krylov_method::bicgstab || sizeof(V) == 4)
    return solve_test::bicgstab_iterations_close(ours.iterations, theirs.iterations);
  return solve_test::iterations_close(ours.iterations, theirs.iterations);
}

/// Every method on both transports against one GPU and the CPU distributed solve. `lambda_min`: the
/// matrix's smallest eigenvalue (for the solution bound).
template <class V>
void check_gpu_methods(const sparse::host_csr<V, std::int32_t>& a, double rtol, double lambda_min) {
  const std::vector<V> b = test::random_vector<V>(a.rows(), V(-1), V(1), 3400);
  double b_norm = 0;
  for (const V v : b) b_norm += sq(static_cast<double>(v));
  b_norm = std::sqrt(b_norm);
  for (const bool nccl : {true, false}) {
    const dist::communicator comm = device_world(nccl);
    const auto d = dist::distribute(comm, a);
    BOOST_TEST_MESSAGE("device transport: " << dist::to_string(comm.transport()) << " (" << comm.transport_reason() << ")");
    for (auto method : solve::all_krylov_methods()) {
      solve::options opt;
      opt.method = method;
      opt.rtol = rtol;
      opt.max_iterations = 3000;
      BOOST_TEST_CONTEXT(solve::to_string(method) << ", " << comm.size() << " ranks, " << dist::to_string(comm.transport())
                                                  << ", " << sizeof(V) * 8 << "-bit") {
        BOOST_TEST_MESSAGE("rank " << comm.rank() << ": " << solve::to_string(method) << ", "
                                   << dist::to_string(comm.transport()) << ", " << sizeof(V) * 8 << "-bit");
        // Reproducible: two runs, and one GPU over a scalar plan (the rows the distributed solve uses),
        // bitwise.
        opt.reproducible = true;
        const auto first = solve_on_gpus(comm, a, b, opt);
        const auto second = solve_on_gpus(comm, a, b, opt);
        const auto one = solve_on_one_gpu(a, b, opt, sparse::spmv_algorithm::scalar);
        BOOST_TEST(first.res.converged);
        BOOST_TEST(same_bits(first.res.history, second.res.history), "two runs differ");
        BOOST_TEST(same_bits(first.x_local, second.x_local), "two runs differ in x");
        BOOST_TEST(first.res.iterations == one.res.iterations);
        BOOST_TEST(first.res.reason == one.res.reason);
        BOOST_TEST(first.res.replacements == one.res.replacements);
        BOOST_TEST(same_bits(first.res.history, one.res.history), "history differs from the one-GPU solve");
        BOOST_TEST(same_bits(first.x_local, local_slice(one.x_local, d)), "x differs from the one-GPU solution");
        BOOST_TEST(first.res.true_relative_residual == one.res.true_relative_residual);
        // Default mode: the iteration bands of libsolve's CPU-GPU comparisons (in_band) against one GPU and
        // against the CPU distributed solve, x within solution_bound of the one-GPU x.
        opt.reproducible = false;
        const auto many = solve_on_gpus(comm, a, b, opt);
        const auto ref = solve_on_one_gpu(a, b, opt, sparse::spmv_algorithm::automatic);
        std::vector<V> b_local = local_slice(b, d), x_cpu;
        const solve::result cpu = solve::distributed::solve(comm, d, b_local, x_cpu, opt);
        BOOST_TEST(many.res.converged);
        BOOST_TEST(in_band<V>(many.res, ref.res), "against one GPU");
        BOOST_TEST(in_band<V>(many.res, cpu), "against the CPU path");
        BOOST_TEST(many.res.true_relative_residual <= 10 * rtol);
        BOOST_TEST(many.res.history.size() == static_cast<std::size_t>(many.res.iterations) + 1);
        const double bound = solution_bound(a, ref.x_local, b_norm, many.res.true_relative_residual,
                                            ref.res.true_relative_residual, lambda_min);
        const double dist_x = distance(many.x_local, local_slice(ref.x_local, d));
        BOOST_TEST(dist_x <= bound, "||x - x_one_gpu|| = " << dist_x << " > " << bound);
        // The bound rejects a solution with its largest entry dropped.
        std::size_t largest = 0;
        for (std::size_t i = 0; i < ref.x_local.size(); ++i)
          if (std::fabs(ref.x_local[i]) > std::fabs(ref.x_local[largest])) largest = i;
        std::vector<V> dropped = local_slice(ref.x_local, d);
        const auto g = static_cast<std::int64_t>(largest);
        if (g >= d.first_row() && g < d.first_row() + d.local_rows()) dropped[static_cast<std::size_t>(g - d.first_row())] = 0;
        BOOST_TEST(distance(dropped, local_slice(ref.x_local, d)) > bound, "the bound accepts a dropped entry");
      }
    }
  }
}

/// The smallest eigenvalue of the 5-point (7-point) Laplacian on an n x n (n^3) grid, 2 dim on the diagonal:
/// 4 dim sin^2(pi / (2 (n + 1))).
double laplace_lambda_min(int dim, std::int64_t n) {
  const double s = std::sin(3.14159265358979323846 / (2.0 * static_cast<double>(n + 1)));
  return 4.0 * dim * s * s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dist_solve)

CPU_TEST_CASE(every_method_is_bitwise_rank_independent_in_reproducible_mode_double) {
  check_methods<double>(solve::problems::poisson_2d<double, std::int32_t>(12), 1e-10);
}

CPU_TEST_CASE(every_method_is_bitwise_rank_independent_in_reproducible_mode_float) {
  check_methods<float>(solve::problems::poisson_2d<float, std::int32_t>(10), 1e-5);
}

CPU_TEST_CASE(a_bad_right_hand_side_on_one_rank_stops_every_rank) {
  const int p = world().size();
  const auto a = solve::problems::poisson_2d<double, std::int32_t>(10);
  const auto d = dist::distribute(world(), a);
  std::vector<double> b(static_cast<std::size_t>(d.local_rows()), 1.0), x;
  const bool last_with_rows = d.local_rows() > 0 && world().rank() == p - 1;
  if (last_with_rows) b.back() = std::numeric_limits<double>::quiet_NaN();
  try {
    (void)solve::distributed::solve(world(), d, b, x, solve::options{});
    BOOST_ERROR("no exception for a NaN in b");
  } catch (const dist::rank_failure& e) {
    BOOST_TEST(e.failed_rank == p - 1);
    BOOST_TEST(e.bad_input);
    BOOST_TEST(std::string(e.what()).find("entry " + std::to_string(a.rows() - 1)) != std::string::npos, e.what());
  }
}

// Awkward sizes: 13^2 = 169 and 7^3 = 343 rows, split by nonzeros into uneven parts.
// The sanitizers' pass (test::reduced_sizes()) solves a 6 x 6 grid only: 48 solves of the 13 x 13 grid and the
// 7^3 cube took more than the pass's 400 s per shard under memcheck and racecheck on an H200.
GPU_TEST_CASE(gpu_methods_match_one_gpu_and_the_cpu_path_double) {
  const int side = test::reduced_sizes() ? 6 : 13;
  check_gpu_methods<double>(solve::problems::poisson_2d<double, std::int32_t>(side), 1e-10, laplace_lambda_min(2, side));
  if (!test::reduced_sizes())
    check_gpu_methods<double>(solve::problems::poisson_3d<double, std::int32_t>(7), 1e-10, laplace_lambda_min(3, 7));
}

GPU_TEST_CASE(gpu_methods_match_one_gpu_and_the_cpu_path_float) {
  const int side = test::reduced_sizes() ? 6 : 13;
  check_gpu_methods<float>(solve::problems::poisson_2d<float, std::int32_t>(side), 1e-5, laplace_lambda_min(2, side));
}

// One row over several ranks: some rank holds none, which the distributed GPU solve refuses (its
// host-staging all-reduce aborted in OpenMPI on such a rank): every rank throws the same rank_failure, bad
// input, naming the rule. One rank holds all rows and solves.
GPU_TEST_CASE(gpu_a_rank_without_rows_is_refused_on_every_rank) {
  const auto a = solve::problems::poisson_2d<double, std::int32_t>(1);
  const std::vector<double> b = {1.0};
  for (const bool nccl : {true, false}) {
    const dist::communicator comm = device_world(nccl);
    if (comm.size() == 1) {
      BOOST_TEST(solve_on_gpus(comm, a, b, solve::options{}).res.converged);
      continue;
    }
    try {
      (void)solve_on_gpus(comm, a, b, solve::options{});
      BOOST_ERROR("no exception for a rank without rows");
    } catch (const dist::rank_failure& e) {
      BOOST_TEST(e.bad_input);
      BOOST_TEST(std::string(e.what()).find("needs at least one row per rank") != std::string::npos, e.what());
    }
  }
}

// -A for an SPD A: p.Ap < 0 at once. Every rank stops with the one-GPU solver's breakdown, named.
GPU_TEST_CASE(gpu_breakdown_is_named_on_every_rank) {
  auto a = solve::problems::poisson_2d<double, std::int32_t>(11);
  for (auto& v : a.values()) v = -v;
  const std::vector<double> b(static_cast<std::size_t>(a.rows()), 1.0);
  for (const bool nccl : {true, false}) {
    const dist::communicator comm = device_world(nccl);
    for (auto method : {solve::krylov_method::cg, solve::krylov_method::pipecg}) {
      solve::options opt;
      opt.method = method;
      const auto many = solve_on_gpus(comm, a, b, opt);
      const auto one = solve_on_one_gpu(a, b, opt, sparse::spmv_algorithm::automatic);
      BOOST_TEST_CONTEXT(solve::to_string(method) << ", " << dist::to_string(comm.transport())) {
        BOOST_TEST(many.res.reason == solve::stop_reason::breakdown);
        BOOST_TEST(many.res.reason == one.res.reason);
        BOOST_TEST(many.res.breakdown.quantity == "p.Ap");
        BOOST_TEST(many.res.breakdown.iteration == one.res.breakdown.iteration);
      }
    }
  }
}

// NaN in b on the last rank with rows: found on the device (the non-finite count is summed over ranks), so
// every rank throws the same rank_failure, bad input. NaN in A and a zero diagonal (pcg) are found on the
// host, named by global row.
GPU_TEST_CASE(gpu_bad_input_on_one_rank_stops_every_rank) {
  const int p = world().size();
  const dist::communicator comm = device_world(true);
  const auto a = solve::problems::poisson_2d<double, std::int32_t>(10);
  std::vector<double> b(static_cast<std::size_t>(a.rows()), 1.0);
  b.back() = std::numeric_limits<double>::quiet_NaN();
  try {
    (void)solve_on_gpus(comm, a, b, solve::options{});
    BOOST_ERROR("no exception for a NaN in b");
  } catch (const dist::rank_failure& e) {
    BOOST_TEST(e.bad_input);
    BOOST_TEST(std::string(e.what()).find("right-hand side holds NaN or Inf") != std::string::npos, e.what());
  }
  b.back() = 1.0;
  auto bad = a;
  bad.values().back() = std::numeric_limits<double>::infinity();  // the last row: the last rank's
  try {
    (void)solve_on_gpus(comm, bad, b, solve::options{});
    BOOST_ERROR("no exception for Inf in A");
  } catch (const dist::rank_failure& e) {
    BOOST_TEST(e.failed_rank == p - 1);
    BOOST_TEST(e.bad_input);
    BOOST_TEST(std::string(e.what()).find("row " + std::to_string(a.rows() - 1)) != std::string::npos, e.what());
  }
  auto zero = a;
  for (auto e = zero.row_ptr()[a.rows() - 1]; e < zero.row_ptr()[a.rows()]; ++e)
    if (zero.col_idx()[e] == a.rows() - 1) zero.values()[e] = 0;
  solve::options pcg;
  pcg.method = solve::krylov_method::pcg;
  try {
    (void)solve_on_gpus(comm, zero, b, pcg);
    BOOST_ERROR("no exception for a zero diagonal entry with pcg");
  } catch (const dist::rank_failure& e) {
    BOOST_TEST(e.failed_rank == p - 1);
    BOOST_TEST(std::string(e.what()).find("at row " + std::to_string(a.rows() - 1)) != std::string::npos, e.what());
  }
  solve::options graph;
  graph.graph = true;
  BOOST_CHECK_THROW((void)solve_on_gpus(comm, a, b, graph), dist::rank_failure);
}

BOOST_AUTO_TEST_SUITE_END()
