//===- GlooCommunicator.cpp - Collectives across CPU processes (Gloo) -----===//
//
// Gloo's TCP transport and algorithms (ring all-reduce, ...), run on one
// communication thread per rank so that a collective can proceed while the
// step computes. Gloo reports failures by exception; this file is built with
// exceptions and turns each into a Status.
//
//===----------------------------------------------------------------------===//

#include "dist/Bootstrap.h"
#include "dist/LostPeer.h"
#include "dist/TcpStore.h"
#include "support/SerialWorker.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <csignal>
#include <cstring>
#include <functional>
#include <unistd.h>

namespace sinter::rt {
namespace {

using ReduceFn = void (*)(void *, const void *, const void *, size_t);

template <typename T> ReduceFn reduceFn(ReduceOp op) {
  return op == ReduceOp::Sum ? ReduceFn(&gloo::sum<T>) : ReduceFn(&gloo::max<T>);
}

/// Calls `f` with the C++ type of `dtype`.
template <typename F> Status withType(DType dtype, F &&f) {
  switch (dtype) {
  case DType::F32: f(float()); return Status::success();
  case DType::F64: f(double()); return Status::success();
  case DType::I64: f(int64_t()); return Status::success();
  case DType::I32: f(int32_t()); return Status::success();
  default:
    return Status::error("internal error: no collective for this dtype");
  }
}

class GlooCommunicator final : public Communicator {
public:
  GlooCommunicator(std::shared_ptr<gloo::Context> context,
                   std::unique_ptr<TcpStoreServer> server,
                   std::unique_ptr<TcpStore> store,
                   std::vector<std::string> peerAddresses)
      : context(std::move(context)), server(std::move(server)),
        store(std::move(store)), peerAddresses(std::move(peerAddresses)) {}

  ~GlooCommunicator() override { worker.stop(); }

  int rank() const override { return context->rank; }
  int size() const override { return context->size; }

  Pending allReduce(void *data, DType dtype, uint64_t count,
                    ReduceOp op) override {
    return start("all-reduce", [=](uint32_t tag) {
      return withType(dtype, [&](auto t) {
        using T = decltype(t);
        gloo::AllreduceOptions o(context);
        o.setOutput(static_cast<T *>(data), count);
        o.setReduceFunction(reduceFn<T>(op));
        o.setTag(tag);
        gloo::allreduce(o);
      });
    });
  }

  Pending broadcast(void *data, DType dtype, uint64_t count, int root) override {
    return start("broadcast", [=](uint32_t tag) {
      return withType(dtype, [&](auto t) {
        using T = decltype(t);
        gloo::BroadcastOptions o(context);
        o.setOutput(static_cast<T *>(data), count);
        o.setRoot(root);
        o.setTag(tag);
        gloo::broadcast(o);
      });
    });
  }

  Pending reduce(void *data, DType dtype, uint64_t count, ReduceOp op,
                 int root) override {
    return start("reduce", [=](uint32_t tag) {
      return withType(dtype, [&](auto t) {
        using T = decltype(t);
        gloo::ReduceOptions o(context);
        o.setOutput(static_cast<T *>(data), count);
        o.setRoot(root);
        o.setReduceFunction(reduceFn<T>(op));
        o.setTag(tag);
        gloo::reduce(o);
      });
    });
  }

  /// Gloo 2022 has no reduce-scatter with options: an all-reduce of the
  /// whole input, of which each rank keeps its part.
  // An all-reduce of `in` in place (its scratch), then this rank's part.
  Pending reduceScatter(void *in, void *out, DType dtype, uint64_t count,
                        ReduceOp op) override {
    size_t bytes = count * dtypeSize(dtype);
    return start("reduce-scatter", [=](uint32_t tag) {
      return withType(dtype, [&](auto t) {
        using T = decltype(t);
        gloo::AllreduceOptions o(context);
        o.setOutput(static_cast<T *>(in), count * size());
        o.setReduceFunction(reduceFn<T>(op));
        o.setTag(tag);
        gloo::allreduce(o);
        std::memcpy(out, static_cast<const char *>(in) + bytes * size_t(rank()), bytes);
      });
    });
  }

  Pending allGather(const void *in, void *out, DType dtype,
                    uint64_t count) override {
    return start("all-gather", [=](uint32_t tag) {
      return withType(dtype, [&](auto t) {
        using T = decltype(t);
        gloo::AllgatherOptions o(context);
        o.setInput(const_cast<T *>(static_cast<const T *>(in)), count);
        o.setOutput(static_cast<T *>(out), count * size());
        o.setTag(tag);
        gloo::allgather(o);
      });
    });
  }

