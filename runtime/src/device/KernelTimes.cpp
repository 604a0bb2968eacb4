//===- KernelTimes.cpp - Where a device's time went, by kernel -----------===//

#include "device/KernelTimes.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace sinter::rt {

void KernelTimes::add(const std::string &kind, const std::string &label, double ms) {
  Sum &first = byLabel[label];
  if (!first.warm) {
    first.warm = true;
    return;
  }
  for (Sum *s : {&first, &byKind[kind]}) {
    s->ms += ms;
    ++s->calls;
  }
  totalMs += ms;
  ++count;
}

namespace {

using Entry = std::pair<std::string, double>;

/// `sums` by time, the longest first (ties by name).
template <typename Map> std::vector<Entry> ranked(const Map &sums) {
  std::vector<Entry> out;
  for (const auto &[name, sum] : sums)
    if (sum.calls > 0)
      out.push_back({name, sum.ms});
  std::stable_sort(out.begin(), out.end(),
                   [](const Entry &a, const Entry &b) { return a.second > b.second; });
  return out;
}

} // namespace

std::string KernelTimes::table(size_t rows) const {
  char line[160];
  auto share = [&](double ms) { return totalMs > 0 ? 100 * ms / totalMs : 0.0; };
  std::snprintf(line, sizeof line,
                "GPU time: %.3f ms in %lld kernels and library calls (each one's first "
                "left out)",
                totalMs, (long long)count);
  std::string out = line;
  std::string kinds;
  for (const auto &[kind, ms] : ranked(byKind)) {
    std::snprintf(line, sizeof line, "%s%s %.1f%%", kinds.empty() ? "" : ", ",
                  kind.c_str(), share(ms));
    kinds += line;
  }
  if (!kinds.empty())
    out += " (" + kinds + ")";
  std::vector<Entry> labels = ranked(byLabel);
  for (size_t i = 0; i < labels.size() && i < rows; ++i) {
    const Sum &s = byLabel.at(labels[i].first);
    std::snprintf(line, sizeof line, "\n  %5.1f%% %10.3f ms %7lld x  ", share(s.ms), s.ms,
                  (long long)s.calls);
    out += line + labels[i].first;
  }
  if (labels.size() > rows) {
    double rest = 0;
    for (size_t i = rows; i < labels.size(); ++i)
      rest += labels[i].second;
    std::snprintf(line, sizeof line, "\n  %5.1f%% %10.3f ms in %zu others", share(rest),
                  rest, labels.size() - rows);
    out += line;
  }
  return out;
}

} // namespace sinter::rt
