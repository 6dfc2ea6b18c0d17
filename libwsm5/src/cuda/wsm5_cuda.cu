// Dispatch of the WSM5 CUDA variants: device domain (pitched), launches, libreduce diagnostics,
// transfers overlapped with compute across row chunks, and event timing.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <vector>

#include "gpukit/cuda_timer.hpp"
#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"
#include "reduce/reduce.hpp"
#include "wsm5/wsm5.hpp"
#include "wsm5_kernels.cuh"

namespace wsm5 {

struct gpu_domain::impl {
  std::int64_t nx = 0, ny = 0, nz = 0, pitch = 0;
  float dt = 0;
  // The ten 3D fields in one allocation, in field_names_3d order (p den delz pii th qv qc qr qi qs), each
  // n3 = ny nz pitch floats; the five 2D fields (rain snow rainncv snowncv sr) in another, each n2 = ny
  // pitch: consecutive fields are one strided copy away from host_fields.
  std::int64_t n3 = 0, n2 = 0;
  gpukit::device_buffer<float> f3, f2;
  gpukit::device_buffer<std::int32_t> mstep;
  gpukit::device_buffer<float> resid;
  gpukit::device_buffer<float> field_sums;  // find_nonfinite: one sum per output field
  std::optional<reduce::workspace> sum_ws;  // its workspace (allocated with the domain, once a device is known)
  std::array<cudaStream_t, 3> streams{};  // step_with_transfers: uploads, kernels, downloads
  std::vector<cudaEvent_t> events;        // step_with_transfers: two per chunk
  void ensure_events(std::size_t count) {
    while (events.size() < count) {
      cudaEvent_t e = nullptr;
      GPUKIT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      events.push_back(e);
    }
  }
  /// step_with_transfers over the row chunks `rows` (transfer_chunk_rows): upload(j0, r, stream) enqueues
  /// a chunk's uploads, download(j0, r, stream) its downloads. Three streams: every upload in order on
  /// one, each chunk's kernel on a second once its upload is done (event), each chunk's download on a
  /// third once its kernel is done. The uploads never wait for a download, so the host link's upward
  /// direction, the bottleneck (188 MB up against 115 MB down on CONUS), stays busy from the first byte
  /// to the last. Synchronizes.
  template <class Upload, class Download>
  void transfer_pipeline(const std::vector<std::int64_t>& rows, variant v, Upload upload, Download download) {
    const std::size_t n = rows.empty() ? 0 : rows.size() - 1;
    ensure_events(2 * n);
    cudaStream_t up = streams[0], compute = streams[1], down = streams[2];
    for (std::size_t c = 0; c < n; ++c) {
      const std::int64_t j0 = rows[c], r = rows[c + 1] - rows[c];
      upload(j0, r, up);
      GPUKIT_CUDA_CHECK(cudaEventRecord(events[2 * c], up));
      GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(compute, events[2 * c], 0));
      launch(v, static_cast<int>(j0), static_cast<int>(r), compute);
      GPUKIT_CUDA_CHECK(cudaEventRecord(events[2 * c + 1], compute));
      GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(down, events[2 * c + 1], 0));
      download(j0, r, down);
    }
    for (cudaStream_t st : {up, compute, down}) GPUKIT_CUDA_CHECK(cudaStreamSynchronize(st));
  }

  float* d3(const std::string& n) {
    const auto& names = field_names_3d();
    return f3.data() + (std::find(names.begin(), names.end(), n) - names.begin()) * n3;
  }
  float* d2(const std::string& n) {
    const auto& names = field_names_2d();
    return f2.data() + (std::find(names.begin(), names.end(), n) - names.begin()) * n2;
  }
  detail::view make_view(int j0, int rows) {
    detail::view v{};
    v.th = d3("th"); v.qv = d3("qv"); v.qc = d3("qc"); v.qr = d3("qr"); v.qi = d3("qi"); v.qs = d3("qs");
    v.p = d3("p"); v.den = d3("den"); v.delz = d3("delz"); v.pii = d3("pii");
    v.rain = d2("rain"); v.snow = d2("snow"); v.rainncv = d2("rainncv"); v.snowncv = d2("snowncv"); v.sr = d2("sr");
    v.mstep_max = mstep.data();
    v.resid = resid.data();
    v.nx = static_cast<int>(nx);
    v.nz = static_cast<int>(nz);
    v.pitch = pitch;
    v.j0 = j0;
    v.rows = rows;
    v.dt = dt;
    return v;
  }
  gpu_capacity capacity;  // for variant::automatic
  void launch(variant var, int j0, int rows, cudaStream_t s) {
    if (rows <= 0 || nx == 0 || nz == 0) return;
    // automatic: by the columns of this launch (a row chunk of step_with_transfers is a small domain).
    if (var == variant::automatic) var = choose_variant(nx * rows, nz, capacity);
    const detail::view v = make_view(j0, rows);
    if (var == variant::thread_per_column) {
      // Blocks of 128 columns x 1-5 rows (tpc_launch.hpp, tpc_rows_per_block). Local arrays of 64 levels up
      // to nz = 64 (the tuned case: a smaller stack reservation), of 256 above (thread_per_column.hpp,
      // max_levels).
      const int block_rows = detail::tpc_rows_per_block(nx, rows, capacity.sms);
      const detail::tpc_launch_shape shape = detail::tpc_shape(nx, rows, block_rows);
      const dim3 block(detail::tpc_block, static_cast<unsigned>(block_rows)),
          grid(static_cast<unsigned>(shape.blocks_x), static_cast<unsigned>(shape.blocks_y));
      if (nz <= detail::tpc_shallow_levels)
        detail::thread_per_column_kernel<detail::tpc_shallow_levels><<<grid, block, 0, s>>>(v);
      else
        detail::thread_per_column_kernel<detail::max_levels><<<grid, block, 0, s>>>(v);
      GPUKIT_CHECK_LAUNCH();
    } else if (var == variant::warp_per_column) {
      // 256 threads: 8 (W = 32) or 16 (W = 16) consecutive columns per block, whose strided level loads
      // share L1 sectors. W = 16 for 32 < nz <= 48: 3 levels per lane use 35 of 48 lanes-slots at nz = 35
      // instead of 35 of 64.
      constexpr int threads = 256;
      const auto grid_for = [&](int w) {
        const int cols = threads / w;
        return dim3(static_cast<unsigned>((nx + cols - 1) / cols), static_cast<unsigned>(rows));
      };
      // Deeper columns: 4 (nz <= 128) or 8 (nz <= 256 = max_levels) levels per lane, spilling.
      if (nz <= 32) detail::warp_per_column_kernel<32, 1><<<grid_for(32), threads, 0, s>>>(v);
      else if (WSM5_WPC_WIDTH == 16 && nz <= 48) detail::warp_per_column_kernel<16, 3><<<grid_for(16), threads, 0, s>>>(v);
      else if (nz <= 64) detail::warp_per_column_kernel<32, 2><<<grid_for(32), threads, 0, s>>>(v);
      else if (nz <= 128) detail::warp_per_column_kernel<32, 4><<<grid_for(32), threads, 0, s>>>(v);
      else detail::warp_per_column_kernel<32, 8><<<grid_for(32), threads, 0, s>>>(v);
      GPUKIT_CHECK_LAUNCH();
    } else {
      throw std::invalid_argument("gpu_domain: variant cpu is not a GPU variant");
    }
  }
};

