//===- Interrupt.cpp - A run asked to stop by SIGINT or SIGTERM ----------===//

#include "program/Interrupt.h"

#include <atomic>
#include <csignal>
#include <unistd.h>

namespace sinter::rt {
namespace {

std::atomic<int> pendingSignal{0};

void onSignal(int signal) {
  int first = 0;
  if (pendingSignal.compare_exchange_strong(first, signal))
    return;
  // Asked twice: the user does not want to wait for the checkpoint.
  static const char message[] = "\nsinter: interrupted again; exiting now\n";
  ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
  ::_exit(128 + signal);
}

} // namespace

const char *const kInterrupted = "interrupted";

void installInterruptHandlers() {
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
}

int interruptSignal() { return pendingSignal.load(); }

int agreeOnInterrupt(Communicator *comm) {
  int64_t signal = pendingSignal.load();
  if (!comm || comm->size() == 1)
    return int(signal);
  if (!comm->allReduce(&signal, DType::I64, 1, ReduceOp::Max).wait().ok())
    return pendingSignal.load();
  if (signal)
    noteAgreedInterrupt(int(signal));
  return int(signal);
}

void noteAgreedInterrupt(int signal) {
  // A rank that was not signalled itself stops with the same code.
  int none = 0;
  pendingSignal.compare_exchange_strong(none, signal);
}

} // namespace sinter::rt
