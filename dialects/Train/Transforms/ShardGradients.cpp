//===- ShardGradients.cpp - Gradients reduce-scattered by bucket (ZERO2) --===//
//
// After dist-bucket a step sums each micro-batch's gradients into full-size
// accumulators and all-reduces each bucket once, in the last micro-batch.
// Here, in every micro-batch, a bucket's fresh gradients are packed into W
// rows (row r: every gradient's slice r, flattened and zero-padded) as soon
// as the bucket is final, and reduce-scattered while the backward pass goes
// on; each rank adds its slice into an accumulator of 1/W the size. At most
// two buckets are in flight: a bucket's rows are freed once its collective
// is waited for, before the next but one starts. So no full gradient
// outlives its bucket, at the cost of one reduce-scatter per micro-batch
// (k times DDP's volume) instead of one per step. Without overlap (the
// module's sinter.no_overlap), every micro-batch starts its buckets'
// reduce-scatters when its backward pass ends, as dist-bucket does for the
// last one.
//
//===----------------------------------------------------------------------===//

#include "dialects/Train/Transforms/ShardGradients.h"

#include "dialects/Sinter/IR/SinterAttrs.h"
#include "dialects/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace sinter::train {
namespace {

/// Collectives in flight at once.
constexpr size_t kInFlight = 2;

/// One bucket: its gradients' slices, back to back in a row.
struct Bucket {
  SmallVector<StringAttr> names;
  SmallVector<RankedTensorType> types;
  SmallVector<int64_t> offsets, slices; ///< per gradient, in elements
  int64_t width = 0;                    ///< of a row
  BucketReadyOp ready;                  ///< in the last micro-batch
  SmallVector<linalg::GenericOp> loopSums; ///< acc + g in the loop body
  Type elementType;
};

/// acc + g as dist-bucket writes it: ins(g) outs(acc).
Value addend(linalg::GenericOp sum) { return sum.getDpsInputs()[0]; }

class GradientSharder {
public:
  GradientSharder(func::FuncOp f, int64_t world)
      : func(f), world(world),
        overlap(!attrs::noOverlap.get(f->getParentOfType<ModuleOp>())) {}

