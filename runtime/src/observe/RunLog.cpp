//===- RunLog.cpp - What rank 0 reports of a run, and where ------------===//

#include "observe/RunLog.h"

#include "runtime/contract/sinter_config.pb.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace sinter::rt {

LogSink::~LogSink() = default;

Expected<RunLog> RunLog::open(const config::TrainConfig &cfg, bool lead) {
  RunLog log;
  if (!lead)
    return log;
  log.sinks.push_back(consoleLog(::isatty(STDOUT_FILENO) == 1));
  if (!cfg.log().jsonl().empty()) {
    auto sink = jsonlLog(cfg.log().jsonl(), cfg.checkpoint().resume());
    if (!sink.ok())
      return sink.status().withPrefix("log.jsonl: ");
    log.sinks.push_back(sink.take());
  }
  if (!cfg.log().tensorboard_dir().empty()) {
    auto sink = tensorBoardLog(cfg.log().tensorboard_dir());
    if (!sink.ok())
      return sink.status().withPrefix("log.tensorboard_dir: ");
    log.sinks.push_back(sink.take());
  }
  return log;
}

Status RunLog::step(const StepReport &report) {
  for (auto &sink : sinks)
    SINTER_RT_RETURN_IF_ERROR(sink->step(report));
  return Status::success();
}

Status RunLog::eval(const EvalReport &report) {
  for (auto &sink : sinks)
    SINTER_RT_RETURN_IF_ERROR(sink->eval(report));
  return Status::success();
}

void RunLog::message(const std::string &line) {
  for (auto &sink : sinks)
    sink->message(line);
}

void RunLog::finish() {
  for (auto &sink : sinks)
    sink->finish();
}

Status writeRecord(std::FILE *file, const std::string &path, const std::string &bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file) != bytes.size() ||
      std::fflush(file) != 0)
    return Status::error("writing " + path + ": " + std::strerror(errno));
  return Status::success();
}

std::string formatRate(double perSecond) {
  char text[32];
  std::snprintf(text, sizeof text, perSecond >= 100 ? "%.0f" : "%.3g", perSecond);
  return text;
}

std::string formatStepTime(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, seconds >= 1 ? "%.3g s/step" : "%.3g ms/step",
                seconds >= 1 ? seconds : 1e3 * seconds);
  return text;
}

} // namespace sinter::rt
