//===- Parameters.cpp - Params and states: initialise, load, save -------===//

#include "program/Parameters.h"

#include "checkpoint/Safetensors.h"
#include "core/Init.h"
#include "program/StoredTensors.h"

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

Status loadParameters(const StepPlan &plan, BufferSet &buffers,
                      const std::string &path, uint64_t rank) {
  Expected<StoredTensors> file = StoredTensors::open(path);
  if (!file.ok())
    return file.status();
  std::set<std::string> expected;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &b = plan.buffers[i];
    if (!isParameter(b))
      continue;
    expected.insert(b.name);
    std::optional<StoredTensor> e = file->find(b.name);
    if (!e)
      return Status::error(path + ": has no tensor '" + b.name + "' (a " +
                           bufferKindName(b.kind) + " of the model, " +
                           dtypeName(b.dtype) + formatShape(b.wholeShape()) + ")");
    if (e->dtype != b.dtype || e->shape != b.wholeShape())
      return Status::error(path + ": tensor '" + b.name + "' is " +
                           dtypeName(e->dtype) + formatShape(e->shape) +
                           " but the model's " + bufferKindName(b.kind) +
                           " is " + dtypeName(b.dtype) + formatShape(b.wholeShape()));
    SINTER_RT_RETURN_IF_ERROR(readBuffer(*file, b.name, b, rank, buffers.data(i)));
  }
  // A checkpoint also holds the optimizer's moments: a run that starts from
  // it takes its parameters and states only.
  for (const std::string &name : file->names())
    if (!expected.count(name) && name.rfind("optimizer.", 0) != 0)
      return Status::error(path + ": tensor '" + name +
                           "' is not a param or state of model '" + plan.model +
                           "'");
  return buffers.upload({BufferKind::Param, BufferKind::State});
}

Status saveParameters(const StepPlan &plan, BufferSet &buffers,
                      const std::string &path, Communicator *comm) {
  SINTER_RT_RETURN_IF_ERROR(buffers.download({BufferKind::Param, BufferKind::State}));
  // A sharded parameter is gathered whole: the file is for other tools.
  std::vector<std::vector<uint8_t>> gathered;
  std::vector<SafetensorsTensor> tensors;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &b = plan.buffers[i];
    if (!isParameter(b))
      continue;
    if (b.globalShape.empty()) {
      tensors.push_back({b.name, b.dtype, b.shape, buffers.data(i)});
      continue;
    }
    uint64_t ranks = comm ? uint64_t(comm->size()) : 1;
    std::vector<uint8_t> &rows = gathered.emplace_back(b.byteSize * ranks);
    if (comm)
      SINTER_RT_RETURN_IF_ERROR(comm->allGather(buffers.data(i), rows.data(), b.dtype,
                                                b.byteSize / dtypeSize(b.dtype))
                                    .wait());
    else
      std::memcpy(rows.data(), buffers.data(i), b.byteSize);
    tensors.push_back({b.name, b.dtype, b.globalShape, rows.data()});
  }
  if (comm && comm->rank() != 0)
    return Status::success(); // rank 0 writes
  return writeSafetensors(path, tensors, {{"model", plan.model}});
}

} // namespace sinter::rt
