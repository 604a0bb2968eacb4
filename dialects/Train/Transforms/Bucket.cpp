//===- Bucket.cpp - Gradient buckets that overlap the last backward --------===//
//
// After train-accumulate, a step's gradients are final only in its last
// micro-batch. This pass peels that micro-batch out of the loop, adds each
// gradient into its accumulator right where the backward pass computes it,
// groups the gradients into buckets in the order they become final (the
// first bucket small, so communication starts early), and marks each
// bucket's end with train.bucket_ready, which starts the bucket's sum over
// the ranks while the backward pass goes on (DOMAIN.md 3, PyTorch DDP's
// design); without overlap, every bucket_ready comes after the backward
// pass, so the sums start together when it ends. The layout goes to the
// plan: the runtime allocates each bucket's gradients as one flat buffer, so
// a gradient's accumulator is its slot.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sinter/IR/SinterAttrs.h"
#include "dialects/Train/IR/TrainOps.h"
#include "dialects/Train/Transforms/Passes.h"
#include "runtime/contract/sinter_config.pb.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace sinter::train {
#define GEN_PASS_DEF_DISTBUCKET
#include "dialects/Train/Transforms/Passes.h.inc"

namespace {

struct Gradient {
  StringAttr name;
  unsigned result;  ///< index among the function's results
  unsigned carried; ///< index among the main loop's results
  int64_t bytes;
  Type elementType;
  int64_t finalAt = 0; ///< position in the loop body where it is final
};

int64_t byteSize(Type t) {
  auto shaped = cast<ShapedType>(t);
  return shaped.getNumElements() *
         int64_t((shaped.getElementTypeBitWidth() + 7) / 8);
}

/// Buckets in the order gradients become final: each at most `cap` bytes
/// (`first` for the first), one element type per bucket, and a gradient
/// larger than the cap alone in its own.
std::vector<std::vector<size_t>> packBuckets(const std::vector<Gradient> &grads,
                                             const std::vector<size_t> &order,
                                             int64_t first, int64_t cap) {
  std::vector<std::vector<size_t>> buckets;
  int64_t used = 0;
  for (size_t g : order) {
    int64_t limit = buckets.size() == 1 ? first : cap;
    bool fits = !buckets.empty() && used + grads[g].bytes <= limit &&
                grads[buckets.back().front()].elementType == grads[g].elementType;
    if (!fits) {
      buckets.emplace_back();
      used = 0;
    }
    buckets.back().push_back(g);
    used += grads[g].bytes;
  }
  return buckets;
}

class Bucketer {
public:
  Bucketer(func::FuncOp f, int64_t firstBytes, int64_t capBytes, bool overlap)
      : func(f), firstBytes(firstBytes), capBytes(capBytes), overlap(overlap) {}

  LogicalResult run() {
    auto ret = cast<func::ReturnOp>(func.front().getTerminator());
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      auto name = attrs::gradient.getResult(func, i);
      if (!name)
        continue;
      auto result = dyn_cast<OpResult>(ret.getOperand(i));
      auto loop = result ? dyn_cast<scf::ForOp>(result.getOwner()) : scf::ForOp();
      if (!loop || (this->loop && loop != this->loop))
        return func.emitError("dist-bucket expects the gradients to come "
                              "from the micro-batch loop (run train-accumulate)");
      this->loop = loop;
      Type t = result.getType();
      grads.push_back({name, i, result.getResultNumber(), byteSize(t),
                       cast<ShapedType>(t).getElementType()});
    }
    if (grads.empty())
      return success();
    placeAccumulations();
    std::vector<size_t> order(grads.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return grads[a].finalAt < grads[b].finalAt;
    });
    buckets = packBuckets(grads, order, firstBytes, capBytes);
    peelLastMicroBatch();
    recordLayout();
    return success();
  }

