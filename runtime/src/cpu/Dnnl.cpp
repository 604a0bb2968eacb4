//===- Dnnl.cpp - Matmul and convolution through oneDNN -----------------===//
//
// The library kernels generated code calls (abi.h). Primitives are created
// once per shape and cached; every oneDNN call is checked, and a failure ends
// the program with the call, its status and the shape, since a step cannot
// continue without its result.
//
// Convolutions let oneDNN choose its layouts (blocked channels, nChw16c on
// AVX-512): its direct kernels run 1.5-6x faster than the im2col GEMM it
// falls back to on plain NCHW. The call reorders the plain arrays the step
// holds into those layouts and the result back, through scratch buffers
// shared by every kernel (the step makes one call at a time). Channels-last
// activations are taken as they are; only the weights are reordered. A
// kernel gradient that accumulates is added into the caller's array by
// that reorder back (oneDNN's backward primitives take no sum post-op).
//
// With precision.convolution WINOGRAD, the convolutions its Winograd
// kernel is built and fast for run it, in oneDNN's blocked layouts (the
// kernel takes no NHWC: channels-last activations are reordered too).
//
//===----------------------------------------------------------------------===//

#include "cpu/DnnlEngine.h"
#include "cpu/MatmulBF16.h"
#include "runtime/contract/abi.h"

#include <oneapi/dnnl/dnnl.h>

#include "device/HostConvolutions.h"
#include "device/LibrarySite.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace sinter::rt::dnnl {

void check(dnnl_status_t status, const char *call, const std::string &what) {
  if (status == dnnl_success)
    return;
  std::fprintf(stderr, "error: oneDNN %s failed with status %d in %s%s\n", call,
               int(status), what.c_str(), sinter::rt::librarySiteSuffix().c_str());
  std::exit(1);
}

Context &context() {
  static Context ctx = [] {
    Context c;
    check(dnnl_engine_create(&c.engine, dnnl_cpu, 0), "dnnl_engine_create", "start-up");
    check(dnnl_stream_create(&c.stream, c.engine, dnnl_stream_default_flags),
          "dnnl_stream_create", "start-up");
    return c;
  }();
  return ctx;
}

} // namespace sinter::rt::dnnl

