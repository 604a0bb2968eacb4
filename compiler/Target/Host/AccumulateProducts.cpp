//===- AccumulateProducts.cpp - Products added into their accumulator ------===//
//
// A weight's gradient is a product added to the gradient accumulated over
// the earlier micro-batches: acc + A·B. Written as a product onto zeros and
// an elementwise add, it costs a fill, a temporary and a pass over both
// arrays; linalg.matmul onto acc means the same (C += A·B), and the
// library runs it as one call that adds into acc (beta = 1). On the CPU a
// convolution's kernel gradient is such a product too: its library call
// adds into acc (`accumulate`).
//
// A repeated block's backward function returns its weights' gradients, and
// its callers add them to their accumulators. When every caller does, the
// function takes the accumulator as an argument and adds the product into
// it, so the add and the temporary go there too.
//
// A tied weight's gradient (GPT-2's token embedding, also its output
// projection) is a sum: acc + (product + scatter), the scatter an
// embedding's gradient added row by row onto zeros. The product is added
// into acc where it is made, and the scatter adds its rows into that: no
// copy of zeros, no pass over three arrays.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/MatmulForm.h"
#include "compiler/Target/Host/Passes.h"
#include "compiler/Transforms/KnownCalls.h"
#include "dialects/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace sinter::host {
#define GEN_PASS_DEF_ACCUMULATEPRODUCTS
#include "compiler/Target/Host/Passes.h.inc"

namespace {

/// The operand of `op` that an elementwise `out + x` adds to its init, if
/// `op` is exactly that over identical shapes.
OpOperand *addend(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return nullptr;
  Block &body = op.getRegion().front();
  if (!llvm::hasNItems(body, 2))
    return nullptr;
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return nullptr;
  Value in = body.getArgument(0), out = body.getArgument(1);
  bool matches = (add.getLhs() == out && add.getRhs() == in) ||
                 (add.getLhs() == in && add.getRhs() == out);
  return matches ? op.getDpsInputOperand(0) : nullptr;
}

/// A weight's gradient made from nothing, that could be added into an
/// accumulator instead: a matmul onto zeros, or (with `convolutions`) a
/// library convolution's kernel gradient that does not accumulate. Null if
/// `v` is neither.
Operation *freshProduct(Value v, bool convolutions) {
  if (auto mm = v.getDefiningOp<linalg::MatmulOp>())
    return mm.hasPureTensorSemantics() && matmulFormOf(mm) &&
                   isZeros(mm.getDpsInits()[0])
               ? mm.getOperation()
               : nullptr;
  auto conv = v.getDefiningOp<train::ConvBackwardWeightsOp>();
  return convolutions && conv && conv.getResult() && !conv.getAccumulate()
             ? conv.getOperation()
             : nullptr;
}

/// The fresh product that `v` is, read nowhere else, if its result is of
/// type `into` (the accumulator's it may be made onto).
Operation *productOntoZeros(Value v, Type into, bool convolutions) {
  Operation *product = freshProduct(v, convolutions);
  if (!product || !v.hasOneUse() || v.getType() != into)
    return nullptr;
  return product;
}

/// `product` made onto `acc` at the rewriter's point, in its form.
Value productOnto(OpBuilder &b, Operation *product, Value acc) {
  if (auto mm = dyn_cast<linalg::MatmulOp>(product)) {
    auto into = linalg::MatmulOp::create(b, mm.getLoc(), TypeRange{acc.getType()},
                                         mm.getDpsInputs(), ValueRange{acc});
    into.setIndexingMapsAttr(mm.getIndexingMaps());
    return into.getResult(0);
  }
  auto conv = cast<train::ConvBackwardWeightsOp>(product);
  auto into = train::ConvBackwardWeightsOp::create(
      b, conv.getLoc(), acc.getType(), conv.getLhs(), conv.getRhs(), acc,
      conv.getStrideAttr(), conv.getPaddingAttr(), conv.getDilationAttr(),
      conv.getChannelsLastAttr(), conv.getGroupsAttr(), b.getUnitAttr());
  return into.getResult();
}

/// acc + product onto zeros  ->  the product onto acc, made where the
/// product was when acc is there already (what it reads, a convolution's
/// activations, is then not kept until the add), else at the add.
struct AccumulateIntoProduct : OpRewritePattern<linalg::GenericOp> {
  AccumulateIntoProduct(MLIRContext *ctx, DominanceInfo &dominance, bool convolutions)
      : OpRewritePattern(ctx), dominance(dominance), convolutions(convolutions) {}
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    OpOperand *x = addend(op);
    if (!x || !op.hasPureTensorSemantics())
      return failure();
    Operation *product =
        productOntoZeros(x->get(), op.getResult(0).getType(), convolutions);
    if (!product)
      return failure();
    Value acc = op.getDpsInits()[0];
    if (dominance.properlyDominates(acc, product))
      rewriter.setInsertionPoint(product);
    Value into = productOnto(rewriter, product, acc);
    rewriter.replaceOp(op, into);
    rewriter.eraseOp(product);
    return success();
  }
  DominanceInfo &dominance;
  bool convolutions;
};

