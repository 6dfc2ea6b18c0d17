// The generic CUDA entry points with user operators (libreduce/src/cuda/device_reduce.cuh, private), and
// the public warp, block and grid building blocks at every width and several block and grid sizes, against
// host loops.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"
#include "libreduce/src/cuda/device_reduce.cuh"
#include "oracle.hpp"
#include "reduce/cuda/block_reduce.cuh"
#include "reduce/cuda/exact_reduce.cuh"
#include "reduce/cuda/grid_reduce.cuh"
#include "reduce/cuda/warp_reduce.cuh"
#include "test_support.hpp"

namespace {

struct bit_or {
  __host__ __device__ std::uint32_t operator()(std::uint32_t a, std::uint32_t b) const { return a | b; }
};
struct absolute {
  __host__ __device__ double operator()(float x) const { return x < 0 ? -double(x) : double(x); }
};
struct above_half {
  __host__ __device__ bool operator()(float x) const { return x > 0.5f; }
};

template <int Width>
__global__ void warp_kernel(const std::int64_t* in, std::int64_t* all_out, std::int64_t* first_out, int valid) {
  const int t = static_cast<int>(threadIdx.x);
  all_out[t] = reduce::warp::all_reduce<Width>(in[t], reduce::plus{});
  first_out[t] = reduce::warp::reduce_to_first<Width>(in[t], reduce::plus{}, valid);
}

template <int Threads>
__global__ void block_kernel(const std::int64_t* in, std::int64_t* out) {
  using br = reduce::block::block_reduce<Threads, std::int64_t>;
  __shared__ typename br::storage tmp;
  const std::int64_t v = in[threadIdx.x];
  const std::int64_t first = br::reduce(v, reduce::plus{}, tmp);
  __syncthreads();
  const std::int64_t all = br::all_reduce(v, reduce::maximum{}, tmp);
  if (threadIdx.x == 0) out[0] = first;
  out[1 + threadIdx.x] = all;
}

/// A pair of sums (an int64 and its count) through block_reduce and grid::last_block_reduce: out[0] and
/// out[1] get the totals, out[2] how many blocks saw themselves last (must be 1).
struct pair_sum {
  std::int64_t v[2];
};
struct add_pairs {
  __device__ pair_sum operator()(const pair_sum& a, const pair_sum& b) const { return {{a.v[0] + b.v[0], a.v[1] + b.v[1]}}; }
};
template <int Threads>
__global__ void grid_kernel(const std::int64_t* in, std::int64_t n, pair_sum* partials, unsigned* ticket,
                            std::int64_t* out) {
  using br = reduce::block::block_reduce<Threads, pair_sum>;
  __shared__ typename br::storage tmp;
  pair_sum mine{{0, 0}};
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * Threads + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * Threads) {
    mine.v[0] += in[i];
    mine.v[1] += 1;
  }
  pair_sum v = br::reduce(mine, add_pairs{}, tmp);
  if (!reduce::grid::last_block_reduce<Threads>(v, add_pairs{}, pair_sum{{0, 0}}, partials, ticket, tmp)) return;
  if (threadIdx.x == 0) {
    out[0] = v.v[0];
    out[1] = v.v[1];
    atomicAdd(reinterpret_cast<unsigned long long*>(out + 2), 1ull);
  }
}