namespace {

using sinter::rt::dnnl::check;
using sinter::rt::dnnl::Context;
using sinter::rt::dnnl::context;

/// A primitive and its arguments: the caller's plain arrays (`memories`,
/// whose data handles are set on each call) and, where the primitive wants
/// another layout, that layout's memory in the shared scratch and the
/// reorder between the two (into it for the inputs, 0 and 1, out of it for
/// the output, 2).
struct Kernel {
  dnnl_primitive_t primitive = nullptr;
  std::array<dnnl_memory_t, 3> memories{};
  std::array<dnnl_memory_t, 3> laidOut{};
  std::array<dnnl_primitive_t, 3> reorders{};
  /// The output's reorder into the primitive's layout, when the primitive
  /// adds to what the output holds.
  dnnl_primitive_t outputIn = nullptr;
  std::array<int, 3> argKinds{};
  /// The op and its shape, for messages: made once, with the primitive.
  std::string what;
  /// oneDNN's implementation ("jit_wino_4x3:avx512_core").
  std::string implementation;
};

/// Scratch for the arguments in the primitives' own layouts, one buffer per
/// argument position, grown to the largest a kernel needs.
struct Scratch {
  std::array<void *, 3> data{};
  std::array<size_t, 3> bytes{};
  void reserve(int arg, size_t size) {
    if (size <= bytes[arg])
      return;
    std::free(data[arg]);
    size = (size + 63) / 64 * 64;
    data[arg] = std::aligned_alloc(64, size);
    if (!data[arg]) {
      std::fprintf(stderr,
                   "error: out of memory for %zu bytes of oneDNN "
                   "scratch\n",
                   size);
      std::exit(1);
    }
    bytes[arg] = size;
  }
};
Scratch scratch;

using Key = std::array<int64_t, 18>;

std::mutex cacheMutex;
std::map<std::pair<int, Key>, Kernel> cache;

/// A dense row-major array (f32 unless said); with `swapLast`, the last two
/// dimensions are stored swapped (a transposed matrix read in place).
dnnl_memory_desc_t describe(int ndims, const dnnl_dims_t dims, const std::string &what,
                            bool swapLast = false, dnnl_data_type_t type = dnnl_f32) {
  dnnl_memory_desc_t md;
  dnnl_dims_t strides;
  dnnl_dims_t stored;
  for (int i = 0; i < ndims; ++i)
    stored[i] = dims[i];
  if (swapLast)
    std::swap(stored[ndims - 1], stored[ndims - 2]);
  int64_t stride = 1;
  for (int i = ndims - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= stored[i];
  }
  if (swapLast)
    std::swap(strides[ndims - 1], strides[ndims - 2]);
  check(dnnl_memory_desc_init_by_strides(&md, ndims, dims, type, strides),
        "dnnl_memory_desc_init_by_strides", what);
  return md;
}

/// Primitive attributes whose post-op adds the result to the destination's
/// contents (C += A·B), or none.
struct Attributes {
  dnnl_primitive_attr_t attr = nullptr;
  Attributes(bool addToDestination, const std::string &what) {
    if (!addToDestination)
      return;
    dnnl_post_ops_t ops;
    check(dnnl_post_ops_create(&ops), "dnnl_post_ops_create", what);
    check(dnnl_post_ops_append_sum(ops, 1.0f), "dnnl_post_ops_append_sum", what);
    check(dnnl_primitive_attr_create(&attr), "dnnl_primitive_attr_create", what);
    check(dnnl_primitive_attr_set_post_ops(attr, ops), "dnnl_primitive_attr_set_post_ops",
          what);
    dnnl_post_ops_destroy(ops);
  }
  ~Attributes() {
    if (attr)
      dnnl_primitive_attr_destroy(attr);
  }
};

/// The reorder from `from` to `to`; with `addToDestination`, one that adds
/// into what `to` holds.
dnnl_primitive_t reorder(const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to,
                         const std::string &what, bool addToDestination = false) {
  Context &ctx = context();
  dnnl_primitive_desc_t pd;
  Attributes attributes(addToDestination, what);
  check(dnnl_reorder_primitive_desc_create(&pd, from, ctx.engine, to, ctx.engine,
                                           attributes.attr),
        "dnnl_reorder_primitive_desc_create", what);
  dnnl_primitive_t primitive;
  check(dnnl_primitive_create(&primitive, pd), "dnnl_primitive_create", what);
  dnnl_primitive_desc_destroy(pd);
  return primitive;
}

/// How a kernel's result reaches the caller's array: written by the
/// primitive, added by the primitive (a sum post-op), or added by the
/// reorder out of the primitive's layout (primitives without post-ops, the
/// backward convolutions).
enum class Output { write, primitiveAdds, reorderAdds };

/// The first of oneDNN's implementations of `desc`, in its own order of
/// preference, whose name does not start with `avoid`; the first of all
/// when `avoid` is null or every implementation's name starts with it.
dnnl_status_t createPreferred(dnnl_primitive_desc_t *pd, const_dnnl_op_desc_t desc,
                              const_dnnl_primitive_attr_t attr,
                              const_dnnl_primitive_desc_t hint, const char *avoid) {
  dnnl_engine_t engine = context().engine;
  dnnl_primitive_desc_iterator_t it;
  if (avoid && dnnl_primitive_desc_iterator_create(&it, desc, attr, engine, hint) ==
                   dnnl_success) {
    do {
      dnnl_primitive_desc_t candidate = dnnl_primitive_desc_iterator_fetch(it);
      const char *name = nullptr;
      if (candidate &&
          dnnl_primitive_desc_query(candidate, dnnl_query_impl_info_str, 0, &name) ==
              dnnl_success &&
          name && std::strncmp(name, avoid, std::strlen(avoid)) != 0) {
        dnnl_primitive_desc_iterator_destroy(it);
        *pd = candidate;
        return dnnl_success;
      }
      if (candidate)
        dnnl_primitive_desc_destroy(candidate);
    } while (dnnl_primitive_desc_iterator_next(it) == dnnl_success);
    dnnl_primitive_desc_iterator_destroy(it);
  }
  return dnnl_primitive_desc_create(pd, desc, attr, engine, hint);
}

/// The primitive of `desc`, whose arguments the caller holds in the plain
/// layouts `mds`. `desc` may leave layouts to oneDNN (dnnl_format_tag_any):
/// the arguments are then reordered on each call. With `mayBeMissing`, a
/// `desc` oneDNN has no implementation of gives a kernel without a
/// primitive; otherwise the program ends. `avoid` as createPreferred's.
Kernel build(const_dnnl_op_desc_t desc, const dnnl_memory_desc_t *mds[3],
             std::array<int, 3> argKinds, const std::string &what,
             const_dnnl_primitive_desc_t forwardHint = nullptr,
             Output output = Output::write, bool mayBeMissing = false,
             const char *avoid = nullptr) {
  bool addToDestination = output == Output::primitiveAdds;
  Context &ctx = context();
  dnnl_primitive_desc_t pd;
  Attributes attributes(addToDestination, what);
  dnnl_status_t made = createPreferred(&pd, desc, attributes.attr, forwardHint, avoid);
  Kernel k;
  if (made == dnnl_unimplemented && mayBeMissing)
    return k;
  check(made, "dnnl_primitive_desc_create", what);
  const char *implementation = nullptr;
  check(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &implementation),
        "dnnl_primitive_desc_query", what);
  k.implementation = implementation ? implementation : "";
  check(dnnl_primitive_create(&k.primitive, pd), "dnnl_primitive_create", what);
  for (int i = 0; i < 3; ++i) {
    check(dnnl_memory_create(&k.memories[i], mds[i], ctx.engine, DNNL_MEMORY_NONE),
          "dnnl_memory_create", what);
    const dnnl_memory_desc_t *wanted =
        dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, argKinds[i]);
    bool input = i < 2, reorderAdds = !input && output == Output::reorderAdds;
    // Adding needs the reorder: a primitive that wrote the caller's array
    // itself would drop what it held.
    if (!wanted && reorderAdds)
      check(dnnl_unimplemented, "dnnl_primitive_desc_query_md", what + " (added)");
    if (!wanted || (dnnl_memory_desc_equal(wanted, mds[i]) && !reorderAdds))
      continue;
    check(dnnl_memory_create(&k.laidOut[i], wanted, ctx.engine, DNNL_MEMORY_NONE),
          "dnnl_memory_create", what);
    scratch.reserve(i, dnnl_memory_desc_get_size(wanted));
    k.reorders[i] = input ? reorder(mds[i], wanted, what)
                          : reorder(wanted, mds[i], what, reorderAdds);
    if (!input && addToDestination)
      k.outputIn = reorder(mds[i], wanted, what);
  }
  dnnl_primitive_desc_destroy(pd);
  k.argKinds = argKinds;
  k.what = what;
  return k;
}

