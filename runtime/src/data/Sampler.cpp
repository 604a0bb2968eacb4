//===- Sampler.cpp - Which samples each rank reads (DOMAIN.md 3) ----------===//

#include "data/Sampler.h"

#include "core/Philox.h"
#include "sinter/rt/Shape.h"
#include "support/Format.h"

#include <numeric>
#include <string>

namespace sinter::rt {

uint64_t MicroBatchIndices::realCount() const {
  uint64_t n = 0;
  for (uint8_t p : padded)
    n += p ? 0 : 1;
  return n;
}

std::vector<uint64_t> samplerOrdering(uint64_t numSamples, uint64_t seed, uint64_t epoch,
                                      bool shuffle) {
  std::vector<uint64_t> perm(numSamples);
  std::iota(perm.begin(), perm.end(), uint64_t(0));
  if (!shuffle || numSamples < 2)
    return perm;
  PhiloxStream stream{seed, fnv1a64("sampler:epoch:" + std::to_string(epoch))};
  for (uint64_t i = numSamples - 1; i >= 1; --i) {
    uint64_t x = stream.at(i)[0];
    uint64_t j = (uint64_t)(((unsigned __int128)x * (i + 1)) >> 64);
    std::swap(perm[i], perm[j]);
  }
  return perm;
}

Sampler::Sampler(const SamplerOptions &opts) : opts(opts) {}

Expected<Sampler> Sampler::create(const SamplerOptions &o) {
  auto bad = [](const std::string &what) { return Status::error("data sampler: " + what); };
  if (o.numSamples == 0)
    return bad("the data set is empty; expected at least one sample");
  if (o.microBatch == 0)
    return bad("batch.micro is 0; expected at least 1");
  if (o.worldSize == 0)
    return bad("the world size is 0; expected at least 1");
  std::optional<uint64_t> perStep = checkedMul(o.microBatch, o.worldSize);
  if (!perStep || o.globalBatch == 0 || o.globalBatch % *perStep != 0)
    return bad("batch.global (" + std::to_string(o.globalBatch) +
               ") is not a multiple of batch.micro (" + std::to_string(o.microBatch) +
               ") x world size (" + std::to_string(o.worldSize) + ")");
  Sampler s(o);
  s.accum = o.globalBatch / *perStep;
  s.steps = o.dropLast ? o.numSamples / o.globalBatch
                       : o.numSamples / o.globalBatch + (o.numSamples % o.globalBatch ? 1 : 0);
  if (s.steps == 0)
    return bad("the data set has " + formatCount(o.numSamples) +
               " samples, fewer than one global batch of " + formatCount(o.globalBatch) +
               "; with drop_last = true no step can run (set data.drop_last: false to pad, or use a smaller batch.global)");
  return s;
}

SamplerPosition Sampler::positionOf(uint64_t globalStep) const {
  return {globalStep / steps, globalStep % steps};
}

uint64_t Sampler::globalStepOf(SamplerPosition pos) const { return pos.epoch * steps + pos.step; }

const std::vector<uint64_t> &Sampler::ordering(uint64_t epoch) {
  if (epoch != cachedEpoch) {
    perm = samplerOrdering(opts.numSamples, opts.seed, epoch, opts.shuffle);
    cachedEpoch = epoch;
  }
  return perm;
}

uint64_t Sampler::sampleAt(uint64_t epoch, uint64_t p) { return ordering(epoch)[p]; }

Status Sampler::checkPosition(SamplerPosition pos) const {
  if (pos.step >= steps)
    return Status::error("data sampler: step " + std::to_string(pos.step) + " of epoch " +
                         std::to_string(pos.epoch) + " is out of range; an epoch has " +
                         std::to_string(steps) + " steps");
  return Status::success();
}

Status Sampler::microBatch(SamplerPosition pos, uint64_t rank, uint64_t micro,
                           MicroBatchIndices &out) {
  SINTER_RT_RETURN_IF_ERROR(checkPosition(pos));
  if (rank >= opts.worldSize || micro >= accum)
    return Status::error("data sampler: rank " + std::to_string(rank) + ", micro-batch " +
                         std::to_string(micro) + " is out of range; expected rank < " +
                         std::to_string(opts.worldSize) + " and micro-batch < " +
                         std::to_string(accum));
  const std::vector<uint64_t> &order = ordering(pos.epoch);
  uint64_t b = opts.microBatch, n = opts.numSamples;
  out.indices.resize(b);
  out.padded.resize(b);
  for (uint64_t slot = 0; slot < b; ++slot) {
    uint64_t q = micro * opts.worldSize * b + rank * b + slot;
    uint64_t p = pos.step * opts.globalBatch + q;
    out.indices[slot] = order[p % n];
    out.padded[slot] = p >= n;
  }
  return Status::success();
}

Status Sampler::globalBatch(SamplerPosition pos, MicroBatchIndices &out) {
  SINTER_RT_RETURN_IF_ERROR(checkPosition(pos));
  const std::vector<uint64_t> &order = ordering(pos.epoch);
  uint64_t g = opts.globalBatch, n = opts.numSamples;
  out.indices.resize(g);
  out.padded.resize(g);
  for (uint64_t q = 0; q < g; ++q) {
    uint64_t p = pos.step * g + q;
    out.indices[q] = order[p % n];
    out.padded[q] = p >= n;
  }
  return Status::success();
}

} // namespace sinter::rt
