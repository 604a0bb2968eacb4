//===- Attention.cpp - Fused attention through cuDNN's graph API ---------===//
//
// abi.h's attention, bf16 in and out: o = softmax(q k^T / sqrt(d)) v for
// every (batch, head), causally masked when asked, and its gradients. Each
// shape's two cuDNN graphs are built once (cuDNN's C++ frontend, its
// heuristics' first supported plan) and kept. The forward call keeps no
// statistics; the backward call runs the forward graph again with them (its
// output and row log-sum-exps, into memory of its own), then the backward
// graph, with cuDNN's deterministic algorithm: a step repeated on the same
// inputs gives the same bits (unless precision.deterministic is false).
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDevice.h"
#include "cuda/Errors.h"

#define CUDNN_FRONTEND_SKIP_JSON_LIB
#include <cudnn_frontend.h>

#include <cmath>

namespace fe = cudnn_frontend;

namespace sinter::rt::cuda {

namespace {

// The tensors' ids in a graph's variant pack.
enum : int64_t { kQ = 1, kK, kV, kO, kStats, kGradO, kGradQ, kGradK, kGradV };

/// [batch, heads, rows, cols], packed.
std::shared_ptr<fe::graph::Tensor_attributes> packed(fe::graph::Graph &g,
                                                     const char *name, int64_t uid,
                                                     int64_t b, int64_t h, int64_t rows,
                                                     int64_t cols) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim({b, h, rows, cols})
                      .set_stride({h * rows * cols, rows * cols, cols, 1}));
}

