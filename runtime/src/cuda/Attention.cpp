//===- Attention.cpp - Fused attention through cuDNN's graph API ---------===//
//
// abi.h's attention, bf16 in and out: o = softmax(q k^T / sqrt(d)) v for
// every (batch, head), causally masked when asked, and its gradients. Each
// shape's cuDNN graphs are built once (cuDNN's C++ frontend, its
// heuristics' first supported plan) and kept. The backward graph uses
// cuDNN's deterministic algorithm: a step repeated on the same inputs gives
// the same bits (unless precision.deterministic is false).
//
// Two layouts. Heads-major (q, k, v, o each [batch, heads, T, d], packed):
// the forward call keeps no statistics, and the backward call runs the
// forward graph again with them (its output and row log-sum-exps, into
// memory of its own). Packed (q, k and v side by side in one projection
// [batch, T, 3, heads, d], o [batch, T, heads, d], the gradients as their
// values): cuDNN reads and writes them through strides, the forward call
// writes the row statistics the backward call reads.
//
// A call whose graph wants more workspace than kWorkspaceLimitBytes (the
// deterministic backward pass at large batches) runs as calls over slices
// of its batch (device/AttentionLayout.h), so that its workspace stays a
// small part of the device's memory.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDevice.h"
#include "cuda/Errors.h"
#include "device/AttentionLayout.h"

#define CUDNN_FRONTEND_SKIP_JSON_LIB
#include <cudnn_frontend.h>

#include <array>
#include <cmath>

namespace fe = cudnn_frontend;

namespace sinter::rt::cuda {

namespace {

// The most workspace one call may take. cuDNN's deterministic backward
// pass (before cuDNN 9.25) wants a batch x heads x tq x tk bf16 buffer for
// dP, 1.5 GiB for GPT-2 124M at micro-batch 64, outside the memory plan; a
// call that would pass this runs over slices of its batch instead, each a
// launch that still fills the GPU.
constexpr int64_t kWorkspaceLimitBytes = int64_t(256) << 20;

// The tensors' ids in a graph's variant pack.
enum : int64_t { kQ = 1, kK, kV, kO, kStats, kGradO, kGradQ, kGradK, kGradV };
static_assert(kV == kQ + 2 && kGradV == kGradQ + 2, "addPacked counts from q");

/// Where the elements of one [batch, heads, rows, cols] operand lie.
using Strides = std::array<int64_t, 4>;

/// One operand's strides as cuDNN takes them: [batch, heads, rows, cols].
Strides cudnnStrides(const AttentionStrides &s) { return {s.batch, s.head, s.row, 1}; }

/// The row statistics [batch, heads, rows, 1], packed.
Strides statisticsStrides(const int64_t s[7]) { return {s[1] * s[2], s[2], 1, 1}; }

std::shared_ptr<fe::graph::Tensor_attributes>
tensor(fe::graph::Graph &g, const char *name, int64_t uid, int64_t b, int64_t h,
       int64_t rows, int64_t cols, const Strides &strides) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim({b, h, rows, cols})
                      .set_stride({strides[0], strides[1], strides[2], strides[3]}));
}

void setOutput(fe::graph::Tensor_attributes &t, int64_t uid, int64_t b, int64_t h,
               int64_t rows, int64_t cols, const Strides &strides) {
  t.set_output(true)
      .set_uid(uid)
      .set_dim({b, h, rows, cols})
      .set_stride({strides[0], strides[1], strides[2], strides[3]});
}

Status checked(fe::error_t e, const char *what) {
  if (e.is_good())
    return Status::success();
  return Status::error(std::string("cuDNN's fused attention, ") + what + ": " +
                       e.get_message());
}

/// Validates and builds `g` for `dnn`; its workspace size.
Expected<int64_t> build(fe::graph::Graph &g, cudnnHandle_t dnn) {
  SINTER_RT_RETURN_IF_ERROR(checked(g.validate(), "validate"));
  SINTER_RT_RETURN_IF_ERROR(
      checked(g.build_operation_graph(dnn), "build_operation_graph"));
  SINTER_RT_RETURN_IF_ERROR(
      checked(g.create_execution_plans({fe::HeurMode_t::A}), "create_execution_plans"));
  SINTER_RT_RETURN_IF_ERROR(checked(g.check_support(dnn), "check_support"));
  SINTER_RT_RETURN_IF_ERROR(checked(g.build_plans(dnn), "build_plans"));
  int64_t bytes = 0;
  SINTER_RT_RETURN_IF_ERROR(checked(g.get_workspace_size(bytes), "get_workspace_size"));
  return bytes;
}