  Pending barrier() override {
    return start("barrier", [=](uint32_t tag) {
      gloo::BarrierOptions o(context);
      o.setTag(tag);
      gloo::barrier(o);
      return Status::success();
    });
  }

  std::string engine() const override { return "Gloo over TCP"; }
  std::string lostPeer() override { return store->departed(); }

private:
  using Task = std::function<Status(uint32_t tag)>;

  Pending start(const char *what, Task task) {
    auto promise = std::make_shared<std::promise<Status>>();
    auto span = std::make_shared<CollectiveSpan>();
    Pending pending(promise->get_future().share(), span);
    // The collectives run in the order they were started; tags keep
    // consecutive ones apart.
    worker.post([=, task = std::move(task)] {
      span->began = std::chrono::steady_clock::now();
      // After one failure the connections are gone: fail at once rather
      // than wait out another timeout.
      Status s = broken;
      if (s.ok()) {
        try {
          s = task(nextTag++);
        } catch (const std::exception &e) {
          s = Status::error("rank " + std::to_string(context->rank) + " of " +
                            std::to_string(context->size) + ": " + what +
                            " failed: " + lostPeer(e.what()) + e.what());
          broken = s;
        }
      }
      span->ended = std::chrono::steady_clock::now();
      promise->set_value(s);
    });
    return pending;
  }

  /// "lost rank R (HOST): " when Gloo's message or the rendezvous tells
  /// R, else a hint.
  std::string lostPeer(const std::string &message) const {
    int r = lostPeerOf(message, peerAddresses);
    if (r >= 0)
      return "lost rank " + std::to_string(r) + " (" +
             hostOf(peerAddresses[size_t(r)]) + "): ";
    if (std::string gone = store->departed(); !gone.empty())
      return "lost " + gone + ": ";
    return "another rank died or stopped responding (sinter-run names it): ";
  }


  std::shared_ptr<gloo::Context> context;
  std::unique_ptr<TcpStoreServer> server;
  std::unique_ptr<TcpStore> store;
  /// For each rank, the address Gloo's errors show for it ("" for this one).
  std::vector<std::string> peerAddresses;
  Status broken = Status::success(); ///< the first failure; worker thread only
  uint32_t nextTag = 0;              ///< worker thread only
  SerialWorker worker;               ///< last: its jobs use the members above
};

/// The address other ranks reach this one at.
std::string localAddress(const WorldInfo &world) {
  if (world.masterAddr == "127.0.0.1" || world.masterAddr == "localhost")
    return "127.0.0.1";
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

} // namespace

Expected<std::unique_ptr<Communicator>> connectWorld(const WorldInfo &world,
                                                     int timeoutSeconds) {
  if (world.size == 1)
    return createLocalCommunicator();
  // A write to a rank that died must fail with EPIPE, which becomes an error
  // naming that rank, rather than end this process silently with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    std::chrono::milliseconds timeout(int64_t(timeoutSeconds) * 1000);
    Rendezvous rendezvous = openRendezvous(world, timeout);
    std::unique_ptr<TcpStoreServer> server = std::move(rendezvous.server);
    std::unique_ptr<TcpStore> store = std::move(rendezvous.store);
    store->announce(world.rank);
    gloo::transport::tcp::attr attr;
    attr.hostname = localAddress(world);
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context =
        std::make_shared<gloo::rendezvous::Context>(world.rank, world.size);
    context->setTimeout(timeout);
    context->connectFullMesh(*store, device);
    // Each rank publishes, for every peer, the address that peer's
    // connection reaches it at: a failure then names the rank it lost.
    auto key = [](int of, int seenBy) {
      return "sinter/address/" + std::to_string(of) + "/" + std::to_string(seenBy);
    };
    for (int peer = 0; peer < world.size; ++peer)
      if (peer != world.rank) {
        std::string a = context->getPair(peer)->address().str();
        store->set(key(world.rank, peer), std::vector<char>(a.begin(), a.end()));
      }
    std::vector<std::string> peers(size_t(world.size));
    for (int peer = 0; peer < world.size; ++peer)
      if (peer != world.rank) {
        std::vector<char> a = store->get(key(peer, world.rank));
        peers[size_t(peer)].assign(a.begin(), a.end());
      }
    return std::unique_ptr<Communicator>(std::make_unique<GlooCommunicator>(
        std::move(context), std::move(server), std::move(store), std::move(peers)));
  } catch (const std::exception &e) {
    return Status::error("rank " + std::to_string(world.rank) + " of " +
                         std::to_string(world.size) + ": " + e.what());
  }
}

} // namespace sinter::rt