private:
  /// The accumulation of gradient g in the loop body: acc + g.
  linalg::GenericOp accumulation(const Gradient &g) {
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    return yield.getOperand(g.carried).getDefiningOp<linalg::GenericOp>();
  }

  /// Moves each accumulation to just after its gradient's last producer,
  /// and records that position.
  void placeAccumulations() {
    Block *body = loop.getBody();
    for (Gradient &g : grads) {
      linalg::GenericOp acc = accumulation(g);
      if (!acc)
        continue;
      Operation *after = nullptr;
      for (Value in : acc.getDpsInputs())
        if (Operation *def = in.getDefiningOp())
          if (def->getBlock() == body && (!after || after->isBeforeInBlock(def)))
            after = def;
      if (after)
        acc->moveAfter(after);
      else
        acc->moveBefore(&body->front());
    }
    int64_t position = 0;
    DenseMap<Operation *, int64_t> at;
    for (Operation &op : *body)
      at[&op] = position++;
    for (Gradient &g : grads)
      if (linalg::GenericOp acc = accumulation(g))
        g.finalAt = at[acc];
  }

  /// for i in [0, k-1): as before; then micro-batch k-1 again, outside the
  /// loop, with train.bucket_ready after each bucket's last accumulation
  /// (with overlap), or after the whole micro-batch (without).
  void peelLastMicroBatch() {
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    Value last = arith::SubIOp::create(b, loc, loop.getUpperBound(),
                                       arith::ConstantIndexOp::create(b, loc, 1));
    loop.getUpperBoundMutable().assign(last);
    b.setInsertionPointAfter(loop);
    IRMapping map;
    map.map(loop.getInductionVar(), last);
    for (auto [arg, result] :
         llvm::zip(loop.getRegionIterArgs(), loop.getResults()))
      map.map(arg, result);
    SmallVector<Value> finals;
    Block *body = loop.getBody();
    // Each bucket ends after the last of its accumulations; without overlap,
    // after the micro-batch's last op.
    Operation *lastOp = body->getTerminator()->getPrevNode();
    DenseMap<Operation *, SmallVector<size_t>> endsAfter;
    for (size_t j = 0; j < buckets.size(); ++j) {
      Operation *lastAcc = nullptr;
      for (size_t g : buckets[j])
        if (linalg::GenericOp acc = accumulation(grads[g]))
          if (!lastAcc || lastAcc->isBeforeInBlock(acc))
            lastAcc = acc;
      endsAfter[overlap ? lastAcc : lastOp].push_back(j);
    }
    DenseMap<size_t, Value> ready; // gradient -> value after its bucket
    auto markReady = [&](size_t j) {
      SmallVector<Value> values;
      for (size_t g : buckets[j]) {
        Value v = map.lookupOrDefault(
            body->getTerminator()->getOperand(grads[g].carried));
        values.push_back(v);
      }
      auto op = BucketReadyOp::create(b, loc, ValueRange(values).getTypes(),
                                      b.getI64IntegerAttr(int64_t(j)), values);
      peeled.insert(op);
      for (auto [g, v] : llvm::zip(buckets[j], op.getResults()))
        ready[g] = v;
    };
    if (auto it = endsAfter.find(nullptr); it != endsAfter.end())
      for (size_t j : it->second)
        markReady(j);
    for (Operation &op : body->without_terminator()) {
      peeled.insert(b.clone(op, map));
      if (auto it = endsAfter.find(&op); it != endsAfter.end())
        for (size_t j : it->second)
          markReady(j);
    }
    // Whatever read the loop's results (the return, the means taken after
    // it) reads the peeled micro-batch's values, gradients after their
    // bucket_ready.
    for (auto [i, result] : llvm::enumerate(loop.getResults())) {
      Value v = map.lookupOrDefault(body->getTerminator()->getOperand(i));
      for (size_t g = 0; g < grads.size(); ++g)
        if (grads[g].carried == i && ready.count(g))
          v = ready[g];
      result.replaceUsesWithIf(v, [&](OpOperand &use) {
        return !peeled.contains(use.getOwner());
      });
    }
  }

  void recordLayout() {
    Builder b(func.getContext());
    SmallVector<Attribute> layout;
    for (const std::vector<size_t> &bucket : buckets) {
      SmallVector<Attribute> names;
      for (size_t g : bucket)
        names.push_back(grads[g].name);
      layout.push_back(b.getArrayAttr(names));
    }
    attrs::buckets.set(func, b.getArrayAttr(layout));
  }

  func::FuncOp func;
  int64_t firstBytes, capBytes;
  bool overlap;
  scf::ForOp loop;
  std::vector<Gradient> grads;
  std::vector<std::vector<size_t>> buckets;
  /// The ops of the peeled micro-batch.
  DenseSet<Operation *> peeled;
};

struct DistBucket : public impl::DistBucketBase<DistBucket> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    double cap = bucketCapMb;
    if (auto fromConfig = attrs::bucketCapMb.get(module); fromConfig && cap <= 0)
      cap = fromConfig.getValueAsDouble();
    if (cap <= 0)
      cap = config::TrainConfig::Parallel().bucket_cap_mb();
    bool overlapping = overlap;
    if (overlap.getNumOccurrences() == 0 && attrs::noOverlap.get(module))
      overlapping = false;
    auto mib = [](double m) { return int64_t(m * 1024 * 1024); };
    for (auto f : module.getOps<func::FuncOp>()) {
      auto phase = attrs::phase.get(f);
      if (!phase || phase != "train" || f.isExternal())
        continue;
      if (failed(Bucketer(f, mib(firstBucketMb), mib(cap), overlapping).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace sinter::train
