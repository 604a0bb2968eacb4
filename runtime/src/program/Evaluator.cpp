//===- Evaluator.cpp - Running the eval step over a data set ------------===//

#include "program/Evaluator.h"

#include "data/Npy.h"
#include "data/Prefetcher.h"
#include "program/Convert.h"
#include "support/Format.h"

#include <sys/statvfs.h>

#include <chrono>
#include <cstdio>
#include <cstring>

namespace sinter::rt {

static double scalarOf(const void *p, DType t) {
  if (t == DType::F64)
    return *static_cast<const double *>(p);
  double v = 0;
  (void)convertElements(p, t, &v, DType::F64, 1);
  return v;
}

static void drawProgress(uint64_t done, uint64_t total) {
  const int width = 30;
  int filled = total ? int(double(done) / double(total) * width) : width;
  std::fprintf(stderr, "\r  eval [%.*s%*s] %llu/%llu", filled,
               "==============================", width - filled, "",
               (unsigned long long)done, (unsigned long long)total);
  if (done == total)
    std::fprintf(stderr, "\r%*s\r", width + 40, "");
  std::fflush(stderr);
}

Status feedInputs(const StepPlan &plan, BufferSet &buffers,
                  const std::vector<HostTensor> &tensors) {
  for (size_t k = 0; k < plan.buffers.size(); ++k) {
    const BufferSpec &spec = plan.buffers[k];
    if (spec.kind != BufferKind::Input)
      continue;
    for (const HostTensor &t : tensors) {
      if (t.name != spec.name)
        continue;
      uint64_t count = spec.byteSize / dtypeSize(spec.dtype);
      SINTER_RT_RETURN_IF_ERROR(
          convertElements(t.bytes.data(), t.dtype, buffers.data(k), spec.dtype,
                          count)
              .withPrefix("input '" + spec.name + "': "));
    }
  }
  return Status::success();
}

Expected<double> writeGradients(const StepPlan &plan, BufferSet &buffers,
                                StepFn step, const BatchSource &source,
                                const std::string &dir) {
  uint64_t b = plan.microBatch();
  if (source.numSamples() < b)
    return Status::error("the training data holds fewer samples than one "
                         "micro-batch of " + std::to_string(b));
  std::vector<uint64_t> ids(b);
  for (uint64_t i = 0; i < b; ++i)
    ids[i] = i;
  // One step of one micro-batch: the global batch is that micro-batch.
  TrainStepWorld world;
  world.microBatches.emplace_back();
  SINTER_RT_RETURN_IF_ERROR(source.gather(ids, world.microBatches.front()));
  world.globalBatch = b;
  SINTER_RT_RETURN_IF_ERROR(runTrainStep(step, plan, buffers, world));
  SINTER_RT_RETURN_IF_ERROR(buffers.download({BufferKind::Loss, BufferKind::Gradient}));
  double loss = 0;
  for (size_t k = 0; k < plan.buffers.size(); ++k) {
    const BufferSpec &spec = plan.buffers[k];
    if (spec.kind == BufferKind::Loss)
      loss = scalarOf(buffers.data(k), spec.dtype);
    if (spec.kind == BufferKind::Gradient)
      SINTER_RT_RETURN_IF_ERROR(writeNpy(dir + "/" + spec.name + ".npy",
                                         spec.dtype, spec.shape,
                                         buffers.data(k)));
  }
  return loss;
}

namespace {

/// Whether `dir`'s file system has room for the outputs of `batches`
/// micro-batches: refused before the first batch, not when the disk fills.
Status checkRoomForOutputs(const StepPlan &plan, uint64_t batches, const std::string &dir) {
  uint64_t perBatch = 0;
  for (const BufferSpec &spec : plan.buffers)
    if (spec.kind == BufferKind::Output)
      perBatch += spec.byteSize;
  struct statvfs fs;
  if (dir.empty() || perBatch == 0 || statvfs(dir.c_str(), &fs) != 0)
    return Status::success();
  const uint64_t room = uint64_t(fs.f_bavail) * fs.f_frsize;
  if (perBatch * batches <= room)
    return Status::success();
  return Status::error("--outputs " + dir + ": the outputs of " + std::to_string(batches) +
                       " eval batches take " + formatMiB(perBatch * batches) + " (" +
                       formatMiB(perBatch) + " a batch), and its file system has " +
                       formatMiB(room) + " free; set eval.batches to at most " +
                       std::to_string(room / perBatch));
}

} // namespace

Expected<EvalResult> evaluate(const StepPlan &plan, BufferSet &buffers,
                              StepFn step,
                              std::shared_ptr<const BatchSource> source,
                              uint64_t batches, bool progress,
                              Communicator *comm, const std::string &outputsDir) {
  uint64_t b = plan.microBatch();
  uint64_t available = b ? source->numSamples() / b : 0;
  if (available == 0)
    return Status::error("the eval data holds " +
                         std::to_string(source->numSamples()) +
                         " samples, fewer than one micro-batch of " +
                         std::to_string(b));
  if (batches == 0 || batches > available)
    batches = available;

  SINTER_RT_RETURN_IF_ERROR(checkRoomForOutputs(plan, batches, outputsDir));
  EvalResult result;
  std::vector<NpyWriter> outputs;
  for (const BufferSpec &spec : plan.buffers) {
    if (spec.kind != BufferKind::Output || outputsDir.empty())
      continue;
    Shape shape = spec.shape;
    if (!shape.empty() && shape[0] == b)
      shape[0] = b * batches;
    else
      shape.insert(shape.begin(), batches);
    Expected<NpyWriter> file =
        NpyWriter::create(outputsDir + "/" + spec.name + ".npy", spec.dtype, shape);
    if (!file.ok())
      return file.status();
    outputs.push_back(file.take());
  }
  // Evaluation reads the data in order, one micro-batch per step.
  SamplerOptions order;
  order.numSamples = source->numSamples();
  order.globalBatch = order.microBatch = b;
  order.shuffle = false;
  Expected<Sampler> sampler = Sampler::create(order);
  if (!sampler.ok())
    return sampler.status();
  PrefetcherOptions ahead;
  ahead.numSteps = batches;
  auto prefetcher = Prefetcher::start(sampler.take(), source, ahead);
  if (!prefetcher.ok())
    return prefetcher.status();
  TrainStepWorld world;
  world.comm = comm && comm->runsCollectives() ? comm : nullptr;
  world.rank = comm ? uint64_t(comm->rank()) : 0;
  double lossSum = 0;
  std::vector<double> metricSums;
  auto start = std::chrono::steady_clock::now();
  for (uint64_t j = 0; j < batches; ++j) {
    Expected<MicroBatch> batch = (*prefetcher)->next();
    if (!batch.ok())
      return batch.status();
    SINTER_RT_RETURN_IF_ERROR(feedInputs(plan, buffers, batch->tensors)
                                  .withPrefix("batch " + std::to_string(j) + ": "));
    SINTER_RT_RETURN_IF_ERROR(buffers.upload({BufferKind::Input}));
    // Through the runtime's step calls: a sharded step gathers its
    // parameters.
    SINTER_RT_RETURN_IF_ERROR(runStep(step, plan, buffers, world));
    SINTER_RT_RETURN_IF_ERROR(buffers.download(
        {BufferKind::Output, BufferKind::Loss, BufferKind::Metric}));
    size_t m = 0, o = 0;
    for (size_t k = 0; k < plan.buffers.size(); ++k) {
      const BufferSpec &spec = plan.buffers[k];
      if (spec.kind == BufferKind::Output) {
        if (!outputs.empty())
          SINTER_RT_RETURN_IF_ERROR(outputs[o++].append(buffers.data(k), spec.byteSize));
        continue;
      }
      if (spec.kind != BufferKind::Loss && spec.kind != BufferKind::Metric)
        continue;
      double v = scalarOf(buffers.data(k), spec.dtype);
      if (spec.kind == BufferKind::Loss)
        lossSum += v;
      if (spec.kind == BufferKind::Metric) {
        if (metricSums.size() <= m)
          metricSums.push_back(0);
        metricSums[m++] += v;
      }
    }
    if (progress)
      drawProgress(j + 1, batches);
  }
  for (NpyWriter &file : outputs)
    SINTER_RT_RETURN_IF_ERROR(file.commit());
  auto end = std::chrono::steady_clock::now();
  result.batches = batches;
  result.samples = batches * b;
  result.seconds = std::chrono::duration<double>(end - start).count();
  result.loss = lossSum / double(batches);
  size_t m = 0;
  for (const BufferSpec &spec : plan.buffers)
    if (spec.kind == BufferKind::Metric)
      result.metrics.push_back({spec.name, metricSums[m++] / double(batches)});
  return result;
}

} // namespace sinter::rt
