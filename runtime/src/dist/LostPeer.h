//===- LostPeer.h - Which rank a transport error is about --------*- C++ -*-===//
//
// Gloo's errors name the peer by its socket address: the address it listens
// at when this rank dialled it, or the ephemeral port it dialled from when
// it dialled in. Ranks publish their listening addresses; an error matching
// one names that rank, and otherwise the host names it when only one peer
// runs there (one rank per machine). In a world of two, an error that names
// no address (a timeout) is about the only peer.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DIST_LOSTPEER_H
#define SINTER_RT_DIST_LOSTPEER_H

#include <string>
#include <vector>

namespace sinter::rt {

/// The rank `message` is about, or -1 when it cannot be told.
/// `peerAddresses[r]` is rank r's "[host]:port" ("" for this rank).
int lostPeerOf(const std::string &message,
               const std::vector<std::string> &peerAddresses);

/// The host of a "[host]:port" address.
std::string hostOf(const std::string &address);

} // namespace sinter::rt

#endif // SINTER_RT_DIST_LOSTPEER_H
