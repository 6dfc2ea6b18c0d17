// Backend selection: the one place that decides between the CPU reference backend and CUDA.
#pragma once
#include <string>
#include <string_view>

struct CUstream_st;  // so that reduce::stream_t is cudaStream_t without including CUDA headers

namespace reduce {

/// A CUDA stream (identical to cudaStream_t); nullptr is the default stream.
using stream_t = CUstream_st*;

/// Which backend runs an algorithm.
enum class backend { cpu, cuda };

/// What a user asked for on a command line (--device auto|cpu|cuda).
enum class device_choice { automatic, cpu, cuda };

/// Parses "auto", "cpu" or "cuda"; throws std::invalid_argument naming the bad value otherwise.
device_choice parse_device_choice(std::string_view text);

/// True when at least one CUDA device is usable (driver present, device count > 0).
/// The answer is computed once and cached.
bool cuda_device_available();

/// Why no CUDA device is usable ("no CUDA device: <CUDA error text>"), or "" when one is.
std::string cuda_unavailable_reason();

/// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)" for the current device; throws gpukit::no_cuda_device.
std::string cuda_device_description();

/// Resolves a choice to a backend. automatic -> cuda when a device is usable, otherwise cpu; the caller
/// says so to its user (a library never prints): `choice == automatic && b == backend::cpu` is the
/// fallback, and cuda_unavailable_reason() its reason. cuda without a device throws
/// gpukit::no_cuda_device.
backend select_backend(device_choice choice);

/// "cpu" or "cuda".
const char* to_string(backend b);

}  // namespace reduce
