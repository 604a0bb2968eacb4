//===- DnnlPool.cpp - Pooling and its gradient through oneDNN ------------===//
//
// sinter_cpu_pool2d_f32 and its backward call (abi.h) on the caller's plain
// arrays, NCHW or NHWC: oneDNN's pooling kernels take either as it is. The
// gradient of an NHWC max pooling is MaxPoolGrad.h's, 2-3x faster (it drops
// the gradient of a window of only -inf or NaN, where oneDNN's gives it to
// the window's first pixel). For NCHW,
// max pooling's backward primitive reads the forward pass's record of each
// window's maximum (its workspace); the backward call runs the forward pass
// again to make it, into memory of its kernel's own (outside the step's
// planned buffers: the pooled result and one byte or int per window), so
// that the step keeps nothing between the two calls. Primitives are made
// once per shape; as in Dnnl.cpp, the step makes one library call at a
// time, so a kernel's memories are set and run without a lock.
//
//===----------------------------------------------------------------------===//

#include "cpu/DnnlEngine.h"
#include "cpu/MaxPoolGrad.h"
#include "runtime/contract/abi.h"

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

using sinter::rt::dnnl::check;
using sinter::rt::dnnl::context;

namespace {

/// A pooling's sizes (NCHW's, whatever the layout) and kind.
struct PoolShape {
  int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
  bool max, channelsLast;
  std::array<int64_t, 14> key() const {
    return {n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, max, channelsLast};
  }
  std::string describe(bool backward) const {
    std::string of = std::string(max ? "max" : "average") + " pooling of [" +
                     std::to_string(n) + ", " + std::to_string(c) + ", " +
                     std::to_string(h) + ", " + std::to_string(w) + "] by " +
                     std::to_string(kh) + "x" + std::to_string(kw) +
                     (channelsLast ? " (channels last)" : "");
    return backward ? "the input gradient of " + of : of;
  }
};

/// The primitives of one pass and the memories they are run with; the
/// caller's arrays are set as data handles on each call.
struct PoolKernel {
  dnnl_primitive_t forward = nullptr;
  dnnl_primitive_t backward = nullptr;
  dnnl_memory_t x = nullptr, y = nullptr, dy = nullptr, dx = nullptr;
  /// Max pooling's backward pass: the recomputed result and the workspace.
  dnnl_memory_t recomputed = nullptr, workspace = nullptr;
  std::string what;
};

dnnl_memory_desc_t activation(int64_t n, int64_t c, int64_t h, int64_t w, bool last,
                              const std::string &what) {
  dnnl_dims_t dims = {n, c, h, w};
  dnnl_memory_desc_t md;
  check(dnnl_memory_desc_init_by_tag(&md, 4, dims, dnnl_f32, last ? dnnl_nhwc : dnnl_nchw),
        "dnnl_memory_desc_init_by_tag", what);
  return md;
}

dnnl_memory_t memory(const dnnl_memory_desc_t *md, void *handle, const std::string &what) {
  dnnl_memory_t m;
  check(dnnl_memory_create(&m, md, context().engine, handle), "dnnl_memory_create", what);
  return m;
}

dnnl_primitive_t primitive(const_dnnl_op_desc_t desc, const std::string &what,
                           const_dnnl_primitive_desc_t hint, dnnl_primitive_desc_t *keep) {
  dnnl_primitive_desc_t pd;
  check(dnnl_primitive_desc_create(&pd, desc, nullptr, context().engine, hint),
        "dnnl_primitive_desc_create", what);
  dnnl_primitive_t p;
  check(dnnl_primitive_create(&p, pd), "dnnl_primitive_create", what);
  if (keep)
    *keep = pd;
  else
    dnnl_primitive_desc_destroy(pd);
  return p;
}

PoolKernel build(const PoolShape &s, bool backward) {
  PoolKernel k;
  k.what = s.describe(backward);
  const std::string &what = k.what;
  dnnl_memory_desc_t xmd = activation(s.n, s.c, s.h, s.w, s.channelsLast, what),
                     ymd = activation(s.n, s.c, s.oh, s.ow, s.channelsLast, what);
  // The right and bottom padding that makes the windows end where the
  // result's last one does (less than the left one when the last window
  // falls short of the edge).
  dnnl_dims_t strides = {s.sh, s.sw}, kernel = {s.kh, s.kw}, left = {s.ph, s.pw},
              right = {(s.oh - 1) * s.sh + s.kh - s.h - s.ph,
                       (s.ow - 1) * s.sw + s.kw - s.w - s.pw};
  dnnl_alg_kind_t alg = s.max ? dnnl_pooling_max : dnnl_pooling_avg_include_padding;
  dnnl_pooling_desc_t forward;
  check(dnnl_pooling_forward_desc_init(
            &forward, backward ? dnnl_forward_training : dnnl_forward_inference, alg, &xmd,
            &ymd, strides, kernel, left, right),
        "dnnl_pooling_forward_desc_init", what);
  k.x = memory(&xmd, DNNL_MEMORY_NONE, what);
  if (!backward) {
    k.forward = primitive(&forward, what, nullptr, nullptr);
    k.y = memory(&ymd, DNNL_MEMORY_NONE, what);
    return k;
  }
  dnnl_primitive_desc_t hint;
  dnnl_primitive_t again = primitive(&forward, what, nullptr, &hint);
  dnnl_pooling_desc_t desc;
  check(dnnl_pooling_backward_desc_init(&desc, alg, &xmd, &ymd, strides, kernel, left,
                                        right),
        "dnnl_pooling_backward_desc_init", what);
  k.backward = primitive(&desc, what, hint, nullptr);
  k.dy = memory(&ymd, DNNL_MEMORY_NONE, what);
  k.dx = memory(&xmd, DNNL_MEMORY_NONE, what);
  if (s.max) {
    k.forward = again;
    k.recomputed = memory(&ymd, DNNL_MEMORY_ALLOCATE, what);
    const dnnl_memory_desc_t *ws = dnnl_primitive_desc_query_md(hint, dnnl_query_workspace_md, 0);
    if (!ws)
      check(dnnl_unimplemented, "dnnl_primitive_desc_query_md (workspace)", what);
    k.workspace = memory(ws, DNNL_MEMORY_ALLOCATE, what);
  } else {
    dnnl_primitive_destroy(again);
  }
  dnnl_primitive_desc_destroy(hint);
  return k;
}

std::mutex cacheMutex;
std::map<std::pair<bool, std::array<int64_t, 14>>, PoolKernel> cache;

PoolKernel &kernelFor(const PoolShape &s, bool backward) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  auto it = cache.find({backward, s.key()});
  if (it == cache.end())
    it = cache.emplace(std::make_pair(backward, s.key()), build(s, backward)).first;
  return it->second;
}

