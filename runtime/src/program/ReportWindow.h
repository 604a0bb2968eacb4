//===- ReportWindow.h - A step report's rates and times ---------*- C++ -*-===//
//
// The log shows rates over the steps since its last line, so that a line
// every 100 steps speaks for all 100 of them: samples and tokens per second,
// the time per step, its data wait, and with several ranks, its gradient
// communication and the rest.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_PROGRAM_REPORTWINDOW_H
#define SINTER_RT_PROGRAM_REPORTWINDOW_H

#include "observe/RunLog.h"
#include "program/TrainStep.h"

#include <chrono>

namespace sinter::rt {

class ReportWindow {
public:
  /// `tokensPerSample` is 0 unless the data is a token stream; `times`
  /// is null for one rank.
  ReportWindow(uint64_t globalBatch, uint64_t tokensPerSample,
               const CommunicationTimes *times);

  void addDataWait(double seconds) { dataWait += seconds; }
  /// Fills the rates, times and ETA of `r`, a step just done, over the
  /// window; a logged step then starts the next window.
  void fill(StepReport &r);

private:
  uint64_t globalBatch, tokensPerSample;
  const CommunicationTimes *times;
  CommunicationTimes atStart; ///< *times when the window began
  std::chrono::steady_clock::time_point start;
  uint64_t steps = 0;
  double dataWait = 0;
};

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_REPORTWINDOW_H
