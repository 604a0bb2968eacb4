//===- Checkpoint.cpp - Saving and resuming a training run --------------===//

#include "program/Checkpoint.h"

#include "checkpoint/Safetensors.h"
#include "program/Parameters.h"
#include "program/StoredTensors.h"
#include "support/AtomicFile.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <dirent.h>
#include <future>
#include <map>
#include <sys/stat.h>
#include <thread>

namespace sinter::rt {

static constexpr const char *kFormat = "sinter-checkpoint-1";
/// How long rank 0's writer waits for the other ranks' pieces of a
/// checkpoint it writes in the background: they write theirs beside it,
/// from snapshots taken at the same step. A rank that dies stops the run
/// sooner (sinter-run's supervisor).
static constexpr std::chrono::seconds kPiecePatience{600};

/// The steps of the checkpoints in `dir`, ascending.
static std::vector<int64_t> checkpointSteps(const std::string &dir) {
  std::vector<int64_t> steps;
  DIR *d = opendir(dir.c_str());
  if (!d)
    return steps;
  while (dirent *e = readdir(d)) {
    long long step;
    char tail[32];
    if (std::sscanf(e->d_name, "step-%lld.safetensor%31s", &step, tail) == 2 &&
        std::strcmp(tail, "s") == 0)
      steps.push_back(step);
  }
  closedir(d);
  std::sort(steps.begin(), steps.end());
  return steps;
}

/// An optimizer moment's tensor: `optimizer.fc1.weight.m`.
static std::string momentName(const BufferSpec &b) {
  return "optimizer." + b.name + "." + b.slot;
}

static std::string pathOf(const std::string &dir, int64_t step) {
  return dir + "/step-" + std::to_string(step) + ".safetensors";
}

std::string latestCheckpoint(const std::string &dir) {
  std::vector<int64_t> steps = checkpointSteps(dir);
  return steps.empty() ? "" : pathOf(dir, steps.back());
}

/// A buffer's name in checkpoint files: moments under momentName().
static std::string storedName(const BufferSpec &b) {
  return b.kind == BufferKind::OptimizerState ? momentName(b) : b.name;
}

/// Every buffer of the checkpoint that a rank holds a shard of.
static std::vector<size_t> shardedBuffers(const StepPlan &plan) {
  std::vector<size_t> sharded;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (!plan.buffers[i].globalShape.empty())
      sharded.push_back(i);
  return sharded;
}

/// shardedBuffers(plan) as shards, their data at `data(i)`.
template <typename Data>
static std::vector<TensorShard> shardsOf(const StepPlan &plan, Data data) {
  std::vector<TensorShard> shards;
  for (size_t i : shardedBuffers(plan)) {
    const BufferSpec &b = plan.buffers[i];
    shards.push_back({storedName(b), b.dtype, b.globalShape, data(i),
                      b.byteSize / dtypeSize(b.dtype)});
  }
  return shards;
}

static std::vector<TensorShard> shardsOf(const StepPlan &plan, BufferSet &buffers) {
  return shardsOf(plan, [&](size_t i) { return buffers.data(i); });
}

/// Whether ranks hold shards of some buffers (a ZERO or FULL_SHARD step).
static bool isSharded(const StepPlan &plan) {
  return std::any_of(plan.buffers.begin(), plan.buffers.end(),
                     [](const BufferSpec &b) { return !b.globalShape.empty(); });
}

/// The buffers stored whole in the main file: params and states under their
/// names, moments under momentName().
static std::vector<size_t> wholeBuffers(const StepPlan &plan) {
  std::vector<size_t> whole;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &b = plan.buffers[i];
    if (b.globalShape.empty() &&
        (b.kind == BufferKind::Param || b.kind == BufferKind::State ||
         b.kind == BufferKind::OptimizerState))
      whole.push_back(i);
  }
  return whole;
}

/// wholeBuffers(plan) as tensors, their data at `data(i)`.
template <typename Data>
static std::vector<SafetensorsTensor> wholeTensors(const StepPlan &plan, Data data) {
  std::vector<SafetensorsTensor> tensors;
  for (size_t i : wholeBuffers(plan)) {
    const BufferSpec &b = plan.buffers[i];
    tensors.push_back({storedName(b), b.dtype, b.shape, data(i)});
  }
  return tensors;
}

static std::vector<SafetensorsTensor> wholeTensors(const StepPlan &plan, BufferSet &buffers) {
  return wholeTensors(plan, [&](size_t i) { return buffers.data(i); });
}

