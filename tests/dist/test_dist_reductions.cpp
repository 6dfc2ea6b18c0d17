// Distributed reductions (libdist) under 1..4 ranks, each result compared with the one-rank result on
// the whole vector: bitwise for the reproducible sum, exactly for integers and min/max, within the
// derived bound otherwise. Every rank builds the same global vector from the seed and keeps its slice.
#include <boost/mpl/list.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "dist/reductions.hpp"
#include "dist_test_support.hpp"
#include "gpukit/device_buffer.hpp"
#include "oracle.hpp"
#include "reduce/reduce.hpp"

namespace {

using float_types = boost::mpl::list<float, double>;
using test::dist_support::partition;
using test::dist_support::world;

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Cancelling data: huge +-pairs that cancel exactly, spread over the ranks, among mean-1/2 values. A sum
/// of rounded per-rank partials loses the small values whenever a rank holds an unpaired huge one.
template <class T>
std::vector<T> cancelling_vector(std::int64_t n, std::uint64_t seed) {
  std::vector<T> x = test::offset_vector<T>(n, seed);
  const T big = std::is_same_v<T, float> ? T(1e30f) : T(1e300);
  for (std::int64_t i = 0; i + 1 < n; i += 97) {
    x[static_cast<std::size_t>(i)] = big;
    x[static_cast<std::size_t>(n - 1 - i)] = -big;
  }
  return x;
}

template <class T>
struct slice {
  const T* data;
  std::int64_t n;
};
template <class T>
slice<T> my_slice(const std::vector<T>& x, const std::vector<std::int64_t>& cuts) {
  const int r = world().rank();
  return {x.data() + cuts[static_cast<std::size_t>(r)], cuts[static_cast<std::size_t>(r) + 1] - cuts[static_cast<std::size_t>(r)]};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dist_reductions)

CPU_TEST_CASE_TEMPLATE(reproducible_sum_is_bitwise_the_one_rank_sum_for_any_partition, T, float_types) {
  const int p = world().size();
  bool rounded_partials_differ = false;
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{1000}, std::int64_t{100003}}) {
    for (int uneven = 0; uneven < 2; ++uneven) {
      const std::vector<T> x = cancelling_vector<T>(n, 2000 + static_cast<std::uint64_t>(n));
      const auto cuts = partition(n, p, uneven != 0, 2100 + static_cast<std::uint64_t>(n));
      const auto s = my_slice(x, cuts);
      const T one_rank = reduce::reference::reproducible_sum(x.data(), n);
      const T got = dist::reference::reproducible_sum(world(), s.data, s.n);
      BOOST_TEST_CONTEXT("n = " << n << ", " << p << " ranks" << (uneven ? ", uneven" : "")) {
        BOOST_TEST(same_bits(got, one_rank), "got " << got << ", one rank " << one_rank);
      }
      // The same partials rounded first and added by MPI: what the exact exchange avoids.
      const T rounded = dist::reference::sum(world(), s.data, s.n);
      rounded_partials_differ |= !same_bits(rounded, one_rank);
    }
  }
  // With one rank the plain sum is also a single rounding of a double sum, and may agree: the
  // discriminating power of the input is shown from 2 ranks on.
  if (p > 1) BOOST_TEST(rounded_partials_differ, "the data cannot tell an exact exchange from rounded partials");
}

/// The 2-norm of x without its largest-magnitude element: a wrong answer (a dropped element) that a norm2
/// bound must reject. For offset_vector data (values in [-1/2, 3/2)) it is smaller by about
/// max x_i^2 / (2 ||x||^2) >= 1 / (1.2 n) relative, far above every norm bound below for n <= 10^6.
template <class T>
long double norm_without_largest(const std::vector<T>& x) {
  long double sq = test::oracle::sum_of_squares(x).sum, largest = 0;
  for (T v : x) largest = std::max(largest, std::fabs(static_cast<long double>(v)));
  return std::sqrt(std::max(0.0L, sq - largest * largest));
}