gpu_domain::gpu_domain(const domain& d) : p_(new impl) {
  if (!reduce::cuda_device_available()) {
    delete p_;
    p_ = nullptr;
    throw gpukit::no_cuda_device(reduce::cuda_unavailable_reason());
  }
  try {
    if (d.nz > detail::max_levels)
      throw std::invalid_argument("WSM5 GPU variants support at most " + std::to_string(detail::max_levels) +
                                  " levels, the domain has " + std::to_string(d.nz));
    if (d.nx > (std::int64_t{1} << 30) || d.ny > 65535)
      throw std::invalid_argument("WSM5 GPU variants: nx must be < 2^30 and ny <= 65535 (grid y)");
    p_->nx = d.nx; p_->ny = d.ny; p_->nz = d.nz; p_->dt = d.dt;
    p_->pitch = (d.nx + 31) / 32 * 32;  // 128-byte rows
    const std::int64_t n3 = d.ny * d.nz * p_->pitch, n2 = d.ny * p_->pitch;
    p_->n3 = n3;
    p_->n2 = n2;
    p_->f3 = gpukit::device_buffer<float>(10 * n3);
    p_->f3.fill_bytes(0);
    p_->f2 = gpukit::device_buffer<float>(5 * n2);
    p_->f2.fill_bytes(0);  // padding stays 0
    p_->mstep = gpukit::device_buffer<std::int32_t>(n2);
    p_->mstep.fill_bytes(0);
    p_->resid = gpukit::device_buffer<float>(n2);
    p_->resid.fill_bytes(0);
    p_->field_sums = gpukit::device_buffer<float>(11);
    p_->sum_ws.emplace();
    p_->capacity = current_gpu_capacity();
    for (auto& s : p_->streams) GPUKIT_CUDA_CHECK(cudaStreamCreate(&s));
    upload(d);
  } catch (...) {
    delete p_;
    p_ = nullptr;
    throw;
  }
}