/// Whether `op` is an elementwise sum of its init and two or more inputs:
/// every map the identity, and its body a tree of adds that uses each block
/// argument once.
bool isSumOfAll(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() < 2 || op.getNumLoops() != op.getNumParallelLoops() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != body.getNumArguments())
    return false; // n leaves take n - 1 adds, and the yield
  for (Operation &inner : body.without_terminator())
    if (!isa<arith::AddFOp>(inner) || !inner.hasOneUse())
      return false;
  return llvm::all_of(body.getArguments(),
                      [](BlockArgument a) { return a.hasOneUse(); }) &&
         isa_and_nonnull<arith::AddFOp>(
             body.getTerminator()->getOperand(0).getDefiningOp());
}

/// acc + (x + ... + matmul(A, B) onto zeros)  ->  (matmul(A, B) onto acc) +
/// (x + ...). The product is made where it was (what it reads is not kept
/// longer), the sum is the same, added in another order.
struct ProductOutOfSum : OpRewritePattern<linalg::GenericOp> {
  ProductOutOfSum(MLIRContext *ctx, DominanceInfo &dominance, bool convolutions)
      : OpRewritePattern(ctx), dominance(dominance), convolutions(convolutions) {}

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!isSumOfAll(op))
      return failure();
    Type type = op.getResult(0).getType();
    Value acc = op.getDpsInits()[0];
    auto product = llvm::find_if(op.getDpsInputOperands(), [&](OpOperand *in) {
      Operation *p = productOntoZeros(in->get(), type, convolutions);
      return p && dominance.properlyDominates(acc, p);
    });
    if (product == op.getDpsInputOperands().end())
      return failure();
    Operation *made = productOntoZeros((*product)->get(), type, convolutions);
    rewriter.setInsertionPoint(made);
    Value into = productOnto(rewriter, made, acc);
    rewriter.eraseOp(made);

    SmallVector<Value> rest;
    for (OpOperand *in : op.getDpsInputOperands())
      if (in != *product)
        rest.push_back(in->get());
    rewriter.setInsertionPoint(op);
    SmallVector<AffineMap> maps(rest.size() + 1, op.getIndexingMapsArray().front());
    auto sum = linalg::GenericOp::create(
        rewriter, op.getLoc(), TypeRange{type}, rest, ValueRange{into}, maps,
        op.getIteratorTypesArray(), [&](OpBuilder &b, Location l, ValueRange args) {
          Value inputs = args.front();
          for (Value v : args.drop_front().drop_back())
            inputs = arith::AddFOp::create(b, l, inputs, v);
          Value total = arith::AddFOp::create(b, l, args.back(), inputs);
          linalg::YieldOp::create(b, l, total);
        });
    rewriter.replaceOp(op, sum->getResults());
    return success();
  }

  DominanceInfo &dominance;
  bool convolutions;
};

/// Whether `loop` only adds into the one tensor it carries: each version of
/// it is read at one place, a value is added, and the sum written back
/// there, or it goes through a nested loop that does the same, until the
/// last version is yielded. Started from acc instead of zeros, the loop then
/// gives acc plus what it adds.
bool onlyAddsInto(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 1)
    return false;
  Value version = loop.getRegionIterArgs().front();
  Operation *yield = loop.getBody()->getTerminator();
  while (true) {
    if (version.hasOneUse()) {
      Operation *user = version.use_begin()->getOwner();
      if (user == yield)
        return true;
      auto inner = dyn_cast<scf::ForOp>(user);
      if (!inner || !onlyAddsInto(inner) || inner.getInitArgs().front() != version)
        return false;
      version = inner.getResult(0);
      continue;
    }
    tensor::ExtractOp read;
    tensor::InsertOp write;
    for (OpOperand &use : version.getUses()) {
      if (auto e = dyn_cast<tensor::ExtractOp>(use.getOwner()); e && !read)
        read = e;
      else if (auto i = dyn_cast<tensor::InsertOp>(use.getOwner());
               i && !write && i.getDest() == version)
        write = i;
      else
        return false;
    }
    if (!read || !write || !llvm::equal(read.getIndices(), write.getIndices()) ||
        !read->hasOneUse())
      return false;
    auto add = write.getScalar().getDefiningOp<arith::AddFOp>();
    if (!add || !add->hasOneUse() ||
        (add.getLhs() != read.getResult() && add.getRhs() != read.getResult()))
      return false;
    version = write.getResult();
  }
}

/// acc + scatter onto zeros  ->  the scatter onto acc: an embedding's
/// gradient adds its rows into the accumulator.
struct AccumulateIntoScatter : OpRewritePattern<linalg::GenericOp> {
  AccumulateIntoScatter(MLIRContext *ctx, DominanceInfo &dominance)
      : OpRewritePattern(ctx), dominance(dominance) {}

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    OpOperand *x = addend(op);
    if (!x || !op.hasPureTensorSemantics())
      return failure();
    auto loop = x->get().getDefiningOp<scf::ForOp>();
    Value acc = op.getDpsInits()[0];
    if (!loop || !x->get().hasOneUse() || loop.getNumResults() != 1 ||
        !isZeros(loop.getInitArgs().front()) ||
        loop.getResult(0).getType() != op.getResult(0).getType() || !onlyAddsInto(loop) ||
        !dominance.properlyDominates(acc, loop))
      return failure();
    rewriter.modifyOpInPlace(loop, [&] { loop.getInitArgsMutable()[0].set(acc); });
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }

  DominanceInfo &dominance;
};

