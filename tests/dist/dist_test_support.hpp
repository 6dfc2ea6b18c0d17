// What the distributed tests share: MPI for the whole test binary (a global fixture: test_main.cpp stays
// the one Boost.Test main), the world communicator, and partitions of a global vector that every rank
// builds identically from the same seed.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dist/communicator.hpp"
#include "test_support.hpp"

namespace test::dist_support {

/// The P + 1 offsets of an even split of n, or (uneven) random cuts, some repeated (empty parts on
/// purpose). The same on every rank: the generator depends only on `seed`.
inline std::vector<std::int64_t> partition(std::int64_t n, int parts, bool uneven, std::uint64_t seed) {
  std::vector<std::int64_t> cuts = {0, n};
  auto g = test::rng(seed);
  for (int k = 1; k < parts; ++k)
    cuts.push_back(uneven ? static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(n + 1)) : n * k / parts);
  std::sort(cuts.begin(), cuts.end());
  if (uneven && parts > 2) cuts[2] = cuts[1];  // rank 1 holds nothing
  return cuts;
}

/// CUDA devices on this node (0 without a driver).
int device_count();

inline const dist::communicator& world() {
  static const dist::communicator comm(MPI_COMM_WORLD);
  return comm;
}

}  // namespace test::dist_support
