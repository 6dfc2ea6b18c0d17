// Row-distributed CSR under 1..4 ranks: the partition by nonzeros, the halo plan against a brute-force
// computation from the global matrix (which every rank holds here), the overlapped SpMV against the
// one-rank libsparse reference (bitwise: each row is the same double-accumulated sum whatever the
// partition), HDF5 reading by row blocks, and a failure on one rank reaching every rank.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include "dist/csr.hpp"
#include "dist/scaling.hpp"
#include "gpukit/device_buffer.hpp"
#include "dist_test_support.hpp"
#include "sparse/generate.hpp"
#include "sparse/hdf5_io.hpp"
#include "sparse/reference.hpp"

namespace {

using test::dist_support::world;
using csr = sparse::host_csr<double, std::int32_t>;

/// Matrices whose halos differ: a 2D Laplacian (neighbours only), random columns (every rank talks to
/// every rank), a matrix with empty rows and one dense row (rows 0..n by lengths).
std::vector<std::pair<std::string, csr>> test_matrices() {
  std::vector<std::pair<std::string, csr>> m;
  m.emplace_back("laplace2d_23", sparse::generate_laplace_2d<double, std::int32_t>(23));
  m.emplace_back("random_k_997", sparse::generate_random_k<double, std::int32_t>(997, 997, 7, 41));
  auto p = sparse::generate_power_law<double, std::int32_t>(1500, 1500, 43, 1500);
  m.emplace_back("power_law_1500", std::move(p));
  return m;
}

/// The halo plan of rank `r` for partition `part`, computed directly from the global matrix.
struct brute_halo {
  std::vector<std::int64_t> ghosts;                 // sorted global indices
  std::vector<std::vector<std::int64_t>> send_to;  // per rank: owned LOCAL indices, ascending
};
brute_halo brute_force_halo(const csr& a, const dist::row_partition& part, int r) {
  auto ghosts_of = [&](int q) {
    std::set<std::int64_t> g;
    for (std::int64_t i = part.begin(q); i < part.end(q); ++i)
      for (std::int32_t e = a.row_ptr()[static_cast<std::size_t>(i)]; e < a.row_ptr()[static_cast<std::size_t>(i) + 1]; ++e) {
        const std::int64_t c = a.col_idx()[static_cast<std::size_t>(e)];
        if (c < part.begin(q) || c >= part.end(q)) g.insert(c);
      }
    return std::vector<std::int64_t>(g.begin(), g.end());
  };
  brute_halo h;
  h.ghosts = ghosts_of(r);
  h.send_to.resize(static_cast<std::size_t>(part.parts()));
  for (int q = 0; q < part.parts(); ++q)
    for (std::int64_t g : ghosts_of(q))
      if (g >= part.begin(r) && g < part.end(r)) h.send_to[static_cast<std::size_t>(q)].push_back(g - part.begin(r));
  return h;
}

void check_halo_against_brute_force(const csr& a, const dist::distributed_csr<double, std::int32_t>& d) {
  const int r = world().rank();
  const auto expected = brute_force_halo(a, d.partition(), r);
  const auto& h = d.halo();
  BOOST_TEST(h.ghost_global == expected.ghosts, boost::test_tools::per_element());
  // Receives: the ghosts grouped by owner, in rank order, no empty group.
  std::vector<std::int64_t> from_plan;
  for (std::size_t k = 0; k < h.recv_ranks.size(); ++k) {
    BOOST_TEST(h.recv_offsets[k + 1] > h.recv_offsets[k]);
    for (std::int64_t g = h.recv_offsets[k]; g < h.recv_offsets[k + 1]; ++g)
      BOOST_TEST(d.partition().owner(h.ghost_global[static_cast<std::size_t>(g)]) == h.recv_ranks[k]);
  }
  // Sends: exactly the brute-force lists, to exactly the ranks that need something.
  std::vector<std::vector<std::int64_t>> sends(static_cast<std::size_t>(world().size()));
  for (std::size_t k = 0; k < h.send_ranks.size(); ++k)
    sends[static_cast<std::size_t>(h.send_ranks[k])].assign(h.send_local.begin() + h.send_offsets[k],
                                                            h.send_local.begin() + h.send_offsets[k + 1]);
  for (int q = 0; q < world().size(); ++q) {
    BOOST_TEST_CONTEXT("rank " << r << " sending to " << q) {
      BOOST_TEST(sends[static_cast<std::size_t>(q)] == expected.send_to[static_cast<std::size_t>(q)],
                 boost::test_tools::per_element());
    }
  }
}

void check_spmv_bitwise(const csr& a, const dist::distributed_csr<double, std::int32_t>& d) {
  const std::vector<double> x = test::random_vector<double>(a.cols(), -1.0, 1.0, 3100);
  std::vector<double> y_one(static_cast<std::size_t>(a.rows()));
  sparse::reference::spmv_reference(a, 1.0, x.data(), 0.0, y_one.data());
  dist::host_spmv<double, std::int32_t> spmv(world(), d);
  std::vector<double> y(static_cast<std::size_t>(d.local_rows()), std::nan(""));
  spmv.apply(x.data() + d.first_row(), y.data());
  BOOST_TEST((y.empty() || std::memcmp(y.data(), y_one.data() + d.first_row(), y.size() * sizeof(double)) == 0),
             "the distributed SpMV differs from the one-rank reference on rank " << world().rank());
  // The check can fail: a halo entry that did not arrive (the ghost left at its previous value) changes
  // a boundary row of any rank that has ghosts.
  if (!d.halo().ghost_global.empty()) {
    std::vector<double> x_wrong = x;
    x_wrong[static_cast<std::size_t>(d.halo().ghost_global.front())] += 1.0;  // what this rank would read
    std::vector<double> y_wrong(y.size());
    std::vector<double> x_ext(x.begin() + d.first_row(), x.begin() + d.first_row() + d.local_rows());
    for (std::int64_t g : d.halo().ghost_global) x_ext.push_back(x_wrong[static_cast<std::size_t>(g)]);
    std::vector<double> yb(d.boundary_rows().size());
    sparse::reference::spmv_reference(d.boundary(), 1.0, x_ext.data(), 0.0, yb.data());
    bool differs = false;
    for (std::size_t i = 0; i < yb.size(); ++i) differs |= yb[i] != y_one[static_cast<std::size_t>(d.first_row() + d.boundary_rows()[i])];
    BOOST_TEST(differs, "a wrong ghost value goes unnoticed");
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dist_csr)

CPU_TEST_CASE(partition_by_nonzeros_balances_and_covers) {
  const std::vector<std::int64_t> rp = {0, 10, 10, 11, 12, 13, 14, 24};  // rows of 10, 0, 1, 1, 1, 1, 10
  const auto two = dist::partition_by_nonzeros(rp, 2);
  // nnz 24: part 1 starts at the first row i with row_ptr[i] >= 12, row 4 (12 entries each side).
  BOOST_TEST((two.offsets == std::vector<std::int64_t>{0, 4, 7}));
  const auto one = dist::partition_by_nonzeros(rp, 1);
  BOOST_TEST((one.offsets == std::vector<std::int64_t>{0, 7}));
  const auto many = dist::partition_by_nonzeros(rp, 10);  // more parts than rows: some empty
  BOOST_TEST(many.offsets.front() == 0);
  BOOST_TEST(many.offsets.back() == 7);
  BOOST_TEST(std::is_sorted(many.offsets.begin(), many.offsets.end()));
  for (std::int64_t row = 0; row < 7; ++row) {
    const int o = many.owner(row);
    BOOST_TEST((many.begin(o) <= row && row < many.end(o)), "row " << row << " owner " << o);
  }
  const auto big = sparse::generate_power_law<double, std::int32_t>(5000, 5000, 45, 800);
  const std::vector<std::int64_t> brp(big.row_ptr().begin(), big.row_ptr().end());
  std::int64_t longest = 0;
  for (std::size_t i = 0; i + 1 < brp.size(); ++i) longest = std::max(longest, brp[i + 1] - brp[i]);
  for (int parts : {2, 3, 4, 7}) {
    const auto p = dist::partition_by_nonzeros(brp, parts);
    for (int r = 0; r < parts; ++r) {
      const std::int64_t nnz = brp[static_cast<std::size_t>(p.end(r))] - brp[static_cast<std::size_t>(p.begin(r))];
      BOOST_TEST(nnz <= big.nnz() / parts + longest + 1, parts << " parts, part " << r << ": " << nnz << " entries");
    }
  }
}

CPU_TEST_CASE(halo_plans_equal_the_brute_force_and_spmv_is_bitwise_the_one_rank_result) {
  for (const auto& [name, a] : test_matrices()) {
    BOOST_TEST_CONTEXT(name << " on " << world().size() << " ranks") {
      const auto d = dist::distribute(world(), a);
      check_halo_against_brute_force(a, d);
      check_spmv_bitwise(a, d);
    }
  }
}

CPU_TEST_CASE(a_partition_with_an_empty_rank_still_works) {
  const auto a = sparse::generate_laplace_2d<double, std::int32_t>(17);
  const int p = world().size();
  dist::row_partition part;
  part.offsets.assign(static_cast<std::size_t>(p) + 1, a.rows());
  part.offsets[0] = 0;
  for (int r = 1; r < p; ++r) part.offsets[static_cast<std::size_t>(r)] = r == 1 ? 0 : a.rows() * r / p;  // rank 0 empty
  const int me = world().rank();
  const std::int64_t b = part.begin(me), e = part.end(me);
  std::vector<std::int32_t> rp(a.row_ptr().begin() + b, a.row_ptr().begin() + e + 1);
  const std::int32_t first = rp.front();
  for (auto& v : rp) v -= first;
  csr local(e - b, a.cols(), rp, std::vector<std::int32_t>(a.col_idx().begin() + first, a.col_idx().begin() + first + rp.back()),
            std::vector<double>(a.values().begin() + first, a.values().begin() + first + rp.back()));
  const dist::distributed_csr<double, std::int32_t> d(world(), part, local);
  check_halo_against_brute_force(a, d);
  check_spmv_bitwise(a, d);
}

CPU_TEST_CASE(hdf5_rows_are_read_by_their_rank_only_and_match) {
  const auto a = sparse::generate_random_k<double, std::int32_t>(3001, 3001, 6, 47);
  // One file for the job, written once by rank 0 (the others wait at the barrier).
  std::string path = (std::filesystem::temp_directory_path() / ("gpukit_test_dist_csr_" + std::to_string(::getpid()) + ".h5")).string();
  int length = static_cast<int>(path.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  path.resize(static_cast<std::size_t>(length));
  MPI_Bcast(path.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (world().rank() == 0) sparse::write_hdf5(path, a);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto d = dist::read_hdf5<double, std::int32_t>(world(), path);
  const auto from_memory = dist::distribute(world(), a);
  BOOST_TEST(d.partition().offsets == from_memory.partition().offsets, boost::test_tools::per_element());
  check_halo_against_brute_force(a, d);
  check_spmv_bitwise(a, d);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world().rank() == 0) std::remove(path.c_str());
}

CPU_TEST_CASE(a_failure_on_one_rank_reaches_every_rank_with_one_message) {
  const int p = world().size();
  // A missing file: rank 0 fails while partitioning; every rank throws the same rank_failure.
  try {
    (void)dist::read_hdf5<double, std::int32_t>(world(), "/nonexistent/gpukit_missing.h5");
    BOOST_ERROR("no exception for a missing file");
  } catch (const dist::rank_failure& e) {
    BOOST_TEST(e.failed_rank == 0);
    BOOST_TEST(e.bad_input);
    BOOST_TEST(std::string(e.what()).find("gpukit_missing.h5") != std::string::npos, e.what());
  }
  // A local block of the wrong size on the LAST rank only: every rank learns it is rank p - 1's problem.
  const auto a = sparse::generate_laplace_2d<double, std::int32_t>(9);
  const auto part = dist::partition_by_nonzeros(std::vector<std::int64_t>(a.row_ptr().begin(), a.row_ptr().end()), p);
  const int me = world().rank();
  const std::int64_t rows = part.end(me) - part.begin(me) + (me == p - 1 ? 1 : 0);
  csr local(rows, a.cols(), std::vector<std::int32_t>(static_cast<std::size_t>(rows) + 1, 0), {}, {});
  try {
    const dist::distributed_csr<double, std::int32_t> d(world(), part, local);
    BOOST_ERROR("no exception for a block of the wrong size");
  } catch (const dist::rank_failure& e) {
    BOOST_TEST(e.failed_rank == p - 1);
    BOOST_TEST(std::string(e.what()).find("local rows") != std::string::npos, e.what());
  }
}

// The scaling model's statistics, computed serially from the global matrix, equal the maxima over the
// ranks of the real halo plans of a run with the same rank count.
CPU_TEST_CASE(scaling_statistics_equal_the_real_halo_plans) {
  for (const auto& [name, a] : test_matrices()) {
    const auto d = dist::distribute(world(), a);
    const auto& h = d.halo();
    std::set<int> neighbours(h.recv_ranks.begin(), h.recv_ranks.end());
    neighbours.insert(h.send_ranks.begin(), h.send_ranks.end());
    std::int64_t mine[5] = {d.local_rows(), d.local_nnz(), static_cast<std::int64_t>(h.ghost_global.size()),
                            static_cast<std::int64_t>(h.send_local.size()), static_cast<std::int64_t>(neighbours.size())};
    std::int64_t most[5];
    MPI_Allreduce(mine, most, 5, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    std::int64_t total = 0;
    MPI_Allreduce(&mine[2], &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    const dist::partition_stats st = dist::partition_statistics(a, world().size());
    BOOST_TEST_CONTEXT(name << " on " << world().size() << " ranks") {
      BOOST_TEST(st.max_rows == most[0]);
      BOOST_TEST(st.max_nnz == most[1]);
      BOOST_TEST(st.max_ghosts == most[2]);
      BOOST_TEST(st.max_send == most[3]);
      BOOST_TEST(st.max_neighbors == most[4]);
      BOOST_TEST(st.total_ghosts == total);
    }
  }
}

CPU_TEST_CASE(scaling_model_follows_its_formula) {
  dist::machine_model m;
  m.spmv_ns_per_nnz = 2;
  m.vector_ns_per_row = 1;
  m.allreduces_per_iteration = 2;
  m.gpus_per_node = 4;
  m.nvlink_gb_per_s = 100;  // 1e5 bytes per us
  m.nvlink_latency_us = 3;
  m.ib_gb_per_s = 10;
  m.ib_latency_us = 7;
  dist::partition_stats one{1, 1000000, 7000000, 0, 0, 0, 0};
  const auto e1 = dist::predict_iteration(one, m, 8);
  BOOST_TEST(e1.compute_us == 1e-3 * (2 * 7e6 + 1e6));  // 15000 us
  BOOST_TEST(e1.halo_us == 0);
  BOOST_TEST(e1.allreduce_us == 0);
  BOOST_TEST(e1.total_us == e1.compute_us);
  // 4 ranks on one node: halo 2 x 3 us + 20000 x 8 bytes / 1e5 bytes/us = 7.6 us, exposed (NCCL's, the
  // default); all-reduce 2 x 2 log2(4) x 3 us = 24 us, exposed.
  dist::partition_stats four{4, 250000, 1750000, 20000, 20000, 2, 60000};
  const auto e4 = dist::predict_iteration(four, m, 8, e1.total_us);
  BOOST_TEST(e4.compute_us == 1e-3 * (2 * 1.75e6 + 2.5e5));
  BOOST_TEST(std::fabs(e4.halo_us - 7.6) < 1e-9);
  BOOST_TEST(e4.allreduce_us == 24.0);
  BOOST_TEST(std::fabs(e4.total_us - (e4.compute_us + 7.6 + 24.0)) < 1e-9);
  BOOST_TEST(std::fabs(e4.speedup - e1.total_us / e4.total_us) < 1e-12);
  // With hide_halo the interior rows (compute x (1 - 20000 / 250000) = 3404 us) hide it; with
  // overlap_allreduce the SpMV hides the all-reduce too.
  m.hide_halo = true;
  BOOST_TEST(std::fabs(dist::predict_iteration(four, m, 8).total_us - (e4.compute_us + 24.0)) < 1e-9);
  m.overlap_allreduce = true;
  BOOST_TEST(std::fabs(dist::predict_iteration(four, m, 8).total_us - e4.compute_us) < 1e-9);
  m.hide_halo = m.overlap_allreduce = false;
  // 8 ranks: across nodes, so InfiniBand's bandwidth and latency.
  dist::partition_stats eight{8, 125000, 875000, 20000, 20000, 2, 140000};
  const auto e8 = dist::predict_iteration(eight, m, 8);
  BOOST_TEST(std::fabs(e8.halo_us - (2 * 7 + 20000 * 8 / 1e4)) < 1e-9);
  BOOST_TEST(std::fabs(e8.allreduce_us - 2 * 2 * 3 * 7) < 1e-9);
}

// The GPU SpMV in both layouts (the copy layout: interior and boundary blocks, x copied, y scattered; the
// room layout: the ghosts received around x, three row blocks writing y in place), the halo over NCCL or
// host staging: every row within libsparse's bound of the CPU reference row (row_error_bounds: 2
// gamma_{k+2} S_i, derived in sparse/reference.hpp), in float and double; y is poisoned first, so a row no
// block wrote is NaN and fails. The room layout also through apply_in_room (x with its room, the room
// poisoned: a ghost not received is NaN in the rows that read it) and apply_in_room_with_dots, whose local
// sums are checked against this rank's plain double loops (within 2 gamma_n(double) sum |t_i|, n the
// local rows, as test_spmv_dots derives; a dropped last term must be outside it where it is visible).
template <class V>
void check_rows(const std::string& what, const std::vector<V>& y, const std::vector<V>& y_one,
                const std::vector<double>& bounds, const dist::distributed_csr<V, std::int32_t>& d) {
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < d.local_rows(); ++i) {
    const auto g = static_cast<std::size_t>(d.first_row() + i);
    if (!(std::fabs(static_cast<double>(y[static_cast<std::size_t>(i)]) - static_cast<double>(y_one[g])) <= bounds[g])) ++bad;
  }
  BOOST_TEST(bad == 0, what << ": " << bad << " rows outside their bound on rank " << world().rank());
}

template <class V>
void check_room_dots(const std::string& what, const std::vector<V>& x_own, const std::vector<V>& y,
                     const std::vector<V>& w, const std::vector<double>& sums) {
  const auto n = static_cast<double>(y.size());
  const double gamma = n * 0x1p-53 / (1 - n * 0x1p-53);
  for (int j = 0; j < 3; ++j) {
    double want = 0, magnitude = 0, last = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      const double a = j == 0 ? double(x_own[i]) : double(y[i]);
      const double b = j == 0 ? double(y[i]) : (j == 1 ? double(w[i]) : double(y[i]));
      want += a * b, magnitude += std::fabs(a * b), last = a * b;
    }
    const double bound = 2 * gamma * magnitude * (1 + 1e-6);
    BOOST_TEST(std::fabs(sums[static_cast<std::size_t>(j)] - want) <= bound,
               what << ": local sum " << j << " " << sums[static_cast<std::size_t>(j)] << " vs " << want);
    if (std::fabs(last) > 3 * bound)
      BOOST_TEST(!(std::fabs(sums[static_cast<std::size_t>(j)] - (want - last)) <= bound), what << ": a dropped term passes");
  }
}

template <class V>
void check_device_spmv(bool prefer_nccl) {
  dist::communicator comm(MPI_COMM_WORLD);
  comm.enable_device(prefer_nccl);
  BOOST_TEST_MESSAGE("device transport: " << dist::to_string(comm.transport()) << " (" << comm.transport_reason() << ")");
  for (const auto& [name, a64] : test_matrices()) {
    const auto a = a64.template cast<V, std::int32_t>();
    const auto d = dist::distribute(comm, a);
    const std::vector<V> x = test::offset_vector<V>(a.cols(), 3200);
    std::vector<V> y_one(static_cast<std::size_t>(a.rows()));
    sparse::reference::spmv_reference(a, V(1), x.data(), V(0), y_one.data());
    const auto bounds = sparse::reference::row_error_bounds(a, V(1), x.data(), V(0), y_one.data());
    const std::vector<V> x_own(x.begin() + d.first_row(), x.begin() + d.first_row() + d.local_rows());
    for (auto layout : {dist::spmv_layout::copy, dist::spmv_layout::room}) {
      const std::string what = name + ", " + (layout == dist::spmv_layout::room ? "room" : "copy") + " layout, " +
                               dist::to_string(comm.transport());
      dist::device_spmv<V, std::int32_t> spmv(comm, d, sparse::spmv_algorithm::automatic, layout);
      gpukit::device_buffer<V> dx(x_own);
      gpukit::device_buffer<V> dy(d.local_rows());
      dy.fill_bytes(test::poison_byte);
      for (int repeat = 0; repeat < 2; ++repeat) {  // the buffers are reused: a second apply gives the same y
        if (repeat == 1) spmv.connect();  // its exchange of zeros leaves nothing the next apply reads
        spmv.apply(dx.data(), dy.data());
        check_rows(what, dy.download(), y_one, bounds, d);
      }
      const sparse::x_halo room = spmv.input_room();
      if (layout == dist::spmv_layout::copy) {
        BOOST_TEST(room.before + room.after == 0);
        BOOST_CHECK_THROW(spmv.apply_in_room(dx.data(), dy.data()), std::logic_error);
        continue;
      }
      // x with its room, poisoned around the rank's entries.
      gpukit::device_buffer<V> roomy(room.before + d.local_rows() + room.after);
      roomy.fill_bytes(test::poison_byte);
      V* x_in = roomy.data() + room.before;
      if (d.local_rows() > 0)
        gpukit::copy_to_device(x_in, x_own.data(), x_own.size() * sizeof(V));
      dy.fill_bytes(test::poison_byte);
      spmv.apply_in_room(x_in, dy.data());
      check_rows(what + ", apply_in_room", dy.download(), y_one, bounds, d);
      const std::vector<V> w = test::random_vector<V>(d.local_rows(), V(-1), V(1), 3300 + comm.rank());
      gpukit::device_buffer<V> dw(w);
      gpukit::device_buffer<double> sums(3);
      sums.fill_bytes(test::poison_byte);
      dy.fill_bytes(test::poison_byte);
      spmv.apply_in_room_with_dots(x_in, dy.data(), dw.data(), sums.data());
      const std::vector<V> y = dy.download();
      check_rows(what + ", apply_in_room_with_dots", y, y_one, bounds, d);
      check_room_dots(what, x_own, y, w, sums.download());
      // The rank's own entries are unchanged by the halo.
      std::vector<V> back(roomy.download());
      BOOST_TEST(std::equal(x_own.begin(), x_own.end(), back.begin() + room.before), what << ": x changed");
    }
  }
}

GPU_TEST_CASE(device_spmv_rows_are_within_the_spmv_bound_on_both_transports) {
  (void)dist::select_local_device(world());
  check_device_spmv<double>(true);
  check_device_spmv<double>(false);
  check_device_spmv<float>(true);
  check_device_spmv<float>(false);
}

BOOST_AUTO_TEST_SUITE_END()