std::shared_ptr<fe::graph::Graph> emptyGraph() {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

} // namespace

/// One shape's and layout's graphs, each built at its first use: the
/// forward pass without statistics and with them, and the backward pass;
/// for heads-major operands, the memory the backward call keeps the
/// recomputed output and statistics in (prepareRecompute).
struct CudaDevice::Attention {
  struct Built {
    std::shared_ptr<fe::graph::Graph> graph;
    int64_t workspaceBytes = 0;
    int64_t sliceBatch = 0; ///< batch elements a call of `graph` takes
  };
  std::array<int64_t, 7> shape{};
  bool packed = false;
  Built forward, forwardWithStats, backward;
  void *saved = nullptr; ///< o (bf16), then the statistics (f32)
  uint64_t outputBytes = 0;
  ~Attention() {
    if (saved)
      cudaFree(saved);
  }
};

namespace {

/// The frontend reports most failures as error_t but can also throw
/// (std::bad_alloc, a runtime_error from a graph it cannot build): either
/// becomes a Status here, before it could unwind into code without
/// exceptions.
template <typename F> Status guarded(F &&body) {
  try {
    return body();
  } catch (const std::exception &e) {
    return Status::error(std::string("cuDNN's fused attention: ") + e.what());
  }
}

/// The forward pass's graph of one shape (s as abi.h's call gives it), with
/// or without the row statistics the backward pass reads.
std::shared_ptr<fe::graph::Graph> forwardGraph(const int64_t s[7], bool packed,
                                               bool stats) {
  int64_t b = s[0], h = s[1], tq = s[2], tk = s[3], d = s[4], dv = s[5];
  AttentionShape layout = attentionShapeOf(s, packed);
  auto g = emptyGraph();
  auto q = tensor(*g, "Q", kQ, b, h, tq, d, cudnnStrides(layout.q));
  auto k = tensor(*g, "K", kK, b, h, tk, d, cudnnStrides(layout.k));
  auto v = tensor(*g, "V", kV, b, h, tk, dv, cudnnStrides(layout.v));
  auto options = fe::graph::SDPA_attributes()
                     .set_name("attention")
                     .set_generate_stats(stats)
                     .set_attn_scale(float(1.0 / std::sqrt(double(d))))
                     .set_causal_mask(s[6] != 0);
  auto [o, lse] = g->sdpa(q, k, v, options);
  setOutput(*o, kO, b, h, tq, dv, cudnnStrides(layout.o));
  if (stats)
    setOutput(lse->set_data_type(fe::DataType_t::FLOAT), kStats, b, h, tq, 1,
              statisticsStrides(s));
  return g;
}

/// With `deterministic`, the same bits from the same inputs, at the cost of
/// a workspace of b x h x tq x tk bf16 on Hopper; without, cuDNN may add
/// the query gradient's pieces atomically, in any order.
std::shared_ptr<fe::graph::Graph> backwardGraph(const int64_t s[7], bool packed,
                                                bool deterministic) {
  int64_t b = s[0], h = s[1], tq = s[2], tk = s[3], d = s[4], dv = s[5];
  AttentionShape layout = attentionShapeOf(s, packed);
  auto g = emptyGraph();
  auto q = tensor(*g, "Q", kQ, b, h, tq, d, cudnnStrides(layout.q));
  auto k = tensor(*g, "K", kK, b, h, tk, d, cudnnStrides(layout.k));
  auto v = tensor(*g, "V", kV, b, h, tk, dv, cudnnStrides(layout.v));
  auto o = tensor(*g, "O", kO, b, h, tq, dv, cudnnStrides(layout.o));
  auto gradO = tensor(*g, "dO", kGradO, b, h, tq, dv, cudnnStrides(layout.o));
  auto lse = tensor(*g, "Stats", kStats, b, h, tq, 1, statisticsStrides(s));
  lse->set_data_type(fe::DataType_t::FLOAT);
  auto options = fe::graph::SDPA_backward_attributes()
                     .set_name("attention_backward")
                     .set_attn_scale(float(1.0 / std::sqrt(double(d))))
                     .set_causal_mask(s[6] != 0)
                     .set_deterministic_algorithm(deterministic);
  auto [gradQ, gradK, gradV] = g->sdpa_backward(q, k, v, o, gradO, lse, options);
  setOutput(*gradQ, kGradQ, b, h, tq, d, cudnnStrides(layout.q));
  setOutput(*gradK, kGradK, b, h, tk, d, cudnnStrides(layout.k));
  setOutput(*gradV, kGradV, b, h, tk, dv, cudnnStrides(layout.v));
  return g;
}

} // namespace

