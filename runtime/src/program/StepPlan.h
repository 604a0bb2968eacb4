//===- StepPlan.h - The buffers of a compiled step ----------------------===//
//
// The plan sinterc embeds next to each step (abi.h): which buffer is which
// input, parameter, state or output, with its dtype and shape. It is read
// once at start and drives allocation, initialisation, data feeding,
// checkpoints and reporting.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_PROGRAM_STEPPLAN_H
#define SINTER_RT_PROGRAM_STEPPLAN_H

#include "device/Device.h"
#include "runtime/contract/PlanMemory.h"
#include "sinter/rt/DType.h"
#include "sinter/rt/Shape.h"
#include "sinter/rt/Status.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sinter::rt {

enum class BufferKind {
  Input, Param, State, Loss, Metric, StateOut, Output,
  Workspace, ///< the step's arena of intermediate buffers (shape: bytes)
  Gradient,  ///< d(loss)/d(param `name`)
  OptimizerState, ///< moment `slot` ("m" or "v") of param `name`
  GradNorm,  ///< the global L2 norm of the step's gradients (f64 scalar)
  NonFinite, ///< 1 when the step skipped its update (i32 scalar)
  GradientSlices ///< ZERO2: this rank's slices of one bucket's gradients
};
const char *bufferKindName(BufferKind kind);

struct BufferSpec {
  std::string name;
  BufferKind kind = BufferKind::Input;
  DType dtype = DType::F32;
  Shape shape;
  std::string init; ///< params and states
  std::vector<double> initArgs;
  uint64_t valueBound = 0; ///< integer inputs: values in [0, bound); 0 unknown
  std::string valueBoundSource; ///< the op and line that bound them
  std::optional<int64_t> ignoreIndex; ///< the one value outside the bound allowed
  std::string slot;        ///< optimizer states: "m" or "v"
  /// A shard's tensor (sinter_plan.proto): `shape` is [s], elements
  /// [rank * s, +s) of this shape flattened and padded; empty: no shard.
  Shape globalShape;
  uint64_t byteSize = 0;
  /// The tensor a rank holds all or a shard of.
  const Shape &wholeShape() const { return globalShape.empty() ? shape : globalShape; }
};

/// Gradients summed over the ranks together: buffer indices, in slot order.
struct GradientBucket {
  std::vector<size_t> gradients;
  DType dtype = DType::F32;
};

struct StepPlan {
  std::string model;
  std::string phase;
  /// The update compiled into a train step: "adamw", "sgd", "sgd_momentum"
  /// or empty (none).
  std::string optimizer;
  /// Where the step runs: "cpu" or "cuda".
  std::string device = "cpu";
  /// The ranks the step was compiled for (parallel.world_size); 0: any.
  uint64_t worldSize = 0;
  /// batch.micro as compiled in; 0 when compiled without a config.
  uint64_t compiledMicroBatch = 0;
  std::vector<BufferSpec> buffers;
  std::vector<GradientBucket> buckets;
  /// What a rank allocates for the step, by use (the plan's own account).
  plan::PlanMemory memory;

  /// Parses and checks the embedded bytes (an internal error if the object
  /// and the runtime disagree).
  static Expected<StepPlan> parse(const char *bytes, int64_t size);
  /// The micro-batch size (batch.micro), which the inputs lead with.
  uint64_t microBatch() const;
  const BufferSpec *find(const std::string &name, BufferKind kind) const;
  /// Whether each rank holds only slices of some buffers (ZERO1, ZERO2,
  /// FULL_SHARD).
  bool sharded() const;
  /// Whether each rank holds only slices of the parameters (FULL_SHARD).
  bool shardsParameters() const;
};

/// A step's buffers on its device: one allocation per buffer of the plan,
/// except that each gradient bucket is one allocation holding its gradients
/// back to back (64-byte aligned slots); the pointer table the step is
/// called with; and, when the device's memory is not the host's, a host copy
/// of every buffer but the workspace. The program reads and writes the host
/// copies (`data`) and moves them to and from the device with upload and
/// download, which cost nothing on the CPU.
class BufferSet {
public:
  static Expected<BufferSet> allocate(const StepPlan &plan,
                                      Device &device = hostDevice());
  void **table() { return devicePointers.data(); }
  /// Buffer i as the host sees it.
  void *data(size_t i) { return hostPointers[i]; }
  const void *data(size_t i) const { return hostPointers[i]; }
  /// Buffer i as the step sees it.
  void *deviceData(size_t i) { return devicePointers[i]; }
  /// Bucket b's memory on the device: its first slot and its length in
  /// elements.
  void *bucketData(size_t b) { return bucketStart[b]; }
  uint64_t bucketElements(size_t b) const { return bucketCount[b]; }
  Device &device() const { return *dev; }
  /// Bytes allocated on the device, and for host copies (0 on the CPU).
  uint64_t deviceBytes() const { return onDevice; }
  uint64_t hostCopyBytes() const { return hostCopies; }

  /// Buffer i, or every buffer of these kinds, from the host to the device.
  Status upload(size_t i);
  Status upload(std::initializer_list<BufferKind> kinds);
  /// The same from the device to the host.
  Status download(size_t i);
  Status download(std::initializer_list<BufferKind> kinds);

private:
  struct Release {
    Device *device;
    void operator()(void *p) const { device->release(p); }
  };
  struct Free {
    void operator()(void *p) const;
  };
  Device *dev = nullptr;
  std::vector<BufferKind> kinds;
  std::vector<uint64_t> sizes;
  std::vector<std::unique_ptr<void, Release>> deviceStorage;
  std::vector<std::unique_ptr<void, Free>> hostStorage;
  std::vector<void *> devicePointers;
  std::vector<void *> hostPointers;
  std::vector<void *> bucketStart;
  std::vector<uint64_t> bucketCount;
  uint64_t onDevice = 0, hostCopies = 0;
};

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_STEPPLAN_H
