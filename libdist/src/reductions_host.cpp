// dist::reference reductions: libreduce's CPU backend on the local part, then one MPI collective.
#include <cmath>
#include <cstdint>
#include <vector>

#include "dist/reductions.hpp"
#include "dist_check.hpp"
#include "reduce/reduce.hpp"

namespace dist::reference {

namespace {
template <class T>
T allreduce_one(const communicator& comm, T local, MPI_Op op) {
  T out{};
  detail::mpi_check(MPI_Allreduce(&local, &out, 1, detail::mpi_type<T>(), op, comm.mpi()), "MPI_Allreduce");
  return out;
}
/// Every rank's local value, in rank order.
template <class T>
std::vector<T> allgather_one(const communicator& comm, T local) {
  std::vector<T> all(static_cast<std::size_t>(comm.size()));
  detail::mpi_check(MPI_Allgather(&local, 1, detail::mpi_type<T>(), all.data(), 1, detail::mpi_type<T>(), comm.mpi()),
                    "MPI_Allgather");
  return all;
}
}  // namespace

template <class T>
T sum(const communicator& comm, const T* in, std::int64_t n) {
  return allreduce_one(comm, reduce::reference::sum(in, n), MPI_SUM);
}
template <class T>
T min(const communicator& comm, const T* in, std::int64_t n) {
  const std::vector<T> all = allgather_one(comm, reduce::reference::min(in, n));
  return reduce::reference::min(all.data(), static_cast<std::int64_t>(all.size()));
}
template <class T>
T max(const communicator& comm, const T* in, std::int64_t n) {
  const std::vector<T> all = allgather_one(comm, reduce::reference::max(in, n));
  return reduce::reference::max(all.data(), static_cast<std::int64_t>(all.size()));
}
template <class T>
T dot(const communicator& comm, const T* x, const T* y, std::int64_t n) {
  return allreduce_one(comm, reduce::reference::dot(x, y, n), MPI_SUM);
}

template <class T>
T norm2(const communicator& comm, const T* in, std::int64_t n) {
  return detail::combine_norms(allgather_one(comm, reduce::reference::norm2(in, n)));
}

template <class T>
void multi_dot(const communicator& comm, const T* const* x, const T* const* y, int m, std::int64_t n, T* out) {
  std::vector<T> local(static_cast<std::size_t>(m));
  for (int j = 0; j < m; ++j) local[static_cast<std::size_t>(j)] = reduce::reference::dot(x[j], y[j], n);
  detail::mpi_check(MPI_Allreduce(local.data(), out, m, detail::mpi_type<T>(), MPI_SUM, comm.mpi()), "MPI_Allreduce");
}

template <class T>
void allreduce_states(const communicator& comm, reduce::exact_accumulator<T>* states, int count) {
  // Normalized states: lower limbs in [0, 2^32), so P <= 2^31 of them add exactly in int64.
  const int words = detail::mpi_count(static_cast<std::int64_t>(count) * reduce::exact_accumulator<T>::words,
                                      "dist::allreduce_states");
  detail::mpi_check(MPI_Allreduce(MPI_IN_PLACE, reinterpret_cast<std::int64_t*>(states), words, MPI_INT64_T,
                                  MPI_SUM, comm.mpi()),
                    "MPI_Allreduce");
  for (int j = 0; j < count; ++j) reduce::normalize(states[j]);
}
template <class T>
reduce::exact_accumulator<T> reproducible_sum_state(const communicator& comm, const T* in, std::int64_t n) {
  reduce::exact_accumulator<T> s = reduce::reference::reproducible_sum_state(in, n);
  allreduce_states(comm, &s, 1);
  return s;
}
template <class T>
T reproducible_sum(const communicator& comm, const T* in, std::int64_t n) {
  return reduce::round_exact(reference::reproducible_sum_state(comm, in, n));
}

#define DIST_REFERENCE_ALL(T)                                                                       \
  template T sum(const communicator&, const T*, std::int64_t);                                      \
  template T min(const communicator&, const T*, std::int64_t);                                      \
  template T max(const communicator&, const T*, std::int64_t);                                      \
  template T dot(const communicator&, const T*, const T*, std::int64_t);                            \
  template void multi_dot(const communicator&, const T* const*, const T* const*, int, std::int64_t, T*);
DIST_REFERENCE_ALL(std::int32_t)
DIST_REFERENCE_ALL(std::int64_t)
DIST_REFERENCE_ALL(std::uint32_t)
DIST_REFERENCE_ALL(std::uint64_t)
DIST_REFERENCE_ALL(float)
DIST_REFERENCE_ALL(double)
#define DIST_REFERENCE_FLOAT(T)                                                                          \
  template T norm2(const communicator&, const T*, std::int64_t);                                         \
  template T reproducible_sum(const communicator&, const T*, std::int64_t);                              \
  template reduce::exact_accumulator<T> reproducible_sum_state(const communicator&, const T*, std::int64_t); \
  template void allreduce_states(const communicator&, reduce::exact_accumulator<T>*, int);
DIST_REFERENCE_FLOAT(float)
DIST_REFERENCE_FLOAT(double)

}  // namespace dist::reference