void execute(dnnl_primitive_t primitive, int count, const dnnl_exec_arg_t *args,
             const std::string &what) {
  check(dnnl_primitive_execute(primitive, context().stream, count, args),
        "dnnl_primitive_execute", what);
}

void reorderBetween(dnnl_primitive_t primitive, dnnl_memory_t from, dnnl_memory_t to,
                    const std::string &what) {
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  execute(primitive, 2, args, what);
}

void run(Kernel &k, std::array<void *, 3> data) {
  const std::string &what = k.what;
  dnnl_exec_arg_t args[3];
  for (int i = 0; i < 3; ++i) {
    check(dnnl_memory_set_data_handle(k.memories[i], data[i]),
          "dnnl_memory_set_data_handle", what);
    args[i] = {k.argKinds[i], k.memories[i]};
    if (!k.reorders[i])
      continue;
    check(dnnl_memory_set_data_handle(k.laidOut[i], scratch.data[i]),
          "dnnl_memory_set_data_handle", what);
    args[i].memory = k.laidOut[i];
    if (i < 2)
      reorderBetween(k.reorders[i], k.memories[i], k.laidOut[i], what);
    else if (k.outputIn)
      reorderBetween(k.outputIn, k.memories[i], k.laidOut[i], what);
  }
  execute(k.primitive, 3, args, what);
  if (k.reorders[2])
    reorderBetween(k.reorders[2], k.laidOut[2], k.memories[2], what);
  check(dnnl_stream_wait(context().stream), "dnnl_stream_wait", what);
}

/// `md` with its layout left to oneDNN.
dnnl_memory_desc_t anyLayout(int ndims, const dnnl_dims_t dims, const std::string &what) {
  dnnl_memory_desc_t md;
  check(dnnl_memory_desc_init_by_tag(&md, ndims, dims, dnnl_f32, dnnl_format_tag_any),
        "dnnl_memory_desc_init_by_tag", what);
  return md;
}

