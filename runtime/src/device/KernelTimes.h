//===- KernelTimes.h - Where a device's time went, by kernel ----*- C++ -*-===//
//
// A profiled run (SINTER_CUDA_PROFILE) times every kernel and library call
// of its steps on the device. This sums the times by label (a kernel's
// name and .sn line, a library call's shape and op) and writes the table
// the run's log ends with: the labels that took the most time, and the
// share of each kind of work (generated kernels, matmuls, attention, ...).
// Each label's first call is left out: it is where a library makes its
// plans and workspaces, host work that the call's events would include.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DEVICE_KERNELTIMES_H
#define SINTER_RT_DEVICE_KERNELTIMES_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace sinter::rt {

class KernelTimes {
public:
  /// One call of `label`, of work of `kind`, took `ms` on the device (not
  /// counted if it is the label's first).
  void add(const std::string &kind, const std::string &label, double ms);

  /// The total, the share of each kind, and the `rows` labels that took
  /// the most time (ties by label), one line each.
  std::string table(size_t rows) const;

  int64_t calls() const { return count; }

private:
  struct Sum {
    double ms = 0;
    int64_t calls = 0;
    bool warm = false; ///< its first call was seen (and left out)
  };
  std::map<std::string, Sum> byLabel, byKind;
  double totalMs = 0;
  int64_t count = 0;
};

} // namespace sinter::rt

#endif // SINTER_RT_DEVICE_KERNELTIMES_H
