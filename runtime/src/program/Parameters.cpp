//===- Parameters.cpp - Params and states: initialise, load, save -------===//

#include "program/Parameters.h"

#include "checkpoint/Safetensors.h"
#include "core/Init.h"

#include <cstring>
#include <set>

namespace sinter::rt {

static bool isParameter(const BufferSpec &b) {
  return b.kind == BufferKind::Param || b.kind == BufferKind::State;
}

Status initialiseParameters(const StepPlan &plan, BufferSet &buffers,
                            uint64_t seed) {
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &b = plan.buffers[i];
    if (!isParameter(b))
      continue;
    std::optional<InitKind> kind = parseInitKind(b.init);
    if (!kind)
      return Status::error("internal error: unknown initialiser '" + b.init +
                           "' for '" + b.name + "'");
    SINTER_RT_RETURN_IF_ERROR(
        fillAll(b.name, *kind, b.initArgs, b.dtype, b.shape, seed,
                buffers.data(i))
            .withPrefix("initialising '" + b.name + "': "));
  }
  return buffers.upload({BufferKind::Param, BufferKind::State});
}

Status loadParameters(const StepPlan &plan, BufferSet &buffers,
                      const std::string &path) {
  Expected<SafetensorsFile> file = SafetensorsFile::read(path);
  if (!file.ok())
    return file.status();
  std::set<std::string> expected;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &b = plan.buffers[i];
    if (!isParameter(b))
      continue;
    expected.insert(b.name);
    const SafetensorsEntry *e = file->find(b.name);
    if (!e)
      return Status::error(path + ": has no tensor '" + b.name + "' (a " +
                           bufferKindName(b.kind) + " of the model, " +
                           dtypeName(b.dtype) + formatShape(b.shape) + ")");
    if (e->dtype != b.dtype || e->shape != b.shape)
      return Status::error(path + ": tensor '" + b.name + "' is " +
                           dtypeName(e->dtype) + formatShape(e->shape) +
                           " but the model's " + bufferKindName(b.kind) +
                           " is " + dtypeName(b.dtype) + formatShape(b.shape));
    std::memcpy(buffers.data(i), file->data(*e), b.byteSize);
  }
  // A checkpoint also holds the optimizer's moments: a run that starts from
  // it takes its parameters and states only.
  for (const SafetensorsEntry &e : file->tensors())
    if (!expected.count(e.name) && e.name.rfind("optimizer.", 0) != 0)
      return Status::error(path + ": tensor '" + e.name +
                           "' is not a param or state of model '" + plan.model +
                           "'");
  return buffers.upload({BufferKind::Param, BufferKind::State});
}

Status saveParameters(const StepPlan &plan, BufferSet &buffers,
                      const std::string &path) {
  SINTER_RT_RETURN_IF_ERROR(buffers.download({BufferKind::Param, BufferKind::State}));
  std::vector<SafetensorsTensor> tensors;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &b = plan.buffers[i];
    if (isParameter(b))
      tensors.push_back({b.name, b.dtype, b.shape, buffers.data(i)});
  }
  return writeSafetensors(path, tensors, {{"model", plan.model}});
}

} // namespace sinter::rt