/// The cache's kinds of kernel besides the convolution passes (ConvPass).
enum KernelKind { matmulF32 = 0, matmulBF16 = 4, matmulBF16Rounded = 6 };

/// c = a @ b (abi.h's flags) with a and b of `inputs` (f32 or bf16) and c
/// of `output` (f32, or bf16 with bf16 inputs: oneDNN sums in f32 and
/// rounds once as it writes c).
void matmul(dnnl_data_type_t inputs, dnnl_data_type_t output, const void *a,
            const void *b, void *c, int64_t batch, int64_t m, int64_t n, int64_t k,
            int64_t flags) {
  bool sharedB = flags & 1, transposedB = flags & 2, transposedA = flags & 4,
       accumulate = flags & 8;
  Key key{batch, m, n, k, flags};
  int kind = output == dnnl_bf16  ? matmulBF16Rounded
             : inputs == dnnl_bf16 ? matmulBF16
                                   : matmulF32;
  Kernel *kernel;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = cache.find({kind, key});
    if (it == cache.end()) {
      std::string what = std::string(kind == matmulBF16Rounded ? "bf16 rounded "
                                     : kind == matmulBF16     ? "bf16 "
                                                              : "") +
                         "matmul [" + std::to_string(batch) + " x " + std::to_string(m) +
                         " x " + std::to_string(k) + "] @ [" + std::to_string(k) + " x " +
                         std::to_string(n) + "]";
      dnnl_dims_t ad = {batch, m, k}, bd = {sharedB ? 1 : batch, k, n},
                  cd = {batch, m, n};
      dnnl_memory_desc_t amd = describe(3, ad, what, transposedA, inputs),
                         bmd = describe(3, bd, what, transposedB, inputs),
                         cmd = describe(3, cd, what, false, output);
      dnnl_matmul_desc_t desc;
      check(dnnl_matmul_desc_init(&desc, &amd, &bmd, nullptr, &cmd),
            "dnnl_matmul_desc_init", what);
      const dnnl_memory_desc_t *mds[3] = {&amd, &bmd, &cmd};
      it = cache
               .emplace(std::make_pair(kind, key),
                        build(&desc, mds, {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                              what, nullptr,
                              accumulate ? Output::primitiveAdds : Output::write))
               .first;
    }
    kernel = &it->second;
  }
  run(*kernel, {const_cast<void *>(a), const_cast<void *>(b), c});
}

/// Whether oneDNN multiplies bf16 matrices into `output` on this CPU
/// (AVX-512 and newer); asked once per output type, on a small product.
bool bf16MatmulSupported(dnnl_data_type_t output) {
  auto ask = [](dnnl_data_type_t output) {
    dnnl_dims_t dims = {1, 16, 16};
    dnnl_memory_desc_t in, out;
    if (dnnl_memory_desc_init_by_tag(&in, 3, dims, dnnl_bf16, dnnl_abc) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&out, 3, dims, output, dnnl_abc) != dnnl_success)
      return false;
    dnnl_matmul_desc_t desc;
    dnnl_primitive_desc_t pd;
    if (dnnl_matmul_desc_init(&desc, &in, &in, nullptr, &out) != dnnl_success ||
        dnnl_primitive_desc_create(&pd, &desc, nullptr, context().engine, nullptr) !=
            dnnl_success)
      return false;
    dnnl_primitive_desc_destroy(pd);
    return true;
  };
  static const bool intoF32 = ask(dnnl_f32), intoBF16 = ask(dnnl_bf16);
  return output == dnnl_bf16 ? intoBF16 : intoF32;
}

/// abi.h's bias (bit 4) as c's starting rows, which the product is then
/// added to (bit 3): the flags that remain.
template <typename T>
int64_t startFromBias(T *c, int64_t m, int64_t n, int64_t flags, const T *bias) {
  if (!(flags & 16))
    return flags;
  for (int64_t row = 0; row < m; ++row)
    std::memcpy(c + row * n, bias, size_t(n) * sizeof(T));
  return (flags & ~int64_t(16)) | 8;
}

} // namespace

extern "C" void sinter_cpu_matmul_f32(const float *a, const float *b, float *c,
                                      int64_t batch, int64_t m, int64_t n, int64_t k,
                                      int64_t flags, const float *bias) {
  flags = startFromBias(c, m, n, flags, bias);
  matmul(dnnl_f32, dnnl_f32, a, b, c, batch, m, n, k, flags);
}

