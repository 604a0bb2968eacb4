//===- Parameters.cpp - Params and states: initialise, load, save -------===//

#include "program/Parameters.h"

#include "checkpoint/Safetensors.h"
#include "core/Init.h"
#include "program/StoredTensors.h"
#include "program/TensorMap.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace sinter::rt {

static bool isParameter(const BufferSpec &b) {
  return b.kind == BufferKind::Param || b.kind == BufferKind::State;
}

Status initialiseParameters(const StepPlan &plan, BufferSet &buffers,
                            uint64_t seed, uint64_t rank) {
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &b = plan.buffers[i];
    if (!isParameter(b))
      continue;
    std::optional<InitKind> kind = parseInitKind(b.init);
    if (!kind)
      return Status::error("internal error: unknown initialiser '" + b.init +
                           "' for '" + b.name + "'");
    // A shard: its slice of the whole tensor, zeros past the end.
    uint64_t count = b.byteSize / dtypeSize(b.dtype);
    uint64_t n = numElements(b.wholeShape()).value_or(0);
    uint64_t first = b.globalShape.empty() ? 0 : std::min(n, rank * count);
    std::memset(buffers.data(i), 0, b.byteSize);
    SINTER_RT_RETURN_IF_ERROR(
        fill(b.name, *kind, b.initArgs, b.dtype, b.wholeShape(), seed, first,
             std::min(count, n - first), buffers.data(i))
            .withPrefix("initialising '" + b.name + "': "));
  }
  return buffers.upload({BufferKind::Param, BufferKind::State});
}

namespace {

/// The 2-D `rows` x `cols` matrix at `in`, transposed into `out`.
void transpose(const uint8_t *in, uint64_t rows, uint64_t cols, size_t element,
               uint8_t *out) {
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < cols; ++c)
      std::memcpy(out + (c * rows + r) * element, in + (r * cols + c) * element, element);
}

/// What `--init` reads a parameter from: the file's tensor, and its shape
/// there (the parameter's, reversed when transposed).
Status checkStored(const StoredTensors &file, const BufferSpec &b,
                   const TensorMap &map, TensorMap::Stored &stored) {
  const std::string &path = file.path();
  std::optional<TensorMap::Stored> found = map.find(b.name);
  if (!found)
    return Status::error(std::string("tensor_map has no rule for the ") + bufferKindName(b.kind) +
                         " '" + b.name + "'");
  stored = *found;
  Shape want = b.wholeShape();
  if (stored.transposed && want.size() != 2)
    return Status::error("tensor_map transposes '" + b.name + "', which is " +
                         formatShape(want) + ", not a matrix");
  if (stored.transposed)
    std::swap(want[0], want[1]);
  std::optional<StoredTensor> e = file.find(stored.name);
  std::string as = stored.name == b.name ? "" : " (for '" + b.name + "')";
  if (!e)
    return Status::error(path + ": has no tensor '" + stored.name + "'" + as + " (a " +
                         bufferKindName(b.kind) + " of the model, " + dtypeName(b.dtype) +
                         formatShape(b.wholeShape()) + ")");
  // Another framework's file may store floats in another width; ours match.
  bool dtypeOk = map.identity() ? e->dtype == b.dtype
                                : isFloatingPoint(e->dtype) == isFloatingPoint(b.dtype);
  if (!dtypeOk || e->shape != want)
    return Status::error(path + ": tensor '" + stored.name + "'" + as + " is " +
                         dtypeName(e->dtype) + formatShape(e->shape) + " but the model's " +
                         bufferKindName(b.kind) + " needs " +
                         (map.identity() ? dtypeName(b.dtype) : std::string("")) +
                         formatShape(want) + (stored.transposed ? " (transposed)" : ""));
  return Status::success();
}

