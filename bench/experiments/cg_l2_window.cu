// cg_l2_window N [METHOD [POLICY]]: per-iteration time of our cg (METHOD 0; 1 pcg, 2 pipecg) on the 3D Poisson
// problem N^3 in float with solve::options::p_in_l2 = POLICY (0 automatic, 1 off, 2 on): 200 iterations less
// 0, median of 9 runs, three times; then one solve to rtol 1e-5, whose convergence is checked (exit 1 if it
// fails). The table of libsolve/README.md ("p in a set-aside part of the L2") ran this with policies 1 and 2
// alternated per size.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "gpukit/cuda_timer.hpp"
#include "gpukit/device_buffer.hpp"
#include "solve/solve.hpp"
#include "sparse/generate.hpp"
#include "sparse/spmv.hpp"

int main(int argc, char** argv) {
  const int n3 = argc > 1 ? std::atoi(argv[1]) : 160;
  const int method = argc > 2 ? std::atoi(argv[2]) : 0;
  const int policy = argc > 3 ? std::atoi(argv[3]) : 0;
  if (n3 < 2 || method < 0 || method > 2 || policy < 0 || policy > 2) {
    std::fprintf(stderr, "usage: cg_l2_window N [METHOD 0|1|2 [POLICY 0|1|2]]\n");
    return 2;
  }
  const auto a = sparse::generate_laplace_3d<float, int>(n3);
  const sparse::device_csr<float, int> d(a);
  const solve::csr_operator<float, int> op(d);
  std::mt19937_64 gen(20240518);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<float> hb(static_cast<std::size_t>(a.rows()));
  for (float& v : hb) v = static_cast<float>(u(gen));
  const gpukit::device_buffer<float> b(hb);
  gpukit::device_buffer<float> x(a.rows());
  gpukit::owned_stream stream;
  gpukit::cuda_timer timer(stream.get());
  solve::options o;
  o.method = method == 1 ? solve::krylov_method::pcg
             : method == 2 ? solve::krylov_method::pipecg
                           : solve::krylov_method::cg;
  o.p_in_l2 = policy == 1 ? solve::l2_window::off : policy == 2 ? solve::l2_window::on : solve::l2_window::automatic;
  o.keep_history = false;
  o.rtol = 0;
  o.atol = 0;
  o.max_iterations = 200;
  solve::solver<float> s200(op, o);
  o.max_iterations = 0;
  solve::solver<float> s0(op, o);
  const gpukit::repeats rep{1, 9};
  for (int k = 0; k < 3; ++k) {
    const auto t200 = timer.time([&] { s200.solve(b.data(), x.data(), a.rows(), stream.get()); }, rep);
    const auto t0 = timer.time([&] { s0.solve(b.data(), x.data(), a.rows(), stream.get()); }, rep);
    std::printf("%d^3 %s policy %d: %.2f us/it (200 iterations %.1f us [%.1f..%.1f])\n", n3, solve::to_string(o.method),
                policy, (t200.median_us - t0.median_us) / 200, t200.median_us, t200.min_us, t200.max_us);
  }
  o.rtol = 1e-5;
  o.max_iterations = 20000;
  solve::solver<float> full(op, o);
  const solve::result res = full.solve(b.data(), x.data(), a.rows(), stream.get());
  std::printf("  %s; p in L2: %lld bytes\n", res.summary().c_str(), static_cast<long long>(res.l2_window_bytes));
  return res.converged ? 0 : 1;
}