  LogicalResult run(DenseMap<StringAttr, Value> &slices) {
    if (failed(collect()))
      return failure();
    if (buckets.empty())
      return success();
    shardLoop();
    shardLastMicroBatch();
    // Each parameter's slice of its bucket's.
    for (auto [bucket, summed] : llvm::zip(buckets, finals)) {
      OpBuilder b(summed.getContext());
      b.setInsertionPointAfterValue(summed);
      for (auto [i, name] : llvm::enumerate(bucket.names))
        slices[name] = tensor::ExtractSliceOp::create(
            b, func.getLoc(),
            RankedTensorType::get({bucket.slices[i]}, bucket.elementType), summed,
            ArrayRef<OpFoldResult>{b.getIndexAttr(bucket.offsets[i])},
            ArrayRef<OpFoldResult>{b.getIndexAttr(bucket.slices[i])},
            ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    }
    replaceNorm();
    dropGradientResults();
    return success();
  }

private:
  LogicalResult collect() {
    auto layout = attrs::buckets.get(func);
    func.walk([&](BucketReadyOp r) { readies.push_back(r); });
    func.walk([&](GradientsReadyOp r) { gradientsReady = r; });
    if (readies.empty())
      return success();
    if (!layout || !gradientsReady)
      return func.emitError("dist-shard: ZERO2 expects dist-bucket's buckets");
    for (BucketReadyOp r : readies) {
      Bucket bucket;
      bucket.ready = r;
      auto names = cast<ArrayAttr>(layout[r.getBucket()]);
      for (auto [name, g] : llvm::zip(names, r.getGradients())) {
        auto sum = g.getDefiningOp<linalg::GenericOp>();
        auto carried = sum ? dyn_cast<OpResult>(sum.getDpsInits()[0]) : OpResult();
        auto forOp = carried ? dyn_cast<scf::ForOp>(carried.getOwner()) : scf::ForOp();
        if (!forOp || (loop && forOp != loop))
          return r.emitError("dist-shard: a bucket's gradient is not the micro-batch "
                             "loop's accumulator plus the last micro-batch's");
        loop = forOp;
        auto type = cast<RankedTensorType>(g.getType());
        bucket.names.push_back(cast<StringAttr>(name));
        bucket.types.push_back(type);
        bucket.elementType = type.getElementType();
        int64_t slice = (type.getNumElements() + world - 1) / world;
        bucket.offsets.push_back(bucket.width);
        bucket.slices.push_back(slice);
        bucket.width += slice;
        auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
        auto loopSum = yield.getOperand(carried.getResultNumber())
                           .getDefiningOp<linalg::GenericOp>();
        if (!loopSum)
          return r.emitError("dist-shard: no accumulation of a gradient in the "
                             "micro-batch loop");
        bucket.loopSums.push_back(loopSum);
        carriedIndex.push_back(carried.getResultNumber());
      }
      buckets.push_back(std::move(bucket));
    }
    return success();
  }

  RankedTensorType rowType(const Bucket &bucket) const {
    return RankedTensorType::get({world, bucket.width}, bucket.elementType);
  }
  RankedTensorType sliceType(const Bucket &bucket) const {
    return RankedTensorType::get({bucket.width}, bucket.elementType);
  }

  /// The rows of `grads` (one value per gradient of the bucket).
  Value pack(OpBuilder &b, Location loc, const Bucket &bucket, ValueRange grads) {
    auto idx = [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); };
    Value rows = tensor::EmptyOp::create(b, loc, rowType(bucket).getShape(),
                                         bucket.elementType);
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(bucket.elementType));
    for (auto [i, g] : llvm::enumerate(grads)) {
      int64_t n = bucket.types[i].getNumElements(), s = bucket.slices[i];
      Value flat = flatten(b, loc, g);
      if (n != world * s) {
        Value padded = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{world * s},
                                               bucket.elementType);
        padded = linalg::FillOp::create(b, loc, zero, padded).getResult(0);
        flat = tensor::InsertSliceOp::create(
            b, loc, flat, padded, ArrayRef<OpFoldResult>{idx(0)},
            ArrayRef<OpFoldResult>{idx(n)}, ArrayRef<OpFoldResult>{idx(1)});
      }
      Value block = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get({world, s}, bucket.elementType), flat,
          ArrayRef<ReassociationIndices>{{0, 1}});
      rows = tensor::InsertSliceOp::create(
          b, loc, block, rows, ArrayRef<OpFoldResult>{idx(0), idx(bucket.offsets[i])},
          ArrayRef<OpFoldResult>{idx(world), idx(s)}, ArrayRef<OpFoldResult>{idx(1), idx(1)});
    }
    return rows;
  }

  Value add(OpBuilder &b, Location loc, Value acc, Value x) {
    return linalg::AddOp::create(b, loc, ValueRange{acc, x}, ValueRange{acc})
        .getResult(0);
  }

  /// Starts bucket j's reduce-scatter of `grads` after `at`, first waiting
  /// for the bucket kInFlight before it; returns its pending slice.
  struct InFlight {
    Value slice, rows;
  };
  void start(OpBuilder &b, size_t j, ValueRange grads, SmallVectorImpl<InFlight> &pending,
             SmallVectorImpl<Value> &done) {
    Location loc = func.getLoc();
    if (j >= kInFlight)
      done[j - kInFlight] = wait(b, j - kInFlight, pending[j - kInFlight]);
    Value rows = pack(b, loc, buckets[j], grads);
    Value slice = ReduceScatterStartOp::create(b, loc, sliceType(buckets[j]),
                                               b.getI64IntegerAttr(int64_t(j)), rows,
                                               Value())
                      .getResult();
    pending[j] = {slice, rows};
  }

  Value wait(OpBuilder &b, size_t j, const InFlight &f) {
    return CollectiveWaitOp::create(b, func.getLoc(), f.slice.getType(),
                                    b.getI64IntegerAttr(int64_t(j)), f.slice, f.rows)
        .getResult();
  }

  /// In the loop over the first k-1 micro-batches: slices accumulate in
  /// new loop-carried tensors; the full accumulators are carried unchanged
  /// (and die in canonicalization).
  void shardLoop() {
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    SmallVector<Value> inits;
    for (const Bucket &bucket : buckets) {
      Value empty = tensor::EmptyOp::create(b, loc, sliceType(bucket).getShape(),
                                            bucket.elementType);
      Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(bucket.elementType));
      inits.push_back(linalg::FillOp::create(b, loc, zero, empty).getResult(0));
    }
    IRRewriter rewriter(func.getContext());
    auto grown = loop.replaceWithAdditionalYields(
        rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &yb, Location, ArrayRef<BlockArgument> accs) {
          SmallVector<InFlight> pending(buckets.size());
          SmallVector<Value> done(buckets.size());
          for (size_t j = 0; j < buckets.size(); ++j) {
            SmallVector<Value> grads;
            for (linalg::GenericOp s : buckets[j].loopSums)
              grads.push_back(addend(s));
            if (!overlap) {
              start(yb, j, grads, pending, done);
              continue;
            }
            Operation *last = buckets[j].loopSums.front();
            for (linalg::GenericOp s : buckets[j].loopSums)
              if (last->isBeforeInBlock(s))
                last = s;
            OpBuilder at(last->getContext());
            at.setInsertionPointAfter(last);
            start(at, j, grads, pending, done);
          }
          SmallVector<Value> yields;
          for (size_t j = 0; j < buckets.size(); ++j) {
            if (!done[j])
              done[j] = wait(yb, j, pending[j]);
            yields.push_back(add(yb, loc, accs[j], done[j]));
          }
          return yields;
        });
    loop = cast<scf::ForOp>(grown->getOperation());
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    for (unsigned c : carriedIndex)
      yield->setOperand(c, loop.getRegionIterArgs()[c]);
    loopSlices = loop.getResults().take_back(buckets.size());
  }

  /// In the last micro-batch: each bucket starts where dist-bucket marked it
  /// ready; after the pass, the rest are waited for and every slice gets
  /// the loop's sum.
  void shardLastMicroBatch() {
    SmallVector<InFlight> pending(buckets.size());
    SmallVector<Value> done(buckets.size());
    for (size_t j = 0; j < buckets.size(); ++j) {
      OpBuilder b(buckets[j].ready);
      SmallVector<Value> grads;
      for (Value g : buckets[j].ready.getGradients())
        grads.push_back(addend(g.getDefiningOp<linalg::GenericOp>()));
      start(b, j, grads, pending, done);
    }
    OpBuilder b(gradientsReady);
    b.setInsertionPointAfter(gradientsReady);
    for (size_t j = 0; j < buckets.size(); ++j) {
      if (!done[j])
        done[j] = wait(b, j, pending[j]);
      finals.push_back(add(b, func.getLoc(), loopSlices[j], done[j]));
    }
  }

  /// The global norm from every rank's slices: the sum of squares of this
  /// rank's, summed over the ranks.
  void replaceNorm() {
    GlobalNormOp norm;
    func.walk([&](GlobalNormOp n) { norm = n; });
    if (!norm)
      return;
    OpBuilder b(norm);
    Location loc = norm.getLoc();
    Value mine = GlobalNormOp::create(b, loc, b.getF64Type(), finals);
    Value squared = arith::MulFOp::create(b, loc, mine, mine);
    Value t = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({1}, b.getF64Type()), squared);
    Value all = AllReduceSumOp::create(b, loc, t.getType(), t).getResult();
    Value sum = tensor::ExtractOp::create(
        b, loc, all, ValueRange{arith::ConstantIndexOp::create(b, loc, 0)});
    norm.replaceAllUsesWith(math::SqrtOp::create(b, loc, sum).getResult());
    norm.erase();
  }

  /// The step returns each bucket's slices, accumulated in place, instead
  /// of the full gradients.
  void dropGradientResults() {
    auto ret = cast<func::ReturnOp>(func.front().getTerminator());
    SmallVector<Value> results;
    SmallVector<DictionaryAttr> resultAttrs;
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      if (attrs::gradient.getResult(func, i))
        continue;
      results.push_back(ret.getOperand(i));
      DictionaryAttr a = func.getResultAttrDict(i);
      resultAttrs.push_back(a ? a : DictionaryAttr::get(func.getContext()));
    }
    Builder names(func.getContext());
    for (auto [j, slices] : llvm::enumerate(finals)) {
      results.push_back(slices);
      resultAttrs.push_back(names.getDictionaryAttr(attrs::gradientSlices.named(
          names.getStringAttr("bucket" + std::to_string(j)))));
    }
    OpBuilder b(ret);
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();
    func.setFunctionType(FunctionType::get(
        func.getContext(), func.getArgumentTypes(), ValueRange(results).getTypes()));
    func.setAllResultAttrs(resultAttrs);
    func->removeAttr(attrs::buckets.name());
  }

  func::FuncOp func;
  int64_t world;
  bool overlap; ///< each bucket starts as soon as it is final
  scf::ForOp loop;
  GradientsReadyOp gradientsReady;
  SmallVector<BucketReadyOp> readies;
  std::vector<Bucket> buckets;
  SmallVector<unsigned> carriedIndex; ///< the full accumulators' loop results
  SmallVector<Value> loopSlices;      ///< the loop's sums of slices, per bucket
  SmallVector<Value> finals;          ///< the step's sums of slices, per bucket
};

} // namespace

LogicalResult shardGradients(func::FuncOp step, int64_t world,
                             DenseMap<StringAttr, Value> &slices) {
  return GradientSharder(step, world).run(slices);
}

} // namespace sinter::train