/// The main file's metadata.
static std::map<std::string, std::string> metadataOf(const StepPlan &plan, int64_t step,
                                                     uint64_t seed, int64_t updates,
                                                     uint64_t pieces) {
  std::map<std::string, std::string> meta = {{"format", kFormat},
                                             {"model", plan.model},
                                             {"step", std::to_string(step)},
                                             {"optimizer_steps", std::to_string(updates)},
                                             {"seed", std::to_string(seed)}};
  if (pieces)
    meta["pieces"] = std::to_string(pieces);
  return meta;
}

/// Writes the main file of `step`, which makes its checkpoint whole, then
/// keeps the newest `keep` up to it. Later steps (left by an earlier run in
/// the same folder) are not this run's to remove, and the file just written
/// is never removed.
static Status writeMainFile(const std::string &dir, int64_t keep, int64_t step,
                            const std::vector<SafetensorsTensor> &tensors,
                            const std::map<std::string, std::string> &meta) {
  SINTER_RT_RETURN_IF_ERROR(createDirectories(dir, "checkpoint.dir"));
  SINTER_RT_RETURN_IF_ERROR(writeSafetensors(pathOf(dir, step), tensors, meta));
  std::vector<int64_t> older;
  for (int64_t s : checkpointSteps(dir))
    if (s < step)
      older.push_back(s);
  size_t kept = size_t(std::max<int64_t>(keep, 1)) - 1;
  for (size_t i = 0; i + kept < older.size(); ++i)
    removeWithPieces(pathOf(dir, older[i]));
  return Status::success();
}

