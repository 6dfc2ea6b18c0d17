// solve::distributed: the CPU path's Krylov loops (krylov_loops.hpp) over a distributed space: local
// vectors, dist::host_spmv, and dots finished by one MPI all-reduce per pass (compensated partials in
// double, or exact accumulator states in reproducible mode).
#include "solve/distributed.hpp"

#include <mpi.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../reference/krylov_loops.hpp"
#include "local_checks.hpp"
#include "dist/reductions.hpp"
#include "reduce/reduce.hpp"

namespace solve::distributed {
using detail::check_local_diagonal;
using detail::check_local_inputs;
namespace {

void mpi_check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string(what) + " failed (MPI error " + std::to_string(rc) + ")");
}

template <class Value, class Index>
struct dist_space {
  const dist::communicator& comm;
  const dist::distributed_csr<Value, Index>& a;
  dist::host_spmv<Value, Index>& spmv;
  bool reproducible;

  /// Compensated (Dot2) partial, or, in reproducible mode, the products themselves: their exact state
  /// is taken at finish() (reduce::reference::reproducible_sum_state). A double per term: the CPU
  /// path's reproducible mode trades that memory pass for bits that do not depend on the rank count.
  struct accumulator {
    bool exact = false;
    detail::dot2 compensated;
    std::vector<double> products;
    void add(double x, double y) {
      if (exact) products.push_back(x * y);
      else compensated.add(x, y);
    }
  };
  accumulator accumulator_for(std::size_t n) const {
    accumulator acc;
    acc.exact = reproducible;
    if (reproducible) acc.products.reserve(n);
    return acc;
  }

  /// An all-reduce in flight: start() posts it (MPI_Iallreduce), wait() completes it.
  template <int N>
  struct pending {
    reduce::exact_accumulator<double> states[N];
    double sums[N];
    MPI_Request request = MPI_REQUEST_NULL;
  };
  template <int N>
  void start(accumulator (&acc)[N], pending<N>& p) const {
    if (reproducible) {
      for (int j = 0; j < N; ++j)
        p.states[j] = reduce::reference::reproducible_sum_state(acc[j].products.data(),
                                                                static_cast<std::int64_t>(acc[j].products.size()));
      // Normalized states: the int64 limb sums over P <= 2^31 ranks are exact.
      mpi_check(MPI_Iallreduce(MPI_IN_PLACE, reinterpret_cast<std::int64_t*>(p.states),
                               N * reduce::exact_accumulator<double>::words, MPI_INT64_T, MPI_SUM, comm.mpi(),
                               &p.request),
                "MPI_Iallreduce");
    } else {
      for (int j = 0; j < N; ++j) p.sums[j] = acc[j].compensated.value();
      mpi_check(MPI_Iallreduce(MPI_IN_PLACE, p.sums, N, MPI_DOUBLE, MPI_SUM, comm.mpi(), &p.request), "MPI_Iallreduce");
    }
  }
  template <int N>
  void wait(pending<N>& p, double (&out)[N]) const {
    mpi_check(MPI_Wait(&p.request, MPI_STATUS_IGNORE), "MPI_Wait");
    for (int j = 0; j < N; ++j) out[j] = reproducible ? reduce::round_exact(p.states[j]) : p.sums[j];
  }
  template <int N>
  void finish(accumulator (&acc)[N], double (&out)[N]) const {
    pending<N> p;
    start(acc, p);
    wait(p, out);
  }
  template <int N>
  void dots(const std::pair<const std::vector<Value>*, const std::vector<Value>*> (&xy)[N], double (&out)[N]) const {
    accumulator acc[N];
    for (int j = 0; j < N; ++j) {
      acc[j] = accumulator_for(xy[j].first->size());
      for (std::size_t i = 0; i < xy[j].first->size(); ++i)
        acc[j].add(static_cast<double>((*xy[j].first)[i]), static_cast<double>((*xy[j].second)[i]));
    }
    finish(acc, out);
  }
  double dot(const std::vector<Value>& x, const std::vector<Value>& y) const {
    double out[1];
    dots({{&x, &y}}, out);
    return out[0];
  }
  void apply(const std::vector<Value>& x, std::vector<Value>& y) const { spmv.apply(x.data(), y.data()); }
  std::vector<Value> jacobi_inverse() const {
    std::vector<Value> inv;
    dist::all_or_none(comm, [&] {
      check_local_diagonal(a);
      inv = detail::checked_inverse(a.diagonal());
    });
    return inv;
  }
};

}  // namespace

template <class Value, class Index>
result solve(const dist::communicator& comm, const dist::distributed_csr<Value, Index>& a,
             const std::vector<Value>& b, std::vector<Value>& x, const options& opt, bool use_guess) {
  dist::all_or_none(comm, [&] {
    detail::check_options(opt);
    if (a.global_rows() == 0) detail::check_shape(0, 0);
    check_local_inputs(a, b, x, use_guess);
  });
  if (!use_guess) x.assign(b.size(), Value(0));
  dist::host_spmv<Value, Index> spmv(comm, a);
  dist_space<Value, Index> sp{comm, a, spmv, opt.reproducible};
  result res = detail::run_krylov(sp, b, x, opt);
  // ||b - A x|| / ||b||, both sums in one collective.
  const std::size_t n = b.size();
  std::vector<Value> r(n);
  sp.apply(x, r);
  typename dist_space<Value, Index>::accumulator sums[2] = {sp.accumulator_for(n), sp.accumulator_for(n)};
  for (std::size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(b[i]) - static_cast<double>(r[i]);
    sums[0].add(d, d);
    sums[1].add(b[i], b[i]);
  }
  double v[2];
  sp.finish(sums, v);
  res.true_relative_residual = v[1] > 0 ? std::sqrt(v[0] / v[1]) : 0.0;
  return res;
}

#define SOLVE_DISTRIBUTED(V, I)                                                                                 \
  template result solve<V, I>(const dist::communicator&, const dist::distributed_csr<V, I>&, const std::vector<V>&, \
                              std::vector<V>&, const options&, bool);
SOLVE_DISTRIBUTED(float, std::int32_t)
SOLVE_DISTRIBUTED(float, std::int64_t)
SOLVE_DISTRIBUTED(double, std::int32_t)
SOLVE_DISTRIBUTED(double, std::int64_t)
#undef SOLVE_DISTRIBUTED

}  // namespace solve::distributed
