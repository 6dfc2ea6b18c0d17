// libreduce public API: device-wide reductions (CUDA backend) and their CPU twins (reduce::reference).
// No CUDA syntax: a plain C++ program can include this header and link reduce::reduce.
// The public API is these precompiled entry points (instantiated for the types below) and the
// device-callable warp and block primitives of reduce/cuda/. Kernels, their launches and the generic
// user-operator templates (reduce::device::reduce, transform_reduce, count_if, segmented_reduce) are
// private to libreduce (libreduce/src/cuda): a template over a user operator has to instantiate and
// launch its kernel in the caller, and the installed headers hold no kernel and no launch.
//
// Conventions for every entry point:
//  * Element counts are 64-bit (std::int64_t); n = 0 gives the operator's identity (sum 0, min +inf or
//    the type's max, max -inf or lowest, argmin/argmax {identity, -1}).
//  * CUDA entry points take DEVICE pointers and a stream, in three overloads:
//      OP(d_in, n, d_out, stream)      result to device memory; scratch from libreduce's own stream-ordered
//                                      pool (cudaMallocFromPoolAsync; it keeps up to 64 MiB of freed
//                                      blocks mapped across synchronizations); no host sync.
//      OP(d_in, n, d_out, ws, stream)  as above with a caller-provided workspace: no allocation at all.
//      OP(d_in, n, stream)             result copied back to the host; synchronizes `stream`
//                                      (multi_dot: a std::vector of its m results).
//  * Supported T: std::int32_t, std::int64_t, std::uint32_t, std::uint64_t, float, double (norm2,
//    reproducible_sum and compensated_sum: float and double only).
//  * Errors throw gpukit::cuda_error (see error.hpp); n < 0, and a device pointer that is not a multiple
//    of its element type's alignment (not a valid T*), throw std::invalid_argument. Any element offset
//    into an allocation is fine.
//  * Error bounds use gamma(k) = k u / (1 - k u), u = eps/2 (unit roundoff of T), and k = the longest
//    chain of roundings, which for the single-pass kernel is
//        k = ceil(n / (grid * block)) + 2 + ceil(grid / block) + 2 log2(block)
//    (per-thread chain incl. one head and one tail element, block tree, last-block combine, its tree);
//    single_pass_chain_length() returns it for the current device (multi_dot, whose kernel traverses
//    its vectors otherwise: multi_dot_chain_length()). Integers are exact (modulo 2^bits for sums).
//    NaN and +-Inf propagate as IEEE 754 says (sum with a NaN is NaN, +Inf + -Inf is NaN);
//    min/max/argmin/argmax return NaN when the input holds one (argmin/argmax: the first NaN).
//  * Determinism: every kernel has a grid fixed by (n, element size, SM count, occupancy) and combines
//    partials in a fixed order, so results are bitwise identical run to run on one GPU model.
//    reproducible_sum is bitwise identical across grids, block sizes and GPUs (and equal to the CPU twin).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "reduce/device.hpp"
#include "reduce/exact_accumulator.hpp"  // the reproducible sum's exact state: merge, round once
#include "gpukit/error.hpp"

