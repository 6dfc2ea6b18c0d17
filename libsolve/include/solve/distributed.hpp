// Distributed Krylov solvers on a matrix distributed by rows (dist::distributed_csr), each rank holding its
// rows of A, b and x: on the CPU (the CPU path's loops, solve::reference) and on the GPU (solve::solver's
// kernels over a device_operator whose sums span the ranks). Built with GPUKIT_DISTRIBUTED (target
// solve::dist). No CUDA syntax.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/csr.hpp"
#include "dist/reductions.hpp"
#include "solve/linear_operator.hpp"
#include "solve/types.hpp"

namespace solve::distributed {

/// Solves A x = b on the CPU; collective over `comm`. The iterations are solve::reference's, the same code
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

/// A distributed_csr as a solve::linear_operator on this rank's GPU, for solve::solver: apply() is
/// dist::device_spmv (halo over NCCL or host-staged MPI, overlapped with the interior rows), and the
/// solver's dots are summed over the ranks by a dist::device_allreduce (spans_ranks() is true). rows() is
/// this rank's row count (0 allowed). The communicator needs its device transport (enable_device()) and
/// must outlive the operator, as must the matrix. Every apply and every rank sum is collective: all ranks
/// must run the same solver calls.
///
/// Example:
///   comm.enable_device();
///   solve::distributed::device_operator<double, std::int32_t> op(comm, a);
///   solve::solver<double> s(op, opt);   auto r = s.solve(d_b_local, d_x_local, a.local_rows(), stream);
template <class Value, class Index>
class device_operator final : public linear_operator<Value> {
public:
  /// `algorithm`: the local blocks' SpMV (see dist::device_spmv; scalar makes y bitwise rank-count
  /// independent).
  device_operator(const dist::communicator& comm, const dist::distributed_csr<Value, Index>& a,
                  sparse::spmv_algorithm algorithm = sparse::spmv_algorithm::automatic);
  ~device_operator() override;
  std::int64_t rows() const override { return a_->local_rows(); }
  std::int64_t cols() const override { return a_->local_rows(); }
  /// dist::device_spmv::apply_in_room where the rank's rows have the room layout (d_x then has
  /// input_room() around it), otherwise dist::device_spmv::apply.
  void apply(const Value* d_x, Value* d_y, stream_t stream) const override;
  /// dist::device_spmv::input_room.
  sparse::x_halo input_room() const override;
  /// True in the room layout where every block's plan takes the dots in its pass (dist::device_spmv::dots_fused).
  bool fuses_dots() const override;
  /// dist::device_spmv::apply_in_room_with_dots: this rank's sums (fast only).
  void apply_with_dots(const Value* d_x, Value* d_y, const Value* d_w, double* d_sums, sparse::dots_summation how,
                       stream_t stream) const override;
  bool has_diagonal() const override { return true; }
  /// This rank's stored diagonal entries (dist::distributed_csr::diagonal), copied to the device.
  void diagonal(Value* d_diag, stream_t stream) const override;
  bool spans_ranks() const override { return true; }
  void start_rank_sum(double* d_sums, int count, stream_t stream) const override;
  void start_rank_sum_exact(std::int64_t* d_words, int count, stream_t stream) const override;
  void finish_rank_sum(stream_t stream) const override;
  /// In stream order on the NCCL path (dist::device_allreduce::run): no side stream to wait for.
  void rank_sum(double* d_sums, int count, stream_t stream) const override;
  void rank_sum_exact(std::int64_t* d_words, int count, stream_t stream) const override;
  /// Connects the ranks' NCCL peers for the halo and the sums (dist::device_spmv::connect,
  /// dist::device_allreduce::connect), which NCCL otherwise does inside the first SpMV and the first sum
  /// (0.2-0.5 s on 2 H100s: inside a solve's first iteration). Collective; solve() calls it.
  void connect(stream_t stream) const;

private:
  const dist::distributed_csr<Value, Index>* a_;
  std::unique_ptr<dist::device_spmv<Value, Index>> spmv_;
  std::unique_ptr<dist::device_allreduce> sums_;
};

/// Solves A x = b on the GPUs; collective over `comm`, which needs its device transport (enable_device()
/// after choosing this rank's GPU, e.g. dist::select_local_device). d_b_local and d_x_local are DEVICE
/// arrays of this rank's a.local_rows() entries (x from 0, or from d_x_local with use_guess); the solve is
/// enqueued on `stream`. It is solve::solver<Value> (same methods: cg, pcg, bicgstab, pipecg; same options,
/// stopping test, history, stop reasons, breakdown naming, true residual recomputed at the end) over a
/// device_operator: every fused pass's K local sums go through ONE all-reduce (NCCL in place on the
/// stream, or host staging), then a one-thread kernel runs the scalar update, so the scalars stay on the
/// device and the host only reads the status word every options::check_every iterations. All-reduces per
/// iteration: cg and pcg 2, bicgstab 4, pipecg 1, which runs while the next SpMV does (NCCL: the
/// all-reduce on the communicator's NCCL stream, which the halo exchange shares, so the halo follows it
/// while the interior rows overlap it; host staging: MPI_Iallreduce in flight during the SpMV).
/// options::graph is refused (std::invalid_argument: host staging cannot be captured), and so is a rank
/// holding no rows (every rank must hold at least one; the CPU overload allows empty ranks).
///
/// options::reproducible: each dot is the correctly rounded sum of the products rounded to Value: the
/// local exact state (reduce::exact_accumulator, summed in the pass), all-reduced as int64 words, rounded once on the
/// device (reduce::round_exact). With it the SpMV runs spmv_algorithm::scalar, whose rows are bitwise
/// independent of the partition, so history, iteration count and x are BITWISE identical for any number
/// of ranks and equal to solve::solver's reproducible mode on one GPU over a scalar csr_operator.
/// Otherwise the P rank totals (each the block-tree sum in double) are added in double by the
/// all-reduce and the SpMV algorithm is chosen per block: run to run deterministic for a fixed rank count
/// and GPU model, iteration counts within rounding across rank counts.
///
/// Throws dist::rank_failure on every rank for bad input on any rank (NaN/Inf in its rows of A, a zero or
/// non-finite diagonal entry with pcg, naming the global row; NaN/Inf in b, found on the device; bad
/// options); std::logic_error when the communicator has no device transport. Any other failure on one
/// rank (a CUDA error, an exception from options::progress) leaves that rank alone while the others wait
/// in their next sum over ranks: the caller must end the job (MPI_Abort), as gpukit::run_on_mpi_world does.
///
/// Example:
///   comm.enable_device();
///   gpukit::device_buffer<double> db(b_local), dx(a.local_rows());
///   solve::result r = solve::distributed::solve(comm, a, db.data(), dx.data(), opt);
template <class Value, class Index>
result solve(const dist::communicator& comm, const dist::distributed_csr<Value, Index>& a, const Value* d_b_local,
             Value* d_x_local, const options& opt, stream_t stream = nullptr, bool use_guess = false);

}  // namespace solve::distributed
