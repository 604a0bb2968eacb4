//===- Timeouts.h - How long ranks wait for each other ------------*- C++ -*-===//
//
// Shared by the ranks and their launcher, so that the launcher never kills a
// survivor before the survivor's own deadline has let it say what it lost.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DIST_TIMEOUTS_H
#define SINTER_RT_DIST_TIMEOUTS_H

namespace sinter::rt {

/// How long a rank waits for the others in a collective or at the
/// rendezvous before it gives up: a dead rank stops the run within this.
/// Gloo usually sees a dead peer's closed connection at once; a send it had
/// only partly written when the peer died is woken by this deadline alone.
constexpr int kCollectiveTimeoutSeconds = 30;

} // namespace sinter::rt

#endif // SINTER_RT_DIST_TIMEOUTS_H
