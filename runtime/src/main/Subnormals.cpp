//===- Subnormals.cpp - Subnormal floats read and written as zero --------===//

#include "main/Subnormals.h"

#if defined(__x86_64__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#endif

void sinter::rt::flushSubnormals() {
#if defined(__x86_64__)
  _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
  _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#endif
}
