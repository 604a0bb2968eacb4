//===- ExpandAttentionGrad.cpp - Attention's gradients spelled out --------===//
//
// Autodiff differentiates graph.attention whole (graph.attention_grad). A
// target whose library differentiates attention itself keeps it; every
// other gets the gradients as graph ops, which it lowers like any others.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace sinter::graph {
#define GEN_PASS_DEF_GRAPHEXPANDATTENTIONGRAD
#include "dialects/Graph/Transforms/Passes.h.inc"

namespace {

struct GraphExpandAttentionGrad
    : public impl::GraphExpandAttentionGradBase<GraphExpandAttentionGrad> {
  void runOnOperation() override {
    SmallVector<AttentionGradOp> grads;
    getOperation().walk([&](AttentionGradOp op) {
      if (!attrs::fusesAttention(op))
        grads.push_back(op);
    });
    for (AttentionGradOp op : grads) {
      OpBuilder b(op);
      op->replaceAllUsesWith(spellOutAttentionGrad(b, op));
      op.erase();
    }
  }
};

} // namespace
} // namespace sinter::graph
