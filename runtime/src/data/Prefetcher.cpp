//===- Prefetcher.cpp - Assemble micro-batches on a background thread -----===//

#include "data/Prefetcher.h"

#include <string>

namespace sinter::rt {

Prefetcher::Prefetcher(Sampler sampler, std::shared_ptr<const BatchSource> source,
                       const PrefetcherOptions &opts)
    : sampler(std::move(sampler)), source(std::move(source)), opts(opts) {}

Expected<std::unique_ptr<Prefetcher>>
Prefetcher::start(Sampler sampler, std::shared_ptr<const BatchSource> source,
                  const PrefetcherOptions &opts) {
  if (!source)
    return Status::error("prefetcher: no batch source");
  if (sampler.options().numSamples != source->numSamples())
    return Status::error("prefetcher: the sampler counts " +
                         std::to_string(sampler.options().numSamples) +
                         " samples but the data source has " +
                         std::to_string(source->numSamples()));
  if (opts.depth == 0)
    return Status::error("prefetcher: depth is 0; expected at least 1 micro-batch ahead");
  if (opts.rank >= sampler.options().worldSize)
    return Status::error("prefetcher: rank " + std::to_string(opts.rank) +
                         " is out of range for world size " +
                         std::to_string(sampler.options().worldSize));
  if (opts.start.step >= sampler.stepsPerEpoch())
    return Status::error("prefetcher: resume step " + std::to_string(opts.start.step) +
                         " is out of range; an epoch has " +
                         std::to_string(sampler.stepsPerEpoch()) + " steps");
  std::unique_ptr<Prefetcher> p(new Prefetcher(std::move(sampler), std::move(source), opts));
  p->thread = std::thread([raw = p.get()] { raw->run(); });
  return p;
}

Prefetcher::~Prefetcher() { stop(); }

void Prefetcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  notFull.notify_all();
  notEmpty.notify_all();
  std::lock_guard<std::mutex> lock(joinMutex);
  if (thread.joinable())
    thread.join();
}

void Prefetcher::run() {
  SamplerPosition pos = opts.start;
  uint64_t micro = 0, delivered = 0;
  uint64_t k = sampler.accumulationSteps();
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      notFull.wait(lock, [&] { return stopping || queue.size() < opts.depth; });
      if (stopping)
        return;
      if (delivered == opts.numSteps) {
        finished = true;
        notEmpty.notify_all();
        return;
      }
    }
    // Gather outside the lock: the consumer keeps taking batches meanwhile.
    MicroBatch mb;
    mb.position = pos;
    mb.micro = micro;
    Status s = sampler.microBatch(pos, opts.rank, micro, mb.samples);
    if (s.ok())
      s = source->gather(mb.samples.indices, mb.tensors);
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!s.ok()) {
        error = s.withPrefix("data, epoch " + std::to_string(pos.epoch) + " step " +
                             std::to_string(pos.step) + " micro-batch " +
                             std::to_string(micro) + ": ");
        finished = true;
      } else {
        queue.push_back(std::move(mb));
      }
    }
    notEmpty.notify_all();
    if (!s.ok())
      return;
    if (++micro == k) {
      micro = 0;
      ++delivered;
      if (++pos.step == sampler.stepsPerEpoch()) {
        pos.step = 0;
        ++pos.epoch;
      }
    }
  }
}

Expected<MicroBatch> Prefetcher::next() {
  std::unique_lock<std::mutex> lock(mutex);
  notEmpty.wait(lock, [&] { return !queue.empty() || finished || stopping; });
  if (!queue.empty()) {
    MicroBatch mb = std::move(queue.front());
    queue.pop_front();
    lock.unlock();
    notFull.notify_one();
    return mb;
  }
  if (!error.ok())
    return error;
  if (stopping)
    return Status::error("prefetcher: next() after stop()");
  return Status::error("prefetcher: all " + std::to_string(opts.numSteps) +
                       " steps were delivered; next() was called past the end");
}

} // namespace sinter::rt