gpu_domain::~gpu_domain() {
  if (p_) {
    for (auto s : p_->streams)
      if (s) cudaStreamDestroy(s);
    for (auto e : p_->events) cudaEventDestroy(e);
  }
  delete p_;
}
gpu_domain::gpu_domain(gpu_domain&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
gpu_domain& gpu_domain::operator=(gpu_domain&& o) noexcept {
  if (this != &o) {
    this->~gpu_domain();
    p_ = o.p_;
    o.p_ = nullptr;
  }
  return *this;
}

std::int64_t gpu_domain::pitch() const { return p_->pitch; }

namespace {
void copy_rows(float* dst, std::int64_t dpitch, const float* src, std::int64_t spitch, std::int64_t width,
               std::int64_t rows, cudaMemcpyKind kind, cudaStream_t s) {
  if (rows <= 0 || width <= 0) return;
  GPUKIT_CUDA_CHECK(cudaMemcpy2DAsync(dst, static_cast<std::size_t>(dpitch) * sizeof(float), src,
                                      static_cast<std::size_t>(spitch) * sizeof(float),
                                      static_cast<std::size_t>(width) * sizeof(float), static_cast<std::size_t>(rows),
                                      kind, s));
}
}  // namespace

void gpu_domain::upload(const domain& d) {
  if (d.nx != p_->nx || d.ny != p_->ny || d.nz != p_->nz) throw std::invalid_argument("gpu_domain::upload: shape differs");
  p_->dt = d.dt;
  for (const auto& n : field_names_3d())
    copy_rows(p_->d3(n), p_->pitch, field(d, n).data(), d.nx, d.nx, d.ny * d.nz, cudaMemcpyHostToDevice, nullptr);
  for (const auto& n : field_names_2d())
    copy_rows(p_->d2(n), p_->pitch, field(d, n).data(), d.nx, d.nx, d.ny, cudaMemcpyHostToDevice, nullptr);
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

void gpu_domain::download(domain& d) const {
  for (const auto& n : {"th", "qv", "qc", "qr", "qi", "qs"})
    copy_rows(field(d, n).data(), d.nx, p_->d3(n), p_->pitch, d.nx, d.ny * d.nz, cudaMemcpyDeviceToHost, nullptr);
  for (const auto& n : field_names_2d())
    copy_rows(field(d, n).data(), d.nx, p_->d2(n), p_->pitch, d.nx, d.ny, cudaMemcpyDeviceToHost, nullptr);
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

void gpu_domain::step_async(variant v) { p_->launch(v, 0, static_cast<int>(p_->ny), nullptr); }

diagnostics gpu_domain::step(variant v) {
  step_async(v);
  diagnostics out;
  const std::int64_t n2 = p_->ny * p_->pitch;  // padding holds zeros: neutral for sum and for max >= 0
  out.rain_total = reduce::sum(p_->d2("rainncv"), n2, static_cast<reduce::stream_t>(nullptr));
  out.snow_total = reduce::sum(p_->d2("snowncv"), n2, static_cast<reduce::stream_t>(nullptr));
  out.max_substeps = reduce::max(p_->mstep.data(), n2, static_cast<reduce::stream_t>(nullptr));
  out.max_budget_residual = reduce::max(p_->resid.data(), n2, static_cast<reduce::stream_t>(nullptr));
  return out;
}

std::optional<nonfinite_value> gpu_domain::find_nonfinite() const {
  // 6 prognostics and 5 2D outputs; the padding holds zeros (finite). A sum of floats is NaN or Inf when
  // any term is; a finite state whose sum overflows is told apart by the host scan below.
  const std::int64_t n3 = p_->ny * p_->nz * p_->pitch, n2 = p_->ny * p_->pitch;
  const char* const f3[] = {"th", "qv", "qc", "qr", "qi", "qs"};
  int slot = 0;
  for (const char* n : f3)
    reduce::sum(p_->d3(n), n3, p_->field_sums.data() + slot++, *p_->sum_ws, static_cast<reduce::stream_t>(nullptr));
  for (const auto& n : field_names_2d())
    reduce::sum(p_->d2(n), n2, p_->field_sums.data() + slot++, *p_->sum_ws, static_cast<reduce::stream_t>(nullptr));
  float sums[11];
  GPUKIT_CUDA_CHECK(cudaMemcpy(sums, p_->field_sums.data(), sizeof(sums), cudaMemcpyDeviceToHost));
  if (std::all_of(std::begin(sums), std::end(sums), [](float x) { return std::isfinite(x); })) return std::nullopt;
  domain d;
  d.resize(p_->nx, p_->ny, p_->nz);
  download(d);
  return wsm5::find_nonfinite(d);
}

void gpu_domain::step_with_transfers(domain& d, variant v, int chunks) {
  if (d.nx != p_->nx || d.ny != p_->ny || d.nz != p_->nz) throw std::invalid_argument("step_with_transfers: shape differs");
  p_->dt = d.dt;
  const std::int64_t pitch = p_->pitch, nx = d.nx, nz = d.nz;
  // One copy per field and chunk: a copy costs ~2.7 us beyond its bytes, and neither
  // cudaMemcpy3DBatchAsync nor a second stream per direction hides it (bench/experiments/host_copies);
  // host_fields, whose fields share one allocation, needs 4 copies a chunk.
  const auto upload = [&](std::int64_t j0, std::int64_t r, cudaStream_t s) {
    for (const auto& f : field_names_3d())
      copy_rows(p_->d3(f) + j0 * nz * pitch, pitch, field(d, f).data() + j0 * nz * nx, nx, nx, r * nz,
                cudaMemcpyHostToDevice, s);
    for (const auto& f : {"rain", "snow"})
      copy_rows(p_->d2(f) + j0 * pitch, pitch, field(d, f).data() + j0 * nx, nx, nx, r, cudaMemcpyHostToDevice, s);
  };
  const auto download = [&](std::int64_t j0, std::int64_t r, cudaStream_t s) {
    for (const auto& f : {"th", "qv", "qc", "qr", "qi", "qs"})
      copy_rows(field(d, f).data() + j0 * nz * nx, nx, p_->d3(f) + j0 * nz * pitch, pitch, nx, r * nz,
                cudaMemcpyDeviceToHost, s);
    for (const auto& f : field_names_2d())
      copy_rows(field(d, f).data() + j0 * nx, nx, p_->d2(f) + j0 * pitch, pitch, nx, r, cudaMemcpyDeviceToHost, s);
  };
  p_->transfer_pipeline(transfer_chunk_rows(d.ny, chunks), v, upload, download);
}

namespace {
/// Rows [row0, row0 + rows) of `fields` consecutive fields of `field_rows` rows each (a field's rows
/// follow the one before's), between pitched layouts: one cudaMemcpy3DAsync, the fields as its depth.
void copy_field_rows(float* dst, std::int64_t dpitch, const float* src, std::int64_t spitch, std::int64_t width,
                     std::int64_t field_rows, std::int64_t row0, std::int64_t rows, int fields, cudaMemcpyKind kind,
                     cudaStream_t s) {
  if (rows <= 0 || width <= 0 || fields <= 0) return;
  const auto bytes = [](std::int64_t floats) { return static_cast<std::size_t>(floats) * sizeof(float); };
  cudaMemcpy3DParms q{};
  q.srcPtr = make_cudaPitchedPtr(const_cast<float*>(src), bytes(spitch), bytes(width), static_cast<std::size_t>(field_rows));
  q.dstPtr = make_cudaPitchedPtr(dst, bytes(dpitch), bytes(width), static_cast<std::size_t>(field_rows));
  q.srcPos = make_cudaPos(0, static_cast<std::size_t>(row0), 0);
  q.dstPos = q.srcPos;
  q.extent = make_cudaExtent(bytes(width), static_cast<std::size_t>(rows), static_cast<std::size_t>(fields));
  q.kind = kind;
  GPUKIT_CUDA_CHECK(cudaMemcpy3DAsync(&q, s));
}
}  // namespace

void gpu_domain::step_with_transfers(host_fields& h, variant v, int chunks) {
  if (h.nx() != p_->nx || h.ny() != p_->ny || h.nz() != p_->nz)
    throw std::invalid_argument("step_with_transfers: shape differs");
  p_->dt = h.dt();
  const std::int64_t pitch = p_->pitch, nx = p_->nx, nz = p_->nz, ny = p_->ny;
  // Up: the ten 3D fields (p .. qs) and rain, snow; down: th .. qs (the last six 3D fields) and the five
  // 2D fields. Each a run of consecutive fields in both layouts: 2 copies a direction and chunk.
  const auto upload = [&](std::int64_t j0, std::int64_t r, cudaStream_t s) {
    copy_field_rows(p_->d3("p"), pitch, h.field("p"), nx, nx, ny * nz, j0 * nz, r * nz, 10, cudaMemcpyHostToDevice, s);
    copy_field_rows(p_->d2("rain"), pitch, h.field("rain"), nx, nx, ny, j0, r, 2, cudaMemcpyHostToDevice, s);
  };
  const auto download = [&](std::int64_t j0, std::int64_t r, cudaStream_t s) {
    copy_field_rows(h.field("th"), nx, p_->d3("th"), pitch, nx, ny * nz, j0 * nz, r * nz, 6, cudaMemcpyDeviceToHost, s);
    copy_field_rows(h.field("rain"), nx, p_->d2("rain"), pitch, nx, ny, j0, r, 5, cudaMemcpyDeviceToHost, s);
  };
  p_->transfer_pipeline(transfer_chunk_rows(ny, chunks), v, upload, download);
}

std::int64_t gpu_domain::min_bytes_per_call() const {
  // read 10 3D + 2 2D fields, write 6 3D + 5 2D fields, 4 bytes each
  return 4 * (16 * p_->nx * p_->ny * p_->nz + 7 * p_->nx * p_->ny);
}

host_pin::host_pin(domain& d) {
  if (!reduce::cuda_device_available()) return;
  for (const auto& n : field_names_3d()) ptrs_.push_back(field(d, n).data());
  for (const auto& n : field_names_2d()) ptrs_.push_back(field(d, n).data());
  std::vector<std::size_t> sizes;
  for (const auto& n : field_names_3d()) sizes.push_back(field(d, n).size() * sizeof(float));
  for (const auto& n : field_names_2d()) sizes.push_back(field(d, n).size() * sizeof(float));
  std::vector<void*> done;
  for (std::size_t k = 0; k < ptrs_.size(); ++k) {
    if (sizes[k] == 0) continue;
    const cudaError_t e = cudaHostRegister(ptrs_[k], sizes[k], cudaHostRegisterDefault);
    if (e != cudaSuccess) {
      for (void* p : done) cudaHostUnregister(p);
      ptrs_.clear();
      GPUKIT_CUDA_CHECK(e);
    }
    done.push_back(ptrs_[k]);
  }
  ptrs_ = done;
}
host_pin::~host_pin() {
  for (void* p : ptrs_) cudaHostUnregister(p);
}

namespace {
/// Offset of `name` in host_fields' allocation (floats); -1 for an unknown name.
std::int64_t host_field_offset(std::string_view name, std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  const auto& n3 = field_names_3d();
  const auto& n2 = field_names_2d();
  const auto i3 = std::find(n3.begin(), n3.end(), name);
  if (i3 != n3.end()) return (i3 - n3.begin()) * ny * nz * nx;
  const auto i2 = std::find(n2.begin(), n2.end(), name);
  if (i2 != n2.end()) return static_cast<std::int64_t>(n3.size()) * ny * nz * nx + (i2 - n2.begin()) * ny * nx;
  return -1;
}
}  // namespace

host_fields::host_fields(const domain& d) : nx_(d.nx), ny_(d.ny), nz_(d.nz), dt_(d.dt) {
  if (!reduce::cuda_device_available()) throw gpukit::no_cuda_device(reduce::cuda_unavailable_reason());
  const std::int64_t floats = (10 * nz_ + 5) * ny_ * nx_;
  GPUKIT_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), static_cast<std::size_t>(std::max<std::int64_t>(floats, 1)) * sizeof(float)));
  try {
    load(d);
  } catch (...) {  // a field of the wrong size: no destructor runs for a throwing constructor
    cudaFreeHost(data_);
    throw;
  }
}
host_fields::~host_fields() {
  if (data_) cudaFreeHost(data_);
}
host_fields::host_fields(host_fields&& o) noexcept : nx_(o.nx_), ny_(o.ny_), nz_(o.nz_), dt_(o.dt_), data_(o.data_) {
  o.data_ = nullptr;
}
host_fields& host_fields::operator=(host_fields&& o) noexcept {
  if (this != &o) {
    if (data_) cudaFreeHost(data_);
    nx_ = o.nx_; ny_ = o.ny_; nz_ = o.nz_; dt_ = o.dt_; data_ = o.data_;
    o.data_ = nullptr;
  }
  return *this;
}
float* host_fields::field(std::string_view name) {
  const std::int64_t at = host_field_offset(name, nx_, ny_, nz_);
  if (at < 0) throw std::invalid_argument("host_fields: no field named " + std::string(name));
  return data_ + at;
}
const float* host_fields::field(std::string_view name) const { return const_cast<host_fields*>(this)->field(name); }
void host_fields::load(const domain& d) {
  if (d.nx != nx_ || d.ny != ny_ || d.nz != nz_) throw std::invalid_argument("host_fields::load: shape differs");
  for (const auto& n : field_names_3d())
    if (static_cast<std::int64_t>(wsm5::field(d, n).size()) != ny_ * nz_ * nx_)
      throw std::invalid_argument("host_fields::load: field " + n + " has the wrong size");
  for (const auto& n : field_names_2d())
    if (static_cast<std::int64_t>(wsm5::field(d, n).size()) != ny_ * nx_)
      throw std::invalid_argument("host_fields::load: field " + n + " has the wrong size");
  dt_ = d.dt;
  for (const auto& n : field_names_3d()) std::copy(wsm5::field(d, n).begin(), wsm5::field(d, n).end(), field(n));
  for (const auto& n : field_names_2d()) std::copy(wsm5::field(d, n).begin(), wsm5::field(d, n).end(), field(n));
}
void host_fields::store(domain& d) const {
  d.resize(nx_, ny_, nz_);  // every field of this shape, whatever d held
  d.dt = dt_;
  for (const auto& n : field_names_3d()) std::copy(field(n), field(n) + ny_ * nz_ * nx_, wsm5::field(d, n).begin());
  for (const auto& n : field_names_2d()) std::copy(field(n), field(n) + ny_ * nx_, wsm5::field(d, n).begin());
}

