//===- PlanMemory.h - What a step's plan allocates, by use --------*- C++ -*-===//
//
// Part of the contract: the runtime allocates each buffer of a plan in
// 64-byte units (sinter_plan.proto), so what a rank allocates for a step
// is a function of its plan alone. sinterc's --report-memory and the run's
// first lines both read it from here.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_CONTRACT_PLANMEMORY_H
#define SINTER_CONTRACT_PLANMEMORY_H

#include <cstdint>

namespace sinter::plan {

class Step;

/// The bytes one rank allocates for a step, by use.
struct PlanMemory {
  uint64_t params = 0;     ///< parameters and states
  uint64_t gradients = 0;  ///< gradients, or a ZERO2 rank's slices of them
  uint64_t optimizer = 0;  ///< optimizer moments
  uint64_t activations = 0;   ///< the workspace but for communication
  uint64_t communication = 0; ///< the workspace's collective buffers
  uint64_t io = 0;            ///< inputs, outputs, losses, metrics
  uint64_t paramElements = 0; ///< Ψ: whole parameters, sharded or not
  int moments = 0;            ///< optimizer moments per parameter
  uint64_t modelState() const { return params + gradients + optimizer; }
  uint64_t total() const { return modelState() + activations + communication + io; }
};

/// The most workspace the CUDA runtime gives a cuBLASLt matmul; the
/// device's one workspace grows to the largest any library call asks for.
constexpr uint64_t kCudaMatmulWorkspaceBytes = uint64_t(32) << 20;

/// How the runtime allocates a buffer of `bytes`.
inline uint64_t allocatedBytes(uint64_t bytes) {
  return ((bytes ? bytes : 1) + 63) / 64 * 64;
}

PlanMemory planMemory(const Step &step);

} // namespace sinter::plan

#endif // SINTER_CONTRACT_PLANMEMORY_H
