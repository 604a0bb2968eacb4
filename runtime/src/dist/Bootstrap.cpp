//===- Bootstrap.cpp - Who this process is in a run -----------------------===//

#include "dist/Bootstrap.h"

#include <cerrno>
#include <cstdlib>

namespace sinter::rt {

namespace {

/// A non-negative decimal integer, or -1.
long parseCount(const char *text) {
  if (!text || !*text)
    return -1;
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno || *end || v < 0 || v > 1000000)
    return -1;
  return v;
}

Status malformed(const char *name, const char *value) {
  return Status::error(std::string(name) + "='" + value +
                       "' is not a non-negative integer");
}

} // namespace

Expected<WorldInfo>
readWorld(const std::function<const char *(const char *)> &getenv) {
  WorldInfo w;
  struct Pair {
    const char *rank, *size, *local;
  };
  const Pair sources[] = {{"RANK", "WORLD_SIZE", "LOCAL_RANK"},
                          {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                           "OMPI_COMM_WORLD_LOCAL_RANK"},
                          {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"}};
  for (const Pair &p : sources) {
    const char *r = getenv(p.rank), *s = getenv(p.size);
    if (!r && !s)
      continue;
    if (!r || !s)
      return Status::error(std::string(r ? p.rank : p.size) + " is set but " +
                           (r ? p.size : p.rank) +
                           " is not; set both or neither");
    long rank = parseCount(r), size = parseCount(s);
    if (rank < 0)
      return malformed(p.rank, r);
    if (size < 1)
      return Status::error(std::string(p.size) + "='" + s +
                           "' must be a positive integer");
    if (rank >= size)
      return Status::error(std::string(p.rank) + "=" + r + " is not below " +
                           p.size + "=" + s);
    w.rank = int(rank);
    w.size = int(size);
    w.source = p.rank;
    if (const char *l = getenv(p.local)) {
      long local = parseCount(l);
      if (local < 0)
        return malformed(p.local, l);
      w.localRank = int(local);
    }
    break;
  }
  // A second source must agree with the first.
  for (const Pair &p : sources) {
    const char *r = getenv(p.rank), *s = getenv(p.size);
    if (!r || !s || w.source == p.rank)
      continue;
    if (parseCount(r) != w.rank || parseCount(s) != w.size)
      return Status::error(std::string(w.source) + "/" + "world size say rank " +
                           std::to_string(w.rank) + " of " +
                           std::to_string(w.size) + " but " + p.rank + "=" + r +
                           " and " + p.size + "=" + s + " disagree");
  }
  if (const char *a = getenv("MASTER_ADDR"); a && *a)
    w.masterAddr = a;
  if (const char *port = getenv("MASTER_PORT")) {
    long v = parseCount(port);
    if (v < 1 || v > 65535)
      return Status::error(std::string("MASTER_PORT='") + port +
                           "' is not a port number (1-65535)");
    w.masterPort = int(v);
  }
  return w;
}

} // namespace sinter::rt