Expected<CudaDevice::Attention *> CudaDevice::attentionPlan(const int64_t s[7],
                                                           bool packed) {
  std::vector<int64_t> key(s, s + 7);
  key.push_back(packed);
  if (auto it = attentions.find(key); it != attentions.end())
    return it->second.get();
  SINTER_RT_RETURN_IF_ERROR(openDnn());
  auto plan = std::shared_ptr<Attention>(new Attention());
  std::copy(s, s + 7, plan->shape.begin());
  plan->packed = packed;
  Attention *made = plan.get();
  attentions[key] = std::move(plan);
  return made;
}

/// The memory the heads-major backward call keeps the recomputed output
/// and statistics in, made at its first call (an eval step never makes it).
Status CudaDevice::prepareRecompute(Attention &plan) {
  if (plan.saved)
    return Status::success();
  const int64_t *s = plan.shape.data();
  plan.outputBytes = uint64_t(s[0] * s[1] * s[2] * s[5]) * 2;
  uint64_t statsBytes = uint64_t(s[0] * s[1] * s[2]) * 4;
  uint64_t savedBytes = (plan.outputBytes + 255) / 256 * 256 + statsBytes;
  SINTER_CUDA_CHECK(cudaMalloc(&plan.saved, savedBytes));
  attentionBytes += savedBytes;
  return Status::success();
}

namespace {

std::string shapeOf(const int64_t s[7]) {
  return std::to_string(s[0]) + " x " + std::to_string(s[1]) + " heads, " +
         std::to_string(s[2]) + " queries x " + std::to_string(s[3]) + " keys, head " +
         std::to_string(s[4]) + (s[6] ? ", causal" : "") + ": ";
}

using VariantPack = std::unordered_map<int64_t, void *>;

/// `p` advanced by `elements` bf16 values.
void *bf16At(const void *p, int64_t elements) {
  return const_cast<char *>(static_cast<const char *>(p)) + elements * 2;
}

/// Where q, k and v (or their gradients: `first` is kGradQ) start in a
/// packed projection of `shape`: C = heads x d elements apart.
void addPacked(VariantPack &pack, int64_t first, const void *qkv, const int64_t shape[7]) {
  int64_t width = shape[1] * shape[4];
  for (int64_t i = 0; i < 3; ++i)
    pack[first + i] = bf16At(qkv, i * width);
}

/// The pack's pointers advanced to the first batch element of a slice.
VariantPack slicePack(const VariantPack &whole, const AttentionOffsets &at) {
  VariantPack slice;
  for (auto [uid, pointer] : whole) {
    int64_t bytes = uid == kQ || uid == kGradQ   ? at.q
                    : uid == kK || uid == kGradK ? at.k
                    : uid == kV || uid == kGradV ? at.v
                    : uid == kStats              ? at.stats
                                                 : at.o; // o and its gradient
    slice[uid] = static_cast<char *>(pointer) + bytes;
  }
  return slice;
}

} // namespace

/// Builds the graph of `pass` at its first use, for slices of the batch if
/// the whole batch's workspace would pass kWorkspaceLimitBytes, and runs it
/// over each slice.
Status CudaDevice::runAttention(Attention &plan, AttentionPass pass,
                                VariantPack &tensors) {
  bool stats = pass == AttentionPass::ForwardWithStats;
  Attention::Built &built = pass == AttentionPass::Forward ? plan.forward
                            : stats                        ? plan.forwardWithStats
                                                           : plan.backward;
  const int64_t batch = plan.shape[0];
  if (!built.graph)
    SINTER_RT_RETURN_IF_ERROR(guarded([&] {
      std::array<int64_t, 7> s = plan.shape;
      auto make = [&]() {
        return pass == AttentionPass::Backward
                   ? backwardGraph(s.data(), plan.packed, !nondeterministic)
                   : forwardGraph(s.data(), plan.packed, stats);
      };
      auto graph = make();
      Expected<int64_t> bytes = build(*graph, dnn);
      if (!bytes.ok())
        return bytes.status();
      s[0] = attentionSliceBatch(batch, *bytes, kWorkspaceLimitBytes);
      if (s[0] < batch) {
        graph = make();
        bytes = build(*graph, dnn);
        if (!bytes.ok())
          return bytes.status();
      }
      built.workspaceBytes = *bytes;
      built.sliceBatch = s[0];
      built.graph = std::move(graph);
      return Status::success();
    }));
  Expected<void *> work = workspace(uint64_t(built.workspaceBytes));
  if (!work.ok())
    return work.status();
  auto execute = [&](VariantPack &pack) {
    return guarded(
        [&] { return checked(built.graph->execute(dnn, pack, *work), "execute"); });
  };
  if (built.sliceBatch == batch)
    return execute(tensors);
  AttentionShape layout = attentionShapeOf(plan.shape.data(), plan.packed);
  for (int64_t first = 0; first < batch; first += built.sliceBatch) {
    VariantPack slice = slicePack(tensors, attentionBatchOffsets(layout, first, 2));
    SINTER_RT_RETURN_IF_ERROR(execute(slice));
  }
  return Status::success();
}

