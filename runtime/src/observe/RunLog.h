//===- RunLog.h - What rank 0 reports of a run, and where ---------*- C++ -*-===//
//
// The trainer describes each step and evaluation once, as a StepReport or an
// EvalReport; the sinks chosen by the config's `log` block present them: the
// console (plain lines, or one progress line on a terminal), a JSON-lines
// file and TensorBoard event files.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_OBSERVE_RUNLOG_H
#define SINTER_RT_OBSERVE_RUNLOG_H

#include "sinter/rt/Status.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sinter::config {
class TrainConfig;
}

namespace sinter::rt {

using NamedValues = std::vector<std::pair<std::string, double>>;

/// One optimizer step, over all ranks. The rates and times are over the
/// steps since the last logged one, this one included.
struct StepReport {
  int64_t step = 0;  ///< 1-based: the step just completed
  int64_t steps = 0; ///< of the run
  bool logged = false; ///< a log.every step, or the last
  double loss = 0;
  NamedValues metrics;
  double lr = 0;
  double gradNorm = 0;
  double samplesPerSecond = 0;
  double tokensPerSecond = 0; ///< 0 unless the data is a token stream
  double secondsPerStep = 0;
  double dataWaitSeconds = 0; ///< per step, waiting for batches
  /// Per step, with several ranks: how long gradient collectives were in
  /// flight, and the step's time not spent waiting for them.
  std::optional<double> communicationSeconds, computeSeconds;
  /// When the step ended with a checkpoint: how long training stood still
  /// while it was written (a checkpoint step is always logged).
  std::optional<double> checkpointSeconds;
  double etaSeconds = 0; ///< at this pace, to the run's last step
};

struct EvalReport {
  int64_t step = 0; ///< after this many optimizer steps
  double loss = 0;
  NamedValues metrics;
};

class LogSink {
public:
  virtual ~LogSink();
  virtual Status step(const StepReport &report) = 0;
  virtual Status eval(const EvalReport &report) = 0;
  /// A message for the user (the console prints it on its own line).
  virtual void message(const std::string &) {}
  /// The run ended: flush, close the progress line.
  virtual void finish() {}
};

/// Every sink the config asks for, on the rank that logs; none elsewhere.
class RunLog {
public:
  static Expected<RunLog> open(const config::TrainConfig &cfg, bool lead);
  RunLog() = default;
  RunLog(RunLog &&) = default;
  RunLog &operator=(RunLog &&) = default;
  ~RunLog() { finish(); }

  Status step(const StepReport &report);
  Status eval(const EvalReport &report);
  void message(const std::string &line);
  void finish();

private:
  std::vector<std::unique_ptr<LogSink>> sinks;
};

/// The sinks, for RunLog::open and tests.
std::unique_ptr<LogSink> consoleLog(bool terminal);
/// Appends to `path` when `append` (a resumed run), else starts it anew.
Expected<std::unique_ptr<LogSink>> jsonlLog(const std::string &path, bool append);
Expected<std::unique_ptr<LogSink>> tensorBoardLog(const std::string &dir);

/// Appends `bytes` to the sink's `file` and flushes it, so that readers
/// (TensorBoard, a script following it) see each record as the run goes on.
Status writeRecord(std::FILE *file, const std::string &path, const std::string &bytes);

/// A rate to three significant digits, never rounded to 0.
std::string formatRate(double perSecond);
/// "1.23 s/step" or "12.3 ms/step".
std::string formatStepTime(double seconds);

} // namespace sinter::rt

#endif // SINTER_RT_OBSERVE_RUNLOG_H
