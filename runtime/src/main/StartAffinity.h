//===- StartAffinity.h - The CPUs the program was started on -------------===//
//
// oneDNN loads libgomp, whose initializer pins the main thread to the first
// OpenMP place when OMP_PROC_BIND is set, before main runs. libomp, which
// runs every parallel region (it answers libgomp's calls too), then sees
// one CPU and puts all its threads there: a step twice as slow on 2 cores.
//
//===----------------------------------------------------------------------===//

#pragma once

namespace sinter::rt {

/// Gives the main thread back the CPUs it was started with (saved before
/// any library's initializer ran), so that libomp places its threads over
/// all of them. Call first in main, before any parallel region.
void restoreStartAffinity();

} // namespace sinter::rt