extern "C" void sinter_cpu_matmul_bf16(const uint16_t *a, const uint16_t *b, float *c,
                                       int64_t batch, int64_t m, int64_t n, int64_t k,
                                       int64_t flags, const float *bias) {
  flags = startFromBias(c, m, n, flags, bias);
  if (bf16MatmulSupported(dnnl_f32))
    return matmul(dnnl_bf16, dnnl_f32, a, b, c, batch, m, n, k, flags);
  sinter::rt::matmulBF16Widened(a, b, c, batch, m, n, k, flags);
}

extern "C" void sinter_cpu_matmul_bf16_rounded(const uint16_t *a, const uint16_t *b,
                                               uint16_t *c, int64_t batch, int64_t m,
                                               int64_t n, int64_t k, int64_t flags,
                                               const uint16_t *bias) {
  // The bias's bf16 rows are added to the f32 sum before the one rounding,
  // as oneDNN's sum post-op adds c (bit 3).
  flags = startFromBias(c, m, n, flags, bias);
  if (bf16MatmulSupported(dnnl_bf16))
    return matmul(dnnl_bf16, dnnl_bf16, a, b, c, batch, m, n, k, flags);
  sinter::rt::matmulBF16RoundedWidened(a, b, c, batch, m, n, k, flags);
}

namespace sinter::rt {

void matmulBF16RoundedWidened(const uint16_t *a, const uint16_t *b, uint16_t *c,
                              int64_t batch, int64_t m, int64_t n, int64_t k,
                              int64_t flags) {
  size_t count = size_t(batch * m * n);
  std::vector<float> sum(count, 0.0f);
  if (flags & 8)
    for (size_t i = 0; i < count; ++i) {
      uint32_t bits = uint32_t(c[i]) << 16;
      std::memcpy(&sum[i], &bits, sizeof bits);
    }
  matmulBF16Widened(a, b, sum.data(), batch, m, n, k, flags);
  for (size_t i = 0; i < count; ++i)
    c[i] = roundToBF16(sum[i]);
}

uint16_t roundToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x40); // NaN stays NaN (quiet)
  return uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

void matmulBF16Widened(const uint16_t *a, const uint16_t *b, float *c, int64_t batch,
                       int64_t m, int64_t n, int64_t k, int64_t flags) {
  // A bf16 value is the high half of the f32 with the same value, so the
  // widened product is the same product, in f32.
  bool sharedB = flags & 1;
  auto widen = [](const uint16_t *from, int64_t count) {
    std::vector<float> to(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      uint32_t bits = uint32_t(from[i]) << 16;
      std::memcpy(&to[size_t(i)], &bits, sizeof bits);
    }
    return to;
  };
  std::vector<float> wa = widen(a, batch * m * k), wb = widen(b, (sharedB ? 1 : batch) * k * n);
  matmul(dnnl_f32, dnnl_f32, wa.data(), wb.data(), c, batch, m, n, k, flags);
}

} // namespace sinter::rt

