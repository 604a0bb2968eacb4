//===- TensorBoardLog.cpp - Scalars as TensorBoard event files -----------===//
//
// An event file is a sequence of TFRecords, each an Event message: a
// little-endian 64-bit length, the masked CRC-32C of those 8 bytes, the
// message, and the masked CRC-32C of the message. The first Event names the
// file's version; each later one holds a Summary of the step's scalars.
//
//===----------------------------------------------------------------------===//

#include "observe/RunLog.h"
#include "observe/tensorboard_event.pb.h"
#include "support/AtomicFile.h"
#include "support/Crc32c.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace sinter::rt {
namespace {

uint32_t maskedCrc(const void *data, size_t n) {
  uint32_t crc = crc32c(data, n);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

void putLittleEndian(std::string &out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(char(v >> (8 * i)));
}

double wallTime() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class TensorBoardLog final : public LogSink {
public:
  TensorBoardLog(std::string path, std::FILE *file) : path(std::move(path)), file(file) {}
  ~TensorBoardLog() override { std::fclose(file); }

  Status start() {
    tensorboard::Event e;
    e.set_wall_time(wallTime());
    e.set_file_version("brain.Event:2");
    return write(e);
  }

  Status step(const StepReport &r) override {
    if (!r.logged)
      return Status::success();
    NamedValues values = {{"train/loss", r.loss},
                          {"train/lr", r.lr},
                          {"train/grad_norm", r.gradNorm},
                          {"throughput/samples_per_second", r.samplesPerSecond},
                          {"time/step_seconds", r.secondsPerStep},
                          {"time/data_wait_seconds", r.dataWaitSeconds}};
    for (const auto &[name, value] : r.metrics)
      values.emplace_back("train/" + name, value);
    if (r.tokensPerSecond > 0)
      values.emplace_back("throughput/tokens_per_second", r.tokensPerSecond);
    if (r.communicationSeconds)
      values.emplace_back("time/communication_seconds", *r.communicationSeconds);
    if (r.computeSeconds)
      values.emplace_back("time/compute_seconds", *r.computeSeconds);
    if (r.checkpointSeconds)
      values.emplace_back("time/checkpoint_seconds", *r.checkpointSeconds);
    return scalars(r.step, values);
  }

  Status eval(const EvalReport &r) override {
    NamedValues values = {{"eval/loss", r.loss}};
    for (const auto &[name, value] : r.metrics)
      values.emplace_back("eval/" + name, value);
    return scalars(r.step, values);
  }

private:
  Status scalars(int64_t step, const NamedValues &values) {
    tensorboard::Event e;
    e.set_wall_time(wallTime());
    e.set_step(step);
    for (const auto &[tag, value] : values) {
      tensorboard::Summary::Value *v = e.mutable_summary()->add_value();
      v->set_tag(tag);
      v->set_simple_value(float(value));
    }
    return write(e);
  }

  Status write(const tensorboard::Event &e) {
    std::string data = e.SerializeAsString();
    std::string record;
    putLittleEndian(record, data.size(), 8);
    putLittleEndian(record, maskedCrc(record.data(), 8), 4);
    record += data;
    putLittleEndian(record, maskedCrc(data.data(), data.size()), 4);
    return writeRecord(file, path, record);
  }

  std::string path;
  std::FILE *file;
};

} // namespace

Expected<std::unique_ptr<LogSink>> tensorBoardLog(const std::string &dir) {
  SINTER_RT_RETURN_IF_ERROR(createDirectories(dir, "log.tensorboard_dir"));
  char host[256] = "localhost";
  (void)::gethostname(host, sizeof host - 1);
  // TensorBoard finds files by "tfevents" in their names; a run of its own
  // gets a file of its own.
  std::string path = dir + "/events.out.tfevents." +
                     std::to_string(long(wallTime())) + "." + host + "." +
                     std::to_string(::getpid()) + ".sinter";
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return Status::error("cannot create " + path + ": " + std::strerror(errno));
  auto log = std::make_unique<TensorBoardLog>(path, file);
  SINTER_RT_RETURN_IF_ERROR(log->start());
  return std::unique_ptr<LogSink>(std::move(log));
}

} // namespace sinter::rt
