//===- DnnlEngine.h - The CPU library's oneDNN engine and checks -*- C++ -*-===//
//
// What every oneDNN kernel file shares: the one engine and stream, and the
// check that ends the program, naming the call and what it computed, when
// a oneDNN call fails (a step cannot continue without its result); and
// which implementation the last convolution ran, for tests.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_CPU_DNNLENGINE_H
#define SINTER_RT_CPU_DNNLENGINE_H

#include <oneapi/dnnl/dnnl.h>

#include <string>

namespace sinter::rt::dnnl {

struct Context {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
};

/// The CPU engine and its stream, made on first use.
Context &context();

/// Returns when `status` is success; otherwise prints the call, its status
/// and `what` (the op and its shape) and ends the program.
void check(dnnl_status_t status, const char *call, const std::string &what);

/// oneDNN's implementation of the convolution pass called last, as
/// "jit_wino_4x3:avx512_core" (for tests).
std::string lastConvolutionImplementation();

} // namespace sinter::rt::dnnl

#endif // SINTER_RT_CPU_DNNLENGINE_H
