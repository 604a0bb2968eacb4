//===- Sampler.h - Which samples each rank reads (DOMAIN.md 3) --*- C++ -*-===//
//
// PyTorch DistributedSampler semantics, made independent of the world size:
//
// Epoch e is an ordering of the N samples: the identity without shuffling;
// with shuffling, the Fisher-Yates shuffle of [0, N) driven by the Philox
// stream of (seed, FNV-1a 64 of "sampler:epoch:<e>") (Philox.h): for
// i = N-1 down to 1, with x = word 0 of element i of the stream,
// j = (x * (i + 1)) >> 64 (128-bit product), swap(perm[i], perm[j]).
// (A name with ':' cannot collide with a parameter's.)
//
// Global batch s of the epoch (s = 0, 1, ...) is positions [s*G, (s+1)*G) of
// that ordering, G the global batch. Position p >= N (only in the last
// global batch, with drop_last = false) wraps around to sample perm[p - N]
// (perm[p mod N] when N < G), as DistributedSampler pads, and is marked
// padded so the loss can count only real samples. With drop_last = true the
// incomplete tail is dropped. Steps per epoch: floor(N / G) or ceil(N / G).
//
// Inside a global batch, position q in [0, G) goes to micro-batch
// m = q / (W*b), rank r = (q / b) % W, slot q % b, for W ranks, k = G/(W*b)
// micro-batches and micro batch b. Every (m, r, slot) gets exactly one q, so
// the union over ranks and micro-batches is the whole global batch for any
// W and k with G = W*k*b: a run's global batches are the same on 1 rank
// with k = 4 as on 4 ranks with k = 1, and so are its updates.
//
// A Sampler is a value; it caches the current epoch's ordering and is meant
// for one thread (the prefetcher owns one).
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_DATA_SAMPLER_H
#define SINTER_RT_DATA_SAMPLER_H

#include "sinter/rt/Status.h"

#include <cstdint>
#include <vector>

namespace sinter::rt {

struct SamplerOptions {
  uint64_t numSamples = 0;  // N
  uint64_t globalBatch = 0; // G
  uint64_t microBatch = 0;  // b
  uint64_t worldSize = 1;   // W
  uint64_t seed = 0;
  bool shuffle = true;
  bool dropLast = true;
};

/// Where a run is: epoch, and global batch (optimizer step) inside it.
struct SamplerPosition {
  uint64_t epoch = 0;
  uint64_t step = 0;
  bool operator==(const SamplerPosition &o) const { return epoch == o.epoch && step == o.step; }
};

/// The b samples of one micro-batch of one rank.
struct MicroBatchIndices {
  std::vector<uint64_t> indices; // sample ids
  std::vector<uint8_t> padded;   // 1 where the slot repeats a sample as padding
  uint64_t realCount() const;
};

class Sampler {
public:
  /// Checks the options: N >= 1, b >= 1, W >= 1, W*b divides G, and with
  /// drop_last at least one full global batch.
  static Expected<Sampler> create(const SamplerOptions &opts);

  const SamplerOptions &options() const { return opts; }
  uint64_t stepsPerEpoch() const { return steps; }
  /// k = G / (W * b).
  uint64_t accumulationSteps() const { return accum; }
  /// The position of the `globalStep`-th optimizer step of the run (resume).
  SamplerPosition positionOf(uint64_t globalStep) const;
  /// Steps before `pos` since the start of the run.
  uint64_t globalStepOf(SamplerPosition pos) const;

  /// Sample at position `p` of epoch `epoch`'s ordering (p < N).
  uint64_t sampleAt(uint64_t epoch, uint64_t p);
  /// Micro-batch `micro` of rank `rank` of global batch `pos`.
  Status microBatch(SamplerPosition pos, uint64_t rank, uint64_t micro,
                    MicroBatchIndices &out);
  /// All G samples of global batch `pos`, in position order.
  Status globalBatch(SamplerPosition pos, MicroBatchIndices &out);

private:
  explicit Sampler(const SamplerOptions &opts);
  const std::vector<uint64_t> &ordering(uint64_t epoch);
  Status checkPosition(SamplerPosition pos) const;

  SamplerOptions opts;
  uint64_t steps = 0;
  uint64_t accum = 0;
  uint64_t cachedEpoch = UINT64_MAX;
  std::vector<uint64_t> perm;
};

/// The epoch ordering alone (tests, and tools that print it).
std::vector<uint64_t> samplerOrdering(uint64_t numSamples, uint64_t seed, uint64_t epoch,
                                      bool shuffle);

} // namespace sinter::rt

#endif // SINTER_RT_DATA_SAMPLER_H
