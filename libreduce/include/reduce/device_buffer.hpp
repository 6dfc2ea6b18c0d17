// Move-only owner of device memory. No CUDA headers, so host code and tests can hold one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "reduce/device.hpp"

namespace reduce {
namespace detail {
void* device_allocate(std::size_t bytes);            // cudaMalloc, checked; nullptr for 0 bytes
void device_free(void* p) noexcept;                  // cudaFree; errors ignored (destructor path)
void copy_to_device(void* dst, const void* src, std::size_t bytes);
void copy_to_host(void* dst, const void* src, std::size_t bytes);
void copy_device_to_device(void* dst, const void* src, std::size_t bytes);
void fill_bytes(void* dst, int byte, std::size_t bytes);  // cudaMemset, checked
void synchronize();                                  // cudaDeviceSynchronize, checked
}  // namespace detail

/// Owning array of `size()` T in device memory (cudaMalloc). Move-only RAII; never passed to kernels:
/// give kernels data() and size().
template <class T>
class device_buffer {
  static_assert(std::is_trivially_copyable_v<T>, "device_buffer holds trivially copyable types");

public:
  device_buffer() = default;
  explicit device_buffer(std::int64_t n)
      : data_(static_cast<T*>(detail::device_allocate(static_cast<std::size_t>(n) * sizeof(T)))), size_(n) {}
  explicit device_buffer(const std::vector<T>& host) : device_buffer(static_cast<std::int64_t>(host.size())) {
    detail::copy_to_device(data_, host.data(), host.size() * sizeof(T));
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    if (this != &o) {
      detail::device_free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~device_buffer() { detail::device_free(data_); }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::int64_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return static_cast<std::size_t>(size_) * sizeof(T); }

  void upload(const T* host, std::int64_t n) { detail::copy_to_device(data_, host, static_cast<std::size_t>(n) * sizeof(T)); }
  void upload(const std::vector<T>& host) { upload(host.data(), static_cast<std::int64_t>(host.size())); }
  std::vector<T> download() const {
    std::vector<T> host(static_cast<std::size_t>(size_));
    detail::copy_to_host(host.data(), data_, bytes());
    return host;
  }
  /// Sets every byte to `byte` (tests poison outputs with 0xFF: NaN for floats, -1 for integers).
  void fill_bytes(int byte) { detail::fill_bytes(data_, byte, bytes()); }

private:
  T* data_ = nullptr;
  std::int64_t size_ = 0;
};

}  // namespace reduce