namespace {

/// The convolution x[n, c, h, w] by w[o, c, kh, kw] into y[n, o, oh, ow],
/// with its strides, dilations and (symmetric) zero paddings, in abi.h's
/// order.
struct ConvShape {
  int64_t n, c, h, w, o, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw;
  /// The activations (x, y and their gradients) are NHWC, not NCHW.
  bool channelsLast = false;
  /// Channel groups: each of the o / groups kernels of a group reads its
  /// c / groups input channels.
  int64_t groups = 1;
};

/// An activation of NCHW sizes `dims`, stored NCHW or NHWC.
dnnl_memory_desc_t describeActivation(const dnnl_dims_t dims, bool channelsLast,
                                      const std::string &what) {
  if (!channelsLast)
    return describe(4, dims, what);
  dnnl_memory_desc_t md;
  check(dnnl_memory_desc_init_by_tag(&md, 4, dims, dnnl_f32, dnnl_nhwc),
        "dnnl_memory_desc_init_by_tag", what);
  return md;
}

/// The passes of a convolution, each its own primitive. Their call
/// arguments are x, w, y (forward); dy, w, dx (data); x, dy, dw (weights,
/// and weightsAdded, which adds the gradient into dw). The values are the
/// cache's kinds, apart from KernelKind's.
enum class ConvPass { forward = 1, data = 2, weights = 3, weightsAdded = 5 };

std::string describeConv(ConvPass pass, const ConvShape &s) {
  std::string of = "conv2d of [" + std::to_string(s.n) + ", " + std::to_string(s.c) +
                   ", " + std::to_string(s.h) + ", " + std::to_string(s.w) + "] with [" +
                   std::to_string(s.o) + ", " + std::to_string(s.c / s.groups) + ", " +
                   std::to_string(s.kh) + ", " + std::to_string(s.kw) + "]";
  if (s.groups != 1)
    of += " in " + std::to_string(s.groups) + " groups";
  if (s.channelsLast)
    of += " (channels last)";
  switch (pass) {
  case ConvPass::forward:
    return of;
  case ConvPass::data:
    return "the input gradient of " + of;
  case ConvPass::weights:
  case ConvPass::weightsAdded:
    return "the kernel gradient of " + of;
  }
  return of;
}

/// Whether oneDNN's Winograd kernel (F(4x4, 3x3), on AVX-512) is built for
/// the convolution and pays: 3x3, stride 1, no dilation, at most 1 of
/// padding on every side, at least 16 input channels and outputs of at
/// least 8x8. Measured here against the direct kernels, it ran 1.7-2.3x
/// faster on ResNet-18's 3x3 layers down to 8x8, and no faster on 4x4
/// outputs.
bool winogradFits(const ConvShape &s) {
  // The padding after the last row and column that the output's size
  // implies (the call gives the one before them).
  int64_t bottom = s.oh + 2 - s.h - s.ph, right = s.ow + 2 - s.w - s.pw;
  auto atMostOne = [](int64_t pad) { return pad >= 0 && pad <= 1; };
  return s.kh == 3 && s.kw == 3 && s.sh == 1 && s.sw == 1 && s.dh == 1 && s.dw == 1 &&
         atMostOne(s.ph) && atMostOne(s.pw) && atMostOne(bottom) && atMostOne(right) &&
         s.c >= 16 && s.oh >= 8 && s.ow >= 8 && s.groups == 1;
}

/// Whether the forward pass's output rows are short against wide inputs:
/// at least 256 input channels a group, rows of at most 7 outputs that
/// span at most 8 input columns (ResNets' last stages: 4x4 and 7x7 maps,
/// and the stride-2 layers into 4x4). oneDNN 2.6 prefers its brgemm kernel
/// there, whose products are a row long; its older direct kernels ran
/// those layers 10-45% faster in isolation on NHWC, and 20-30% slower on
/// 4x4 maps of 64 and 128 channels and on stride-2 rows of 14 columns
/// (bench/NOTES.md 22).
bool shortWideRows(const ConvShape &s) {
  return s.c / s.groups >= 256 && s.ow <= 7 && s.ow * s.sw <= 8;
}

/// oneDNN's primitive for one pass by `algorithm`, in the layouts it
/// picks, reordered from and to plain NCHW and OIHW arrays. A Winograd
/// kernel oneDNN does not have gives a kernel without a primitive.
Kernel buildConv(ConvPass pass, const ConvShape &s, dnnl_alg_kind_t algorithm,
                 const std::string &what) {
  bool winograd = algorithm == dnnl_convolution_winograd;
  // Grouped weights are [groups, o / groups, c / groups, kh, kw] to
  // oneDNN: the same bytes as the caller's [o, c / groups, kh, kw]. One
  // group's are OIHW, the last four sizes.
  int64_t g = s.groups;
  dnnl_dims_t xd = {s.n, s.c, s.h, s.w}, yd = {s.n, s.o, s.oh, s.ow},
              grouped = {g, s.o / g, s.c / g, s.kh, s.kw};
  int wrank = g == 1 ? 4 : 5;
  const int64_t *wdims = g == 1 ? grouped + 1 : grouped;
  dnnl_memory_desc_t xmd = describeActivation(xd, s.channelsLast, what),
                     wmd = describe(wrank, wdims, what),
                     ymd = describeActivation(yd, s.channelsLast, what);
  // Channels-last activations are taken as they are (oneDNN's NHWC direct
  // kernels cost the backward passes nothing against its blocked ones, and
  // spare the reorders); the weights' layout is oneDNN's choice, and the
  // activations' too for Winograd, which takes only blocked ones.
  bool takeActivations = s.channelsLast && !winograd;
  dnnl_memory_desc_t xany = takeActivations ? xmd : anyLayout(4, xd, what),
                     wany = anyLayout(wrank, wdims, what),
                     yany = takeActivations ? ymd : anyLayout(4, yd, what);
  dnnl_dims_t strides = {s.sh, s.sw}, dilates = {s.dh - 1, s.dw - 1}, pad = {s.ph, s.pw};
  // Direct forward passes are made for inference, where oneDNN has its
  // brgemm kernels; Winograd's inference kernel would want the weights
  // transformed in advance, which each step would do again.
  dnnl_prop_kind_t forwardKind = pass == ConvPass::forward && !winograd
                                     ? dnnl_forward_inference
                                     : dnnl_forward_training;
  dnnl_convolution_desc_t forward;
  check(dnnl_dilated_convolution_forward_desc_init(&forward, forwardKind, algorithm, &xany,
                                                   &wany, nullptr, &yany, strides,
                                                   dilates, pad, pad),
        "dnnl_dilated_convolution_forward_desc_init", what);
  if (pass == ConvPass::forward) {
    const dnnl_memory_desc_t *mds[3] = {&xmd, &wmd, &ymd};
    return build(&forward, mds, {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST}, what,
                 nullptr, Output::write, winograd,
                 shortWideRows(s) ? "brgconv" : nullptr);
  }
  // Backward primitives are made from the forward one they belong to.
  dnnl_primitive_desc_t hint;
  dnnl_status_t made =
      dnnl_primitive_desc_create(&hint, &forward, nullptr, context().engine, nullptr);
  if (made == dnnl_unimplemented && winograd)
    return Kernel{};
  check(made, "dnnl_primitive_desc_create", what);
  dnnl_convolution_desc_t desc;
  Kernel k;
  if (pass == ConvPass::data) {
    check(dnnl_dilated_convolution_backward_data_desc_init(&desc, algorithm, &xany, &wany,
                                                           &yany, strides, dilates, pad,
                                                           pad),
          "dnnl_dilated_convolution_backward_data_desc_init", what);
    const dnnl_memory_desc_t *mds[3] = {&ymd, &wmd, &xmd};
    k = build(&desc, mds, {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC}, what,
              hint, Output::write, winograd);
  } else {
    check(dnnl_dilated_convolution_backward_weights_desc_init(
              &desc, algorithm, &xany, &wany, nullptr, &yany, strides, dilates, pad, pad),
          "dnnl_dilated_convolution_backward_weights_desc_init", what);
    const dnnl_memory_desc_t *mds[3] = {&xmd, &ymd, &wmd};
    k = build(&desc, mds, {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS}, what,
              hint, pass == ConvPass::weightsAdded ? Output::reorderAdds : Output::write,
              winograd);
  }
  dnnl_primitive_desc_destroy(hint);
  return k;
}

/// The kernel for one pass: Winograd where it is allowed, fits and oneDNN
/// has it, direct otherwise. A Winograd kernel that was allowed and fits
/// but is missing (a CPU without AVX-512's core instructions, or with
/// ONEDNN_MAX_CPU_ISA below them) is said once.
Kernel buildConv(ConvPass pass, const ConvShape &s, bool winogradAllowed) {
  std::string what = describeConv(pass, s);
  if (winogradAllowed && winogradFits(s)) {
    Kernel k = buildConv(pass, s, dnnl_convolution_winograd, what);
    if (k.primitive)
      return k;
    static std::once_flag said;
    std::call_once(said, [&] {
      std::fprintf(stderr,
                   "note: precision.convolution WINOGRAD: oneDNN has no Winograd "
                   "kernel for %s on this CPU (it needs AVX-512); convolutions "
                   "without one run direct\n",
                   what.c_str());
    });
  }
  return buildConv(pass, s, dnnl_convolution_direct, what);
}

/// The kernel of the convolution called last (cached kernels stay put).
const Kernel *lastConvolution = nullptr;

void conv(ConvPass pass, const ConvShape &s, std::array<void *, 3> args) {
  bool winograd = sinter::rt::hostWinogradConvolutions();
  Key key{s.n,  s.c,  s.h,  s.w,  s.o,  s.kh, s.kw,           s.oh,     s.ow,
          s.sh, s.sw, s.dh, s.dw, s.ph, s.pw, s.channelsLast, winograd, s.groups};
  Kernel *kernel;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    int kind = int(pass);
    auto it = cache.find({kind, key});
    if (it == cache.end())
      it = cache.emplace(std::make_pair(kind, key), buildConv(pass, s, winograd)).first;
    kernel = &it->second;
    lastConvolution = kernel;
  }
  run(*kernel, args);
}

} // namespace

