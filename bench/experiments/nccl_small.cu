// nccl_small: the NCCL operations a distributed cg iteration could sum its 4 doubles with, timed on the
// stream after a dependent one-thread kernel (as the solver's SpMV epilogue precedes its sum): ncclAllReduce,
// ncclAllGather plus a kernel adding the P copies in rank order, and (2 ranks) one ncclSend/ncclRecv pair;
// also the all-reduce of one exact float state (12 int64 words, the reproducible mode's). One rank per GPU:
//   mpiexec -n 2 -x NCCL_NVLS_ENABLE=0 build/bench/experiments/nccl_small
// Each form's result is checked (rank r contributes r + 1 in every slot); rank 0 prints the median of 5
// batches of 2000 calls. Why: the sum over ranks is the largest exposed cost of a two-GPU cg iteration
// (libsolve/README.md), and a gather needs one ring step where an all-reduce of two ranks takes two.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "nccl_small: %s: %s\n", what, cudaGetErrorString(e));
  MPI_Abort(MPI_COMM_WORLD, 3);
}
void check_nccl(ncclResult_t e, const char* what) {
  if (e == ncclSuccess) return;
  std::fprintf(stderr, "nccl_small: %s: %s\n", what, ncclGetErrorString(e));
  MPI_Abort(MPI_COMM_WORLD, 3);
}

__global__ void touch(double* d) { d[0] += 1.0; }  // the dependent kernel ahead of each sum
__global__ void add_ranks(const double* g, double* out, int ranks, int k) {
  if (threadIdx.x >= static_cast<unsigned>(k)) return;
  double s = 0;
  for (int r = 0; r < ranks; ++r) s += g[r * k + threadIdx.x];  // rank order: the same bits on every rank
  out[threadIdx.x] = s;
}

