// WSM5 column microphysics (WRF V3.1 "classic": Eulerian sedimentation with per-column sub-steps), in
// float32 like WRF. Public API: the domain container, HDF5 / text I/O, the synthetic-domain generator,
// the CPU reference and the CUDA variants. No CUDA syntax: plain C++ programs include this header.
//
// Layout: 3D fields are (ny, nz, nx) with x fastest and k = 0 the LOWEST level (WRF's (i,k,j));
// 2D fields (rain, snow, rainncv, snowncv, sr) are (ny, nx). Index: (j * nz + k) * nx + i.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reduce/device.hpp"

namespace wsm5 {

/// The state of a domain of columns plus its static inputs.
struct domain {
  std::int64_t nx = 0, ny = 0, nz = 0;
  float dt = 0;                 ///< model time step [s] (attribute `dt` of the HDF5 file)
  bool columns_form = false;    ///< the file stored (columns, nz) instead of (ny, nz, nx); written back alike
  // inputs (not changed by the scheme)
  std::vector<float> p, den, delz, pii;
  // prognostics (inout)
  std::vector<float> th, qv, qc, qr, qi, qs;
  // 2D: accumulated precipitation (inout) and this call's (out)
  std::vector<float> rain, snow, rainncv, snowncv, sr;

  std::int64_t columns() const { return nx * ny; }
  std::int64_t cells() const { return nx * ny * nz; }
  std::int64_t at(std::int64_t i, std::int64_t k, std::int64_t j) const { return (j * nz + k) * nx + i; }
  /// Allocates every field for the given shape (zeros).
  void resize(std::int64_t nx_, std::int64_t ny_, std::int64_t nz_);
  /// Throws std::runtime_error naming `what` (a file) and the field when a field has the wrong size,
  /// p/den/delz/pii are not positive and finite, any value is NaN/Inf, or dt <= 0.
  void validate(const std::string& what) const;
};

/// Names of the 3D and 2D fields, in file order.
const std::vector<std::string>& field_names_3d();  // p den delz pii th qv qc qr qi qs
const std::vector<std::string>& field_names_2d();  // rain snow rainncv snowncv sr
/// The field called `name` (taken by value: no temporary bound to a reference, see g++ -Wdangling-reference).
std::vector<float>& field(domain& d, std::string_view name);
const std::vector<float>& field(const domain& d, std::string_view name);

// ---- I/O -------------------------------------------------------------------------------------------
/// Reads the HDF5 schema of data/README.md ("WSM5 columns"). Errors name the file and dataset.
domain read_hdf5(const std::string& path);
/// Writes the schema (inputs, prognostics, rain/snow, and rainncv/snowncv/sr when `with_outputs`)
/// to a temporary name and renames it into place (never a partial file).
void write_hdf5(const domain& d, const std::string& path, bool with_outputs);
/// Reads the text format of data/wsm5/columns.txt (ncol nz dt, then ncol blocks of nz lines
/// `p den delz pii th qv qc qr qi qs`, k = 1 first). Gives ny = 1, nx = ncol, columns_form = true.
domain read_columns_text(const std::string& path);

// ---- physical input validation ------------------------------------------------------------------
/// The first physically impossible value of a domain: where (column (i, j) and level k, k = 0 the lowest;
/// -1 where the problem is of the whole domain), which field, its value and the allowed range [min, max].
struct input_problem {
  std::string field;     ///< dataset name ("th" for the temperature th * pii), or "dt", "columns", "levels"
  std::string quantity;  ///< what was checked, in words ("temperature th * pii", "mixing ratio", ...)
  std::string unit;      ///< of value, min and max ("" for ratios)
  std::int64_t i = -1, j = -1, level = -1;
  double value = 0, min = 0, max = 0;
};
/// Checks the physical bounds (libwsm5/README.md, "Input validation", with each bound's source):
/// column count >= 1, dt in [0.01, 3600] s; per cell T = th * pii in [150, 350] K, p in [100, 110000] Pa
/// (lowest level >= 30000 Pa), delz in [1, 25000] m, den within [0.85, 1.05] of p / (Rd T), pii within
/// [0.99, 1.01] of (p / 1e5)^(2/7), mixing ratios in [-1e-8, max] (qv 0.05, qc and qi 0.01, qr and qs
/// 0.02 kg/kg); per adjacent pair p strictly falling with height and the level distance within
/// [2/3, 3/2] of the hypsometric Rd T / g ln(p_k / p_k+1); rain, snow >= 0. Columns in (j, i) order,
/// levels bottom up; nullopt when every value is inside. Structural checks (sizes, finiteness) are
/// domain::validate's. Example:
///   if (auto p = wsm5::check_physical(d)) std::cerr << "in.h5: " << wsm5::to_string(*p) << "\n";
std::optional<input_problem> check_physical(const domain& d);
/// One line: "column (i, j) = (3, 0), level k = 4 (0 = lowest): qv: mixing ratio 0.9 kg/kg is outside
/// the allowed range [-1e-08, 0.05] kg/kg".
std::string to_string(const input_problem& p);
/// What the readers throw for a physically impossible input: "FILE: " + to_string(problem()).
class input_error : public std::runtime_error {
public:
  input_error(const std::string& file, input_problem p);
  const input_problem& problem() const { return problem_; }

private:
  input_problem problem_;
};
/// Throws input_error naming `file` when check_physical finds a problem.
void check_physical_or_throw(const domain& d, const std::string& file);

// ---- non-finite results ------------------------------------------------------------------------------
/// The first NaN or Inf among a domain's prognostics (th, qv, qc, qr, qi, qs) and 2D outputs (rain,
/// snow, rainncv, snowncv, sr): field, column (i, j), level (-1 for 2D fields) and the value.
struct nonfinite_value {
  std::string field;
  std::int64_t i = -1, j = -1, level = -1;
  float value = 0;
};
/// Host scan, fields in the order above, cells in memory order; nullopt when all are finite.
std::optional<nonfinite_value> find_nonfinite(const domain& d);
/// "qv is NaN at column (i, j) = (5, 2), level k = 7 (0 = lowest)" (or +Inf, -Inf).
std::string to_string(const nonfinite_value& v);

/// One golden column of wrf_v31_{1,50}step.txt.
struct golden_column {
  double rain = 0, rainncv = 0, snow = 0, snowncv = 0, sr = 0, dw = 0;
  std::vector<double> t, th, qv, qc, qr, qi, qs;  // nz values, k = 1 first
};
struct golden_file {
  std::int64_t ncol = 0, nz = 0, nsteps = 0;
  double dt = 0;
  std::vector<golden_column> cols;
};
golden_file read_golden_text(const std::string& path);

/// A deterministic synthetic domain: plausible soundings mixing the five regimes of the golden cases
/// (warm rain, cold ice/snow, melting layer, dry, heavy rain) with smooth horizontal variation;
/// hydrostatic pressure, saturation-bounded vapour. Same (nx, ny, nz, seed) -> bitwise same domain.
domain generate(std::int64_t nx, std::int64_t ny, std::int64_t nz, std::uint64_t seed, float dt = 72.f);

// ---- the scheme ------------------------------------------------------------------------------------
/// Per-call domain diagnostics.
struct diagnostics {
  double rain_total = 0;        ///< sum over columns of this call's rainncv [mm]
  double snow_total = 0;        ///< sum over columns of this call's snowncv [mm]
  std::int32_t max_substeps = 0;  ///< max over columns of the sedimentation sub-step count (rain/snow, ice)
  float max_budget_residual = 0;  ///< max over columns of |W_before - W_after - precip| [kg m-2]
};

/// automatic: thread_per_column or warp_per_column by the domain's column count against the GPU's
/// capacity (choose_variant); gpu_domain resolves it at each call.
enum class variant { cpu, thread_per_column, warp_per_column, automatic };
const char* to_string(variant v);
variant parse_variant(const std::string& s);  // throws std::invalid_argument

/// The most levels a column may have on the GPU variants (gpu_domain throws std::invalid_argument above
/// it); the CPU reference has no limit. Deep columns cost local memory and registers (libwsm5/README.md,
/// "Variants").
constexpr std::int64_t gpu_max_levels = 256;

/// What the choice between the GPU variants depends on.
struct gpu_capacity {
  int sms = 0;               ///< streaming multiprocessors
  int max_warps_per_sm = 0;  ///< resident warps per SM (64 on sm_80/sm_90)
};
/// The current device's capacity (throws gpukit::no_cuda_device without one).
gpu_capacity current_gpu_capacity();
/// The GPU variant for a domain of `columns` columns of `levels` levels: thread_per_column once its grid
/// (one thread per column) gives every SM a tenth of its resident warps (3/2 of that for columns deeper
/// than 48 levels), warp_per_column below that. Reasons and the measured points are in the function's
/// comment (src/domain.cpp) and libwsm5/README.md ("Choosing a variant"). Never returns cpu or automatic.
variant choose_variant(std::int64_t columns, std::int64_t levels, const gpu_capacity& c);
/// Columns deeper than this take thread_per_column from 3/2 of the tenth (choose_variant).
constexpr std::int64_t automatic_deep_levels = 48;
/// The column count from which choose_variant picks thread_per_column: 32 x sms x max_warps_per_sm / 10,
/// times 3/2 for levels > automatic_deep_levels.
std::int64_t automatic_threshold_columns(std::int64_t levels, const gpu_capacity& c);

namespace reference {
/// One call of WSM5 on every column, on the CPU: WRF's own loop order (levels outer, the columns of a
/// row inner), OpenMP over rows, float32, no FMA contraction. `threads` <= 0: OpenMP default.
/// Deterministic (each column is computed independently of the thread count).
/// Example:
///   wsm5::domain d = wsm5::read_hdf5("in.h5");
///   for (int s = 0; s < 10; ++s) wsm5::reference::step(d, 0);
diagnostics step(domain& d, int threads = 0);
}  // namespace reference

namespace reference_contracted {
/// The reference built with FMA contraction (a*b+c with one rounding, as WRF's Fortran with -mfma
/// -ffp-contract=fast): a different but valid rounding of the same scheme, for showing that the
/// accuracy checks (compare_with_bounds, water_budget) accept valid variation. GCC on x86-64 with an
/// FMA CPU only: available() says; step() throws std::runtime_error where it is not.
bool available();
diagnostics step(domain& d, int threads = 0);
}  // namespace reference_contracted

namespace emulation {
/// One call with thread_per_column's per-column code (the GPU kernel's body: sub-step pass, pre-passes
/// for columns with many sub-steps, one sweep with the last sub-steps inline) run on the CPU, serially.
/// all_in_prepasses: every sub-step of every column runs in the pre-passes (local arrays), none in the
/// sweep, so tests reach that code on every column.
/// For tests without a GPU: built without FMA contraction it gives bitwise the reference's result.
/// Throws std::invalid_argument for nz > 256 (the GPU variants' limit).
diagnostics thread_per_column_step(domain& d, bool all_in_prepasses = false);
}  // namespace emulation

class host_fields;

/// Device-resident copy of a domain (padded pitch: nx rounded up to 32 floats, so warps read whole
/// 128-byte lines), plus per-column diagnostics. Move-only; throws gpukit::no_cuda_device without a GPU.
class gpu_domain {
public:
  explicit gpu_domain(const domain& d);
  ~gpu_domain();
  gpu_domain(const gpu_domain&) = delete;
  gpu_domain& operator=(const gpu_domain&) = delete;
  gpu_domain(gpu_domain&&) noexcept;
  gpu_domain& operator=(gpu_domain&&) noexcept;