/// Three exact sums in one pass through reduce/cuda/exact_reduce.cuh's pieces: in[j * n + i] for j < 3,
/// tiles of 4 (add_tile) where a thread's 4 consecutive entries exist, add() for the rest. out[j] gets the
/// rounded sum j, states[j] its exact state.
template <int Threads, class T, bool Wide>
__global__ void exact_kernel(const T* in, std::int64_t n, unsigned long long* limb, unsigned* flags, unsigned* ticket,
                             T* out, reduce::exact_accumulator<T>* states) {
  __shared__ reduce::exact::block_sums<T, 3, Threads> s;
  reduce::exact::thread_sum<T, Wide> t[3];
  reduce::exact::begin_block<Threads>(s, t);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * Threads * 4;
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * Threads + threadIdx.x) * 4; i < n; i += stride)
    for (int j = 0; j < 3; ++j) {
      const T* x = in + j * n + i;
      if (i + 4 <= n) {
        const T tile[4] = {x[0], x[1], x[2], x[3]};
        t[j].add_tile(tile);
      } else {
        for (std::int64_t k = 0; i + k < n; ++k) t[j].add(x[k]);
      }
    }
  reduce::exact::end_block<Threads>(t, s);
  if (!reduce::exact::end_grid<Threads>(s, limb, flags, ticket)) return;
  if (threadIdx.x < 3) {
    out[threadIdx.x] = reduce::exact::round(s, static_cast<int>(threadIdx.x));
    reduce::exact::state(s, static_cast<int>(threadIdx.x), states + threadIdx.x);
  }
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// The exact pieces give reduce::reference::reproducible_sum's bits on every grid, twice in a row (the
/// global accumulator must be left zero), for: uniform terms in [-1, 1); their squares rounded to T (all
/// positive: a dropped or doubled term moves the sum); terms scaled by 2^k, k in [-40, 40), which leave
/// every thread's window (the slow path into the block's limbs); and, in a second round, the same with
/// one +inf and one -inf (NaN) in sum 2. The state of each sum rounds to the same bits on the host. Both
/// windows (Wide: float's 64-exponent one).
template <int Threads, class T, bool Wide>
void check_exact() {
  const std::int64_t n = 100003;
  auto u = test::random_vector<T>(n, T(-1), T(1), 2100 + Threads);
  std::vector<T> in(3 * n);
  for (std::int64_t i = 0; i < n; ++i) {
    in[i] = u[i];
    in[n + i] = u[i] * u[i];
    in[2 * n + i] = std::ldexp(u[i], static_cast<int>(i % 80) - 40);
  }
  gpukit::device_buffer<unsigned long long> limb(3 * reduce::exact::limbs<T>);
  gpukit::device_buffer<unsigned> counters(4);  // flags[3], ticket
  limb.fill_bytes(0);
  counters.fill_bytes(0);
  gpukit::device_buffer<T> out(3);
  gpukit::device_buffer<reduce::exact_accumulator<T>> states(3);
  for (int round = 0; round < 2; ++round) {
    if (round == 1) {
      in[2 * n + 17] = std::numeric_limits<T>::infinity();
      in[2 * n + n / 2] = -std::numeric_limits<T>::infinity();
    }
    gpukit::device_buffer<T> d(in);
    std::vector<T> expected(3);
    for (int j = 0; j < 3; ++j) expected[j] = reduce::reference::reproducible_sum(in.data() + j * n, n);
    BOOST_TEST_REQUIRE(expected[1] > T(0));
    for (int grid : {1, 7, 132, 1000}) {
      for (int rep = 0; rep < 2; ++rep) {
        out.fill_bytes(test::poison_byte);
        exact_kernel<Threads, T, Wide><<<grid, Threads>>>(d.data(), n, limb.data(), counters.data(),
                                                    counters.data() + 3, out.data(), states.data());
        GPUKIT_CHECK_LAUNCH();
        const auto o = out.download();
        const auto st = states.download();
        BOOST_TEST_CONTEXT("block of " << Threads << (Wide ? ", wide" : "") << ", grid " << grid << ", call " << rep
                                        << ", round " << round) {
          for (int j = 0; j < 3; ++j) {
            BOOST_TEST(same_bits(o[j], expected[j]), "sum " << j << ": " << o[j] << " vs " << expected[j]);
            BOOST_TEST(same_bits(reduce::round_exact(st[j]), expected[j]), "state " << j);
          }
          for (auto w : limb.download()) BOOST_TEST(w == 0ull);
          for (auto w : counters.download()) BOOST_TEST(w == 0u);
        }
      }
    }
  }
}

/// Integers, so exact: every grid size (1 block, fewer blocks than a wave, several waves, more blocks than
/// elements) twice in a row (the ticket must be back at 0), against the host sum.
template <int Threads>
void check_grid() {
  const std::int64_t n = 100003;
  const auto x = test::random_vector<std::int64_t>(n, -1000000, 1000000, 1900 + Threads);
  std::int64_t s = 0;
  for (auto v : x) s += v;
  gpukit::device_buffer<std::int64_t> d(x), out(3);
  gpukit::device_buffer<unsigned> ticket(1);
  ticket.fill_bytes(0);
  for (int grid : {1, 7, 132, 1000, 5000}) {
    gpukit::device_buffer<pair_sum> partials(grid);
    partials.fill_bytes(test::poison_byte);
    for (int rep = 0; rep < 2; ++rep) {
      out.fill_bytes(0);
      grid_kernel<Threads><<<grid, Threads>>>(d.data(), n, partials.data(), ticket.data(), out.data());
      GPUKIT_CHECK_LAUNCH();
      const auto o = out.download();
      BOOST_TEST_CONTEXT("block of " << Threads << ", grid " << grid << ", call " << rep) {
        BOOST_TEST(o[0] == s);
        BOOST_TEST(o[1] == n);
        BOOST_TEST(o[2] == 1);  // exactly one last block
        BOOST_TEST(ticket.download()[0] == 0u);
      }
    }
  }
}