void setPacked(fe::graph::Tensor_attributes &t, int64_t uid, int64_t b, int64_t h,
               int64_t rows, int64_t cols) {
  t.set_output(true)
      .set_uid(uid)
      .set_dim({b, h, rows, cols})
      .set_stride({h * rows * cols, rows * cols, cols, 1});
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

/// One shape's graphs: the forward pass without statistics (the forward
/// call); with them, and the backward pass, and the memory the backward
/// call keeps the recomputed output and statistics in (prepareBackward).
struct CudaDevice::Attention {
  std::shared_ptr<fe::graph::Graph> forward, forwardWithStats, backward;
  int64_t forwardBytes = 0, forwardWithStatsBytes = 0, backwardBytes = 0;
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
std::shared_ptr<fe::graph::Graph> forwardGraph(const int64_t s[7], bool stats) {
  int64_t b = s[0], h = s[1], tq = s[2], tk = s[3], d = s[4], dv = s[5];
  auto g = emptyGraph();
  auto q = packed(*g, "Q", kQ, b, h, tq, d), k = packed(*g, "K", kK, b, h, tk, d),
       v = packed(*g, "V", kV, b, h, tk, dv);
  auto options = fe::graph::SDPA_attributes()
                     .set_name("attention")
                     .set_generate_stats(stats)
                     .set_attn_scale(float(1.0 / std::sqrt(double(d))))
                     .set_causal_mask(s[6] != 0);
  auto [o, lse] = g->sdpa(q, k, v, options);
  setPacked(*o, kO, b, h, tq, dv);
  if (stats)
    setPacked(lse->set_data_type(fe::DataType_t::FLOAT), kStats, b, h, tq, 1);
  return g;
}

/// With `deterministic`, the same bits from the same inputs, at the cost of
/// a workspace of b x h x tq x tk bf16 on Hopper; without, cuDNN may add
/// the query gradient's pieces atomically, in any order.
std::shared_ptr<fe::graph::Graph> backwardGraph(const int64_t s[7], bool deterministic) {
  int64_t b = s[0], h = s[1], tq = s[2], tk = s[3], d = s[4], dv = s[5];
  auto g = emptyGraph();
  auto q = packed(*g, "Q", kQ, b, h, tq, d), k = packed(*g, "K", kK, b, h, tk, d),
       v = packed(*g, "V", kV, b, h, tk, dv), o = packed(*g, "O", kO, b, h, tq, dv),
       gradO = packed(*g, "dO", kGradO, b, h, tq, dv);
  auto lse = packed(*g, "Stats", kStats, b, h, tq, 1);
  lse->set_data_type(fe::DataType_t::FLOAT);
  auto options = fe::graph::SDPA_backward_attributes()
                     .set_name("attention_backward")
                     .set_attn_scale(float(1.0 / std::sqrt(double(d))))
                     .set_causal_mask(s[6] != 0)
                     .set_deterministic_algorithm(deterministic);
  auto [gradQ, gradK, gradV] = g->sdpa_backward(q, k, v, o, gradO, lse, options);
  setPacked(*gradQ, kGradQ, b, h, tq, d);
  setPacked(*gradK, kGradK, b, h, tk, d);
  setPacked(*gradV, kGradV, b, h, tk, dv);
  return g;
}

} // namespace

Expected<CudaDevice::Attention *> CudaDevice::attentionPlan(const int64_t s[7]) {
  std::vector<int64_t> key(s, s + 7);
  if (auto it = attentions.find(key); it != attentions.end())
    return it->second.get();
  SINTER_RT_RETURN_IF_ERROR(openDnn());
  auto plan = std::shared_ptr<Attention>(new Attention());
  SINTER_RT_RETURN_IF_ERROR(guarded([&] {
    plan->forward = forwardGraph(s, /*stats=*/false);
    Expected<int64_t> bytes = build(*plan->forward, dnn);
    if (!bytes.ok())
      return bytes.status();
    plan->forwardBytes = *bytes;
    return Status::success();
  }));
  Attention *made = plan.get();
  attentions[key] = std::move(plan);
  return made;
}

/// The backward call's graphs and the memory it keeps the recomputed
/// output and statistics in, made at the first backward call of a shape
/// (an eval step never makes them).
Status CudaDevice::prepareBackward(Attention &plan, const int64_t s[7]) {
  if (plan.backward)
    return Status::success();
  SINTER_RT_RETURN_IF_ERROR(guarded([&] {
    plan.forwardWithStats = forwardGraph(s, /*stats=*/true);
    Expected<int64_t> bytes = build(*plan.forwardWithStats, dnn);
    if (!bytes.ok())
      return bytes.status();
    plan.forwardWithStatsBytes = *bytes;
    auto backward = backwardGraph(s, !nondeterministic);
    bytes = build(*backward, dnn);
    if (!bytes.ok())
      return bytes.status();
    plan.backwardBytes = *bytes;
    plan.backward = backward;
    return Status::success();
  }));
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

} // namespace

void CudaDevice::attention(const void *q, const void *k, const void *v, void *o,
                           const int64_t shape[7]) {
  if (skipsWork())
    return;
  std::string prefix = "attention " + shapeOf(shape);
  Expected<Attention *> plan = attentionPlan(shape);
  if (failed(plan.status().withPrefix(prefix)))
    return;
  Expected<void *> work = workspace(uint64_t((*plan)->forwardBytes));
  if (failed(work.status()))
    return;
  std::unordered_map<int64_t, void *> pack = {{kQ, const_cast<void *>(q)},
                                              {kK, const_cast<void *>(k)},
                                              {kV, const_cast<void *>(v)},
                                              {kO, o}};
  failed(
      checked((*plan)->forward->execute(dnn, pack, *work), "execute").withPrefix(prefix));
}

void CudaDevice::attentionBackward(const void *q, const void *k, const void *v,
                                   const void *gradO, void *gradQ, void *gradK,
                                   void *gradV, const int64_t shape[7]) {
  if (skipsWork())
    return;
  std::string prefix = "attention backward " + shapeOf(shape);
  Expected<Attention *> made = attentionPlan(shape);
  if (failed(made.status().withPrefix(prefix)))
    return;
  Attention &plan = **made;
  if (failed(prepareBackward(plan, shape).withPrefix(prefix)))
    return;
  Expected<void *> work =
      workspace(uint64_t(std::max(plan.forwardWithStatsBytes, plan.backwardBytes)));
  if (failed(work.status()))
    return;
  void *o = plan.saved;
  void *stats = static_cast<char *>(plan.saved) + (plan.outputBytes + 255) / 256 * 256;
  std::unordered_map<int64_t, void *> forward = {{kQ, const_cast<void *>(q)},
                                                 {kK, const_cast<void *>(k)},
                                                 {kV, const_cast<void *>(v)},
                                                 {kO, o},
                                                 {kStats, stats}};
  if (failed(guarded([&] {
               return checked(plan.forwardWithStats->execute(dnn, forward, *work),
                              "execute");
             }).withPrefix(prefix)))
    return;
  std::unordered_map<int64_t, void *> backward = {{kQ, const_cast<void *>(q)},
                                                  {kK, const_cast<void *>(k)},
                                                  {kV, const_cast<void *>(v)},
                                                  {kO, o},
                                                  {kStats, stats},
                                                  {kGradO, const_cast<void *>(gradO)},
                                                  {kGradQ, gradQ},
                                                  {kGradK, gradK},
                                                  {kGradV, gradV}};
  failed(guarded([&] {
           return checked(plan.backward->execute(dnn, backward, *work), "execute");
         }).withPrefix(prefix));
}

} // namespace sinter::rt::cuda