constexpr int k = 4;

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1, gpus = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  check_cuda(cudaGetDeviceCount(&gpus), "cudaGetDeviceCount");
  if (gpus < ranks) {
    if (rank == 0) std::fprintf(stderr, "nccl_small: %d ranks need %d GPUs (found %d)\n", ranks, ranks, gpus);
    MPI_Finalize();
    return 2;
  }
  check_cuda(cudaSetDevice(rank), "cudaSetDevice");
  ncclUniqueId id;
  if (rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  check_nccl(ncclCommInitRank(&comm, ranks, id, rank), "ncclCommInitRank");
  cudaStream_t s;
  check_cuda(cudaStreamCreate(&s), "cudaStreamCreate");
  double *mine, *sum, *gathered, *dummy;
  long long *words, *word_sum;
  check_cuda(cudaMalloc(&mine, k * sizeof(double)), "cudaMalloc");
  check_cuda(cudaMalloc(&sum, k * sizeof(double)), "cudaMalloc");
  check_cuda(cudaMalloc(&gathered, static_cast<size_t>(k) * ranks * sizeof(double)), "cudaMalloc");
  check_cuda(cudaMalloc(&dummy, sizeof(double)), "cudaMalloc");
  check_cuda(cudaMalloc(&words, 12 * sizeof(long long)), "cudaMalloc");
  check_cuda(cudaMalloc(&word_sum, 12 * sizeof(long long)), "cudaMalloc");
  const std::vector<double> v(k, rank + 1.0);
  const std::vector<long long> w(12, rank + 1);
  check_cuda(cudaMemcpy(mine, v.data(), k * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  check_cuda(cudaMemcpy(words, w.data(), 12 * sizeof(long long), cudaMemcpyHostToDevice), "cudaMemcpy");
  check_cuda(cudaMemset(dummy, 0, sizeof(double)), "cudaMemset");
  const double total = ranks * (ranks + 1) / 2.0;
  cudaEvent_t a, b;
  check_cuda(cudaEventCreate(&a), "cudaEventCreate");
  check_cuda(cudaEventCreate(&b), "cudaEventCreate");
  int failed = 0;
  // Copies n values of type T from the device.
  auto fetch = [](const auto* d, int n) {
    std::vector<std::remove_const_t<std::remove_pointer_t<decltype(d)>>> h(static_cast<size_t>(n));
    check_cuda(cudaMemcpy(h.data(), d, n * sizeof(h[0]), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return h;
  };
  // Times f (median of 5 batches of 2000 calls after 200 warm-up calls), then asks `verify` about its result.
  auto time_and_check = [&](const char* name, auto&& f, auto&& verify) {
    for (int i = 0; i < 200; ++i) f();
    check_cuda(cudaStreamSynchronize(s), "warm-up");
    std::vector<float> us;
    for (int rep = 0; rep < 5; ++rep) {
      MPI_Barrier(MPI_COMM_WORLD);
      check_cuda(cudaEventRecord(a, s), "cudaEventRecord");
      for (int i = 0; i < 2000; ++i) f();
      check_cuda(cudaEventRecord(b, s), "cudaEventRecord");
      check_cuda(cudaEventSynchronize(b), "cudaEventSynchronize");
      float ms = 0;
      check_cuda(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
      us.push_back(ms * 1000.f / 2000.f);
    }
    const bool ok = verify();
    failed += !ok;
    std::sort(us.begin(), us.end());
    if (rank == 0)
      std::printf("%-50s %6.2f us per call (batches %.2f-%.2f)  %s\n", name, us[2], us[0], us[4], ok ? "ok" : "WRONG RESULT");
  };
  auto all_equal = [](const auto& h, double want) {
    return std::all_of(h.begin(), h.end(), [&](auto x) { return static_cast<double>(x) == want; });
  };
  if (rank == 0) std::printf("nccl_small: %d ranks, %d doubles; NCCL %d\n", ranks, k, NCCL_VERSION_CODE);
  time_and_check("one-thread kernel alone", [&] { touch<<<1, 1, 0, s>>>(dummy); },
                 [&] { return fetch(dummy, 1)[0] == 10200.0; });  // 200 warm-up + 5 x 2000 calls
  time_and_check("kernel + ncclAllReduce", [&] {
    touch<<<1, 1, 0, s>>>(dummy);
    check_nccl(ncclAllReduce(mine, sum, k, ncclDouble, ncclSum, comm, s), "ncclAllReduce");
  }, [&] { return all_equal(fetch(sum, k), total); });
  time_and_check("kernel + ncclAllGather + rank-order add kernel", [&] {
    touch<<<1, 1, 0, s>>>(dummy);
    check_nccl(ncclAllGather(mine, gathered, k, ncclDouble, comm, s), "ncclAllGather");
    add_ranks<<<1, 32, 0, s>>>(gathered, sum, ranks, k);
  }, [&] { return all_equal(fetch(sum, k), total); });
  time_and_check("kernel + ncclAllGather (the add left out)", [&] {
    touch<<<1, 1, 0, s>>>(dummy);
    check_nccl(ncclAllGather(mine, gathered, k, ncclDouble, comm, s), "ncclAllGather");
  }, [&] {
    const auto g = fetch(gathered, k * ranks);
    for (int i = 0; i < k * ranks; ++i)
      if (g[static_cast<size_t>(i)] != i / k + 1.0) return false;
    return true;
  });
  if (ranks == 2)
    time_and_check("kernel + ncclSend/ncclRecv pair", [&] {
      touch<<<1, 1, 0, s>>>(dummy);
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      check_nccl(ncclSend(mine, k, ncclDouble, 1 - rank, comm, s), "ncclSend");
      check_nccl(ncclRecv(gathered, k, ncclDouble, 1 - rank, comm, s), "ncclRecv");
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    }, [&] { return all_equal(fetch(gathered, k), 2.0 - rank); });
  time_and_check("kernel + ncclAllReduce of 12 int64 (exact state)", [&] {
    touch<<<1, 1, 0, s>>>(dummy);
    check_nccl(ncclAllReduce(words, word_sum, 12, ncclInt64, ncclSum, comm, s), "ncclAllReduce");
  }, [&] { return all_equal(fetch(word_sum, 12), total); });
  ncclCommDestroy(comm);
  MPI_Finalize();
  return failed ? 1 : 0;
}