template <int Width>
void check_warp_width() {
  const auto x = test::random_vector<std::int64_t>(32, -1000, 1000, 1700 + Width);
  gpukit::device_buffer<std::int64_t> d(x), all(32), first(32);
  for (int valid : {1, Width}) {
    all.fill_bytes(test::poison_byte);
    first.fill_bytes(test::poison_byte);
    warp_kernel<Width><<<1, 32>>>(d.data(), all.data(), first.data(), valid);
    GPUKIT_CHECK_LAUNCH();
    const auto a = all.download(), f = first.download();
    for (int g = 0; g < 32 / Width; ++g) {
      std::int64_t s = 0, sv = 0;
      for (int l = 0; l < Width; ++l) s += x[g * Width + l];
      for (int l = 0; l < valid; ++l) sv += x[g * Width + l];
      BOOST_TEST_CONTEXT("width " << Width << ", group " << g << ", valid " << valid) {
        for (int l = 0; l < Width; ++l) BOOST_TEST(a[g * Width + l] == s);  // every lane
        BOOST_TEST(f[g * Width] == sv);                                      // the group's first lane
      }
    }
  }
}

template <int Threads>
void check_block() {
  const auto x = test::random_vector<std::int64_t>(Threads, -1000, 1000, 1800 + Threads);
  gpukit::device_buffer<std::int64_t> d(x), out(Threads + 1);
  out.fill_bytes(test::poison_byte);
  block_kernel<Threads><<<1, Threads>>>(d.data(), out.data());
  GPUKIT_CHECK_LAUNCH();
  const auto o = out.download();
  std::int64_t s = 0, m = x[0];
  for (auto v : x) {
    s += v;
    m = v > m ? v : m;
  }
  BOOST_TEST_CONTEXT("block of " << Threads) {
    BOOST_TEST(o[0] == s);
    for (int t = 0; t < Threads; ++t) BOOST_TEST(o[1 + t] == m);
  }
}

/// out[i] = reduce::exact::product(a[i], b[i]); wrong[i] the same product rounded toward zero (the kind
/// of mistake the check below must catch: flushing, or a rounding other than to nearest).
template <class T>
__global__ void product_kernel(const T* a, const T* b, std::int64_t n, T* out, T* wrong) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = reduce::exact::product(a[i], b[i]);
  if constexpr (std::is_same_v<T, float>) wrong[i] = __fmul_rz(a[i], b[i]);
  else wrong[i] = __dmul_rz(a[i], b[i]);
}

/// Factors spread over the whole exponent range, so products overflow, underflow into subnormals and
/// vanish; signs random.
template <class T>
std::vector<T> spread_factors(std::int64_t n, std::uint64_t seed) {
  const auto m = test::random_vector<double>(n, 1.0, 2.0, seed);
  const auto e = test::random_vector<std::int64_t>(n, std::int64_t{std::numeric_limits<T>::min_exponent} - 30,
                                                   std::int64_t{std::numeric_limits<T>::max_exponent} / 2 + 10, seed + 1);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<T>(std::ldexp((i % 3 == 0 ? -1 : 1) * m[i], static_cast<int>(e[i])));
  return x;
}

/// The host's expectation: the double product (exact for floats) rounded once, as the CPU twin rounds a
/// term; for double the IEEE product. Compared bit for bit.
template <class T>
void check_product() {
  const std::int64_t n = 100003;
  const auto a = spread_factors<T>(n, 2300), b = spread_factors<T>(n, 2310);
  gpukit::device_buffer<T> da(a), db(b), out(n), wrong(n);
  out.fill_bytes(test::poison_byte);
  product_kernel<T><<<static_cast<unsigned>((n + 255) / 256), 256>>>(da.data(), db.data(), n, out.data(), wrong.data());
  GPUKIT_CHECK_LAUNCH();
  const auto o = out.download(), w = wrong.download();
  std::int64_t mismatches = 0, wrong_accepted = 0, subnormal = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const T expect = static_cast<T>(static_cast<double>(a[i]) * static_cast<double>(b[i]));
    mismatches += std::memcmp(&o[i], &expect, sizeof(T)) != 0;
    wrong_accepted += std::memcmp(&w[i], &expect, sizeof(T)) == 0;
    subnormal += std::fpclassify(expect) == FP_SUBNORMAL;
  }
  BOOST_TEST(mismatches == 0);
  BOOST_TEST(subnormal > 100);             // the data reach the subnormal products
  BOOST_TEST(wrong_accepted < n * 3 / 4);  // and the comparison rejects a product rounded otherwise
}

}  // namespace

