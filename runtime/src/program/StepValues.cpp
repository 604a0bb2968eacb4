//===- StepValues.cpp - What a train step returned, over all ranks -------===//

#include "program/StepValues.h"

#include "program/Convert.h"

#include <cmath>
#include <cstring>

namespace sinter::rt {
namespace {

std::vector<double> asDoubles(const void *p, DType t, uint64_t n) {
  std::vector<double> v(n);
  (void)convertElements(p, t, v.data(), DType::F64, n);
  return v;
}

/// What was not finite, for the message: the first gradient with a
/// non-finite element, or under ZERO2 (which keeps each rank's slices of a
/// bucket) the first such bucket of this rank; else a rank's loss.
std::string whatWasNotFinite(const StepPlan &plan, BufferSet &buffers) {
  bool sliced = false;
  if (buffers.download({BufferKind::Gradient, BufferKind::GradientSlices}).ok())
    for (size_t i = 0; i < plan.buffers.size(); ++i) {
      const BufferSpec &b = plan.buffers[i];
      if (b.kind != BufferKind::Gradient && b.kind != BufferKind::GradientSlices)
        continue;
      sliced |= b.kind == BufferKind::GradientSlices;
      uint64_t n = b.byteSize / dtypeSize(b.dtype);
      std::vector<double> v = asDoubles(buffers.data(i), b.dtype, n);
      for (double x : v)
        if (!std::isfinite(x))
          return b.kind == BufferKind::Gradient
                     ? "the gradient of '" + b.name + "'"
                     : "a gradient of " + b.name + " (this rank's slice of it)";
    }
  return sliced ? "a rank's loss or its slice of a gradient" : "a rank's loss";
}

/// The index of the first buffer of `kind`, if the plan has one.
std::optional<size_t> bufferOf(const StepPlan &plan, BufferKind kind) {
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].kind == kind)
      return i;
  return std::nullopt;
}

} // namespace

StepOutputs::StepOutputs(const StepPlan &plan)
    : plan(plan), gradNorm(bufferOf(plan, BufferKind::GradNorm)),
      nonFinite(bufferOf(plan, BufferKind::NonFinite)) {
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &spec = plan.buffers[i];
    if (spec.kind == BufferKind::Loss)
      loss = i;
    if (spec.kind == BufferKind::Metric) {
      metricBuffers.push_back(i);
      metrics.push_back(spec.name);
    }
    if (spec.kind == BufferKind::StateOut)
      stateOut.push_back(i);
  }
}

Expected<StepValues> StepOutputs::read(Communicator &comm, BufferSet &buffers,
                                       int64_t step) const {
  SINTER_RT_RETURN_IF_ERROR(buffers.download({BufferKind::Loss, BufferKind::Metric,
                                              BufferKind::GradNorm, BufferKind::NonFinite,
                                              BufferKind::StateOut}));
  auto scalar = [&](size_t i) {
    return asDoubles(buffers.data(i), plan.buffers[i].dtype, 1)[0];
  };
  StepValues values;
  values.loss = scalar(loss);
  for (size_t m : metricBuffers)
    values.metrics.push_back(scalar(m));
  if (gradNorm)
    values.gradNorm = scalar(*gradNorm);
  if (nonFinite)
    values.nonFinite = scalar(*nonFinite);
  // The global loss, metrics, new states and non-finite flags: every rank
  // decides alike.
  SINTER_RT_RETURN_IF_ERROR(reduce(comm, buffers, values));
  // A step that saw a non-finite loss or gradient changed no parameter;
  // the run stops with its last checkpoint as it was.
  if (!std::isfinite(values.loss))
    return Status::error("step " + std::to_string(step + 1) + ": the loss is " +
                         std::to_string(values.loss) +
                         "; lower the learning rate or check the data");
  if (values.nonFinite > 0)
    return Status::error("step " + std::to_string(step + 1) + ": " +
                         whatWasNotFinite(plan, buffers) +
                         " is not finite; lower the learning rate or clip gradients "
                         "(clip_grad_norm)");
  return values;
}

Status StepOutputs::moveStates(BufferSet &buffers) const {
  for (size_t i : stateOut) {
    const BufferSpec &spec = plan.buffers[i];
    if (const BufferSpec *state = plan.find(spec.name, BufferKind::State)) {
      size_t s = size_t(state - plan.buffers.data());
      std::memcpy(buffers.data(s), buffers.data(i), spec.byteSize);
      SINTER_RT_RETURN_IF_ERROR(buffers.upload(s));
    }
  }
  return Status::success();
}

/// The loss is the sum of the ranks' shares, metrics and new floating-point
/// states the mean of the ranks' (equal-sized) means, the non-finite flags
/// a count.
Status StepOutputs::reduce(Communicator &comm, BufferSet &buffers,
                           StepValues &step) const {
  if (comm.size() == 1)
    return Status::success();
  double &loss = step.loss;
  std::vector<double> &metrics = step.metrics;
  std::vector<double> values = {loss, step.nonFinite};
  values.insert(values.end(), metrics.begin(), metrics.end());
  std::vector<Pending> started = {
      comm.allReduce(values.data(), DType::F64, values.size(), ReduceOp::Sum)};
  std::vector<std::vector<double>> states;
  for (size_t i : stateOut) {
    const BufferSpec &b = plan.buffers[i];
    if (!isFloatingPoint(b.dtype))
      continue; // integer states move alike on every rank
    states.push_back(asDoubles(buffers.data(i), b.dtype,
                               b.byteSize / dtypeSize(b.dtype)));
    started.push_back(comm.allReduce(states.back().data(), DType::F64,
                                     states.back().size(), ReduceOp::Sum));
  }
  SINTER_RT_RETURN_IF_ERROR(waitAll(started)); // before `values` can go
  double ranks = double(comm.size());
  loss = values[0];
  step.nonFinite = values[1];
  for (size_t m = 0; m < metrics.size(); ++m)
    metrics[m] = values[m + 2] / ranks;
  size_t s = 0;
  for (size_t i : stateOut) {
    const BufferSpec &b = plan.buffers[i];
    if (!isFloatingPoint(b.dtype))
      continue;
    for (double &x : states[s])
      x /= ranks;
    SINTER_RT_RETURN_IF_ERROR(convertElements(states[s].data(), DType::F64,
                                              buffers.data(i), b.dtype,
                                              states[s].size()));
    ++s;
  }
  return Status::success();
}

} // namespace sinter::rt
