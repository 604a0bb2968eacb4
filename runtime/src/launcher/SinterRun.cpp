//===- SinterRun.cpp - Start the ranks of a run on this machine -----------===//
//
// sinter-run -n N [--nnodes M --node-rank R --master-addr A --master-port P]
//            PROGRAM [ARGS...]
//
// Starts N ranks of PROGRAM on this machine, as ranks R*N .. R*N+N-1 of a
// run of M*N, with torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT). For a run over several
// machines, start it on each with the same M, A and P and its own R. When a
// rank fails, says which and stops the others; SIGINT and SIGTERM are passed
// on to every rank (they checkpoint and stop).
//
//===----------------------------------------------------------------------===//

#include "dist/Timeouts.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <netinet/in.h>
#include <optional>
#include <sched.h>
#include <string>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

const char *const kUsage =
    "usage: sinter-run -n N [--nnodes M --node-rank R --master-addr A "
    "--master-port P] PROGRAM [ARGS...]\n"
    "  -n N            ranks on this machine (one per device; on CPU, one per\n"
    "                  group of cores)\n"
    "  --nnodes M      machines in the run (default 1)\n"
    "  --node-rank R   this machine's index, 0 .. M-1 (default 0)\n"
    "  --master-addr A where rank 0 runs (default 127.0.0.1)\n"
    "  --master-port P its rendezvous port (default: a free port when M is 1,\n"
    "                  else 29500)\n";

// After a rank fails, the others have this long to notice and say so
// before they are asked to stop, and then until this long before they are
// killed: past their own collective deadline, so that a survivor whose
// transport missed the closed connection still names the rank it lost.
constexpr time_t kTermAfterSeconds = 10;
constexpr time_t kKillAfterSeconds = sinter::rt::kCollectiveTimeoutSeconds + 20;

volatile sig_atomic_t forwarded = 0;
void onSignal(int signal) { forwarded = signal; }

int fail(const std::string &message) {
  std::fprintf(stderr, "sinter-run: error: %s\n", message.c_str());
  return 2;
}

bool parseInt(const char *text, long low, long high, long &out) {
  if (!text || !*text)
    return false;
  char *end = nullptr;
  errno = 0;
  out = std::strtol(text, &end, 10);
  return !errno && !*end && out >= low && out <= high;
}

/// A TCP port nobody listens on now.
int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 29500;
  if (::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

std::string describe(int status) {
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") +
           std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

int exitCode(int status) {
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/// What the command line asks for.
struct Options {
  long ranksHere = 0; ///< -n
  long nnodes = 1;
  long nodeRank = 0;
  long port = 0; ///< 0: a free one (one machine) or 29500
  std::string masterAddr = "127.0.0.1";
  char **program = nullptr; ///< the program and its arguments
  long world() const { return ranksHere * nnodes; }
};

/// Reads the options; on a bad one returns its exit code (0 for --help).
std::optional<int> parseOptions(int argc, char **argv, Options &o) {
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; ++i) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    bool ok = true;
    if (a == "-n")
      ok = parseInt(v, 1, 4096, o.ranksHere);
    else if (a == "--nnodes")
      ok = parseInt(v, 1, 65536, o.nnodes);
    else if (a == "--node-rank")
      ok = parseInt(v, 0, 65535, o.nodeRank);
    else if (a == "--master-port")
      ok = parseInt(v, 1, 65535, o.port);
    else if (a == "--master-addr") {
      ok = v && *v;
      if (ok)
        o.masterAddr = v;
    } else
      return fail("unknown option '" + a + "'\n" + kUsage);
    if (!ok)
      return fail(a + " needs a valid value" +
                  (v ? std::string(", got '") + v + "'" : std::string()));
    ++i;
  }
  if (o.ranksHere < 1 || i >= argc)
    return fail(std::string("give -n N and a program\n") + kUsage);
  if (o.nodeRank >= o.nnodes)
    return fail("--node-rank " + std::to_string(o.nodeRank) +
                " is not below --nnodes " + std::to_string(o.nnodes));
  if (o.port == 0)
    o.port = o.nnodes == 1 ? freePort() : 29500;
  o.program = argv + i;
  return std::nullopt;
}

/// The CPUs this launcher may run on (a cpuset's or Slurm's limit, not the
/// machine's count); the online CPUs when the mask cannot be read.
std::vector<int> allowedCpus() {
  std::vector<int> cpus;
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed))
        cpus.push_back(c);
  for (long c = 0; cpus.empty() && c < ::sysconf(_SC_NPROCESSORS_ONLN); ++c)
    cpus.push_back(int(c));
  return cpus;
}

/// Each local rank's share of the CPUs: as many OpenMP threads, unless
/// chosen. With OMP_PROC_BIND set and no OMP_PLACES, every rank would bind
/// its first thread to the first CPU, all ranks sharing it: each rank gets
/// its own CPUs as its places, one place each.
void shareCpus(long local, long ranksHere) {
  std::vector<int> cpus = allowedCpus();
  size_t share = std::max<size_t>(1, cpus.size() / size_t(ranksHere));
  ::setenv("OMP_NUM_THREADS", std::to_string(share).c_str(), 0);
  const char *bind = std::getenv("OMP_PROC_BIND");
  if (!bind || !*bind || !strcasecmp(bind, "false") || std::getenv("OMP_PLACES"))
    return;
  std::string places;
  for (size_t i = 0; i < share; ++i)
    places += (i ? ",{" : "{") +
              std::to_string(cpus[(size_t(local) * share + i) % cpus.size()]) + "}";
  ::setenv("OMP_PLACES", places.c_str(), 1);
}