double gpu_precip_extra_rel() {
  // This TU is compiled with the same flags as the kernels, so these macros describe their arithmetic.
#if defined(WSM5_GPU_FAST_POW) || defined(WSM5_GPU_APPROX_DIV_SQRT)
  return 20.0 * 0x1p-23;  // ~20 float ulp in the surface flux chain (wsm5.hpp)
#else
  return 0.0;
#endif
}

gpu_capacity current_gpu_capacity() {
  if (!reduce::cuda_device_available()) throw gpukit::no_cuda_device(reduce::cuda_unavailable_reason());
  int dev = 0, threads = 0;
  gpu_capacity c;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&dev));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&c.sms, cudaDevAttrMultiProcessorCount, dev));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  c.max_warps_per_sm = threads / 32;
  return c;
}

double peak_fp32_flops() {
  int dev = 0, sms = 0, khz = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&dev));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
  return static_cast<double>(sms) * 128.0 * 2.0 * static_cast<double>(khz) * 1e3;  // 128 FP32 lanes/SM (sm_80+)
}

double measure_d2d_copy_seconds(std::int64_t bytes, int repeats) {
  return gpukit::measure_copy_ceiling(static_cast<std::size_t>(bytes), nullptr, {2, repeats}).t.median_us * 1e-6;
}