void CudaDevice::attention(const void *q, const void *k, const void *v, void *o,
                           const int64_t shape[7]) {
  if (skipsWork())
    return;
  std::string prefix = "attention " + shapeOf(shape);
  Expected<Attention *> plan = attentionPlan(shape, /*packed=*/false);
  if (failed(plan.status().withPrefix(prefix)))
    return;
  VariantPack pack = {{kQ, const_cast<void *>(q)},
                      {kK, const_cast<void *>(k)},
                      {kV, const_cast<void *>(v)},
                      {kO, o}};
  failed(runAttention(**plan, AttentionPass::Forward, pack).withPrefix(prefix));
}

void CudaDevice::attentionBackward(const void *q, const void *k, const void *v,
                                   const void *gradO, void *gradQ, void *gradK,
                                   void *gradV, const int64_t shape[7]) {
  if (skipsWork())
    return;
  std::string prefix = "attention backward " + shapeOf(shape);
  Expected<Attention *> made = attentionPlan(shape, /*packed=*/false);
  if (failed(made.status().withPrefix(prefix)))
    return;
  Attention &plan = **made;
  if (failed(prepareRecompute(plan).withPrefix(prefix)))
    return;
  void *o = plan.saved;
  void *stats = static_cast<char *>(plan.saved) + (plan.outputBytes + 255) / 256 * 256;
  VariantPack pack = {{kQ, const_cast<void *>(q)},
                      {kK, const_cast<void *>(k)},
                      {kV, const_cast<void *>(v)},
                      {kO, o},
                      {kStats, stats}};
  Status recomputed = runAttention(plan, AttentionPass::ForwardWithStats, pack);
  if (failed(recomputed.withPrefix(prefix)))
    return;
  pack[kGradO] = const_cast<void *>(gradO);
  pack[kGradQ] = gradQ;
  pack[kGradK] = gradK;
  pack[kGradV] = gradV;
  failed(runAttention(plan, AttentionPass::Backward, pack).withPrefix(prefix));
}

void CudaDevice::attentionPacked(const void *qkv, void *o, float *stats,
                                 const int64_t shape[7]) {
  if (skipsWork())
    return;
  std::string prefix = "attention " + shapeOf(shape);
  Expected<Attention *> plan = attentionPlan(shape, /*packed=*/true);
  if (failed(plan.status().withPrefix(prefix)))
    return;
  VariantPack pack = {{kO, o}};
  addPacked(pack, kQ, qkv, shape);
  if (stats)
    pack[kStats] = stats;
  AttentionPass pass = stats ? AttentionPass::ForwardWithStats : AttentionPass::Forward;
  failed(runAttention(**plan, pass, pack).withPrefix(prefix));
}

void CudaDevice::attentionPackedBackward(const void *qkv, const void *o,
                                         const float *stats, const void *gradO,
                                         void *gradQkv, const int64_t shape[7]) {
  if (skipsWork())
    return;
  std::string prefix = "attention backward " + shapeOf(shape);
  Expected<Attention *> plan = attentionPlan(shape, /*packed=*/true);
  if (failed(plan.status().withPrefix(prefix)))
    return;
  VariantPack pack = {{kO, const_cast<void *>(o)},
                      {kStats, const_cast<float *>(stats)},
                      {kGradO, const_cast<void *>(gradO)}};
  addPacked(pack, kQ, qkv, shape);
  addPacked(pack, kGradQ, gradQkv, shape);
  failed(runAttention(**plan, AttentionPass::Backward, pack).withPrefix(prefix));
}

} // namespace sinter::rt::cuda
