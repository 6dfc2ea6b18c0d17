// Distributed Krylov solvers (MPI, CPU path): the CPU path's methods (solve::reference) on a matrix
// distributed by rows (dist::distributed_csr), each rank holding its rows of A, b and x. Built with
// GPUKIT_DISTRIBUTED (target solve::dist). No CUDA syntax.
#pragma once
#include <vector>

#include "dist/communicator.hpp"
#include "dist/csr.hpp"
#include "solve/types.hpp"

namespace solve::distributed {

/// Solves A x = b; collective over `comm`. The iterations are solve::reference's, the same code
/// (src/reference/krylov_loops.hpp) over a distributed space: the SpMV exchanges its halo while the
/// interior rows are computed (dist::host_spmv), and the several dots of one pass are finished in ONE
/// MPI all-reduce (cg and pcg: two per iteration; pipecg: one, in flight while the next SpMV runs;
/// bicgstab: four). Same options, stopping test, history, stop reasons and breakdown reporting as
/// solve::reference::solve; every rank returns the same result (its x_local is its part of x).
///
/// options::reproducible: every dot is the correctly rounded sum of the double products x_i y_i (exact
/// accumulator states all-reduced as integers, reduce/exact_accumulator.hpp), and the SpMV rows are
/// partition independent, so the history, the iteration count and x are BITWISE identical for any number
/// of ranks. Otherwise each rank's dots are compensated (Dot2, as solve::reference) and the P partials
/// added in double by MPI: they differ from the one-rank dots by about (P - 1) 2^-53 sum |x_i y_i|, so
/// counts can differ by rounding (the band libsolve's tests allow between the CPU and GPU paths).
///
/// Throws dist::rank_failure on every rank when any rank finds bad input (NaN/Inf in its rows of A or b,
/// b of the wrong size, a zero or non-finite diagonal entry with pcg): the message names the rank and
/// the global row.
///
/// Example:
///   auto a = dist::read_hdf5<double, std::int32_t>(comm, "a.h5");
///   std::vector<double> b(a.local_rows(), 1.0), x;
///   solve::result r = solve::distributed::solve(comm, a, b, x, opt);
template <class Value, class Index>
result solve(const dist::communicator& comm, const dist::distributed_csr<Value, Index>& a,
             const std::vector<Value>& b_local, std::vector<Value>& x_local, const options& opt, bool use_guess = false);

}  // namespace solve::distributed