/// Waits up to `patience` for every rank's piece of `path` (each written
/// atomically, so there is whole), looking every 20 ms.
static Status waitForPieces(const std::string &path, uint64_t ranks,
                            std::chrono::seconds patience) {
  auto deadline = std::chrono::steady_clock::now() + patience;
  for (uint64_t r = 0; r < ranks; ++r) {
    std::string piece = piecePath(path, r, ranks);
    struct stat st;
    while (stat(piece.c_str(), &st) != 0) {
      if (std::chrono::steady_clock::now() >= deadline)
        return Status::error(
            "checkpoint.dir: " + piece + ", which rank " + std::to_string(r) +
            " writes, is not there" +
            (patience.count() ? " after " + std::to_string(patience.count()) + " s" : "") +
            ": the ranks of a sharded run must share checkpoint.dir");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return Status::success();
}

Expected<std::string> saveCheckpoint(const std::string &dir, int64_t keep,
                                     int64_t step, uint64_t seed,
                                     const StepPlan &plan, BufferSet &buffers,
                                     int64_t updates, Communicator *comm) {
  if (!isSharded(plan) && comm && comm->rank() != 0)
    return std::string(); // rank 0 writes the whole file; nothing to copy back
  SINTER_RT_RETURN_IF_ERROR(buffers.download(
      {BufferKind::Param, BufferKind::State, BufferKind::OptimizerState}));
  uint64_t rank = comm ? uint64_t(comm->rank()) : 0;
  uint64_t ranks = comm ? uint64_t(comm->size()) : 1;
  std::string path = pathOf(dir, step);
  // Each rank writes its own shards (StoredTensors.h); the main file, last,
  // makes the checkpoint whole.
  std::vector<TensorShard> shards = shardsOf(plan, buffers);
  if (!shards.empty()) {
    if (ranks != plan.worldSize)
      return Status::error("internal error: saving a checkpoint of a step "
                           "sharded over " + std::to_string(plan.worldSize) +
                           " ranks on " + std::to_string(ranks));
    SINTER_RT_RETURN_IF_ERROR(createDirectories(dir, "checkpoint.dir"));
    SINTER_RT_RETURN_IF_ERROR(writePiece(path, rank, ranks, shards));
    if (comm)
      SINTER_RT_RETURN_IF_ERROR(comm->barrier().wait());
  }
  if (rank != 0)
    return std::string(); // rank 0 writes the rest
  if (!shards.empty())
    SINTER_RT_RETURN_IF_ERROR(waitForPieces(path, ranks, std::chrono::seconds(0)));
  SINTER_RT_RETURN_IF_ERROR(writeMainFile(dir, keep, step, wholeTensors(plan, buffers),
                                          metadataOf(plan, step, seed, updates,
                                                     shards.empty() ? 0 : ranks)));
  return path;
}

CheckpointWriter::~CheckpointWriter() {
  (void)wait();
  if (snapshot.data)
    snapshot.device->releaseHost(snapshot.data);
}

/// Whether the writer saves `plan`'s checkpoints in the background: rank 0
/// writes the main file, and under a sharded strategy every rank its piece.
static bool writesInBackground(bool inBackground, const StepPlan &plan, int rank) {
  return inBackground && (rank == 0 || isSharded(plan));
}

/// The buffers rank `rank` writes: the main file's on rank 0, its shards.
static std::vector<size_t> buffersWritten(const StepPlan &plan, int rank) {
  std::vector<size_t> written = rank == 0 ? wholeBuffers(plan) : std::vector<size_t>();
  for (size_t i : shardedBuffers(plan))
    written.push_back(i);
  return written;
}

static uint64_t bytesOf(const StepPlan &plan, const std::vector<size_t> &buffers) {
  uint64_t bytes = 0;
  for (size_t i : buffers)
    bytes += plan.buffers[i].byteSize;
  return bytes;
}

Status CheckpointWriter::allocate(Device &device, uint64_t bytes) {
  if (snapshot.data && snapshot.device == &device && snapshot.bytes >= bytes)
    return Status::success();
  if (snapshot.data)
    snapshot.device->releaseHost(snapshot.data);
  snapshot = {};
  Expected<void *> data = device.allocateHost(bytes);
  if (!data.ok())
    return Status::error("checkpoint snapshot: " + data.message());
  // Touched now, so that the first checkpoint's stall is only a copy.
  std::memset(*data, 0, bytes);
  snapshot = {&device, static_cast<char *>(*data), bytes};
  return Status::success();
}

Expected<uint64_t> CheckpointWriter::reserve(const StepPlan &plan, int rank,
                                             Device &device) {
  if (!writesInBackground(inBackground, plan, rank))
    return uint64_t(0);
  SINTER_RT_RETURN_IF_ERROR(allocate(device, bytesOf(plan, buffersWritten(plan, rank))));
  return snapshot.bytes;
}

Status CheckpointWriter::wait() {
  if (!inFlight.valid())
    return Status::success();
  return inFlight.get();
}

Expected<std::string> CheckpointWriter::save(const std::string &dir, int64_t keep,
                                             int64_t step, uint64_t seed,
                                             const StepPlan &plan, BufferSet &buffers,
                                             int64_t updates, Communicator *comm,
                                             bool inForeground) {
  // The previous checkpoint first: the snapshot is reused, and checkpoints
  // complete in order.
  SINTER_RT_RETURN_IF_ERROR(wait());
  int rank = comm ? comm->rank() : 0;
  uint64_t ranks = comm ? uint64_t(comm->size()) : 1;
  if (inForeground || !writesInBackground(inBackground, plan, rank))
    return saveCheckpoint(dir, keep, step, seed, plan, buffers, updates, comm);
  bool sharded = isSharded(plan);
  if (sharded && ranks != plan.worldSize)
    return Status::error("internal error: saving a checkpoint of a step sharded over " +
                         std::to_string(plan.worldSize) + " ranks on " +
                         std::to_string(ranks));
  // Straight from the device's buffers into the snapshot.
  std::vector<size_t> written = buffersWritten(plan, rank);
  SINTER_RT_RETURN_IF_ERROR(allocate(buffers.device(), bytesOf(plan, written)));
  std::map<size_t, const char *> at;
  char *next = snapshot.data;
  for (size_t i : written) {
    uint64_t size = plan.buffers[i].byteSize;
    SINTER_RT_RETURN_IF_ERROR(buffers.device().download(next, buffers.deviceData(i), size));
    at[i] = next;
    next += size;
  }
  auto snapshotOf = [&](size_t i) { return at.at(i); };
  std::vector<SafetensorsTensor> tensors;
  if (rank == 0)
    tensors = wholeTensors(plan, snapshotOf);
  std::vector<TensorShard> shards;
  if (sharded)
    shards = shardsOf(plan, snapshotOf);
  std::string path = pathOf(dir, step);
  // Each rank writes its piece; rank 0 then waits for the others' (no
  // collective: the training's run meanwhile) and writes the main file.
  inFlight = std::async(
      std::launch::async,
      [dir, keep, step, path, rank, ranks, tensors = std::move(tensors),
       shards = std::move(shards),
       meta = metadataOf(plan, step, seed, updates, sharded ? ranks : 0)]() -> Status {
        if (!shards.empty()) {
          SINTER_RT_RETURN_IF_ERROR(createDirectories(dir, "checkpoint.dir"));
          SINTER_RT_RETURN_IF_ERROR(writePiece(path, uint64_t(rank), ranks, shards));
        }
        if (rank != 0)
          return Status::success();
        if (!shards.empty())
          SINTER_RT_RETURN_IF_ERROR(waitForPieces(path, ranks, kPiecePatience));
        return writeMainFile(dir, keep, step, tensors, meta);
      });
  return rank == 0 ? path : std::string();
}

/// A non-negative integer of the metadata (seeds use all 64 bits).
static Expected<uint64_t> metaUnsigned(const SafetensorsFile &f, const char *key) {
  auto it = f.metadata().find(key);
  char *end = nullptr;
  if (it == f.metadata().end() || it->second.empty())
    return Status::error(f.path() + ": not a Sinter checkpoint (no '" +
                         std::string(key) + "' in its metadata)");
  errno = 0;
  unsigned long long v = std::strtoull(it->second.c_str(), &end, 10);
  if (*end || errno == ERANGE || it->second[0] == '-')
    return Status::error(f.path() + ": metadata '" + key +
                         "' is not a non-negative number");
  return uint64_t(v);
}

static Expected<int64_t> metaInt(const SafetensorsFile &f, const char *key) {
  Expected<uint64_t> v = metaUnsigned(f, key);
  if (!v.ok())
    return v.status();
  if (*v > uint64_t(INT64_MAX))
    return Status::error(f.path() + ": metadata '" + key + "' is out of range");
  return int64_t(*v);
}

Expected<int64_t> loadCheckpoint(const std::string &path, uint64_t seed,
                                 const StepPlan &plan, BufferSet &buffers,
                                 int64_t &updates, uint64_t rank) {
  Expected<StoredTensors> stored = StoredTensors::open(path);
  if (!stored.ok())
    return stored.status();
  const SafetensorsFile &file = stored->file();
  auto format = file.metadata().find("format");
  if (format == file.metadata().end() || format->second != kFormat)
    return Status::error(path + ": not a Sinter checkpoint of format " + kFormat);
  Expected<int64_t> step = metaInt(file, "step");
  Expected<int64_t> taken = metaInt(file, "optimizer_steps");
  Expected<uint64_t> savedSeed = metaUnsigned(file, "seed");
  if (!step.ok())
    return step.status();
  if (!taken.ok())
    return taken.status();
  if (!savedSeed.ok())
    return savedSeed.status();
  if (uint64_t(*savedSeed) != seed)
    return Status::error(path + ": written with seed " +
                         std::to_string(*savedSeed) + " but this run has seed " +
                         std::to_string(seed) +
                         "; the data order would differ, so it cannot resume");
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &b = plan.buffers[i];
    if (b.kind != BufferKind::Param && b.kind != BufferKind::State)
      continue;
    std::optional<StoredTensor> t = stored->find(b.name);
    if (!t || t->dtype != b.dtype || t->shape != b.wholeShape())
      return Status::error(path + ": " + (t ? "tensor '" + b.name +
                                                  "' has another dtype or shape"
                                            : "has no tensor '" + b.name + "'") +
                           " than model '" + plan.model + "'");
    SINTER_RT_RETURN_IF_ERROR(readBuffer(*stored, b.name, b, rank, buffers.data(i)));
  }
  // Moments in f64 (written before the update was compiled) load converted.
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &b = plan.buffers[i];
    if (b.kind != BufferKind::OptimizerState)
      continue;
    std::string name = momentName(b);
    std::optional<StoredTensor> t = stored->find(name);
    if (!t)
      return Status::error(path + ": has no optimizer state '" + name +
                           "'; it was written with another optimizer than "
                           "this program's (" + plan.optimizer + ")");
    if (t->shape != b.wholeShape() || (t->dtype != DType::F64 && t->dtype != DType::F32))
      return Status::error(path + ": optimizer state '" + name +
                           "' does not match the parameter's shape");
    SINTER_RT_RETURN_IF_ERROR(readBuffer(*stored, name, b, rank, buffers.data(i)));
  }
  SINTER_RT_RETURN_IF_ERROR(buffers.upload(
      {BufferKind::Param, BufferKind::State, BufferKind::OptimizerState}));
  updates = *taken;
  return *step;
}

} // namespace sinter::rt
