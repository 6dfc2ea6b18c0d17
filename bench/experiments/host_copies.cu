// host_copies: the host link under WSM5's with-transfers copies (libwsm5 gpu_domain::step_with_transfers),
// CONUS sizes (433 x 308 x 35: 188 MB up, 115 MB down, float), pinned host memory: one contiguous copy each
// way, the same as 2D copies of 1,732-byte rows into 448-float pitched rows (as the kernels' layout has
// them), both directions at once, the device-side 2D copies a staging buffer would add, the copies of
// 8 row chunks x 16 fields on 2 streams, contiguous and 2D, without kernels; what one copy costs beyond its
// bytes (k copies, one call each or batched); and the pipeline of uploads, a stand-in kernel and downloads
// on three streams with equal or shrinking chunks. Median of 7 (events).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)
// One thread spinning for `ns` nanoseconds (%globaltimer): a stand-in for a chunk's kernel.
__global__ void spin(long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (static_cast<long long>(t - t0) < ns);
}

// Row copies done by the SMs instead of the copy engines: each warp copies whole rows of `width` floats
// between pitched layouts, one side in pinned host memory (mapped: the same pointer on the device).
struct row_copy {
  const float* src;
  float* dst;
  long long spitch, dpitch, rows;
};
struct row_copies {
  row_copy c[12];
  int count;
  int width;
};
__global__ void copy_rows_kernel(row_copies list) {
  const int lane = threadIdx.x % 32;
  const long long warp = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
  const long long warps = gridDim.x * static_cast<long long>(blockDim.x) / 32;
  long long total = 0;
  for (int k = 0; k < list.count; ++k) total += list.c[k].rows;
  for (long long r = warp; r < total; r += warps) {
    int k = 0;
    long long rr = r;
    while (rr >= list.c[k].rows) rr -= list.c[k].rows, ++k;
    const float* s = list.c[k].src + rr * list.c[k].spitch;
    float* d = list.c[k].dst + rr * list.c[k].dpitch;
    for (int x = lane; x < list.width; x += 32) d[x] = __ldcv(s + x);
  }
}

