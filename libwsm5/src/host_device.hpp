// WSM5_HD: the qualifier of the functions that the CPU reference, the host emulation and the CUDA variants
// share (physics.hpp, glibc_float_math.hpp).
#pragma once

#if defined(__CUDACC__)
#define WSM5_HD __host__ __device__ __forceinline__
#else
// static: each host TU keeps its own copy, so the FMA-contracted build of the reference
// (reference_contracted.cpp) can never lend its rounding to the reference through the linker.
#define WSM5_HD static inline
#endif