/// In the forked child: becomes local rank `local` of the run.
[[noreturn]] void execRank(const Options &o, long local) {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  // A terminal's Ctrl-C reaches this launcher only, which passes it on
  // once: a rank that saw it twice would not wait for its checkpoint.
  ::setpgid(0, 0);
  // This launcher defines the world: other launchers' variables would
  // contradict it.
  for (const char *v : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                        "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_PROCID", "SLURM_NTASKS",
                        "SLURM_LOCALID"})
    ::unsetenv(v);
  ::setenv("RANK", std::to_string(o.nodeRank * o.ranksHere + local).c_str(), 1);
  ::setenv("WORLD_SIZE", std::to_string(o.world()).c_str(), 1);
  ::setenv("LOCAL_RANK", std::to_string(local).c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", std::to_string(o.ranksHere).c_str(), 1);
  ::setenv("MASTER_ADDR", o.masterAddr.c_str(), 1);
  ::setenv("MASTER_PORT", std::to_string(o.port).c_str(), 1);
  shareCpus(local, o.ranksHere);
  ::execvp(o.program[0], o.program);
  std::fprintf(stderr, "sinter-run: error: cannot run '%s': %s\n", o.program[0],
               std::strerror(errno));
  std::_Exit(127);
}

/// Waits for this machine's ranks. When one fails, the others soon fail too
/// (their collectives lose it): the report waits a moment for every exit,
/// then names the rank that died first, one killed by a signal before one
/// that exited with an error, and stops the rest.
class Supervisor {
public:
  Supervisor(const Options &o, std::vector<pid_t> ranks)
      : options(o), ranks(std::move(ranks)), running(o.ranksHere) {}

  /// The run's exit code.
  int wait() {
    while (running > 0) {
      passOnSignals();
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid > 0) {
        exited(pid, status);
        continue;
      }
      if (!failures.empty())
        stopAfterFailure();
      ::usleep(50 * 1000);
    }
    if (!failures.empty() && !reported)
      result = report();
    return result;
  }

private:
  struct Failure {
    long rank;
    pid_t pid;
    int status;
  };

  void signalAll(int signal) {
    for (pid_t p : ranks)
      if (p > 0)
        ::kill(p, signal);
  }

  void passOnSignals() {
    if (!forwarded)
      return;
    signalAll(forwarded);
    if (!stopSignal)
      stopSignal = forwarded;
    forwarded = 0;
  }

  void exited(pid_t pid, int status) {
    auto it = std::find(ranks.begin(), ranks.end(), pid);
    if (it == ranks.end())
      return;
    long local = long(it - ranks.begin());
    *it = -1;
    --running;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
      return;
    // A rank that stopped as asked is not a failure.
    if (stopSignal && WIFEXITED(status) && WEXITSTATUS(status) == 128 + stopSignal) {
      result = 128 + stopSignal;
      return;
    }
    if (failures.empty())
      failedAt = time(nullptr);
    failures.push_back({options.nodeRank * options.ranksHere + local, pid, status});
  }

  /// A second to report, then a grace period for the others to notice and
  /// say so (on a loaded machine that can take seconds), then one SIGTERM,
  /// then SIGKILL. SIGTERM goes once: a rank that sees it twice exits at
  /// once, before it can say what it lost.
  void stopAfterFailure() {
    time_t waited = time(nullptr) - failedAt;
    if (!reported && waited >= 1)
      result = report();
    if (waited >= kTermAfterSeconds && !termSent) {
      termSent = true;
      signalAll(SIGTERM);
    }
    if (waited >= kKillAfterSeconds)
      signalAll(SIGKILL);
  }

  int report() {
    const Failure *lost = &failures.front();
    for (const Failure &f : failures)
      if (WIFSIGNALED(f.status) && !WIFSIGNALED(lost->status))
        lost = &f;
    std::fprintf(stderr,
                 "sinter-run: rank %ld (pid %d) %s; stopping the run (%ld "
                 "other rank%s still running on this machine)\n",
                 lost->rank, int(lost->pid), describe(lost->status).c_str(), running,
                 running == 1 ? "" : "s");
    reported = true;
    return exitCode(lost->status);
  }

  const Options &options;
  std::vector<pid_t> ranks; ///< by local rank; -1 once it exited
  long running;
  std::vector<Failure> failures;
  time_t failedAt = 0;
  bool reported = false;
  bool termSent = false;
  int stopSignal = 0; ///< the first signal passed on
  int result = 0;
};

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (std::optional<int> exit = parseOptions(argc, argv, options))
    return *exit;
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  std::vector<pid_t> ranks(size_t(options.ranksHere), -1);
  for (long local = 0; local < options.ranksHere; ++local) {
    pid_t pid = ::fork();
    if (pid < 0)
      return fail(std::string("fork: ") + std::strerror(errno));
    if (pid == 0)
      execRank(options, local);
    ranks[size_t(local)] = pid;
  }
  return Supervisor(options, std::move(ranks)).wait();
}
