//===- TcpStore.cpp - The rendezvous of a run's ranks ---------------------===//
//
// Wire format: a request is one byte (S: set, G: get, H: hello), a 4-byte
// key length, the key and, for S, a 4-byte value length and the value. The
// reply to G is one byte (1: found, 0: not yet) and, when found, the value's
// length and bytes; S and H have none. H's key is the rank in decimal.
// Lengths are little-endian uint32.
//
//===----------------------------------------------------------------------===//

#include "dist/TcpStore.h"

#include "dist/Bootstrap.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace sinter::rt {
namespace {

void sendAll(int fd, const void *data, size_t n) {
  const char *p = static_cast<const char *>(data);
  while (n) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      throw std::runtime_error(std::string("rendezvous: send failed: ") +
                               std::strerror(errno));
    p += w;
    n -= size_t(w);
  }
}

/// False on a clean end of stream before the first byte.
bool recvAll(int fd, void *data, size_t n) {
  char *p = static_cast<char *>(data);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::recv(fd, p + got, n - got, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r == 0 && got == 0)
      return false;
    if (r <= 0)
      throw std::runtime_error("rendezvous: the connection to the store was "
                               "lost (did rank 0 exit?)");
    got += size_t(r);
  }
  return true;
}

void sendBytes(int fd, const std::string &s) {
  uint32_t n = uint32_t(s.size());
  sendAll(fd, &n, 4);
  sendAll(fd, s.data(), s.size());
}

std::string recvBytes(int fd) {
  uint32_t n = 0;
  if (!recvAll(fd, &n, 4))
    throw std::runtime_error("rendezvous: connection closed");
  std::string s(n, '\0');
  if (n && !recvAll(fd, s.data(), n))
    throw std::runtime_error("rendezvous: connection closed");
  return s;
}

} // namespace

TcpStoreServer::TcpStoreServer(int port) {
  listenFd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listenFd < 0)
    throw std::runtime_error(std::string("rendezvous: socket: ") +
                             std::strerror(errno));
  int one = 1;
  ::setsockopt(listenFd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(uint16_t(port));
  if (::bind(listenFd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
    int e = errno;
    ::close(listenFd);
    throw std::runtime_error(
        "rank 0 cannot serve the rendezvous on MASTER_PORT=" +
        std::to_string(port) + ": " + std::strerror(e) +
        (e == EADDRINUSE ? " (another run or program uses it; choose another "
                           "MASTER_PORT or --master-port)"
                         : ""));
  }
  ::listen(listenFd, 128);
  acceptor = std::thread([this] { serve(); });
}

TcpStoreServer::~TcpStoreServer() {
  ::shutdown(listenFd, SHUT_RDWR);
  if (acceptor.joinable())
    acceptor.join();
  ::close(listenFd);
  // No handler may outlive the values it reads: end every connection.
  for (auto &[fd, thread] : clients) {
    ::shutdown(fd, SHUT_RDWR);
    thread.join();
    ::close(fd);
  }
}

void TcpStoreServer::serve() {
  for (;;) {
    int fd = ::accept(listenFd, nullptr, nullptr);
    if (fd < 0) {
      if (errno == EINTR)
        continue;
      return; // shut down
    }
    // A client whose machine went away sends no reset: keep-alive probes
    // end its connection within about 10 s, which records its departure.
    int one = 1, idle = 4, interval = 2, probes = 3;
    ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
    std::lock_guard<std::mutex> lock(mutex);
    clients.emplace_back(fd, std::thread([this, fd] { handle(fd); }));
  }
}

/// The address a connection comes from, without its port.
static std::string peerHost(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  char text[INET6_ADDRSTRLEN] = "unknown host";
  if (::getpeername(fd, reinterpret_cast<sockaddr *>(&addr), &len) == 0) {
    if (addr.ss_family == AF_INET)
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(&addr)->sin_addr, text,
                  sizeof text);
    else if (addr.ss_family == AF_INET6)
      ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_addr, text,
                  sizeof text);
  }
  return text;
}

void TcpStoreServer::departed(int rank, const std::string &host) {
  std::lock_guard<std::mutex> lock(mutex);
  std::string text = "rank " + std::to_string(rank) + " (" + host + ")";
  values.emplace(kGoneKey, std::vector<char>(text.begin(), text.end()));
}

void TcpStoreServer::handle(int fd) {
  int rank = -1; // once announced
  std::string host;
  try {
    serveRequests(fd, rank, host);
  } catch (const std::exception &) {
    // The client went away in the middle of a request.
  }
  if (rank >= 0)
    departed(rank, host);
}

