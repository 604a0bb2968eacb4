//===- ThreadedDims.h - How many outer dimensions the threads share -*- C++
//-*-===//
#ifndef SINTER_TARGET_CPU_THREADEDDIMS_H
#define SINTER_TARGET_CPU_THREADEDDIMS_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace sinter::cpu {

/// The fewest leading dimensions, of the given trip counts, whose
/// iterations number at least `enough` (all of them when none do): the
/// ones the threads share. The rest run inside a thread, innermost along
/// memory. Negative trip counts (unknown) count as enough.
inline unsigned threadedDims(llvm::ArrayRef<int64_t> trips, int64_t enough) {
  int64_t iterations = 1;
  for (unsigned d = 0; d < trips.size(); ++d) {
    if (trips[d] < 0)
      return d + 1;
    iterations *= trips[d];
    if (iterations >= enough)
      return d + 1;
  }
  return trips.size();
}

} // namespace sinter::cpu

#endif // SINTER_TARGET_CPU_THREADEDDIMS_H