/// A fill of zeros that several products (or convolutions) start from
/// becomes one fill per product, placed just before it: after
/// bufferization each product's buffer is then filled right before the
/// call, which the library call drops (the library writes every element),
/// instead of being a copy of one shared buffer of zeros.
struct OwnZeros : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp>(
            op.getOperation()))
      return failure();
    Value init = op.getDpsInits()[0];
    if (!op.hasPureTensorSemantics() || !isZeros(init) || init.hasOneUse())
      return failure();
    auto fill = init.getDefiningOp<linalg::FillOp>();
    rewriter.setInsertionPoint(op);
    Operation *own = rewriter.clone(*fill);
    rewriter.modifyOpInPlace(op,
                             [&] { op.getDpsInitsMutable()[0].set(own->getResult(0)); });
    return success();
  }
};

/// The fresh product `f` returns at `index`, if nothing else in `f` reads
/// it.
Operation *returnedProduct(func::FuncOp f, unsigned index, bool convolutions) {
  Value v = f.getBody().back().getTerminator()->getOperand(index);
  return v.hasOneUse() ? freshProduct(v, convolutions) : nullptr;
}

/// The `acc + r` that is the only use of `r`, if it is one.
linalg::GenericOp accumulationOf(Value r) {
  if (!r.hasOneUse())
    return {};
  auto add = dyn_cast<linalg::GenericOp>(r.use_begin()->getOwner());
  if (!add || !add.hasPureTensorSemantics() || add.getResult(0).getType() != r.getType())
    return {};
  OpOperand *x = addend(add);
  return x && x->get() == r ? add : linalg::GenericOp();
}

/// Makes result `index` of `f`, which every call adds to an accumulator,
/// the product added into an accumulator argument, and has each call pass
/// its own. `calls` are replaced by the new calls.
void accumulateInCallee(func::FuncOp f, unsigned index, Operation *product,
                        SmallVectorImpl<func::CallOp> &calls) {
  unsigned argIndex = f.getNumArguments();
  Type type = f.getResultTypes()[index];
  if (failed(f.insertArgument(argIndex, type, DictionaryAttr(), product->getLoc())))
    return;
  OpBuilder inCallee(product);
  Value added = productOnto(inCallee, product, f.getArgument(argIndex));
  Operation *zeros = isa<linalg::MatmulOp>(product)
                         ? product->getOperand(product->getNumOperands() - 1).getDefiningOp()
                         : nullptr;
  product->getResult(0).replaceAllUsesWith(added);
  product->erase();
  if (zeros && zeros->use_empty())
    zeros->erase();
  for (func::CallOp &call : calls) {
    linalg::GenericOp add = accumulationOf(call.getResult(index));
    SmallVector<Value> operands(call.getOperands());
    operands.push_back(add.getDpsInits()[0]);
    func::CallOp next = remadeCall(call, f, operands);
    add.getResult(0).replaceAllUsesWith(next.getResult(index));
    add.erase();
    call.replaceAllUsesWith(next.getResults());
    call.erase();
    call = next;
  }
}

/// Every private function's returned products that all its callers add to
/// an accumulator they already hold.
void accumulateAcrossCalls(ModuleOp module, bool convolutions) {
  DominanceInfo dominance(module);
  for (auto &[f, calls] : knownCalls(module)) {
    if (!f.getBody().hasOneBlock())
      continue;
    for (unsigned index = 0; index < f.getNumResults(); ++index) {
      Operation *product = returnedProduct(f, index, convolutions);
      // The accumulator must exist before the call that now takes it.
      auto accumulates = [&](func::CallOp call) {
        linalg::GenericOp add = accumulationOf(call.getResult(index));
        return add && dominance.properlyDominates(add.getDpsInits()[0], call);
      };
      if (product && llvm::all_of(calls, accumulates))
        accumulateInCallee(f, index, product, calls);
    }
  }
}

struct AccumulateProducts : public impl::AccumulateProductsBase<AccumulateProducts> {
  using AccumulateProductsBase::AccumulateProductsBase;
  void runOnOperation() override {
    accumulateAcrossCalls(getOperation(), convolutions);
    DominanceInfo dominance(getOperation());
    RewritePatternSet patterns(&getContext());
    patterns.add<OwnZeros>(&getContext());
    patterns.add<AccumulateIntoProduct>(&getContext(), dominance, convolutions);
    patterns.add<ProductOutOfSum>(&getContext(), dominance, convolutions);
    patterns.add<AccumulateIntoScatter>(&getContext(), dominance);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace sinter::host
