// Move-only owner of device memory and the checked copies it is built on. No CUDA headers, so host code
// and tests can hold one. Part of the common layer (gpukit::common) that every library shares.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace gpukit {

/// cudaMalloc, checked (throws gpukit::cuda_error); nullptr for 0 bytes.
void* device_allocate(std::size_t bytes);
/// device_allocate(count * element_bytes); gpukit::cuda_error naming the count when it is negative or
/// the product does not fit size_t (2^62 doubles would wrap to 0 bytes and an empty allocation).
void* device_allocate_array(std::int64_t count, std::size_t element_bytes);
/// cudaFree; errors ignored (destructor path).
void device_free(void* p) noexcept;
/// Blocking, checked cudaMemcpy host -> device of `bytes` (nothing for 0).
void copy_to_device(void* dst, const void* src, std::size_t bytes);
/// Blocking, checked cudaMemcpy device -> host of `bytes` (nothing for 0).
void copy_to_host(void* dst, const void* src, std::size_t bytes);
/// Checked cudaMemset of `bytes` to `byte`.
void fill_bytes(void* dst, int byte, std::size_t bytes);
/// Checked cudaDeviceSynchronize.
void device_synchronize();

/// Owning array of `size()` T in device memory (cudaMalloc). Move-only RAII; never passed to kernels:
/// give kernels data() and size().
template <class T>
class device_buffer {
  static_assert(std::is_trivially_copyable_v<T>, "device_buffer holds trivially copyable types");

public:
  device_buffer() = default;
  explicit device_buffer(std::int64_t n)
      : data_(static_cast<T*>(device_allocate_array(n, sizeof(T)))), size_(n) {}
  explicit device_buffer(const std::vector<T>& host) : device_buffer(static_cast<std::int64_t>(host.size())) {
    copy_to_device(data_, host.data(), host.size() * sizeof(T));
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    if (this != &o) {
      device_free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~device_buffer() { device_free(data_); }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::int64_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return static_cast<std::size_t>(size_) * sizeof(T); }

  void upload(const T* host, std::int64_t n) { gpukit::copy_to_device(data_, host, static_cast<std::size_t>(n) * sizeof(T)); }
  void upload(const std::vector<T>& host) { upload(host.data(), static_cast<std::int64_t>(host.size())); }
  std::vector<T> download() const {
    std::vector<T> host(static_cast<std::size_t>(size_));
    copy_to_host(host.data(), data_, bytes());
    return host;
  }
  /// Sets every byte to `byte` (tests poison outputs with 0xFF: NaN for floats, -1 for integers).
  void fill_bytes(int byte) { gpukit::fill_bytes(data_, byte, bytes()); }

private:
  T* data_ = nullptr;
  std::int64_t size_ = 0;
};

}  // namespace gpukit