void setHandle(dnnl_memory_t m, const void *data, const std::string &what) {
  check(dnnl_memory_set_data_handle(m, const_cast<void *>(data)),
        "dnnl_memory_set_data_handle", what);
}

void execute(dnnl_primitive_t p, std::initializer_list<dnnl_exec_arg_t> args,
             const std::string &what) {
  check(dnnl_primitive_execute(p, context().stream, int(args.size()), args.begin()),
        "dnnl_primitive_execute", what);
}

} // namespace

extern "C" void sinter_cpu_pool2d_f32(const float *x, float *y, int64_t n, int64_t c,
                                      int64_t h, int64_t w, int64_t oh, int64_t ow,
                                      int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                                      int64_t ph, int64_t pw, int64_t max,
                                      int64_t channels_last) {
  PoolShape s{n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, max != 0, channels_last != 0};
  PoolKernel &k = kernelFor(s, false);
  setHandle(k.x, x, k.what);
  setHandle(k.y, y, k.what);
  execute(k.forward, {{DNNL_ARG_SRC, k.x}, {DNNL_ARG_DST, k.y}}, k.what);
  check(dnnl_stream_wait(context().stream), "dnnl_stream_wait", k.what);
}

extern "C" void sinter_cpu_pool2d_backward_f32(const float *x, const float *dy, float *dx,
                                               int64_t n, int64_t c, int64_t h, int64_t w,
                                               int64_t oh, int64_t ow, int64_t kh,
                                               int64_t kw, int64_t sh, int64_t sw,
                                               int64_t ph, int64_t pw, int64_t max,
                                               int64_t channels_last) {
  if (max && channels_last) {
    sinter::rt::cpu::maxPoolGradChannelsLast(x, dy, dx,
                                             {n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw});
    return;
  }
  PoolShape s{n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, max != 0, channels_last != 0};
  PoolKernel &k = kernelFor(s, true);
  setHandle(k.dy, dy, k.what);
  setHandle(k.dx, dx, k.what);
  if (s.max) {
    setHandle(k.x, x, k.what);
    execute(k.forward,
            {{DNNL_ARG_SRC, k.x}, {DNNL_ARG_DST, k.recomputed}, {DNNL_ARG_WORKSPACE, k.workspace}},
            k.what);
    execute(k.backward,
            {{DNNL_ARG_DIFF_DST, k.dy}, {DNNL_ARG_WORKSPACE, k.workspace},
             {DNNL_ARG_DIFF_SRC, k.dx}},
            k.what);
  } else {
    execute(k.backward, {{DNNL_ARG_DIFF_DST, k.dy}, {DNNL_ARG_DIFF_SRC, k.dx}}, k.what);
  }
  check(dnnl_stream_wait(context().stream), "dnnl_stream_wait", k.what);
}
