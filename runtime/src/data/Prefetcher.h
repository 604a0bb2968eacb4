//===- Prefetcher.h - Assemble micro-batches on a background thread -*- C++ -*-===//
//
// One thread walks the Sampler for one rank (micro-batch 0..k-1 of each
// global batch, epoch after epoch) and gathers each micro-batch into host
// buffers through a BatchSource, keeping at most `depth` ready in a bounded
// queue. next() hands them out in order. A failure (a bad token id, say) is
// delivered after the micro-batches gathered before it, and from then on
// every next() returns it. stop() (and the destructor) wakes both sides and
// joins: the producer waits only on "queue not full or stopping", the
// consumer only on "queue not empty, finished or stopping", so shutdown
// cannot deadlock whichever side is blocked.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_DATA_PREFETCHER_H
#define SINTER_RT_DATA_PREFETCHER_H

#include "data/BatchSource.h"
#include "data/Sampler.h"
#include "sinter/rt/Status.h"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace sinter::rt {

struct MicroBatch {
  SamplerPosition position; // the global batch (epoch, step)
  uint64_t micro = 0;       // 0 .. k-1
  MicroBatchIndices samples;
  std::vector<HostTensor> tensors; // one per BatchSource input
};

struct PrefetcherOptions {
  uint64_t rank = 0;
  uint64_t depth = 4;        // micro-batches gathered ahead, >= 1
  SamplerPosition start;     // resume point
  uint64_t numSteps = UINT64_MAX; // global batches to deliver, then stop
};

class Prefetcher {
public:
  /// Starts the thread. The sampler's N must equal the source's sample count.
  static Expected<std::unique_ptr<Prefetcher>> start(Sampler sampler,
                                                     std::shared_ptr<const BatchSource> source,
                                                     const PrefetcherOptions &opts);
  ~Prefetcher();
  Prefetcher(const Prefetcher &) = delete;
  Prefetcher &operator=(const Prefetcher &) = delete;

  /// The next micro-batch, blocking until it is ready; the producer's error
  /// once the queue is drained; an error after stop() or past numSteps.
  Expected<MicroBatch> next();
  /// Stops and joins the thread; idempotent and safe from any thread.
  /// Queued micro-batches are dropped.
  void stop();

private:
  Prefetcher(Sampler sampler, std::shared_ptr<const BatchSource> source,
             const PrefetcherOptions &opts);
  void run();

  Sampler sampler;
  std::shared_ptr<const BatchSource> source;
  PrefetcherOptions opts;

  std::mutex mutex;
  std::mutex joinMutex; // stop() may race with the destructor's stop()
  std::condition_variable notFull, notEmpty;
  std::deque<MicroBatch> queue;
  bool stopping = false;
  bool finished = false; // the producer is done (error or numSteps reached)
  Status error;
  std::thread thread;
};

} // namespace sinter::rt

#endif // SINTER_RT_DATA_PREFETCHER_H