namespace sinter::rt::dnnl {

std::string lastConvolutionImplementation() {
  std::lock_guard<std::mutex> lock(cacheMutex);
  return lastConvolution ? lastConvolution->implementation : "";
}

} // namespace sinter::rt::dnnl

// abi.h's convolution calls: each pass in either layout, with its three
// arrays in the order the pass takes them (inputs, then the result) and the
// convolution's sizes.
#define SINTER_CPU_CONVOLUTION(NAME, PASS, CHANNELS_LAST)                                \
  extern "C" void NAME(const float *in0, const float *in1, float *out, int64_t n,        \
                       int64_t c, int64_t h, int64_t wd, int64_t o, int64_t kh,          \
                       int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw,       \
                       int64_t dh, int64_t dw, int64_t ph, int64_t pw) {                 \
    conv(PASS,                                                                           \
         {n, c, h, wd, o, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw, CHANNELS_LAST},        \
         {const_cast<float *>(in0), const_cast<float *>(in1), out});                     \
  }
SINTER_CPU_CONVOLUTION(sinter_cpu_conv2d_f32, ConvPass::forward, false)
SINTER_CPU_CONVOLUTION(sinter_cpu_conv2d_backward_data_f32, ConvPass::data, false)
SINTER_CPU_CONVOLUTION(sinter_cpu_conv2d_backward_weights_f32, ConvPass::weights, false)
SINTER_CPU_CONVOLUTION(sinter_cpu_conv2d_backward_weights_add_f32, ConvPass::weightsAdded,
                       false)