namespace {
/// Median of `repeats` timings (after 2 warm-ups) of `body` between events on stream `s0`.
template <class Body>
double median_event_seconds(int repeats, cudaStream_t s0, Body body) {
  gpukit::cuda_timer timer(s0);
  return timer.time(body, {2, repeats}).median_us * 1e-6;
}

struct pinned_bytes {
  void* p = nullptr;
  explicit pinned_bytes(std::size_t n) { GPUKIT_CUDA_CHECK(cudaMallocHost(&p, n)); }
  ~pinned_bytes() { cudaFreeHost(p); }
  pinned_bytes(const pinned_bytes&) = delete;
  pinned_bytes& operator=(const pinned_bytes&) = delete;
};
}  // namespace

namespace {
/// Median time of `up` bytes host -> device and `down` bytes device -> host at once: one cudaMemcpyAsync
/// each, the download on a second stream forked from and joined back to the timing stream by events.
double concurrent_copy_seconds(char* d_up, const void* h_up, std::size_t up, void* h_down, const char* d_down,
                               std::size_t down, int repeats) {
  cudaStream_t s1;
  GPUKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  cudaEvent_t fork, join;
  GPUKIT_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  GPUKIT_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  const double s = median_event_seconds(repeats, nullptr, [&] {
    GPUKIT_CUDA_CHECK(cudaEventRecord(fork, nullptr));
    GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(s1, fork, 0));
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(h_down, d_down, down, cudaMemcpyDeviceToHost, s1));
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(d_up, h_up, up, cudaMemcpyHostToDevice, nullptr));
    GPUKIT_CUDA_CHECK(cudaEventRecord(join, s1));
    GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(nullptr, join, 0));
  });
  cudaEventDestroy(fork);
  cudaEventDestroy(join);
  cudaStreamDestroy(s1);
  return s;
}
}  // namespace

