//===- StartAffinity.cpp - The CPUs the program was started on -----------===//

#include "main/StartAffinity.h"

#include <sched.h>

namespace {

cpu_set_t startCpus;
bool saved = false;

void saveStartCpus() { saved = ::sched_getaffinity(0, sizeof startCpus, &startCpus) == 0; }

// An executable's .preinit_array runs before the initializers of the
// shared libraries it loads, libgomp's among them.
__attribute__((section(".preinit_array"), used)) void (*const saveFirst)() = saveStartCpus;

} // namespace

void sinter::rt::restoreStartAffinity() {
  cpu_set_t now;
  if (!saved || ::sched_getaffinity(0, sizeof now, &now) != 0 || CPU_EQUAL(&now, &startCpus))
    return;
  // Failing leaves the threads where they are: slower, still correct.
  (void)::sched_setaffinity(0, sizeof startCpus, &startCpus);
}
