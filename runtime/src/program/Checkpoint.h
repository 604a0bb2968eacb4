//===- Checkpoint.h - Saving and resuming a training run ----------------===//
//
// A checkpoint is one safetensors file, `DIR/step-N.safetensors`: every
// param and state under its own name (so numpy and PyTorch read it as a
// state_dict), the optimizer's moments as `optimizer.NAME.m` / `.v` in their
// buffers' dtype (f32; files with f64 moments load, converted), and in the
// metadata the step, the optimizer's update count and the seed. A buffer
// sharded over the ranks (a ZERO moment, a FULL_SHARD parameter) is stored
// by name and global shape in pieces that each rank writes beside the file
// (StoredTensors.h), so no rank gathers the model, and a checkpoint does
// not depend on the world size or the strategy: at resume each rank reads
// the whole tensor or its own slice, whatever the pieces.
// The data position follows from the step (the sampler is a function of the
// seed and the step), so a resumed run sees exactly the batches an
// uninterrupted run would, and computes the same losses bit for bit. Files
// are written atomically; only the last `keep` are kept.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_PROGRAM_CHECKPOINT_H
#define SINTER_RT_PROGRAM_CHECKPOINT_H

#include "dist/Communicator.h"
#include "program/StepPlan.h"

#include <future>
#include <string>
#include <vector>

namespace sinter::rt {

/// Writes the checkpoint of `step` completed steps into `dir` (created if
/// needed), then removes all but the newest `keep`. Returns its path. With
/// `comm`, every rank calls it: each writes its shards' piece, and rank 0,
/// once every piece is there, the rest; the others return "".
Expected<std::string> saveCheckpoint(const std::string &dir, int64_t keep,
                                     int64_t step, uint64_t seed,
                                     const StepPlan &plan, BufferSet &buffers,
                                     int64_t updates,
                                     Communicator *comm = nullptr);

/// Saves checkpoints as saveCheckpoint does, writing them in the background:
/// save() waits for the checkpoint still being written, if any, copies the
/// state from the device into a host snapshot (one checkpoint's bytes,
/// reused; pinned on a GPU) and returns while a thread writes the same file
/// from the snapshot. Under a sharded strategy every rank snapshots and
/// writes its piece so, and rank 0's thread waits for the others' pieces
/// (no collective beside the training's) before the main file. A failed
/// write is the error of the next save() or wait().
class CheckpointWriter {
public:
  explicit CheckpointWriter(bool inBackground) : inBackground(inBackground) {}
  /// Waits for the write in flight.
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter &) = delete;
  CheckpointWriter &operator=(const CheckpointWriter &) = delete;

  /// The path of the checkpoint of `step`, which is whole once wait()
  /// returns success; "" on ranks that write nothing.
  Expected<std::string> save(const std::string &dir, int64_t keep, int64_t step,
                             uint64_t seed, const StepPlan &plan, BufferSet &buffers,
                             int64_t updates, Communicator *comm = nullptr,
                             bool inForeground = false);
  /// Waits for the checkpoint being written; its failure, if it failed.
  Status wait();
  /// Allocates (and touches) the snapshot for `plan` on `device`'s host
  /// side now, so that the first checkpoint's stall is a copy; returns its
  /// bytes, 0 when this rank writes in the foreground or nothing.
  Expected<uint64_t> reserve(const StepPlan &plan, int rank, Device &device);
  /// The host memory the snapshot holds.
  uint64_t snapshotBytes() const { return snapshot.bytes; }

private:
  /// Host memory of `device` for one checkpoint's bytes.
  struct Snapshot {
    Device *device = nullptr;
    char *data = nullptr;
    uint64_t bytes = 0;
  };
  Status allocate(Device &device, uint64_t bytes);

  bool inBackground;
  Snapshot snapshot;
  std::future<Status> inFlight;
};

/// The newest checkpoint in `dir`, or "" when there is none.
std::string latestCheckpoint(const std::string &dir);

/// Restores params, states and optimizer state from `path` and the number of
/// updates applied (`updates`); returns the number of completed steps. A
/// sharded buffer takes rank `rank`'s slice of the stored tensor. Any
/// mismatch or damage is an error naming the file: a resumed run never
/// silently starts from scratch.
Expected<int64_t> loadCheckpoint(const std::string &path, uint64_t seed,
                                 const StepPlan &plan, BufferSet &buffers,
                                 int64_t &updates, uint64_t rank = 0);

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_CHECKPOINT_H
