//===- PlanMemory.cpp - What a step's plan allocates, by use --------------===//

#include "runtime/contract/PlanMemory.h"

#include "runtime/contract/DType.h"
#include "runtime/contract/sinter_plan.pb.h"

#include <algorithm>

namespace sinter::plan {
namespace {

uint64_t product(const google::protobuf::RepeatedField<int64_t> &dims) {
  uint64_t n = 1;
  for (int64_t d : dims)
    n *= uint64_t(d);
  return n;
}

} // namespace

PlanMemory planMemory(const Step &step) {
  PlanMemory out;
  for (const Buffer &b : step.buffers()) {
    uint64_t bytes = allocatedBytes(product(b.shape()) * dtypeSize(sinter::DType(int(b.dtype()))));
    switch (b.kind()) {
    case PARAM:
      // Ψ counts whole parameters, of which a FULL_SHARD rank holds shards.
      out.paramElements +=
          b.global_shape_size() > 0 ? product(b.global_shape()) : product(b.shape());
      out.params += bytes;
      break;
    case STATE:
      out.params += bytes;
      break;
    case GRADIENT:
    case GRADIENT_SLICES:
      out.gradients += bytes;
      break;
    case OPTIMIZER_STATE:
      out.optimizer += bytes;
      break;
    case WORKSPACE:
      out.communication = std::min<uint64_t>(uint64_t(step.communication_bytes()), bytes);
      out.activations = bytes - out.communication;
      break;
    default:
      out.io += bytes;
    }
  }
  if (step.optimizer() == "adamw")
    out.moments = 2;
  else if (step.optimizer() == "sgd_momentum")
    out.moments = 1;
  return out;
}

} // namespace sinter::plan
