//===- SerialWorker.cpp - One thread that runs jobs in the order posted ---===//

#include "support/SerialWorker.h"

namespace sinter::rt {

SerialWorker::SerialWorker() : thread([this] { run(); }) {}

SerialWorker::~SerialWorker() { stop(); }

void SerialWorker::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    jobs.push_back(std::move(job));
  }
  ready.notify_one();
}

void SerialWorker::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  ready.notify_one();
  if (thread.joinable())
    thread.join();
}

void SerialWorker::run() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex);
      ready.wait(lock, [&] { return stopping || !jobs.empty(); });
      if (jobs.empty())
        return;
      job = std::move(jobs.front());
      jobs.pop_front();
    }
    job();
  }
}

} // namespace sinter::rt