CPU_TEST_CASE_TEMPLATE(sum_dot_norm2_within_their_derived_bounds, T, float_types) {
  const int p = world().size();
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{33}, std::int64_t{100003}}) {
    const std::vector<T> x = test::offset_vector<T>(n, 2200 + static_cast<std::uint64_t>(n));
    const std::vector<T> y = test::offset_vector<T>(n, 2300 + static_cast<std::uint64_t>(n));
    const auto cuts = partition(n, p, true, 2400);
    const auto sx = my_slice(x, cuts), sy = my_slice(y, cuts);
    // Bound (reductions.hpp): each rank's partial is within gamma_double(n_k - 1) S_k + u_T |s_k| (the CPU
    // backend accumulates in double, rounds once), and the collective adds the P partials in at most
    // P - 1 roundings in T: <= (gamma_double(n) + gamma_T(P + 1)) S with S = sum |x_i| (or |x_i y_i|).
    const auto os = test::oracle::sum(x);
    const auto od = test::oracle::dot(x, y);
    const double k_sum = test::gamma<double>(static_cast<double>(n)) + test::gamma<T>(p + 1);
    BOOST_TEST_CONTEXT("n = " << n << ", " << p << " ranks") {
      const T s = dist::reference::sum(world(), sx.data, sx.n);
      BOOST_TEST(test::within_bound(s, os.sum, k_sum * static_cast<double>(os.abs_sum)));
      const T d = dist::reference::dot(world(), sx.data, sy.data, sx.n);
      BOOST_TEST(test::within_bound(d, od.sum, k_sum * static_cast<double>(od.abs_sum)));
      // The bound rejects a wrong answer: a sum missing its last element (mean-1/2 data: |x_n| ~ 1/2 far
      // above gamma * S for these n).
      if (n > 0) {
        BOOST_TEST(!test::within_bound(static_cast<double>(s) - static_cast<double>(x.back()), os.sum,
                                       k_sum * static_cast<double>(os.abs_sum)));
      }
      // norm2: each local norm has relative error E <= u_T + 2 gamma_double(n_k + 1) (CPU backend: sum of
      // squares in double, sqrt, one rounding to T), which sqrt(sum nk^2) keeps; the host combination
      // (a division, P squares and additions, a sqrt and a product in double) adds gamma_double(P + 4).
      const T nrm = dist::reference::norm2(world(), sx.data, sx.n);
      const long double exact = std::sqrt(test::oracle::sum_of_squares(x).sum);
      const double norm_rel = test::gamma<T>(1) + 2 * test::gamma<double>(static_cast<double>(n) + 1) +
                              test::gamma<double>(p + 4);
      BOOST_TEST(test::within_bound(nrm, exact, norm_rel * static_cast<double>(exact)));
      if (n > 0) {  // the bound rejects a dropped element
        BOOST_TEST(!test::within_bound(static_cast<double>(norm_without_largest(x)), exact,
                                       norm_rel * static_cast<double>(exact)));
      }
      // multi_dot: the same two dots in one collective, the same bits as dot (same local pass, same sum).
      const T* xs[2] = {sx.data, sy.data};
      const T* ys[2] = {sy.data, sy.data};
      T out[2];
      dist::reference::multi_dot(world(), xs, ys, 2, sx.n, out);
      BOOST_TEST(same_bits(out[0], d));
      BOOST_TEST(same_bits(out[1], dist::reference::dot(world(), sy.data, sy.data, sy.n)));
    }
  }
}

using int_types = boost::mpl::list<std::int32_t, std::int64_t, std::uint32_t>;
CPU_TEST_CASE_TEMPLATE(integer_sums_and_extrema_are_exact, T, int_types) {
  const int p = world().size();
  const std::int64_t n = 100003;
  const std::vector<T> x = test::random_vector<T>(n, T(0), T(1000), 2500);
  const auto cuts = partition(n, p, true, 2600);
  const auto s = my_slice(x, cuts);
  BOOST_TEST(dist::reference::sum(world(), s.data, s.n) == test::oracle::wrapped_sum(x));
  BOOST_TEST(dist::reference::dot(world(), s.data, s.data, s.n) == test::oracle::wrapped_dot(x, x));
  BOOST_TEST(dist::reference::min(world(), s.data, s.n) == *std::min_element(x.begin(), x.end()));
  BOOST_TEST(dist::reference::max(world(), s.data, s.n) == *std::max_element(x.begin(), x.end()));
}

CPU_TEST_CASE_TEMPLATE(extrema_propagate_nan_from_any_rank, T, float_types) {
  const int p = world().size();
  std::vector<T> x = test::offset_vector<T>(1000, 2700);
  const auto cuts = partition(1000, p, false, 0);
  x[static_cast<std::size_t>(cuts[static_cast<std::size_t>(p - 1)])] = std::numeric_limits<T>::quiet_NaN();  // last rank's first
  const auto s = my_slice(x, cuts);
  BOOST_TEST(std::isnan(dist::reference::min(world(), s.data, s.n)));
  BOOST_TEST(std::isnan(dist::reference::max(world(), s.data, s.n)));
  x[static_cast<std::size_t>(cuts[static_cast<std::size_t>(p - 1)])] = T(-5);
  BOOST_TEST(dist::reference::min(world(), s.data, s.n) == T(-5));
}