void TcpStoreServer::serveRequests(int fd, int &rank, std::string &host) {
  for (;;) {
    char op = 0;
    if (!recvAll(fd, &op, 1))
      return;
    std::string key = recvBytes(fd);
    if (op == 'H') {
      rank = std::atoi(key.c_str());
      host = peerHost(fd);
      continue;
    }
    if (op == 'S') {
      std::string value = recvBytes(fd);
      std::lock_guard<std::mutex> lock(mutex);
      values[key] = std::vector<char>(value.begin(), value.end());
      continue;
    }
    std::vector<char> value;
    bool found = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = values.find(key);
      if (it != values.end()) {
        found = true;
        value = it->second;
      }
    }
    char f = found ? 1 : 0;
    sendAll(fd, &f, 1);
    if (found)
      sendBytes(fd, std::string(value.begin(), value.end()));
  }
}

TcpStore::TcpStore(const std::string &host, int port,
                   std::chrono::milliseconds timeout)
    : where(host + ":" + std::to_string(port)), timeout(timeout) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  if (int e = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints,
                            &found))
    throw std::runtime_error("MASTER_ADDR='" + host +
                             "' does not resolve: " + ::gai_strerror(e));
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(fd, found->ai_addr, found->ai_addrlen) == 0)
      break;
    int e = errno;
    ::close(fd);
    fd = -1;
    if (std::chrono::steady_clock::now() > deadline) {
      ::freeaddrinfo(found);
      throw std::runtime_error("cannot reach rank 0's rendezvous at " + where +
                               " (" + std::strerror(e) + ") within " +
                               std::to_string(timeout.count() / 1000) +
                               " s: is rank 0 running, and are MASTER_ADDR "
                               "and MASTER_PORT the same on every rank?");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::freeaddrinfo(found);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // The server answers at once: a request that waits longer is one to a
  // machine that went away, and must fail, not block its asker for the
  // minutes TCP would retry.
  timeval limit{kRequestTimeoutSeconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
}

TcpStore::~TcpStore() {
  if (fd >= 0)
    ::close(fd);
}

void TcpStore::set(const std::string &key, const std::vector<char> &data) {
  std::lock_guard<std::mutex> lock(mutex);
  char op = 'S';
  sendAll(fd, &op, 1);
  sendBytes(fd, key);
  sendBytes(fd, std::string(data.begin(), data.end()));
}

bool TcpStore::tryGet(const std::string &key, std::vector<char> &out) {
  std::lock_guard<std::mutex> lock(mutex);
  try {
    char op = 'G';
    sendAll(fd, &op, 1);
    sendBytes(fd, key);
    char found = 0;
    if (!recvAll(fd, &found, 1))
      throw std::runtime_error("rendezvous: rank 0's store at " + where +
                               " closed the connection");
    if (!found)
      return false;
    std::string value = recvBytes(fd);
    out.assign(value.begin(), value.end());
    return true;
  } catch (const std::exception &) {
    // A reply that comes late would answer the next request: no request
    // goes on this connection again.
    ::shutdown(fd, SHUT_RDWR);
    throw;
  }
}

void TcpStore::announce(int rank) {
  std::lock_guard<std::mutex> lock(mutex);
  char op = 'H';
  sendAll(fd, &op, 1);
  sendBytes(fd, std::to_string(rank));
}

std::string TcpStore::departed() {
  try {
    std::vector<char> value;
    if (!tryGet(kGoneKey, value))
      return "";
    return std::string(value.begin(), value.end());
  } catch (const std::exception &) {
    return "rank 0 (" + where.substr(0, where.rfind(':')) + ")";
  }
}

std::vector<char> TcpStore::get(const std::string &key) {
  wait({key});
  std::vector<char> value;
  tryGet(key, value);
  return value;
}

void TcpStore::wait(const std::vector<std::string> &keys) {
  wait(keys, timeout);
}

void TcpStore::wait(const std::vector<std::string> &keys,
                    const std::chrono::milliseconds &limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<char> ignored;
  for (const std::string &key : keys) {
    while (!tryGet(key, ignored)) {
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error(
            "the ranks did not all arrive at the rendezvous within " +
            std::to_string(limit.count() / 1000) + " s (waiting for '" + key +
            "'): check WORLD_SIZE and that every rank started");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

Rendezvous openRendezvous(const WorldInfo &world,
                          std::chrono::milliseconds timeout) {
  Rendezvous r;
  if (world.rank == 0)
    r.server = std::make_unique<TcpStoreServer>(world.masterPort);
  r.store = std::make_unique<TcpStore>(world.masterAddr, world.masterPort, timeout);
  return r;
}

} // namespace sinter::rt
