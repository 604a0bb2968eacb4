//===- TcpStore.h - The rendezvous of a run's ranks ----------------*- C++ -*-===//
//
// A key-value store over TCP that ranks use to find each other (Gloo's
// rendezvous::Store): rank 0 serves it at MASTER_ADDR:MASTER_PORT; every
// rank, rank 0 included, is a client. Values are set once and read by
// polling, with a deadline. Built with exceptions, as Gloo expects: a
// failure throws std::runtime_error with a message for the user.
//
// It is also how a run learns that it lost a rank: each rank says which
// it is on its connection (announce), and when an announced connection
// ends (the process exited or died, or its machine went away) the server
// records the first such rank and its host under kGoneKey. A rank that
// waits too long for a collective reads it (departed) and names that rank.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DIST_TCPSTORE_H
#define SINTER_RT_DIST_TCPSTORE_H

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sinter::rt {

/// The server side, run by rank 0 for the life of the process.
/// How long a request to the store may take before it counts as lost.
inline constexpr int kRequestTimeoutSeconds = 5;

/// The key under which the server records the first rank that left.
inline constexpr const char *kGoneKey = "sinter/gone";

class TcpStoreServer {
public:
  /// Listens on `port` (all interfaces); throws if the port is taken.
  explicit TcpStoreServer(int port);
  ~TcpStoreServer();

private:
  void serve();
  void handle(int fd);
  /// Answers `fd`'s requests until it ends; `rank` and `host` once it
  /// announced itself.
  void serveRequests(int fd, int &rank, std::string &host);
  /// An announced connection ended: the first one is recorded.
  void departed(int rank, const std::string &host);

  int listenFd = -1;
  std::thread acceptor;
  std::mutex mutex; ///< guards values and clients
  std::map<std::string, std::vector<char>> values;
  /// One thread per connected rank; the destructor ends and joins them.
  std::vector<std::pair<int, std::thread>> clients;
};

class TcpStore final : public gloo::rendezvous::Store {
public:
  /// Connects to host:port, retrying until `timeout` (the server may not be
  /// up yet).
  TcpStore(const std::string &host, int port, std::chrono::milliseconds timeout);
  ~TcpStore() override;

  void set(const std::string &key, const std::vector<char> &data) override;
  std::vector<char> get(const std::string &key) override;
  /// Tells the server that this connection is rank `rank`'s, so that its
  /// end is recorded as that rank leaving.
  void announce(int rank);
  /// The first rank that left the run, as "rank R (HOST)"; "rank 0
  /// (HOST)" when the server itself is gone; "" while none has. Never
  /// throws.
  std::string departed();
  void wait(const std::vector<std::string> &keys) override;
  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &timeout) override;

private:
  /// One request; false when the key is not there yet.
  bool tryGet(const std::string &key, std::vector<char> &out);

  int fd = -1;
  std::string where;
  std::chrono::milliseconds timeout;
  std::mutex mutex;
};

struct WorldInfo;

/// A rank's end of the rendezvous: rank 0 also serves it.
struct Rendezvous {
  std::unique_ptr<TcpStoreServer> server; ///< rank 0 only
  std::unique_ptr<TcpStore> store;
};
Rendezvous openRendezvous(const WorldInfo &world,
                          std::chrono::milliseconds timeout);

} // namespace sinter::rt

#endif // SINTER_RT_DIST_TCPSTORE_H