BOOST_AUTO_TEST_SUITE(device_api)

GPU_TEST_CASE(exact_product_is_the_double_product_rounded_once) {
  check_product<float>();
  check_product<double>();
}

GPU_TEST_CASE(warp_reductions_at_every_width) {
  check_warp_width<1>();
  check_warp_width<2>();
  check_warp_width<4>();
  check_warp_width<8>();
  check_warp_width<16>();
  check_warp_width<32>();
}

GPU_TEST_CASE(grid_last_block_reduce_at_several_grids) {
  check_grid<128>();
  check_grid<256>();
}

GPU_TEST_CASE(exact_pieces_give_the_reproducible_sum_at_several_grids) {
  check_exact<128, float, false>();
  check_exact<256, float, false>();
  check_exact<128, float, true>();
  check_exact<256, float, true>();
  check_exact<256, double, false>();
}

GPU_TEST_CASE(block_reductions_at_several_sizes) {
  check_block<32>();
  check_block<96>();  // three warps: not a power of two
  check_block<256>();
  check_block<1024>();
}

GPU_TEST_CASE(generic_reduce_transform_and_count_match_host_loops) {
  std::uint64_t stream = 1900;
  for (std::int64_t n : test::hostile_sizes()) {
    const auto u = test::random_vector<std::uint32_t>(n, 0, 0xffffffffu, ++stream);
    const auto f = test::random_vector<float>(n, -1.f, 1.f, ++stream);
    std::uint32_t or_all = 0;
    double max_abs = 0;
    std::int64_t above = 0;
    for (auto v : u) or_all |= v;
    for (auto v : f) {
      max_abs = std::max(max_abs, absolute{}(v));
      above += v > 0.5f;
    }
    gpukit::device_buffer<std::uint32_t> du(u), du_out(1);
    gpukit::device_buffer<float> df(f);
    gpukit::device_buffer<double> dd_out(1);
    gpukit::device_buffer<std::int64_t> dc_out(1);
    reduce::workspace ws;
    BOOST_TEST_CONTEXT("n = " << n) {
      du_out.fill_bytes(test::poison_byte);
      reduce::device::reduce(du.data(), n, bit_or{}, 0u, du_out.data(), ws);
      BOOST_TEST(du_out.download()[0] == or_all);
      du_out.fill_bytes(test::poison_byte);
      reduce::device::reduce(du.data(), n, bit_or{}, 0u, du_out.data());
      BOOST_TEST(du_out.download()[0] == or_all);
      dd_out.fill_bytes(test::poison_byte);
      reduce::device::transform_reduce(df.data(), n, absolute{}, reduce::maximum{}, 0.0, dd_out.data(), ws);
      BOOST_TEST(dd_out.download()[0] == max_abs);
      dc_out.fill_bytes(test::poison_byte);
      reduce::device::count_if(df.data(), n, above_half{}, dc_out.data());
      BOOST_TEST(dc_out.download()[0] == above);
    }
  }
}

GPU_TEST_CASE(generic_segmented_reduce_matches_host_loops) {
  const auto lengths = test::random_vector<std::int64_t>(20011, 0, 300, 2000);
  std::vector<std::int64_t> off{0};
  for (auto l : lengths) off.push_back(off.back() + l);
  off.back() += 0;
  const auto u = test::random_vector<std::uint32_t>(off.back(), 0, 0xffffffffu, 2001);
  gpukit::device_buffer<std::uint32_t> du(u), dout(static_cast<std::int64_t>(lengths.size()));
  gpukit::device_buffer<std::int64_t> doff(off);
  dout.fill_bytes(test::poison_byte);
  reduce::device::segmented_reduce(du.data(), doff.data(), static_cast<std::int64_t>(lengths.size()), bit_or{}, 0u,
                                   dout.data());
  const auto got = dout.download();
  int bad = 0;
  for (std::size_t s = 0; s < lengths.size() && bad < 5; ++s) {
    std::uint32_t e = 0;
    for (auto i = off[s]; i < off[s + 1]; ++i) e |= u[static_cast<std::size_t>(i)];
    if (got[s] != e) ++bad;
    BOOST_TEST(got[s] == e, "segment " << s);
  }
}

BOOST_AUTO_TEST_SUITE_END()