host_link measure_host_link(std::int64_t bytes, int repeats) {
  const auto n = static_cast<std::size_t>(bytes);
  pinned_bytes up_src(n), down_dst(n);
  std::memset(up_src.p, 1, n);
  gpukit::device_buffer<char> d_up(bytes), d_down(bytes);
  d_down.fill_bytes(2);
  host_link out;
  const double h2d = median_event_seconds(repeats, nullptr, [&] {
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(d_up.data(), up_src.p, n, cudaMemcpyHostToDevice, nullptr));
  });
  const double d2h = median_event_seconds(repeats, nullptr, [&] {
    GPUKIT_CUDA_CHECK(cudaMemcpyAsync(down_dst.p, d_down.data(), n, cudaMemcpyDeviceToHost, nullptr));
  });
  out.both_seconds = concurrent_copy_seconds(d_up.data(), up_src.p, n, down_dst.p, d_down.data(), n, repeats);
  out.h2d_GBps = static_cast<double>(bytes) / h2d / 1e9;
  out.d2h_GBps = static_cast<double>(bytes) / d2h / 1e9;
  return out;
}

double measure_concurrent_transfer_seconds(std::int64_t up, std::int64_t down, int repeats) {
  const auto nu = static_cast<std::size_t>(up), nd = static_cast<std::size_t>(down);
  pinned_bytes up_src(std::max<std::size_t>(nu, 1)), down_dst(std::max<std::size_t>(nd, 1));
  std::memset(up_src.p, 1, nu);
  gpukit::device_buffer<char> d_up(std::max<std::int64_t>(up, 1)), d_down(std::max<std::int64_t>(down, 1));
  d_down.fill_bytes(2);
  return concurrent_copy_seconds(d_up.data(), up_src.p, nu, down_dst.p, d_down.data(), nd, repeats);
}