  void upload(const domain& d);     ///< every field, host -> device (synchronous)
  void download(domain& d) const;   ///< prognostics and 2D outputs, device -> host (synchronous)
  /// One call of the scheme with the chosen GPU variant (stream-ordered, default stream), then the
  /// domain diagnostics through libreduce device-wide reductions (synchronizes).
  diagnostics step(variant v);
  /// As step() without the diagnostics reductions (no synchronization): what the timings measure.
  void step_async(variant v);
  /// Whether the device state holds a NaN or Inf (prognostics and 2D outputs): one libreduce sum per
  /// field, all into one device array, one synchronization (a float sum is non-finite when any term is;
  /// it can also overflow, so a non-finite sum is confirmed by downloading the state and scanning it on
  /// the host, which also locates the first such value). nullopt when every value is finite.
  std::optional<nonfinite_value> find_nonfinite() const;
  /// Upload, one call and download, overlapped across the row chunks of transfer_chunk_rows(ny, chunks):
  /// uploads in order on one stream, each chunk's kernel on a second once its upload is done, its
  /// download on a third once its kernel is done. variant::automatic chooses per chunk by the chunk's
  /// columns. `d` should be pinned (host_pin) for the copies to be asynchronous. Synchronizes; d then
  /// holds the result.
  void step_with_transfers(domain& d, variant v, int chunks);
  /// The same from host_fields: a chunk's uploads are 2 copies (the ten 3D fields, rain and snow) and its
  /// downloads 2 (th .. qs, the five 2D fields), against 12 and 11 from a domain. h then holds the result.
  void step_with_transfers(host_fields& h, variant v, int chunks);
  /// Bytes moved by one call if every field is read once and every output written once.
  std::int64_t min_bytes_per_call() const;
  std::int64_t pitch() const;

private:
  struct impl;
  impl* p_ = nullptr;
};

/// The row boundaries of step_with_transfers' chunks: min(chunks, ny) chunks (at least one), 0 = j_0 <
/// j_1 < ... < j_n = ny, each chunk's share 0.7 of the one before. Why shrinking: the last chunk's
/// kernel and download follow the last upload, so the tail is small; a chunk's download (0.6 of its
/// upload's bytes) ends while the next, 0.7 as large, uploads, so the downloads do not pile up at the end.
/// Empty for ny = 0.
std::vector<std::int64_t> transfer_chunk_rows(std::int64_t ny, int chunks);

/// Page-locks (cudaHostRegister) every field of a domain for its lifetime; no-op without a GPU.
class host_pin {
public:
  explicit host_pin(domain& d);
  ~host_pin();
  host_pin(const host_pin&) = delete;
  host_pin& operator=(const host_pin&) = delete;

private:
  std::vector<void*> ptrs_;
};

/// A domain's fields in one page-locked allocation (cudaMallocHost): the ten 3D fields one after another
/// in field_names_3d() order, each ny * nz * nx floats laid out as in domain, then the five 2D fields in
/// field_names_2d() order, each ny * nx. A row chunk of consecutive fields is then one strided copy, so
/// gpu_domain::step_with_transfers moves a chunk in 4 copies instead of 23 (each copy costs ~2.7 us
/// beyond its bytes). For a model that keeps its WSM5 state here between calls. Move-only; throws
/// gpukit::no_cuda_device without a GPU. Example:
///   wsm5::host_fields h(d);                       // once
///   g.step_with_transfers(h, wsm5::variant::automatic, 6);  // each call: up, compute, down
///   h.store(d);                                   // when the state is wanted as a domain
class host_fields {
public:
  explicit host_fields(const domain& d);  ///< d's shape, dt and fields
  ~host_fields();
  host_fields(const host_fields&) = delete;
  host_fields& operator=(const host_fields&) = delete;
  host_fields(host_fields&&) noexcept;
  host_fields& operator=(host_fields&&) noexcept;

