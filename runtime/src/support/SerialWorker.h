//===- SerialWorker.h - One thread that runs jobs in the order posted -*- C++ -*-===//
//
// Collectives must start in the same order on every rank, and staged copies
// must follow the copies before them: both run their jobs on one thread,
// one after another. Stopping runs what was posted before it, then joins.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_SUPPORT_SERIALWORKER_H
#define SINTER_RT_SUPPORT_SERIALWORKER_H

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace sinter::rt {

class SerialWorker {
public:
  SerialWorker();
  /// Stops (see stop()).
  ~SerialWorker();
  SerialWorker(const SerialWorker &) = delete;
  SerialWorker &operator=(const SerialWorker &) = delete;

  /// Queues `job` behind every job posted before it.
  void post(std::function<void()> job);
  /// Runs the jobs already posted, then ends the thread. An owner whose
  /// jobs use its other members calls this first in its destructor.
  void stop();

private:
  void run();

  std::mutex mutex; ///< guards jobs and stopping
  std::condition_variable ready;
  std::deque<std::function<void()>> jobs;
  bool stopping = false;
  std::thread thread; ///< last: starts once the members above exist
};

} // namespace sinter::rt

#endif // SINTER_RT_SUPPORT_SERIALWORKER_H
