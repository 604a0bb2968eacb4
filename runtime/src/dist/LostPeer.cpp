//===- LostPeer.cpp - Which rank a transport error is about ---------------===//

#include "dist/LostPeer.h"

namespace sinter::rt {

int lostPeerOf(const std::string &message,
               const std::vector<std::string> &peerAddresses) {
  for (size_t r = 0; r < peerAddresses.size(); ++r)
    if (!peerAddresses[r].empty() &&
        message.find(peerAddresses[r]) != std::string::npos)
      return int(r);
  // "[host]:" is the part of the address an ephemeral port leaves intact.
  int onHost = -1;
  for (size_t r = 0; r < peerAddresses.size(); ++r) {
    const std::string &a = peerAddresses[r];
    size_t close = a.find("]:");
    if (a.empty() || close == std::string::npos ||
        message.find(a.substr(0, close + 2)) == std::string::npos)
      continue;
    if (onHost >= 0)
      return -1; // two peers on that host: the port would have to say
    onHost = int(r);
  }
  if (onHost >= 0 || message.find("]:") != std::string::npos)
    return onHost; // an address that is no peer's is not guessed at
  // An error without an address (a timeout) in a world of two: the only peer.
  int only = -1;
  for (size_t r = 0; r < peerAddresses.size(); ++r)
    if (!peerAddresses[r].empty()) {
      if (only >= 0)
        return -1;
      only = int(r);
    }
  return only;
}

std::string hostOf(const std::string &address) {
  size_t close = address.find("]:");
  if (address.empty() || address[0] != '[' || close == std::string::npos)
    return address;
  return address.substr(1, close - 1);
}

} // namespace sinter::rt
