//===- Interrupt.h - A run asked to stop by SIGINT or SIGTERM ---*- C++ -*-===//
//
// The first SIGINT or SIGTERM asks the run to stop: the step in progress is
// dropped at its next micro-batch, and the run exits 128 + the signal with
// the checkpoint of its last complete step. A second one exits at once.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_PROGRAM_INTERRUPT_H
#define SINTER_RT_PROGRAM_INTERRUPT_H

#include "dist/Communicator.h"

namespace sinter::rt {

void installInterruptHandlers();

/// The signal that asked this run to stop (on this rank, or on any rank as
/// agreed by agreeOnInterrupt), or 0.
int interruptSignal();

/// The signal that asked any rank to stop, or 0, agreed by every rank of
/// `comm` (null for one process): all of them then stop at the same point.
int agreeOnInterrupt(Communicator *comm);

/// Records `signal` (non-zero), agreed by the ranks, as this rank's too.
void noteAgreedInterrupt(int signal);

/// The message of the Status a stopped step or run fails with.
extern const char *const kInterrupted;

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_INTERRUPT_H
