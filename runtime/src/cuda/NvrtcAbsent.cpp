//===- NvrtcAbsent.cpp - NVRTC's entry points, failing, for the frontend --===//
//
// cuDNN's C++ frontend (Attention.cpp) builds its plans with code that can
// also compile an sm100 RMSNorm-SiLU kernel at run time through NVRTC.
// Sinter never asks for that engine, so programs do not link NVRTC: these
// weak definitions satisfy the references and fail if ever called.
//
//===----------------------------------------------------------------------===//

#include <nvrtc.h>

extern "C" {

#define SINTER_NVRTC_ABSENT __attribute__((weak))

SINTER_NVRTC_ABSENT nvrtcResult nvrtcCreateProgram(nvrtcProgram *, const char *,
                                                   const char *, int, const char *const *,
                                                   const char *const *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
SINTER_NVRTC_ABSENT nvrtcResult nvrtcCompileProgram(nvrtcProgram, int,
                                                    const char *const *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
SINTER_NVRTC_ABSENT nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram, size_t *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
SINTER_NVRTC_ABSENT nvrtcResult nvrtcGetProgramLog(nvrtcProgram, char *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
SINTER_NVRTC_ABSENT nvrtcResult nvrtcDestroyProgram(nvrtcProgram *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
SINTER_NVRTC_ABSENT nvrtcResult nvrtcGetCUBINSize(nvrtcProgram, size_t *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
SINTER_NVRTC_ABSENT nvrtcResult nvrtcGetCUBIN(nvrtcProgram, char *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}

} // extern "C"
