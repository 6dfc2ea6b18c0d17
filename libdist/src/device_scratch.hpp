// communicator::device_scratch: what libdist's reductions over device data need per call, made once by
// communicator::enable_device() on the rank's device. Host code.
#pragma once
#include "dist/communicator.hpp"
#include "gpukit/device_buffer.hpp"
#include "reduce/reduce.hpp"

namespace dist {

/// A libreduce workspace (the local pass allocates nothing) and one 8-byte result slot (the value the
/// collective reduces). Without them every dist::dot took scratch from a stream-ordered pool and a slot
/// with cudaMallocAsync: 2 x H200, 1024 floats per rank, 50.6 us per call against 33.5 for the same
/// reduce::dot with a workspace, ncclAllReduce, copy and sync written by hand.
struct communicator::device_scratch {
  reduce::workspace ws;
  gpukit::device_buffer<double> slot{1};
  template <class T>
  T* slot_as() {
    static_assert(sizeof(T) <= sizeof(double), "one result of at most 8 bytes");
    return reinterpret_cast<T*>(slot.data());
  }
};

}  // namespace dist
