//===- Subnormals.h - Subnormal floats read and written as zero ----------===//
//
// x86 cores take microcode assists on subnormal operands and results: a
// GPT whose embeddings were drawn N(0, 1) trained 3x slower on the CPU from
// its third step on, once its gradients and Adam's moments reached them
// (bench/NOTES.md 24). XLA's CPU runtime flushes them for the same reason.
//
//===----------------------------------------------------------------------===//

#pragma once

namespace sinter::rt {

/// Sets the calling thread to read subnormal floats as zero and write zero
/// for subnormal results (MXCSR's DAZ and FTZ on x86-64; a no-op on other
/// CPUs). Threads started later inherit it, and libomp's workers take the
/// primary thread's MXCSR at every parallel region. Call in main, before
/// any thread or parallel region.
void flushSubnormals();

} // namespace sinter::rt