  /// Every field and dt of `d`; throws std::invalid_argument when its shape differs.
  void load(const domain& d);
  /// Every field and dt into `d`, resized to this shape.
  void store(domain& d) const;
  /// The field's first value (its values as domain's vector holds them); std::invalid_argument for an
  /// unknown name.
  float* field(std::string_view name);
  const float* field(std::string_view name) const;
  std::int64_t nx() const { return nx_; }
  std::int64_t ny() const { return ny_; }
  std::int64_t nz() const { return nz_; }
  float dt() const { return dt_; }

private:
  std::int64_t nx_ = 0, ny_ = 0, nz_ = 0;
  float dt_ = 0;
  float* data_ = nullptr;
};

/// FP32 peak of the current device from its properties: SMs x 128 FP32 lanes x 2 flops x clock [flop/s].
double peak_fp32_flops();

/// Median time of a device-to-device copy of `bytes` (bandwidth ceiling measured in the same run) [s].
double measure_d2d_copy_seconds(std::int64_t bytes, int repeats);
/// Host-device link, measured with cudaMemcpyAsync between pinned host memory (cudaMallocHost) and the
/// device, `bytes` each way, median of `repeats`: one direction at a time and both at once (two streams).
struct host_link {
  double h2d_GBps = 0, d2h_GBps = 0;
  double both_seconds = 0;  ///< `bytes` up and `bytes` down concurrently
};
host_link measure_host_link(std::int64_t bytes, int repeats);
/// The host link's floor for a given traffic, measured: `up` bytes host -> device and `down` bytes
/// device -> host, one cudaMemcpyAsync each between pinned host memory and the device, on two streams at
/// once, median of `repeats` [s]. Unlike a floor from the rates (max of up / h2d, down / d2h and the
/// total at the both-at-once rate) it includes how the link shares itself between the two directions:
/// where each direction gets half of the both-at-once rate while both run, the download slows the upload.
double measure_concurrent_transfer_seconds(std::int64_t up, std::int64_t down, int repeats);
/// Bytes that step_with_transfers moves up (10 3D + 2 2D fields) and down (6 3D + 5 2D fields).
struct transfer_bytes {
  std::int64_t up = 0, down = 0;
};
transfer_bytes transfer_bytes_per_call(std::int64_t nx, std::int64_t ny, std::int64_t nz);
/// Times `repeats` calls of gpu_domain::step_async with CUDA events after `warmup` calls; returns the
/// per-call times in seconds. The domain evolves (this is what a model does).
std::vector<double> time_gpu_steps(gpu_domain& g, variant v, int warmup, int repeats);
/// As time_gpu_steps for step_with_transfers (host -> device, call, device -> host) on pinned `d`.
std::vector<double> time_gpu_steps_with_transfers(gpu_domain& g, domain& d, variant v, int chunks, int warmup,
                                                  int repeats);
std::vector<double> time_gpu_steps_with_transfers(gpu_domain& g, host_fields& h, variant v, int chunks, int warmup,
                                                  int repeats);

// ---- checks ----------------------------------------------------------------------------------------
struct field_error {
  std::string name;
  double max_abs = 0, max_rel = 0;  ///< rel = |a - b| / max(|b|, floor)
  double max_excess = 0;            ///< max of |a - b| - rel_allowance * |b| (what an absolute bound must cover)
  std::int64_t worst = -1;          ///< index of the largest |a - b|
};
/// Field-by-field comparison of a against the reference b (3D prognostics as th, qv..qs; 2D rain, snow,
/// rainncv, snowncv, sr). `rel_allowance`: the relative part of a mixed bound |a - b| <= abs + rel |b|.
std::vector<field_error> compare(const domain& a, const domain& b, double rel_allowance = 0);

/// Bounds |gpu - ref| <= abs + rel |ref| per field for a GPU variant against the CPU reference after
/// `calls` calls, growing linearly with the calls. Derivation: tests/wsm5/test_wsm5.cpp ("Tolerances")
/// and libwsm5/README.md ("Accuracy"). Per call: q 8e-9 kg/kg, theta 2.6e-4 K, precipitation 1e-6 mm,
/// relative part 5e-7; the precipitation fields' relative part adds gpu_precip_extra_rel(). sr is not
/// compared as a ratio (ill-conditioned where the precipitation is ~1e-12 mm) but weighted by the
/// reference's rainncv: |sr_a - sr_b| (rainncv_b + 1e-12) within the bounds of snowncv and rainncv plus
/// the divisions' rounding (derivation in checks.cpp); `sr` is the slack beyond that allowance (0).
struct gpu_bounds {
  double q = 0, th = 0, precip = 0, sr = 0, rel = 0, precip_rel = 0;
};
gpu_bounds gpu_vs_reference_bounds(int calls);

/// Extra relative error per call of the surface precipitation that the CUDA build's own arithmetic
/// allows for: 0 with IEEE division/sqrt and powf (WSM5_GPU_PREC_DIV_SQRT=ON, WSM5_GPU_FAST_POW=OFF);
/// otherwise the surface flux chain (rain slope power, sqrt, two divisions) carries up to ~20 float ulp,
/// 20 * 2^-23 = 2.4e-6 relative.
double gpu_precip_extra_rel();

/// compare() with each field's own bound: max_excess is measured beyond the field's relative part
/// (precip_rel for rain, snow, rainncv, snowncv; rel otherwise; for sr beyond the precipitation-weighted
/// allowance, in mm); `ok` turns false when any field's max_excess exceeds its absolute part.
std::vector<field_error> compare_with_bounds(const domain& gpu, const domain& ref, const gpu_bounds& b, bool& ok);

/// compare_with_bounds with rare outlier columns allowed. Where a threshold decision of the scheme lies
/// within rounding of its threshold, two valid roundings take different branches and differ by the rate's
/// jump (the FMA-contracted reference against the reference: 2-3 columns of CONUS 433 x 308 x 35 beyond
/// the bounds after 2-5 calls; the measurements are in checks.cpp). So up to columns / 2000 columns may
/// be beyond the bounds, each within a branch's jump: per mixing ratio its bound plus 5 % of the column's
/// largest condensate (qc + qr + qi + qs), for theta its bound plus the latent heat of the water that
/// differs (xls / cpd over the column's smallest pii), for the surface amounts their bound plus 5 % of the
/// amount. Fewer than 2000 columns: no outlier. `summary` says what the outliers were, or why it failed.
struct check_result {
  std::vector<field_error> errors;       ///< compare_with_bounds' per-field errors (every column)
  std::int64_t columns_beyond = 0;       ///< columns where some field is beyond its bound (counted up to the failure)
  std::int64_t outliers_allowed = 0;     ///< columns / 2000
  std::int64_t worst_column = -1;        ///< the column that failed, or the first outlier
  std::string worst_field;               ///< its field furthest beyond what it was allowed
  double worst_excess = 0;               ///< that field's max |gpu - ref| beyond the relative part
  double worst_allowed = 0;              ///< its bound, or its outlier allowance
  std::string summary;                   ///< one line on the outliers or the failure ("" when within the bounds)
  bool ok = false;
};
check_result check_against_reference(const domain& gpu, const domain& ref, const gpu_bounds& b);

/// Per-column water budget: column water sum_k den*(qv+qc+qr+qi+qs)*delz before minus after minus the
/// change of `rain` [kg m-2], in double. The bound per call: every stored mixing ratio is rounded at most
/// ~16 times per call, each rounding <= u|q| (u = 2^-24), so |residual| <= 16 u (W_before + W_after).
struct budget_result {
  double max_abs_residual = 0;
  double bound = 0;
  std::int64_t worst_column = -1;  ///< the largest |residual|, or the first non-finite column
  std::int64_t nonfinite_columns = 0;  ///< columns whose residual is NaN or Inf (each fails the budget)
  bool ok = true;
};
double column_water(const domain& d, std::int64_t col);
/// `calls`: how many calls separate `before` and `after` (the bound grows linearly).
budget_result water_budget(const domain& before, const domain& after, int calls = 1);

}  // namespace wsm5
