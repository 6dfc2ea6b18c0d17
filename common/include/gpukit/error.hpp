// Errors thrown by every gpukit library (common layer). No CUDA headers: a plain C++ program can catch these.
#pragma once
#include <stdexcept>
#include <string>

namespace gpukit {

/// A CUDA runtime call or kernel launch failed. what() holds the CUDA error name and text, the
/// file and line of the failing call, and the call itself.
class cuda_error : public std::runtime_error {
public:
  cuda_error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  /// The cudaError_t value, as an int.
  int code() const noexcept { return code_; }

private:
  int code_;
};

/// No CUDA device can be used (none present, no driver) where one was demanded.
class no_cuda_device : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpukit
