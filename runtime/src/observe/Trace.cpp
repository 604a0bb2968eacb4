//===- Trace.cpp - A Chrome trace of a run, per rank --------------------===//

#include "observe/Trace.h"

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

namespace sinter::rt {
namespace {

// Tracks (a trace's "threads"): the step, then the collectives.
constexpr int kStepTrack = 1;
constexpr int kReduceScatterTrack = 2;
constexpr int kAllGatherTrack = 3;
constexpr int kFirstBucketTrack = 100;

double micros(Trace::Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(t.time_since_epoch()).count();
}

std::string trackName(int track) {
  switch (track) {
  case kStepTrack:
    return "step";
  case kReduceScatterTrack:
    return "reduce-scatter";
  case kAllGatherTrack:
    return "all-gather";
  default:
    return "bucket " + std::to_string(track - kFirstBucketTrack);
  }
}

} // namespace

std::string traceFileOf(const std::string &file, int rank, int worldSize) {
  if (worldSize <= 1)
    return file;
  size_t slash = file.rfind('/');
  size_t dot = file.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    dot = file.size();
  return file.substr(0, dot) + ".rank-" + std::to_string(rank) + file.substr(dot);
}

Trace::Trace(std::string file, std::FILE *out, int rank)
    : file(std::move(file)), out(out), rank(rank) {}

Trace::~Trace() {
  (void)close();
}

Expected<std::unique_ptr<Trace>> Trace::open(const std::string &file, int rank,
                                             int worldSize) {
  std::string path = traceFileOf(file, rank, worldSize);
  std::FILE *out = std::fopen(path.c_str(), "w");
  if (!out)
    return Status::error("log.trace_file: cannot create " + path + ": " +
                         std::strerror(errno));
  std::unique_ptr<Trace> trace(new Trace(path, out, rank));
  nlohmann::json process = {{"name", "process_name"}, {"ph", "M"}, {"pid", rank},
                            {"args", {{"name", "rank " + std::to_string(rank)}}}};
  trace->pending = "[\n" + process.dump();
  return trace;
}

void Trace::nameTrack(int track) {
  if (!named.insert(track).second)
    return;
  nlohmann::json meta = {{"name", "thread_name"}, {"ph", "M"}, {"pid", rank},
                         {"tid", track}, {"args", {{"name", trackName(track)}}}};
  pending += ",\n" + meta.dump();
  nlohmann::json order = {{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", rank},
                          {"tid", track}, {"args", {{"sort_index", track}}}};
  pending += ",\n" + order.dump();
}

void Trace::complete(int track, const std::string &name, const char *category,
                     Clock::time_point begin, Clock::time_point end) {
  if (!out || end < begin)
    return;
  nameTrack(track);
  nlohmann::json e = {{"name", name},          {"cat", category},
                      {"ph", "X"},             {"pid", rank},
                      {"tid", track},          {"ts", micros(begin)},
                      {"dur", micros(end) - micros(begin)}};
  pending += ",\n" + e.dump();
}

void Trace::step(int64_t step, Clock::time_point dataBegin, Clock::time_point dataEnd,
                 const StepEvents &events) {
  complete(kStepTrack, "step " + std::to_string(step), "step", dataBegin, events.end);
  complete(kStepTrack, "data wait", "data", dataBegin, dataEnd);
  // A loss normalised by a count over the global batch (a mean over valid
  // targets) first passes over the micro-batches to count; the forward and
  // backward pass is the last pass, where the indices start again.
  const auto &micro = events.microBatches;
  size_t lastPass = 0;
  for (size_t i = 1; i < micro.size(); ++i)
    if (micro[i].first <= micro[i - 1].first)
      lastPass = i;
  for (size_t i = 0; i < micro.size(); ++i) {
    Clock::time_point end = i + 1 < micro.size() ? micro[i + 1].second
                                                 : events.backwardEnd;
    std::string index = std::to_string(micro[i].first);
    if (i < lastPass)
      complete(kStepTrack, "count, micro-batch " + index, "count", micro[i].second, end);
    else
      complete(kStepTrack, "micro-batch " + index, "forward+backward",
               micro[i].second, end);
  }
  if (events.summed > events.backwardEnd)
    complete(kStepTrack, "waiting for gradients", "communication",
             events.backwardEnd, events.summed);
  complete(kStepTrack, "optimizer", "optimizer", events.summed, events.end);
  for (const StepEvents::Collective &c : events.collectives) {
    int track = c.bucket >= 0 ? kFirstBucketTrack + int(c.bucket)
                : c.name == "reduce-scatter" ? kReduceScatterTrack
                                             : kAllGatherTrack;
    std::string name = c.bucket >= 0 ? c.name + " bucket " + std::to_string(c.bucket)
                                     : c.name;
    complete(track, name, "communication", c.begin, c.end);
  }
}

void Trace::span(const std::string &name, Clock::time_point begin,
                 Clock::time_point end) {
  complete(kStepTrack, name, name.c_str(), begin, end);
}

Status Trace::flush() {
  if (!out || pending.empty())
    return Status::success();
  if (std::fwrite(pending.data(), 1, pending.size(), out) != pending.size() ||
      std::fflush(out) != 0)
    return Status::error("writing " + file + ": " + std::strerror(errno));
  pending.clear();
  return Status::success();
}

Status Trace::close() {
  if (!out)
    return Status::success();
  pending += "\n]\n";
  Status written = flush();
  std::fclose(out);
  out = nullptr;
  return written;
}

} // namespace sinter::rt