// ---- device data (NCCL, or MPI with host staging) --------------------------------------------------
/// Both device transports: NCCL where the build has it and the ranks have a GPU each (else host staging,
/// as enable_device decides), and host staging forced.
template <class T>
void check_device_reductions(bool prefer_nccl);

GPU_TEST_CASE_TEMPLATE(device_reductions_match_the_one_rank_results, T, float_types) {
  (void)dist::select_local_device(world());
  check_device_reductions<T>(true);
  check_device_reductions<T>(false);
}

GPU_TEST_CASE(device_transport_is_the_one_expected) {
  (void)dist::select_local_device(world());
  dist::communicator comm(MPI_COMM_WORLD);
  comm.enable_device(true);
  int devices = 0;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int on_node = 1;
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  devices = test::dist_support::device_count();
  const bool shared = on_node > devices;
  const dist::device_transport expected = dist::built_with_nccl() && !shared ? dist::device_transport::nccl
                                                                            : dist::device_transport::mpi_host_staging;
  BOOST_TEST_MESSAGE("rank " << comm.rank() << ": " << comm.transport_reason());
  BOOST_TEST(dist::to_string(comm.transport()) == dist::to_string(expected), comm.transport_reason());
  dist::communicator staged(MPI_COMM_WORLD);
  staged.enable_device(false);
  BOOST_TEST((staged.transport() == dist::device_transport::mpi_host_staging), dist::to_string(staged.transport()));
}

// dist::device_allreduce on both transports: rank r holds v_j = (r + 1) (j + 1) (doubles, and int64
// words near 2^40 as exact states hold them), work runs on the stream between start and finish (a memset
// of another buffer), and every rank gets sum_r (r + 1) (j + 1) = P (P + 1) / 2 (j + 1): integers below
// 2^53, so exact in double too. The NCCL stream is the communicator's, non-null exactly under NCCL.
// connect() first (its own all-reduce) leaves the sums and the events as they were. Rounds 2 and 3 use
// run() (in stream order), after the start/finish rounds on the same buffers and events.
GPU_TEST_CASE(device_allreduce_sums_over_ranks_with_work_in_between) {
  (void)dist::select_local_device(world());
  for (const bool prefer_nccl : {true, false}) {
    dist::communicator comm(MPI_COMM_WORLD);
    comm.enable_device(prefer_nccl);
    BOOST_TEST((comm.nccl_stream() != nullptr) == (comm.transport() == dist::device_transport::nccl));
    const std::int64_t p = comm.size(), r = comm.rank();
    constexpr int count = 71;  // one double exact state's words
    dist::device_allreduce ar(comm, count * sizeof(std::int64_t));
    std::vector<double> hd(count);
    std::vector<std::int64_t> hi(count);
    for (int j = 0; j < count; ++j) {
      hd[static_cast<std::size_t>(j)] = static_cast<double>((r + 1) * (j + 1));
      hi[static_cast<std::size_t>(j)] = ((std::int64_t{1} << 40) + j) * (r + 1);
    }
    gpukit::device_buffer<double> dd(hd), other(1 << 20);
    gpukit::device_buffer<std::int64_t> di(hi);
    ar.connect(nullptr);  // NCCL: one all-reduce of its own first; host staging: nothing
    std::int64_t k = p * (p + 1) / 2;  // round 0: sum_r (r + 1) x_j; each later round: P times the last
    for (int round = 0; round < 4; ++round, k *= p) {  // the buffers and events are reused
      if (round < 2) {
        ar.start(dd.data(), count, nullptr);
        other.fill_bytes(0);
        ar.finish(nullptr);
        ar.start(di.data(), count, nullptr);
        other.fill_bytes(1);
        ar.finish(nullptr);
      } else {
        ar.run(dd.data(), count, nullptr);
        ar.run(di.data(), count, nullptr);
      }
      const std::vector<double> gd = dd.download();
      const std::vector<std::int64_t> gi = di.download();
      std::int64_t bad = 0;
      for (int j = 0; j < count; ++j) {
        if (gd[static_cast<std::size_t>(j)] != static_cast<double>(k * (j + 1))) ++bad;
        if (gi[static_cast<std::size_t>(j)] != k * ((std::int64_t{1} << 40) + j)) ++bad;
      }
      BOOST_TEST(bad == 0, bad << " wrong sums in round " << round << ", " << dist::to_string(comm.transport()));
    }
    BOOST_CHECK_THROW(ar.start(dd.data(), count + 1, nullptr), std::invalid_argument);
    BOOST_CHECK_THROW(ar.run(dd.data(), count + 1, nullptr), std::invalid_argument);
  }
}