int main() {
  const size_t nx = 433, pitch = 448, rows_up = 308 * 35 * 10 + 308 * 2, rows_dn = 308 * 35 * 6 + 308 * 5;
  const size_t up = rows_up * nx * 4, dn = rows_dn * nx * 4;
  float *h_up, *h_dn, *d_up, *d_dn, *s_up, *s_dn;
  CK(cudaMallocHost(&h_up, up)); CK(cudaMallocHost(&h_dn, dn));
  CK(cudaMalloc(&d_up, rows_up * pitch * 4)); CK(cudaMalloc(&d_dn, rows_dn * pitch * 4));
  CK(cudaMalloc(&s_up, up)); CK(cudaMalloc(&s_dn, dn));
  for (size_t i = 0; i < up / 4; ++i) h_up[i] = static_cast<float>(i % 1048573);
  cudaStream_t a, b; CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  auto time = [&](const char* name, auto f) {
    std::vector<float> t;
    for (int k = 0; k < 7; ++k) {
      CK(cudaDeviceSynchronize());
      CK(cudaEventRecord(e0, 0));
      f();
      CK(cudaStreamSynchronize(a)); CK(cudaStreamSynchronize(b));
      CK(cudaEventRecord(e1, 0)); CK(cudaEventSynchronize(e1));
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    std::printf("%-48s %.3f ms (min %.3f)\n", name, t[3], t[0]);
  };
  time("up contiguous 1 copy", [&] { CK(cudaMemcpyAsync(d_up, h_up, up, cudaMemcpyHostToDevice, a)); });
  time("up 2D rows 1732 B", [&] { CK(cudaMemcpy2DAsync(d_up, pitch * 4, h_up, nx * 4, nx * 4, rows_up, cudaMemcpyHostToDevice, a)); });
  time("down contiguous 1 copy", [&] { CK(cudaMemcpyAsync(h_dn, d_dn, dn, cudaMemcpyDeviceToHost, a)); });
  time("down 2D rows 1732 B", [&] { CK(cudaMemcpy2DAsync(h_dn, nx * 4, d_dn, pitch * 4, nx * 4, rows_dn, cudaMemcpyDeviceToHost, a)); });
  time("both contiguous", [&] { CK(cudaMemcpyAsync(d_up, h_up, up, cudaMemcpyHostToDevice, a)); CK(cudaMemcpyAsync(h_dn, d_dn, dn, cudaMemcpyDeviceToHost, b)); });
  time("both 2D", [&] { CK(cudaMemcpy2DAsync(d_up, pitch * 4, h_up, nx * 4, nx * 4, rows_up, cudaMemcpyHostToDevice, a)); CK(cudaMemcpy2DAsync(h_dn, nx * 4, d_dn, pitch * 4, nx * 4, rows_dn, cudaMemcpyDeviceToHost, b)); });
  time("D2D 2D staging->pitched (up bytes)", [&] { CK(cudaMemcpy2DAsync(d_up, pitch * 4, s_up, nx * 4, nx * 4, rows_up, cudaMemcpyDeviceToDevice, a)); });
  time("D2D 2D pitched->staging (down bytes)", [&] { CK(cudaMemcpy2DAsync(s_dn, nx * 4, d_dn, pitch * 4, nx * 4, rows_dn, cudaMemcpyDeviceToDevice, a)); });
  // Chunked as step_with_transfers was: 8 chunks x 12 up fields, 11 down fields, each stream a chunk's uploads
  // then its downloads; 2D vs contiguous.
  for (int twod = 0; twod < 2; ++twod) {
    time(twod ? "chunked 8 x fields, 2D, 2 streams" : "chunked 8 x fields, contiguous, 2 streams", [&] {
      const size_t cu = rows_up / 8, cd = rows_dn / 8;
      for (int c = 0; c < 8; ++c) {
        cudaStream_t s = c % 2 ? b : a;
        for (int f = 0; f < 10; ++f) {
          const size_t r0 = c * cu + f * (cu / 10), r = cu / 10;
          if (twod) CK(cudaMemcpy2DAsync(d_up + r0 * pitch, pitch * 4, h_up + r0 * nx, nx * 4, nx * 4, r, cudaMemcpyHostToDevice, s));
          else CK(cudaMemcpyAsync(s_up + r0 * nx, h_up + r0 * nx, r * nx * 4, cudaMemcpyHostToDevice, s));
        }
        for (int f = 0; f < 6; ++f) {
          const size_t r0 = c * cd + f * (cd / 6), r = cd / 6;
          if (twod) CK(cudaMemcpy2DAsync(h_dn + r0 * nx, nx * 4, d_dn + r0 * pitch, pitch * 4, nx * 4, r, cudaMemcpyDeviceToHost, s));
          else CK(cudaMemcpyAsync(h_dn + r0 * nx, s_dn + r0 * nx, r * nx * 4, cudaMemcpyDeviceToHost, s));
        }
      }
    });
  }
  // What one copy costs beyond its bytes: the upload bytes as k contiguous copies on one stream, and as 96
  // 2D copies one call each against 8 cudaMemcpy3DBatchAsync calls of 12.
  for (int k : {1, 12, 96, 384, 1536}) {
    char name[64];
    std::snprintf(name, sizeof name, "up contiguous as %d copies", k);
    time(name, [&] {
      const size_t piece = up / 4 / k;
      for (int c = 0; c < k; ++c) CK(cudaMemcpyAsync(s_up + c * piece, h_up + c * piece, piece * 4, cudaMemcpyHostToDevice, a));
    });
  }
  const size_t rows96 = rows_up / 96;
  time("up 2D as 96 copies", [&] {
    for (int c = 0; c < 96; ++c)
      CK(cudaMemcpy2DAsync(d_up + c * rows96 * pitch, pitch * 4, h_up + c * rows96 * nx, nx * 4, nx * 4, rows96, cudaMemcpyHostToDevice, a));
  });
  auto op2d = [&](float* dst, size_t dpitch, const float* src, size_t spitch, size_t rows) {
    cudaMemcpy3DBatchOp o{};
    o.src.type = cudaMemcpyOperandTypePointer;
    o.src.op.ptr.ptr = const_cast<float*>(src);
    o.src.op.ptr.rowLength = spitch * 4;
    o.dst.type = cudaMemcpyOperandTypePointer;
    o.dst.op.ptr.ptr = dst;
    o.dst.op.ptr.rowLength = dpitch * 4;
    o.extent = make_cudaExtent(nx * 4, rows, 1);
    o.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    return o;
  };
  time("up 2D as 8 batches of 12 (cudaMemcpy3DBatchAsync)", [&] {
    for (int b8 = 0; b8 < 8; ++b8) {
      cudaMemcpy3DBatchOp ops[12];
      for (int f = 0; f < 12; ++f) {
        const size_t r0 = (b8 * 12 + f) * rows96;
        ops[f] = op2d(d_up + r0 * pitch, pitch, h_up + r0 * nx, nx, rows96);
      }
      CK(cudaMemcpy3DBatchAsync(12, ops, 0, a));
    }
  });
  // Copies on several streams of one direction: whether the ~2.7 us a copy costs beyond its bytes is a
  // gap that a second copy in flight fills.
  std::vector<cudaStream_t> extra(4);
  for (auto& x : extra) CK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  for (int ns : {2, 4}) {
    char name[64];
    std::snprintf(name, sizeof name, "up 2D as 96 copies on %d streams", ns);
    time(name, [&] {
      for (int c = 0; c < 96; ++c)
        CK(cudaMemcpy2DAsync(d_up + c * rows96 * pitch, pitch * 4, h_up + c * rows96 * nx, nx * 4, nx * 4, rows96,
                             cudaMemcpyHostToDevice, extra[c % ns]));
      for (auto x : extra) CK(cudaStreamSynchronize(x));
    });
  }
  const size_t rows88 = rows_dn / 88;
  for (int ns : {1, 2}) {
    char name[64];
    std::snprintf(name, sizeof name, "down 2D as 88 copies on %d streams", ns);
    time(name, [&] {
      for (int c = 0; c < 88; ++c)
        CK(cudaMemcpy2DAsync(h_dn + c * rows88 * nx, nx * 4, d_dn + c * rows88 * pitch, pitch * 4, nx * 4, rows88,
                             cudaMemcpyDeviceToHost, extra[c % ns]));
      for (auto x : extra) CK(cudaStreamSynchronize(x));
    });
  }
  // The with-transfers pipeline without the physics: uploads (per field, 2D) on `nu` streams, a stand-in
  // kernel per chunk (one thread spinning 30 us + 0.46 ms x the chunk's share, what the CONUS kernel
  // takes) on another, downloads on `nd` streams, events between them. Chunk shares equal or shrinking
  // by 0.7 (a chunk's download, 0.6 of its upload's bytes, then ends while the next, smaller chunk uploads).
  cudaStream_t k_s;
  CK(cudaStreamCreateWithFlags(&k_s, cudaStreamNonBlocking));
  std::vector<cudaStream_t> u_s(2), d_s(2);
  for (auto& x : u_s) CK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  for (auto& x : d_s) CK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  std::vector<cudaEvent_t> ev(4 * 16);
  for (auto& event : ev) CK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  const size_t f3 = 308 * 35;  // rows of one 3D field
  // A chunk's rows of `fields` 3D fields at a fixed stride (f3 rows: as one allocation holding every field
  // would have them) in one cudaMemcpy3DAsync.
  auto copy3d = [&](float* dst, size_t dpitch, const float* src, size_t spitch, size_t row0, size_t rows, int fields,
                    cudaMemcpyKind kind, cudaStream_t s) {
    cudaMemcpy3DParms q{};
    q.srcPtr = make_cudaPitchedPtr(const_cast<float*>(src), spitch * 4, nx * 4, f3);
    q.srcPos = make_cudaPos(0, row0, 0);
    q.dstPtr = make_cudaPitchedPtr(dst, dpitch * 4, nx * 4, f3);
    q.dstPos = make_cudaPos(0, row0, 0);
    q.extent = make_cudaExtent(nx * 4, rows, static_cast<size_t>(fields));
    q.kind = kind;
    CK(cudaMemcpy3DAsync(&q, s));
  };
  time("up 3D fields as 8 x one 3D copy of 10 fields", [&] {
    for (int c = 0; c < 8; ++c) copy3d(d_up, pitch, h_up, nx, c * (f3 / 8), f3 / 8, 10, cudaMemcpyHostToDevice, a);
  });
  time("up 3D fields as 8 x 10 2D copies", [&] {
    for (int c = 0; c < 8; ++c)
      for (int f = 0; f < 10; ++f)
        CK(cudaMemcpy2DAsync(d_up + (f * f3 + c * (f3 / 8)) * pitch, pitch * 4, h_up + (f * f3 + c * (f3 / 8)) * nx, nx * 4,
                             nx * 4, f3 / 8, cudaMemcpyHostToDevice, a));
  });
  {  // the 3D copies deliver the host bytes
    CK(cudaMemset(d_up, 0, rows_up * pitch * 4));
    for (int c = 0; c < 8; ++c) copy3d(d_up, pitch, h_up, nx, c * (f3 / 8), c == 7 ? f3 - 7 * (f3 / 8) : f3 / 8, 10, cudaMemcpyHostToDevice, a);
    CK(cudaStreamSynchronize(a));
    std::vector<float> back(10 * f3 * nx);
    CK(cudaMemcpy2D(back.data(), nx * 4, d_up, pitch * 4, nx * 4, 10 * f3, cudaMemcpyDeviceToHost));
    std::printf("%s\n", std::equal(back.begin(), back.end(), h_up) ? "check ok: the 3D-copy upload equals the host data"
                                                                    : "FAILED: the 3D-copy upload differs from the host data");
  }
  auto pipeline = [&](int n, bool geometric, int nu, int nd, bool three_d = false) {
    std::vector<double> w(n, 1.0);
    if (geometric) for (int c = 1; c < n; ++c) w[c] = w[c - 1] * 0.7;
    double tw = 0; for (double x : w) tw += x;
    std::vector<size_t> j(n + 1, 0);
    double cum = 0;
    for (int c = 1; c < n; ++c) { cum += w[c - 1]; j[c] = std::max(j[c - 1] + 1, static_cast<size_t>(std::llround(308 * cum / tw))); }
    j[n] = 308;
    char name[96];
    std::snprintf(name, sizeof name, "pipeline %d chunks %s, %d up / %d down streams%s", n, geometric ? "x0.7" : "equal", nu, nd,
                  three_d ? ", fields as 3D" : "");
    time(name, [&] {
      for (int c = 0; c < n; ++c) {
        const size_t j0 = j[c], r = j[c + 1] - j[c];
        if (three_d) copy3d(d_up, pitch, h_up, nx, j0 * 35, r * 35, 10, cudaMemcpyHostToDevice, u_s[0]);
        for (int f = three_d ? 10 : 0; f < 12; ++f) {  // 10 3D fields, then 2 2D fields (in the 3D fields' tail)
          const size_t base = f < 10 ? f * f3 + j0 * 35 : 10 * f3 + (f - 10) * 308 + j0, rows = f < 10 ? r * 35 : r;
          CK(cudaMemcpy2DAsync(d_up + base * pitch, pitch * 4, h_up + base * nx, nx * 4, nx * 4, rows, cudaMemcpyHostToDevice, u_s[f % nu]));
        }
        for (int u = 0; u < nu; ++u) {
          CK(cudaEventRecord(ev[4 * c + u], u_s[u]));
          CK(cudaStreamWaitEvent(k_s, ev[4 * c + u], 0));
        }
        spin<<<1, 1, 0, k_s>>>(static_cast<long long>(30000 + 460000.0 * r / 308));
        CK(cudaGetLastError());
        CK(cudaEventRecord(ev[4 * c + 2], k_s));
        for (int dd = 0; dd < nd; ++dd) CK(cudaStreamWaitEvent(d_s[dd], ev[4 * c + 2], 0));
        if (three_d) copy3d(h_dn, nx, d_dn, pitch, j0 * 35, r * 35, 6, cudaMemcpyDeviceToHost, d_s[0]);
        for (int f = three_d ? 6 : 0; f < 11; ++f) {  // 6 3D fields, 5 2D fields
          const size_t base = f < 6 ? f * f3 + j0 * 35 : 6 * f3 + (f - 6) * 308 + j0, rows = f < 6 ? r * 35 : r;
          CK(cudaMemcpy2DAsync(h_dn + base * nx, nx * 4, d_dn + base * pitch, pitch * 4, nx * 4, rows, cudaMemcpyDeviceToHost, d_s[f % nd]));
        }
      }
      for (auto x : u_s) CK(cudaStreamSynchronize(x));
      CK(cudaStreamSynchronize(k_s));
      for (auto x : d_s) CK(cudaStreamSynchronize(x));
    });
  };
  for (int n : {6, 8, 10}) pipeline(n, false, 1, 1);
  for (int n : {4, 6, 8, 10, 12, 16}) pipeline(n, true, 1, 1, true);
  for (int n : {4, 6, 8, 10, 12})
    for (int nu : {1, 2})
      for (int nd : {1, 2}) pipeline(n, true, nu, nd);
  // The same bytes moved by the SMs (copy_rows_kernel) from and to mapped pinned memory: no copy engine,
  // no per-copy cost, one launch for many fields.
  auto sm_copy = [&](bool upward, int blocks, cudaStream_t s) {
    row_copies l{};
    l.count = 1;
    l.width = static_cast<int>(nx);
    if (upward) l.c[0] = {h_up, d_up, static_cast<long long>(nx), static_cast<long long>(pitch), static_cast<long long>(rows_up)};
    else l.c[0] = {d_dn, h_dn, static_cast<long long>(pitch), static_cast<long long>(nx), static_cast<long long>(rows_dn)};
    copy_rows_kernel<<<blocks, 256, 0, s>>>(l);
    CK(cudaGetLastError());
  };
  for (int blocks : {33, 66, 132, 264, 528}) {
    char name[64];
    std::snprintf(name, sizeof name, "up by SMs, %d blocks of 256", blocks);
    time(name, [&] { sm_copy(true, blocks, a); });
    std::snprintf(name, sizeof name, "down by SMs, %d blocks of 256", blocks);
    time(name, [&] { sm_copy(false, blocks, a); });
    std::snprintf(name, sizeof name, "both by SMs, %d blocks each", blocks);
    time(name, [&] { sm_copy(true, blocks, a); sm_copy(false, blocks, b); });
  }
  time("up by SMs (132 blocks) + down by copy engine", [&] {
    sm_copy(true, 132, a);
    CK(cudaMemcpy2DAsync(h_dn, nx * 4, d_dn, pitch * 4, nx * 4, rows_dn, cudaMemcpyDeviceToHost, b));
  });
  {  // the SM upload delivers the host bytes
    CK(cudaMemset(d_up, 0, rows_up * pitch * 4));
    sm_copy(true, 132, a);
    CK(cudaStreamSynchronize(a));
    std::vector<float> back(up / 4);
    CK(cudaMemcpy2D(back.data(), nx * 4, d_up, pitch * 4, nx * 4, rows_up, cudaMemcpyDeviceToHost));
    std::printf("%s\n", std::equal(back.begin(), back.end(), h_up) ? "check ok: the SM upload equals the host data"
                                                                    : "FAILED: the SM upload differs from the host data");
  }
  std::printf("up %.1f MB, down %.1f MB\n", up / 1e6, dn / 1e6);
  // One more 2D upload of every row (the device-to-device timings above wrote the pitched buffer from an
  // unset staging buffer), read back row by row: it equals the host data.
  CK(cudaMemcpy2D(d_up, pitch * 4, h_up, nx * 4, nx * 4, rows_up, cudaMemcpyHostToDevice));
  std::vector<float> back(up / 4);
  CK(cudaMemcpy2D(back.data(), nx * 4, d_up, pitch * 4, nx * 4, rows_up, cudaMemcpyDeviceToHost));
  if (!std::equal(back.begin(), back.end(), h_up)) {
    std::printf("FAILED: the pitched upload read back differs from the host data\n");
    return 1;
  }
  std::printf("check ok: the pitched upload read back equals the host data\n");
}
