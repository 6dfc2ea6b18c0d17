// Distributed CG, PCG, BiCGStab and pipelined CG (solve::distributed, CPU path) under 1..4 ranks, against
// the same solver on a one-rank communicator (MPI_COMM_SELF, each rank solving the whole problem):
// bitwise in reproducible mode (history, iteration count, x); within the rounding band otherwise. On
// one rank and without reproducible mode, the distributed loop is the CPU path itself: bitwise equal to
// solve::reference::solve (the shared loops of krylov_loops.hpp, the same SpMV rounding).
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dist/csr.hpp"
#include "dist_test_support.hpp"
#include "solve/distributed.hpp"
#include "solve/problems.hpp"
#include "solve/reference.hpp"

namespace solve {
inline std::ostream& operator<<(std::ostream& o, stop_reason r) { return o << to_string(r); }
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

BOOST_AUTO_TEST_SUITE_END()
