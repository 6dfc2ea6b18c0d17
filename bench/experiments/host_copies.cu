// host_copies: the host link under WSM5's with-transfers copies (libwsm5 gpu_domain::step_with_transfers),
// CONUS sizes (433 x 308 x 35: 188 MB up, 115 MB down, float), pinned host memory: one contiguous copy each
// way, the same as 2D copies of 1,732-byte rows into 448-float pitched rows (as the kernels' layout has
// them), both directions at once, the device-side 2D copies a staging buffer would add, and the copies of
// 8 row chunks x 16 fields on 2 streams, contiguous and 2D, without kernels. Median of 7 (events).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)
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
  // Chunked like step_with_transfers: 8 chunks x 12 up fields, 11 down fields, 2D vs contiguous.
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
