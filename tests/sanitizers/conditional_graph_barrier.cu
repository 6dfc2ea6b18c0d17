// A probe of compute-sanitizer, not of gpukit: does synccheck report a barrier that every thread of the
// block reaches when the kernel runs inside a while-conditional graph node (as libsolve's graph mode runs
// its iteration), while the same kernel launched on a stream or in a plain captured graph is clean?
// scripts/gpu-check builds it with nvcc, runs modes 0-3 under synccheck, and only when the tool reports
// modes 2 or 3 (and neither 0 nor 1) does it let test_solve's graph-mode cases skip under synccheck
// (GPUKIT_SANITIZER_SKIP_CONDITIONAL_GRAPHS=1, tests/support/test_support.hpp): synccheck aborts every such
// kernel, so those cases could only fail there. Seen on an NVIDIA H100, driver 580.159.04, CUDA 13.0:
// modes 0 and 1 clean; modes 2 and 3 "Barrier error detected. Divergent thread(s) in warp" at every
// launch (~18,000 reports), memcheck clean in all four modes.
// Modes: 0 stream launches; 1 a captured plain graph; 2 a while-conditional body (10 iterations), the
// barrier after a copy loop that most warps skip (as libsparse's stage_stencil_table); 3 as 2 with the
// copy in straight-line code.
// Build: nvcc -std=c++17 -arch=sm_90 -o probe tests/sanitizers/conditional_graph_barrier.cu
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
template <bool Loop>
__global__ void body(const int* table, int words, float* x, int n) {
  __shared__ int s[64];
  if (Loop) {
    for (int i = threadIdx.x; i < words; i += blockDim.x) s[i] = table[i];
  } else if (threadIdx.x < 64) {
    s[threadIdx.x] = threadIdx.x < words ? table[threadIdx.x] : 0;
  }
  __syncthreads();
  int acc = 0;
  for (int k = 0; k < words; ++k) acc += s[k];
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] += acc;
}
__global__ void again(int* counter, cudaGraphConditionalHandle h) {
  if (--*counter <= 0) cudaGraphSetConditional(h, 0);
}
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(err_)); return 1; } } while (0)
int main(int argc, char** argv) {
  const int mode = argc > 1 ? atoi(argv[1]) : 0;
  const int n = 100000, words = 12;
  int *counter, *table; float* x;
  CK(cudaMalloc(&counter, sizeof(int))); CK(cudaMalloc(&x, n * sizeof(float))); CK(cudaMalloc(&table, 64 * sizeof(int)));
  CK(cudaMemset(x, 0, n * sizeof(float))); CK(cudaMemset(table, 0, 64 * sizeof(int)));
  int ten = 10; CK(cudaMemcpy(counter, &ten, sizeof(int), cudaMemcpyHostToDevice));
  cudaStream_t st; CK(cudaStreamCreate(&st));
  if (mode == 0) {
    for (int k = 0; k < 10; ++k) (mode == 3 ? body<false> : body<true>)<<<132, 256, 0, st>>>(table, words, x, n);
  } else if (mode == 1) {
    cudaGraph_t g; cudaGraphExec_t ex;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < 10; ++k) (mode == 3 ? body<false> : body<true>)<<<132, 256, 0, st>>>(table, words, x, n);
    CK(cudaStreamEndCapture(st, &g)); CK(cudaGraphInstantiate(&ex, g, 0)); CK(cudaGraphLaunch(ex, st));
  } else {
    cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
    cudaGraphConditionalHandle h;
    CK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams cp = {};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h; cp.conditional.type = cudaGraphCondTypeWhile; cp.conditional.size = 1;
    cudaGraphNode_t cn; CK(cudaGraphAddNode(&cn, g, nullptr, nullptr, 0, &cp));
    cudaGraph_t bg = cp.conditional.phGraph_out[0];
    CK(cudaStreamBeginCaptureToGraph(st, bg, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
    (mode == 3 ? body<false> : body<true>)<<<132, 256, 0, st>>>(table, words, x, n);
    again<<<1, 1, 0, st>>>(counter, h);
    cudaGraph_t cap; CK(cudaStreamEndCapture(st, &cap));
    cudaGraphExec_t ex; CK(cudaGraphInstantiate(&ex, g, 0)); CK(cudaGraphLaunch(ex, st));
  }
  CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
  printf("mode %d ok\n", mode);
  return 0;
}