namespace reduce {

/// Device scratch memory for the CUDA reductions, reusable across calls on one stream at a time.
/// Constructing one allocates and zero-initialises it once (cudaMalloc + cudaMemset); calls that take a
/// workspace then do no allocation and no memset (the last block of a single-pass reduction leaves its
/// counters and accumulators at zero again). Calls without one draw scratch from libreduce's own
/// stream-ordered pool (one per device, never the application's default pool), which keeps freed blocks
/// mapped for the next call instead of calling cudaMalloc.
/// The default size (required_bytes()) serves every non-segmented call; segmented calls need
/// segmented_bytes(num_segments): construct with that size or reserve() it (a too small workspace
/// throws std::invalid_argument, it never grows behind the caller's back).
class workspace {
public:
  workspace();
  /// At least max(bytes, required_bytes()) bytes.
  explicit workspace(std::size_t bytes);
  ~workspace();
  workspace(const workspace&) = delete;
  workspace& operator=(const workspace&) = delete;
  workspace(workspace&& o) noexcept;
  workspace& operator=(workspace&& o) noexcept;

  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  /// Grows to at least `bytes` (reallocates and zeroes; synchronizes the device). No-op when big enough.
  void reserve(std::size_t bytes);
  /// Bytes that every single (non-segmented) reduction call needs; also the default size.
  static std::size_t required_bytes() noexcept;
  /// Bytes a segmented call over `num_segments` segments needs.
  static std::size_t segmented_bytes(std::int64_t num_segments) noexcept;

private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Value and position of an extremum: the FIRST index holding it. n = 0 gives {identity, -1}.
template <class T>
struct value_index {
  T value;
  std::int64_t index;
};

// ------------------------------------------------------------------------------------------------
// sum
/// Sum of d_in[0..n). One launch (single pass: the last block combines the per-block partials in block
/// order), 16-byte vector loads, several in flight per thread.
/// Determinism: run-to-run deterministic on one GPU model (not across SM counts; see reproducible_sum).
/// Error bound (float/double): |s - exact| <= gamma(k) * sum|x_i|, k as in the header comment.
/// Integers: exact modulo 2^bits.
/// Example:
///   gpukit::device_buffer<float> x(host_vector);
///   float s = reduce::sum(x.data(), x.size());
template <class T>
void sum(const T* d_in, std::int64_t n, T* d_out, stream_t stream = nullptr);
template <class T>
void sum(const T* d_in, std::int64_t n, T* d_out, workspace& ws, stream_t stream = nullptr);
template <class T>
T sum(const T* d_in, std::int64_t n, stream_t stream = nullptr);

// ------------------------------------------------------------------------------------------------
// min / max
/// Smallest element of d_in[0..n) (NaN if any element is NaN). Exact and order independent, hence
/// deterministic across grids and GPUs. n = 0 gives +inf (floats) or the type's max.
/// Example:
///   float lo = reduce::min(x.data(), x.size());
template <class T>
void min(const T* d_in, std::int64_t n, T* d_out, stream_t stream = nullptr);
template <class T>
void min(const T* d_in, std::int64_t n, T* d_out, workspace& ws, stream_t stream = nullptr);
template <class T>
T min(const T* d_in, std::int64_t n, stream_t stream = nullptr);

/// Largest element of d_in[0..n) (NaN if any element is NaN). Exact and deterministic everywhere.
/// n = 0 gives -inf (floats) or the type's lowest.
/// Example:
///   float hi = reduce::max(x.data(), x.size());
template <class T>
void max(const T* d_in, std::int64_t n, T* d_out, stream_t stream = nullptr);
template <class T>
void max(const T* d_in, std::int64_t n, T* d_out, workspace& ws, stream_t stream = nullptr);
template <class T>
T max(const T* d_in, std::int64_t n, stream_t stream = nullptr);

// ------------------------------------------------------------------------------------------------
// argmin / argmax
/// {smallest value, FIRST index holding it}; with NaNs, {NaN, index of the first NaN}. Exact and
/// deterministic everywhere (ties break on the index, which is a total order). n = 0: {+inf or max, -1}.
/// Example:
///   reduce::value_index<float> m = reduce::argmin(x.data(), x.size());  // m.value, m.index
template <class T>
void argmin(const T* d_in, std::int64_t n, value_index<T>* d_out, stream_t stream = nullptr);
template <class T>
void argmin(const T* d_in, std::int64_t n, value_index<T>* d_out, workspace& ws, stream_t stream = nullptr);
template <class T>
value_index<T> argmin(const T* d_in, std::int64_t n, stream_t stream = nullptr);

/// {largest value, FIRST index holding it}; NaN as argmin. Exact and deterministic everywhere.
/// n = 0: {-inf or lowest, -1}.
/// Example:
///   reduce::value_index<float> m = reduce::argmax(x.data(), x.size());
template <class T>
void argmax(const T* d_in, std::int64_t n, value_index<T>* d_out, stream_t stream = nullptr);
template <class T>
void argmax(const T* d_in, std::int64_t n, value_index<T>* d_out, workspace& ws, stream_t stream = nullptr);
template <class T>
value_index<T> argmax(const T* d_in, std::int64_t n, stream_t stream = nullptr);

// ------------------------------------------------------------------------------------------------
// sum_of_squares / norm2 / dot
/// sum x_i^2 accumulated in T (one launch, as sum). Error: |s - exact| <= gamma(k + 1) * sum x_i^2.
/// Run-to-run deterministic on one GPU model. Integers: exact modulo 2^bits.
/// Example:
///   double ss = reduce::sum_of_squares(x.data(), x.size());
template <class T>
void sum_of_squares(const T* d_in, std::int64_t n, T* d_out, stream_t stream = nullptr);
template <class T>
void sum_of_squares(const T* d_in, std::int64_t n, T* d_out, workspace& ws, stream_t stream = nullptr);
template <class T>
T sum_of_squares(const T* d_in, std::int64_t n, stream_t stream = nullptr);

/// Euclidean norm sqrt(sum x_i^2) (float and double). float accumulates in double (no overflow or
/// underflow for any float input; error <= u_float + 2 gamma_double(k + 1) relative, i.e. about one float
/// rounding). double accumulates in double: relative error <= (gamma(k + 1) + u) / 2 + u; overflows
/// to inf when sum x_i^2 exceeds DBL_MAX (|x| ~ 1e154). Run-to-run deterministic on one GPU model.
/// Example:
///   float nrm = reduce::norm2(x.data(), x.size());
template <class T>
void norm2(const T* d_in, std::int64_t n, T* d_out, stream_t stream = nullptr);
template <class T>
void norm2(const T* d_in, std::int64_t n, T* d_out, workspace& ws, stream_t stream = nullptr);
template <class T>
T norm2(const T* d_in, std::int64_t n, stream_t stream = nullptr);

/// Dot product sum x_i y_i (floats: fused multiply-add per element). Both vectors are read with 16-byte
/// loads when they share their misalignment, element loads otherwise.
/// Error: |d - exact| <= gamma(k + 1) * sum |x_i y_i|. Run-to-run deterministic on one GPU model.
/// Integers: exact modulo 2^bits.
/// Example:
///   float d = reduce::dot(x.data(), y.data(), x.size());
template <class T>
void dot(const T* d_x, const T* d_y, std::int64_t n, T* d_out, stream_t stream = nullptr);
template <class T>
void dot(const T* d_x, const T* d_y, std::int64_t n, T* d_out, workspace& ws, stream_t stream = nullptr);
template <class T>
T dot(const T* d_x, const T* d_y, std::int64_t n, stream_t stream = nullptr);

// ------------------------------------------------------------------------------------------------
// multi_dot
/// The most dot products one multi_dot call takes (libsolve's fused Krylov passes take at most 6 sums).
inline constexpr int multi_dot_max = 8;

/// m dot products in ONE pass over memory and one launch: d_out[j] = sum_i x_j[i] y_j[i] for j < m, each
/// of the m pairs holding n elements. Each thread accumulates all m sums over its share of the elements
/// (floats: one fused multiply-add per element), and the m sums are finished together as sum's are (the
/// last block combines the per-block partials in block order).
/// d_x and d_y are HOST arrays of m DEVICE pointers; d_out is a DEVICE array of m results (entries from
/// m on are not written). Any element offset into an allocation is fine, and each vector may have its own.
/// 0 <= m <= multi_dot_max: m = 0 does nothing (no launch, d_x, d_y and d_out unused), n = 0 gives m zeros.
/// m outside that range, n < 0, a null d_x or d_y (m > 0) and a vector pointer that is not a multiple of
/// alignof(T) throw std::invalid_argument before any CUDA call.
/// The host-result overload returns the m results as a std::vector<T> (empty for m = 0) and synchronizes
/// `stream`: a `(..., T* h_out, stream)` form would have the device-result overload's signature.
/// Error per result: |d_j - exact_j| <= gamma(k + 1) * sum_i |x_j[i] y_j[i]|, with the k of this kernel
/// (not single_pass_chain_length's): multi_dot_chain_length(n, m, sizeof(T)).
/// Run-to-run deterministic on one GPU model (the grid is fixed by n, m, T and the device). The bits can
/// differ from reduce::dot's, which traverses the vectors in another order, within both bounds.
/// Integers: exact modulo 2^bits.
/// Example:
///   const float* xs[2] = {r.data(), w.data()};
///   const float* ys[2] = {r.data(), r.data()};
///   std::vector<float> d = reduce::multi_dot(xs, ys, 2, n);   // {r . r, w . r}
template <class T>
void multi_dot(const T* const* d_x, const T* const* d_y, int m, std::int64_t n, T* d_out, stream_t stream = nullptr);
template <class T>
void multi_dot(const T* const* d_x, const T* const* d_y, int m, std::int64_t n, T* d_out, workspace& ws,
               stream_t stream = nullptr);
template <class T>
std::vector<T> multi_dot(const T* const* d_x, const T* const* d_y, int m, std::int64_t n, stream_t stream = nullptr);

// ------------------------------------------------------------------------------------------------
// reproducible_sum / compensated_sum (float, double)
/// The CORRECTLY ROUNDED sum (round to nearest even) of d_in[0..n), hence bitwise identical whatever
/// the grid, block size, GPU or backend (the CPU twin returns the same bits). Each element is added
/// EXACTLY as an integer multiple of the smallest subnormal into a per-thread window (a 128-bit integer
/// spanning 25 exponents for float, 32 for double; a float tile of 16 in-window elements is first
/// summed in a double, which is exact there) and then into a multi-limb integer accumulator (integer
/// addition is associative), which is rounded once.
/// One launch, as sum. Error bound: |s - exact| <= u |exact| (half an ulp); overflow gives +-inf as
/// IEEE rounding would. NaN anywhere, or both +inf and -inf, gives NaN; otherwise an inf gives that inf.
/// Example:
///   double s = reduce::reproducible_sum(x.data(), x.size());
template <class T>
void reproducible_sum(const T* d_in, std::int64_t n, T* d_out, stream_t stream = nullptr);
template <class T>
void reproducible_sum(const T* d_in, std::int64_t n, T* d_out, workspace& ws, stream_t stream = nullptr);
template <class T>
T reproducible_sum(const T* d_in, std::int64_t n, stream_t stream = nullptr);

/// Compensated (Kahan-Babuska-Neumaier) sum: each thread carries {sum, correction}, partial pairs are
/// combined with an exact TwoSum. Error: |s - exact| <= 2u |exact| + 2 gamma(k)^2 sum|x_i| (Ogita, Rump
/// and Oishi's Sum2 bound with the chain k of the header comment, doubled for the tree combine): about
/// one rounding unless the data cancel by more than 1/u. Run-to-run deterministic on one GPU model.
/// Example:
///   float s = reduce::compensated_sum(x.data(), x.size());
template <class T>
void compensated_sum(const T* d_in, std::int64_t n, T* d_out, stream_t stream = nullptr);
template <class T>
void compensated_sum(const T* d_in, std::int64_t n, T* d_out, workspace& ws, stream_t stream = nullptr);
template <class T>
T compensated_sum(const T* d_in, std::int64_t n, stream_t stream = nullptr);

// ------------------------------------------------------------------------------------------------
// counting
/// Number of elements != 0 (floats: NaN counts as nonzero, -0.0 as zero). Exact, deterministic.
/// Example:
///   std::int64_t nnz = reduce::count_nonzero(x.data(), x.size());
template <class T>
void count_nonzero(const T* d_in, std::int64_t n, std::int64_t* d_out, stream_t stream = nullptr);
template <class T>
void count_nonzero(const T* d_in, std::int64_t n, std::int64_t* d_out, workspace& ws, stream_t stream = nullptr);
template <class T>
std::int64_t count_nonzero(const T* d_in, std::int64_t n, stream_t stream = nullptr);

/// Number of NaN elements (float, double). Exact, deterministic.
/// Example:
///   if (reduce::count_nan(x.data(), x.size()) != 0) throw ...;
template <class T>
void count_nan(const T* d_in, std::int64_t n, std::int64_t* d_out, stream_t stream = nullptr);
template <class T>
void count_nan(const T* d_in, std::int64_t n, std::int64_t* d_out, workspace& ws, stream_t stream = nullptr);
template <class T>
std::int64_t count_nan(const T* d_in, std::int64_t n, stream_t stream = nullptr);

// ------------------------------------------------------------------------------------------------
// segmented
/// d_out[s] = sum of d_in[d_offsets[s] .. d_offsets[s+1]) for s in [0, num_segments); d_offsets holds
/// num_segments + 1 non-decreasing entries (device memory); an empty segment gives 0.
/// Up to 8192 segments: one launch, a block per segment (as CUB). More: segments are binned by
/// length, a thread per segment up to 16 elements, a warp up to 4096, a block beyond (one launch for
/// the short and warp-sized ones, one for the long ones).
/// Error per segment of length m: |s - exact| <= gamma(m - 1) * sum|x_i| (any order). Deterministic
/// across runs and GPUs for a fixed input (the order inside a segment depends only on its length and
/// on whether num_segments <= 8192).
/// Example:
///   reduce::segmented_sum(d_values, d_row_ptr, rows, d_row_sums);
template <class T>
void segmented_sum(const T* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, T* d_out,
                   stream_t stream = nullptr);
template <class T>
void segmented_sum(const T* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, T* d_out,
                   workspace& ws, stream_t stream = nullptr);
/// Per-segment minimum (NaN propagates; empty segment gives +inf or max). Exact, deterministic.
template <class T>
void segmented_min(const T* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, T* d_out,
                   stream_t stream = nullptr);
template <class T>
void segmented_min(const T* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, T* d_out,
                   workspace& ws, stream_t stream = nullptr);
/// Per-segment maximum (NaN propagates; empty segment gives -inf or lowest). Exact, deterministic.
template <class T>
void segmented_max(const T* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, T* d_out,
                   stream_t stream = nullptr);
template <class T>
void segmented_max(const T* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, T* d_out,
                   workspace& ws, stream_t stream = nullptr);

// ------------------------------------------------------------------------------------------------
/// The k of the error bounds above (the longest chain of roundings any one input goes through) for n
/// elements of `element_bytes` bytes on the current device, so a caller can bound a sum's error by
/// gamma(k) * sum|x_i| with gamma(k) = k u / (1 - k u). (Forced launch shapes for tests and benchmarks are
/// private: libreduce/src/cuda/forced_shape.hpp.)
std::int64_t single_pass_chain_length(std::int64_t n, std::size_t element_bytes);
/// The k of multi_dot's bound for m dot products of n elements of `element_bytes` bytes on the current
/// device: the longest chain of roundings in its kernel (an element's fused multiply-add and those after
/// it in its thread, the block tree, the last block's combine of the per-block partials, its tree), taken
/// at the smallest grid the device can give for the first part and the largest for the third, so it holds
/// whatever the occupancy. m = 0 or n = 0 gives 0; m outside [0, multi_dot_max] or n < 0 throw
/// std::invalid_argument.
std::int64_t multi_dot_chain_length(std::int64_t n, int m, std::size_t element_bytes);

// ================================================================================================
namespace reference {
/// CPU backend: the same operations on HOST memory (OpenMP when available). Floats accumulate in
/// double and are rounded once at the end (error <= gamma_double(n - 1) sum|x| + u_T |exact|);
/// integers wrap modulo 2^bits. Deterministic for a fixed thread count; min/max/arg*/counts and
/// reproducible_sum (correctly rounded, bitwise equal to the CUDA result) are deterministic always.
template <class T>
T sum(const T* in, std::int64_t n);
template <class T>
T min(const T* in, std::int64_t n);
template <class T>
T max(const T* in, std::int64_t n);
template <class T>
value_index<T> argmin(const T* in, std::int64_t n);
template <class T>
value_index<T> argmax(const T* in, std::int64_t n);
template <class T>
T sum_of_squares(const T* in, std::int64_t n);
template <class T>
T norm2(const T* in, std::int64_t n);
template <class T>
T dot(const T* x, const T* y, std::int64_t n);
/// out[j] = dot(x[j], y[j], n) for j < m (host arrays of m host pointers, m results): one pass over the
/// vectors, bitwise equal to reference::dot for each j (the same chunks, each sum accumulated in the same
/// order); m and n are checked as multi_dot checks them.
template <class T>
void multi_dot(const T* const* x, const T* const* y, int m, std::int64_t n, T* out);
template <class T>
T reproducible_sum(const T* in, std::int64_t n);
template <class T>
T compensated_sum(const T* in, std::int64_t n);
template <class T>
std::int64_t count_nonzero(const T* in, std::int64_t n);
template <class T>
std::int64_t count_nan(const T* in, std::int64_t n);
/// Offsets are host pointers here; malformed offsets (decreasing, negative) throw std::invalid_argument.
template <class T>
void segmented_sum(const T* in, const std::int64_t* offsets, std::int64_t num_segments, T* out);
template <class T>
void segmented_min(const T* in, const std::int64_t* offsets, std::int64_t num_segments, T* out);
template <class T>
void segmented_max(const T* in, const std::int64_t* offsets, std::int64_t num_segments, T* out);
}  // namespace reference

}  // namespace reduce
