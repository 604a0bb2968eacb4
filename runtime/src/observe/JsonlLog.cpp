//===- JsonlLog.cpp - One JSON object per logged step, for scripts -------===//

#include "observe/RunLog.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

namespace sinter::rt {
namespace {

nlohmann::json namedValues(const NamedValues &values) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto &[name, value] : values)
    out[name] = value;
  return out;
}

class JsonlLog final : public LogSink {
public:
  JsonlLog(std::string path, std::FILE *file) : path(std::move(path)), file(file) {}
  ~JsonlLog() override { std::fclose(file); }

  Status step(const StepReport &r) override {
    if (!r.logged)
      return Status::success();
    nlohmann::json o = {{"step", r.step},
                        {"loss", r.loss},
                        {"metrics", namedValues(r.metrics)},
                        {"lr", r.lr},
                        {"grad_norm", r.gradNorm},
                        {"samples_per_second", r.samplesPerSecond},
                        {"seconds_per_step", r.secondsPerStep},
                        {"data_wait_seconds", r.dataWaitSeconds}};
    if (r.tokensPerSecond > 0)
      o["tokens_per_second"] = r.tokensPerSecond;
    if (r.communicationSeconds)
      o["communication_seconds"] = *r.communicationSeconds;
    if (r.computeSeconds)
      o["compute_seconds"] = *r.computeSeconds;
    if (r.checkpointSeconds)
      o["checkpoint_seconds"] = *r.checkpointSeconds;
    return write(o);
  }

  Status eval(const EvalReport &r) override {
    return write({{"step", r.step},
                  {"eval", {{"loss", r.loss}, {"metrics", namedValues(r.metrics)}}}});
  }

private:
  Status write(const nlohmann::json &o) {
    return writeRecord(file, path, o.dump() + "\n");
  }

  std::string path;
  std::FILE *file;
};

} // namespace

Expected<std::unique_ptr<LogSink>> jsonlLog(const std::string &path, bool append) {
  std::FILE *file = std::fopen(path.c_str(), append ? "a" : "w");
  if (!file)
    return Status::error("cannot open " + path + " for writing: " +
                         std::strerror(errno));
  return std::unique_ptr<LogSink>(std::make_unique<JsonlLog>(path, file));
}

} // namespace sinter::rt
