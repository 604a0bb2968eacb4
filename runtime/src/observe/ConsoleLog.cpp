//===- ConsoleLog.cpp - Log lines, or one progress line on a terminal ----===//
//
// Piped or redirected, the log is one plain line per logged step, for
// scripts and files. On a terminal it is a single line redrawn in place as
// the steps go by (a few times a second at most); evaluations and messages
// print above it.
//
//===----------------------------------------------------------------------===//

#include "observe/RunLog.h"

#include <chrono>
#include <cstdio>
#include <sys/ioctl.h>
#include <unistd.h>

namespace sinter::rt {
namespace {

/// "  NAME VALUE" for each, VALUE printed with `format`.
void appendValues(std::string &line, const NamedValues &values, const char *format) {
  for (const auto &[name, value] : values) {
    char v[64];
    std::snprintf(v, sizeof v, format, value);
    line += "  " + name + " " + v;
  }
}

/// samples/s, tokens/s for a token stream, and the time per step.
std::string throughputText(const StepReport &r) {
  std::string text = formatRate(r.samplesPerSecond) + " samples/s";
  if (r.tokensPerSecond > 0)
    text += "  " + formatRate(r.tokensPerSecond) + " tokens/s";
  return text + "  " + formatStepTime(r.secondsPerStep);
}

std::string plainLine(const StepReport &r) {
  char head[96];
  std::snprintf(head, sizeof head, "step %lld/%lld  loss %.8g", (long long)r.step,
                (long long)r.steps, r.loss);
  std::string line = head;
  appendValues(line, r.metrics, "%.6g");
  char tail[64];
  std::snprintf(tail, sizeof tail, "  lr %.3e  grad-norm %.4g  ", r.lr, r.gradNorm);
  line += tail + throughputText(r);
  if (r.checkpointSeconds) {
    char stall[48];
    std::snprintf(stall, sizeof stall, "  checkpoint %.2f s", *r.checkpointSeconds);
    line += stall;
  }
  return line;
}

std::string clock(double seconds) {
  long s = long(seconds + 0.5);
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  return text;
}

std::string progressLine(const StepReport &r, size_t width) {
  constexpr int kBar = 20;
  int filled = r.steps > 0 ? int(kBar * r.step / r.steps) : kBar;
  std::string bar(size_t(filled), '#');
  bar.resize(kBar, '.');
  char head[96];
  std::snprintf(head, sizeof head, "step %lld/%lld [%s]  loss %.5g",
                (long long)r.step, (long long)r.steps, bar.c_str(), r.loss);
  std::string line = head;
  appendValues(line, r.metrics, "%.4g");
  line += "  " + throughputText(r);
  if (r.step < r.steps)
    line += "  ETA " + clock(r.etaSeconds);
  // A line wider than the terminal would wrap, and \r would redraw only
  // its last row.
  if (width > 1 && line.size() >= width)
    line.resize(width - 1);
  return line;
}

size_t terminalWidth() {
  winsize w{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0)
    return w.ws_col;
  return 100;
}

class ConsoleLog final : public LogSink {
public:
  explicit ConsoleLog(bool terminal) : terminal(terminal) {}

  Status step(const StepReport &r) override {
    if (!terminal) {
      if (r.logged) {
        std::printf("%s\n", plainLine(r).c_str());
        std::fflush(stdout);
      }
      return Status::success();
    }
    auto now = std::chrono::steady_clock::now();
    if (drawn && now - lastDraw < std::chrono::milliseconds(100) &&
        r.step < r.steps)
      return Status::success();
    lastDraw = now;
    std::printf("\r\033[K%s", progressLine(r, terminalWidth()).c_str());
    std::fflush(stdout);
    drawn = true;
    return Status::success();
  }

  Status eval(const EvalReport &r) override {
    char head[96];
    std::snprintf(head, sizeof head, "eval at step %lld: loss %.6f",
                  (long long)r.step, r.loss);
    std::string line = head;
    appendValues(line, r.metrics, "%.6f");
    message(line);
    return Status::success();
  }

  /// On a terminal: above the progress line, which is drawn again at the
  /// next step.
  void message(const std::string &line) override {
    if (drawn)
      std::printf("\r\033[K");
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    drawn = false;
  }

  void finish() override {
    if (drawn)
      std::printf("\n");
    std::fflush(stdout);
    drawn = false;
  }

private:
  bool terminal;
  bool drawn = false; ///< the progress line is on screen
  std::chrono::steady_clock::time_point lastDraw;
};

} // namespace

std::unique_ptr<LogSink> consoleLog(bool terminal) {
  return std::make_unique<ConsoleLog>(terminal);
}

} // namespace sinter::rt