template <class T>
void check_device_reductions(bool prefer_nccl) {
  dist::communicator comm(MPI_COMM_WORLD);
  comm.enable_device(prefer_nccl);
  BOOST_TEST_MESSAGE("device transport: " << dist::to_string(comm.transport()) << " (" << comm.transport_reason() << ")");
  const int p = comm.size();
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1000}, std::int64_t{1000003}}) {
    for (int uneven = 0; uneven < 2; ++uneven) {
      const std::vector<T> x = cancelling_vector<T>(n, 2800 + static_cast<std::uint64_t>(n));
      const std::vector<T> y = test::offset_vector<T>(n, 2900 + static_cast<std::uint64_t>(n));
      const auto cuts = partition(n, p, uneven != 0, 3000);
      const auto sx = my_slice(x, cuts), sy = my_slice(y, cuts);
      gpukit::device_buffer<T> dx(std::vector<T>(sx.data, sx.data + sx.n));
      gpukit::device_buffer<T> dy(std::vector<T>(sy.data, sy.data + sy.n));
      BOOST_TEST_CONTEXT("n = " << n << ", " << p << " ranks" << (uneven ? ", uneven" : "") << ", "
                                  << dist::to_string(comm.transport())) {
        BOOST_TEST(same_bits(dist::reproducible_sum(comm, dx.data(), sx.n), reduce::reference::reproducible_sum(x.data(), n)));
        // Device bound: libreduce's single-pass chain k per rank (single_pass_chain_length) instead of
        // the CPU's double accumulation, plus the collective's P - 1 roundings.
        const double k = static_cast<double>(reduce::single_pass_chain_length(n, sizeof(T))) + 1 + p;
        const auto od = test::oracle::dot(y, y);
        const T d = dist::dot(comm, dy.data(), dy.data(), sy.n);
        BOOST_TEST(test::within_bound(d, od.sum, test::gamma<T>(k) * static_cast<double>(od.abs_sum)));
        const auto os = test::oracle::sum(y);
        const T s = dist::sum(comm, dy.data(), sy.n);
        BOOST_TEST(test::within_bound(s, os.sum, test::gamma<T>(k) * static_cast<double>(os.abs_sum)));
        BOOST_TEST(same_bits(dist::min(comm, dx.data(), sx.n), reduce::reference::min(x.data(), n)));
        BOOST_TEST(same_bits(dist::max(comm, dx.data(), sx.n), reduce::reference::max(x.data(), n)));
        // norm2 (reduce.hpp): each rank's norm is within u_T + gamma_double(k + 1) of its slice's (float <=
        // u_float + 2 gamma_double(k + 1); double <= (gamma(k + 1) + u) / 2 + u), ROUNDED to T; the host
        // combination (combine_norms: scaled squares in double) keeps that relative error, adds
        // gamma_double(P + 4), and rounds to T once more: u_T again. With one rank there is no second
        // rounding, but the bound covers both (H100, 2 ranks, float: 7.3e-8 relative, above one u_T).
        const long double exact = std::sqrt(test::oracle::sum_of_squares(y).sum);
        const double norm_rel = 2 * test::gamma<T>(1) + test::gamma<double>(k + 1) + test::gamma<double>(p + 4);
        BOOST_TEST(test::within_bound(dist::norm2(comm, dy.data(), sy.n), exact, norm_rel * static_cast<double>(exact)));
        if (n > 0) {  // the bound rejects a dropped element
          BOOST_TEST(!test::within_bound(static_cast<double>(norm_without_largest(y)), exact,
                                         norm_rel * static_cast<double>(exact)));
        }
        // multi_dot: each rank's two dots in one reduce::multi_dot pass, whose own chain replaces dot's in
        // the bound (its bits may differ from dot's); y . y has positive terms, so the bound rejects 0.
        const T* xs[2] = {dy.data(), dx.data()};
        const T* ys[2] = {dy.data(), dy.data()};
        T out[2];
        dist::multi_dot(comm, xs, ys, 2, sy.n, out);
        const double k_multi = static_cast<double>(reduce::multi_dot_chain_length(n, 2, sizeof(T))) + 1 + p;
        const auto oxy = test::oracle::dot(x, y);
        BOOST_TEST(test::within_bound(out[0], od.sum, test::gamma<T>(k_multi) * static_cast<double>(od.abs_sum)));
        BOOST_TEST(test::within_bound(out[1], oxy.sum, test::gamma<T>(k_multi) * static_cast<double>(oxy.abs_sum)));
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