SINTER_CPU_CONVOLUTION(sinter_cpu_conv2d_nhwc_f32, ConvPass::forward, true)
SINTER_CPU_CONVOLUTION(sinter_cpu_conv2d_nhwc_backward_data_f32, ConvPass::data, true)
SINTER_CPU_CONVOLUTION(sinter_cpu_conv2d_nhwc_backward_weights_f32, ConvPass::weights, true)
SINTER_CPU_CONVOLUTION(sinter_cpu_conv2d_nhwc_backward_weights_add_f32,
                       ConvPass::weightsAdded, true)
#undef SINTER_CPU_CONVOLUTION

// The grouped ones: the number of groups last.
#define SINTER_CPU_GROUPED_CONVOLUTION(NAME, PASS, CHANNELS_LAST)                        \
  extern "C" void NAME(const float *in0, const float *in1, float *out, int64_t n,        \
                       int64_t c, int64_t h, int64_t wd, int64_t o, int64_t kh,          \
                       int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw,       \
                       int64_t dh, int64_t dw, int64_t ph, int64_t pw, int64_t groups) { \
    conv(PASS,                                                                           \
         {n, c, h, wd, o, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw, CHANNELS_LAST, groups}, \
         {const_cast<float *>(in0), const_cast<float *>(in1), out});                     \
  }
SINTER_CPU_GROUPED_CONVOLUTION(sinter_cpu_conv2d_grouped_f32, ConvPass::forward, false)
SINTER_CPU_GROUPED_CONVOLUTION(sinter_cpu_conv2d_grouped_backward_data_f32, ConvPass::data,
                               false)
SINTER_CPU_GROUPED_CONVOLUTION(sinter_cpu_conv2d_grouped_backward_weights_f32,
                               ConvPass::weights, false)
SINTER_CPU_GROUPED_CONVOLUTION(sinter_cpu_conv2d_grouped_backward_weights_add_f32,
                               ConvPass::weightsAdded, false)
SINTER_CPU_GROUPED_CONVOLUTION(sinter_cpu_conv2d_grouped_nhwc_f32, ConvPass::forward, true)
SINTER_CPU_GROUPED_CONVOLUTION(sinter_cpu_conv2d_grouped_nhwc_backward_data_f32,
                               ConvPass::data, true)
SINTER_CPU_GROUPED_CONVOLUTION(sinter_cpu_conv2d_grouped_nhwc_backward_weights_f32,
                               ConvPass::weights, true)
SINTER_CPU_GROUPED_CONVOLUTION(sinter_cpu_conv2d_grouped_nhwc_backward_weights_add_f32,
                               ConvPass::weightsAdded, true)
#undef SINTER_CPU_GROUPED_CONVOLUTION
