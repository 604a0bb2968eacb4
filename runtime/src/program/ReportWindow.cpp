//===- ReportWindow.cpp - A step report's rates and times ---------------===//

#include "program/ReportWindow.h"

namespace sinter::rt {

ReportWindow::ReportWindow(uint64_t globalBatch, uint64_t tokensPerSample,
                           const CommunicationTimes *times)
    : globalBatch(globalBatch), tokensPerSample(tokensPerSample), times(times),
      start(std::chrono::steady_clock::now()) {
  if (times)
    atStart = *times;
}

void ReportWindow::fill(StepReport &r) {
  auto now = std::chrono::steady_clock::now();
  ++steps;
  double seconds = std::chrono::duration<double>(now - start).count();
  double n = double(steps);
  if (seconds > 0) {
    r.samplesPerSecond = double(steps * globalBatch) / seconds;
    r.tokensPerSecond = r.samplesPerSecond * double(tokensPerSample);
  }
  r.secondsPerStep = seconds / n;
  r.dataWaitSeconds = dataWait / n;
  if (times) {
    double overlapped = times->overlappedSeconds - atStart.overlappedSeconds;
    double waited = times->waitedSeconds - atStart.waitedSeconds;
    r.communicationSeconds = (overlapped + waited) / n;
    r.computeSeconds = r.secondsPerStep - r.dataWaitSeconds - waited / n;
  }
  r.etaSeconds = double(r.steps - r.step) * r.secondsPerStep;
  if (!r.logged)
    return;
  start = now;
  steps = 0;
  dataWait = 0;
  if (times)
    atStart = *times;
}

} // namespace sinter::rt
