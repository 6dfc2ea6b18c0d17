// Backend selection and device queries: the one place that decides CPU or CUDA.
#include "reduce/device.hpp"

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "gpukit/cuda_check.hpp"
#include "gpukit/error.hpp"

namespace reduce {
namespace {
struct probe_result {
  bool available = false;
  std::string reason;
};

const probe_result& probe() {
  static const probe_result result = [] {
    probe_result r;
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
      r.reason = std::string("no CUDA device: ") + cudaGetErrorString(err);
    } else if (count == 0) {
      r.reason = "no CUDA device: the driver reports 0 devices";
    } else {
      r.available = true;
    }
    return r;
  }();
  return result;
}
}  // namespace

device_choice parse_device_choice(std::string_view text) {
  if (text == "auto") return device_choice::automatic;
  if (text == "cpu") return device_choice::cpu;
  if (text == "cuda") return device_choice::cuda;
  throw std::invalid_argument("unknown device '" + std::string(text) + "' (expected auto, cpu or cuda)");
}

bool cuda_device_available() { return probe().available; }

std::string cuda_unavailable_reason() { return probe().reason; }

std::string cuda_device_description() {
  if (!cuda_device_available()) throw gpukit::no_cuda_device(cuda_unavailable_reason());
  int device = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  GPUKIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
         std::to_string(prop.multiProcessorCount) + " SMs)";
}

backend select_backend(device_choice choice) {
  switch (choice) {
    case device_choice::cpu:
      return backend::cpu;
    case device_choice::cuda:
      if (!cuda_device_available())
        throw gpukit::no_cuda_device("--device cuda was requested but " + cuda_unavailable_reason());
      return backend::cuda;
    case device_choice::automatic:
      break;
  }
  return cuda_device_available() ? backend::cuda : backend::cpu;
}

const char* to_string(backend b) { return b == backend::cuda ? "cuda" : "cpu"; }


}  // namespace reduce