transfer_bytes transfer_bytes_per_call(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  const std::int64_t f3 = 4 * nx * ny * nz, f2 = 4 * nx * ny;
  return {10 * f3 + 2 * f2, 6 * f3 + 5 * f2};
}

namespace {
/// Per-call times of `call` in seconds: `warmup` calls, then `repeats` timed with CUDA events.
template <class Call>
std::vector<double> seconds_per_call(Call call, int warmup, int repeats) {
  gpukit::cuda_timer timer(nullptr);
  std::vector<double> t = timer.samples(call, {warmup, repeats});
  for (double& x : t) x *= 1e-6;
  return t;
}
}  // namespace

std::vector<double> time_gpu_steps(gpu_domain& g, variant v, int warmup, int repeats) {
  return seconds_per_call([&] { g.step_async(v); }, warmup, repeats);
}
std::vector<double> time_gpu_steps_with_transfers(gpu_domain& g, domain& d, variant v, int chunks, int warmup,
                                                  int repeats) {
  return seconds_per_call([&] { g.step_with_transfers(d, v, chunks); }, warmup, repeats);
}
std::vector<double> time_gpu_steps_with_transfers(gpu_domain& g, host_fields& h, variant v, int chunks, int warmup,
                                                  int repeats) {
  return seconds_per_call([&] { g.step_with_transfers(h, v, chunks); }, warmup, repeats);
}

}  // namespace wsm5