/// Rank `rank`'s buffer of parameter `b` from its transposed tensor: the
/// whole matrix, turned, then the rank's slice.
Status readTransposed(const StoredTensors &file, const std::string &name,
                      const BufferSpec &b, uint64_t rank, void *out) {
  Shape shape = b.wholeShape();
  uint64_t n = shape[0] * shape[1];
  size_t element = dtypeSize(b.dtype);
  std::vector<uint8_t> stored(n * element), whole(n * element);
  SINTER_RT_RETURN_IF_ERROR(file.read(name, 0, n, stored.data(), b.dtype));
  transpose(stored.data(), shape[1], shape[0], element, whole.data());
  uint64_t count = b.byteSize / element;
  uint64_t first = b.globalShape.empty() ? 0 : std::min(n, rank * count);
  std::memset(out, 0, b.byteSize);
  std::memcpy(out, whole.data() + first * element, std::min(count, n - first) * element);
  return Status::success();
}

} // namespace

Status loadParameters(const StepPlan &plan, BufferSet &buffers,
                      const std::string &path, uint64_t rank, const TensorMap &map) {
  Expected<StoredTensors> file = StoredTensors::open(path);
  if (!file.ok())
    return file.status();
  std::set<std::string> read;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &b = plan.buffers[i];
    if (!isParameter(b))
      continue;
    TensorMap::Stored stored;
    SINTER_RT_RETURN_IF_ERROR(checkStored(*file, b, map, stored));
    read.insert(stored.name);
    SINTER_RT_RETURN_IF_ERROR(
        stored.transposed ? readTransposed(*file, stored.name, b, rank, buffers.data(i))
                          : readBuffer(*file, stored.name, b, rank, buffers.data(i)));
  }
  // A checkpoint also holds the optimizer's moments: a run that starts from
  // it takes its parameters and states only.
  for (const std::string &name : file->names()) {
    if (read.count(name) || (map.identity() && name.rfind("optimizer.", 0) == 0) ||
        map.ignored(name))
      continue;
    return Status::error(path + ": tensor '" + name + "' is not a param or state of model '" +
                         plan.model + "'" +
                         (map.identity() ? std::string()
                                         : " under tensor_map; add it to "
                                           "tensor_map.ignore to leave it unread"));
  }
  return buffers.upload({BufferKind::Param, BufferKind::State});
}

Status saveParameters(const StepPlan &plan, BufferSet &buffers,
                      const std::string &path, Communicator *comm, const TensorMap &map) {
  SINTER_RT_RETURN_IF_ERROR(buffers.download({BufferKind::Param, BufferKind::State}));
  // A sharded parameter is gathered whole: the file is for other tools.
  std::vector<std::vector<uint8_t>> copies;
  std::vector<SafetensorsTensor> tensors;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &b = plan.buffers[i];
    if (!isParameter(b))
      continue;
    std::optional<TensorMap::Stored> stored = map.find(b.name);
    if (!stored)
      return Status::error(std::string("tensor_map has no rule for the ") + bufferKindName(b.kind) +
                           " '" + b.name + "'");
    const uint8_t *data = static_cast<const uint8_t *>(buffers.data(i));
    Shape shape = b.wholeShape();
    if (!b.globalShape.empty()) {
      uint64_t ranks = comm ? uint64_t(comm->size()) : 1;
      std::vector<uint8_t> &rows = copies.emplace_back(b.byteSize * ranks);
      if (comm)
        SINTER_RT_RETURN_IF_ERROR(comm->allGather(buffers.data(i), rows.data(), b.dtype,
                                                  b.byteSize / dtypeSize(b.dtype))
                                      .wait());
      else
        std::memcpy(rows.data(), buffers.data(i), b.byteSize);
      data = rows.data();
    }
    if (stored->transposed) {
      if (shape.size() != 2)
        return Status::error("tensor_map transposes '" + b.name + "', which is " +
                             formatShape(shape) + ", not a matrix");
      std::vector<uint8_t> &turned =
          copies.emplace_back(shape[0] * shape[1] * dtypeSize(b.dtype));
      transpose(data, shape[0], shape[1], dtypeSize(b.dtype), turned.data());
      data = turned.data();
      std::swap(shape[0], shape[1]);
    }
    tensors.push_back({stored->name, b.dtype, shape, data});
  }
  if (comm && comm->rank() != 0)
    return Status::success(); // rank 0 writes
  std::map<std::string, std::string> metadata = map.metadata();
  metadata["model"] = plan.model;
  return writeSafetensors(path, tensors, metadata);
}

} // namespace sinter::rt
