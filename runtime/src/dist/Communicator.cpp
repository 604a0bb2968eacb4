//===- Communicator.cpp - Collectives of a process that runs alone --------===//

#include "dist/Communicator.h"

#include <cstring>

namespace sinter::rt {

Communicator::~Communicator() = default;
Pending::Started::~Started() = default;

namespace {

/// A collective the host waits for through a future.
class FutureStarted final : public Pending::Started {
public:
  FutureStarted(std::shared_future<Status> f, std::shared_ptr<const CollectiveSpan> span)
      : future(std::move(f)), ran(std::move(span)) {}
  Status wait() override { return future.valid() ? future.get() : Status::success(); }
  const CollectiveSpan *span() const override { return ran.get(); }

private:
  std::shared_future<Status> future;
  std::shared_ptr<const CollectiveSpan> ran;
};

} // namespace

Pending::Pending(std::shared_future<Status> f, std::shared_ptr<const CollectiveSpan> span)
    : started(std::make_shared<FutureStarted>(std::move(f), std::move(span))) {}

Pending Pending::done(Status s) {
  std::promise<Status> p;
  p.set_value(std::move(s));
  return Pending(p.get_future().share());
}

Status waitAll(const std::vector<Pending> &started) {
  Status first = Status::success();
  for (const Pending &p : started) {
    Status s = p.wait();
    if (first.ok())
      first = s;
  }
  return first;
}

namespace {

class LocalCommunicator final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Pending allReduce(void *, DType, uint64_t, ReduceOp) override {
    return Pending::done(Status::success());
  }
  Pending broadcast(void *, DType, uint64_t, int) override {
    return Pending::done(Status::success());
  }
  Pending reduce(void *, DType, uint64_t, ReduceOp, int) override {
    return Pending::done(Status::success());
  }
  Pending reduceScatter(void *in, void *out, DType dtype, uint64_t count,
                        ReduceOp) override {
    if (in != out)
      std::memmove(out, in, count * dtypeSize(dtype));
    return Pending::done(Status::success());
  }
  Pending allGather(const void *in, void *out, DType dtype,
                    uint64_t count) override {
    if (in != out)
      std::memmove(out, in, count * dtypeSize(dtype));
    return Pending::done(Status::success());
  }
  Pending barrier() override { return Pending::done(Status::success()); }
  bool runsCollectives() const override { return false; }
  std::string engine() const override { return "none (one process)"; }
};

} // namespace

std::unique_ptr<Communicator> createLocalCommunicator() {
  return std::make_unique<LocalCommunicator>();
}

} // namespace sinter::rt
