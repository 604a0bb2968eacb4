//===- TcpStore.h - The rendezvous of a run's ranks ----------------*- C++ -*-===//
//
// A key-value store over TCP that ranks use to find each other (Gloo's
// rendezvous::Store): rank 0 serves it at MASTER_ADDR:MASTER_PORT; every
// rank, rank 0 included, is a client. Values are set once and read by
// polling, with a deadline. Built with exceptions, as Gloo expects: a
// failure throws std::runtime_error with a message for the user.
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
class TcpStoreServer {
public:
  /// Listens on `port` (all interfaces); throws if the port is taken.
  explicit TcpStoreServer(int port);
  ~TcpStoreServer();

private:
  void serve();
  void handle(int fd);

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
