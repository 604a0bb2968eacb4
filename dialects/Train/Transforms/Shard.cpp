//===- Shard.cpp - The training state sharded over the ranks (ZeRO) -------===//
//
// A parameter of n elements is seen flat, padded with zeros to W * s
// elements (s = ceil(n / W)); rank r owns [r * s, (r + 1) * s) of it, of its
// summed gradient and of its moments. The moments become shards; the update
// works on shards. Under ZERO1 and ZERO2 the new shards of a bucket are
// gathered in one collective and copied back into each parameter's buffer;
// under FULL_SHARD the parameters stay shards (ShardParameters.h). Sums and
// norms are untouched, so each element is updated exactly as DDP updates it.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sinter/IR/SinterAttrs.h"
#include "dialects/Train/IR/TrainOps.h"
#include "dialects/Train/Transforms/Passes.h"
#include "dialects/Train/Transforms/ShardGradients.h"
#include "dialects/Train/Transforms/ShardParameters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace sinter::train {
#define GEN_PASS_DEF_DISTSHARD
#include "dialects/Train/Transforms/Passes.h.inc"


Value flatten(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  auto flat = RankedTensorType::get({type.getNumElements()}, type.getElementType());
  if (type.getRank() == 1)
    return v;
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, flat, v,
                                         ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return tensor::CollapseShapeOp::create(b, loc, flat, v,
                                         ArrayRef<ReassociationIndices>{all});
}

Value unflatten(OpBuilder &b, Location loc, Value flat, RankedTensorType type) {
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat,
                                           ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       ArrayRef<ReassociationIndices>{all});
}

namespace {

/// One parameter's update, and the sizes of its shards.
struct Sharded {
  Operation *update;  ///< train.adamw_update or train.sgd_update
  unsigned paramArg;
  RankedTensorType type; ///< the parameter's
  int64_t count = 0;  ///< n
  int64_t shard = 0;  ///< s
  unsigned yielded = 0; ///< the if's result that is the new parameter
  Value newShard;     ///< that result, once the if is rebuilt
};

class Sharder {
public:
  Sharder(func::FuncOp f, int64_t world, bool shardedGradients,
          bool shardedParameters)
      : func(f), world(world), shardedGradients(shardedGradients),
        shardedParameters(shardedParameters) {}

  LogicalResult run() {
    // The groups are the gradient buckets, which ZERO2 then takes apart.
    bucketLayout = attrs::buckets.get(func);
    if (shardedGradients && failed(shardGradients(func, world, gradientSlices)))
      return failure();
    SmallVector<Operation *> updates;
    func.walk([&](Operation *op) {
      if (isa<AdamWUpdateOp, SGDUpdateOp>(op))
        updates.push_back(op);
    });
    if (updates.empty())
      return success();
    ifOp = updates.front()->getParentOfType<scf::IfOp>();
    if (!ifOp || ifOp->getParentOp() != func)
      return func.emitError("dist-shard expects the update in one scf.if of "
                            "the step (run train-build-step)");
    for (Operation *u : updates)
      if (failed(collect(u)))
        return failure();
    if (shardedParameters && failed(shardParameters(func, world, ifOp)))
      return failure();
    OpBuilder b(ifOp);
    Location loc = ifOp.getLoc();
    Value rank = RankOp::create(b, loc);
    for (Sharded &p : params)
      shardUpdate(b, rank, p);
    rebuildIf();
    b.setInsertionPoint(func.front().getTerminator());
    if (shardedParameters)
      returnShards();
    else
      for (const SmallVector<size_t> &group : gatherGroups())
        gather(b, group);
    oldIf.erase();
    // What read the summed full gradients now reads this rank's slices.
    func.walk([](BucketReadyOp r) {
      if (r->use_empty())
        r->erase();
    });
    func.setFunctionType(FunctionType::get(
        func.getContext(), func.front().getArgumentTypes(),
        func.front().getTerminator()->getOperandTypes()));
    return success();
  }

private:
  LogicalResult collect(Operation *u) {
    auto arg = dyn_cast<BlockArgument>(u->getOperand(0));
    if (!arg || arg.getOwner() != &func.front() ||
        !attrs::param.getArg(func, arg.getArgNumber()))
      return u->emitError("internal error: an update of something that is no "
                          "parameter of the step");
    auto thenYield = ifOp.thenYield();
    Sharded p{u, arg.getArgNumber(), cast<RankedTensorType>(arg.getType())};
    p.count = p.type.getNumElements();
    p.shard = (p.count + world - 1) / world;
    for (OpOperand &use : u->getResult(0).getUses())
      if (use.getOwner() == thenYield)
        p.yielded = use.getOperandNumber();
    params.push_back(p);
    return success();
  }

  RankedTensorType shardType(const Sharded &p) const {
    return RankedTensorType::get({p.shard}, p.type.getElementType());
  }

  /// Rank `rank`'s shard of `full` (a tensor of the parameter's type).
  Value shardOf(OpBuilder &b, Location loc, Value full, const Sharded &p,
                Value rank) {
    Value flat = flatten(b, loc, full);
    int64_t padded = p.shard * world;
    if (padded != p.count) {
      Type et = p.type.getElementType();
      Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{padded}, et);
      Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(et));
      Value zeros = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
      flat = tensor::InsertSliceOp::create(
          b, loc, flat, zeros, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(p.count)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    }
    Value offset = arith::MulIOp::create(
        b, loc, rank, arith::ConstantIndexOp::create(b, loc, p.shard));
    return tensor::ExtractSliceOp::create(
        b, loc, shardType(p), flat, ArrayRef<OpFoldResult>{offset},
        ArrayRef<OpFoldResult>{b.getIndexAttr(p.shard)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  }

  /// The update reads and writes this rank's shards; a skipped update
  /// yields the old shard.
  void shardUpdate(OpBuilder &b, Value rank, Sharded &p) {
    Location loc = p.update->getLoc();
    Value oldShard = shardedParameters
                         ? func.getArgument(p.paramArg)
                         : shardOf(b, loc, func.getArgument(p.paramArg), p, rank);
    StringAttr name = attrs::param.getArg(func, p.paramArg);
    Value gradShard = shardedGradients ? gradientSlices.lookup(name)
                                       : shardOf(b, loc, p.update->getOperand(1), p, rank);
    p.update->setOperand(0, oldShard);
    p.update->setOperand(1, gradShard);
    // The moments: shards of the parameter's global shape.
    for (unsigned i = 2; i < p.update->getNumOperands(); ++i) {
      auto moment = dyn_cast<BlockArgument>(p.update->getOperand(i));
      if (!moment || !isa<RankedTensorType>(moment.getType()))
        continue;
      moment.setType(shardType(p));
      attrs::globalShape.setArg(func, moment.getArgNumber(),
                                b.getDenseI64ArrayAttr(p.type.getShape()));
    }
    for (OpResult r : p.update->getResults())
      r.setType(shardType(p));
    ifOp.elseYield()->setOperand(p.yielded, oldShard);
  }

  /// The if with the shards' types.
  void rebuildIf() {
    OpBuilder b(ifOp);
    auto types = ifOp.thenYield()->getOperandTypes();
    auto rebuilt = scf::IfOp::create(b, ifOp.getLoc(), types, ifOp.getCondition(),
                                     /*withElseRegion=*/true);
    rebuilt.getThenRegion().takeBody(ifOp.getThenRegion());
    rebuilt.getElseRegion().takeBody(ifOp.getElseRegion());
    llvm::DenseSet<unsigned> newParams;
    for (Sharded &p : params) {
      p.newShard = rebuilt.getResult(p.yielded);
      newParams.insert(p.yielded);
    }
    // The moments' users take the shards; the parameters' wait for the
    // gather.
    for (auto [i, old] : llvm::enumerate(ifOp.getResults()))
      if (!newParams.contains(unsigned(i)))
        old.replaceAllUsesWith(rebuilt.getResult(i));
    oldIf = ifOp;
    ifOp = rebuilt;
  }

  /// FULL_SHARD: the step returns each parameter's new shard.
  void returnShards() {
    Operation *ret = func.front().getTerminator();
    for (const Sharded &p : params)
      for (OpOperand &use : ret->getOpOperands())
        if (use.get() == oldIf.getResult(p.yielded))
          use.set(p.newShard);
  }

  /// The parameters whose new shards are gathered together: one group per
  /// gradient bucket (in order), then one of the rest.
  SmallVector<SmallVector<size_t>> gatherGroups() const {
    DenseMap<StringAttr, size_t> byName;
    for (size_t i = 0; i < params.size(); ++i)
      byName[attrs::param.getArg(func, params[i].paramArg)] = i;
    SmallVector<SmallVector<size_t>> groups;
    llvm::DenseSet<size_t> grouped;
    if (bucketLayout)
      for (Attribute bucket : bucketLayout) {
        groups.emplace_back();
        for (Attribute name : cast<ArrayAttr>(bucket))
          if (auto it = byName.find(cast<StringAttr>(name)); it != byName.end()) {
            groups.back().push_back(it->second);
            grouped.insert(it->second);
          }
      }
    groups.emplace_back();
    for (size_t i = 0; i < params.size(); ++i)
      if (!grouped.contains(i))
        groups.back().push_back(i);
    llvm::erase_if(groups, [](const SmallVector<size_t> &g) { return g.empty(); });
    return groups;
  }

  /// Packs the group's new shards, gathers every rank's, and writes each
  /// parameter back into its argument's buffer. In the gathered rows, row r
  /// holds rank r's shards back to back; a parameter's flat elements are
  /// its rows' slices in order, the last row cut where the padding starts.
  void gather(OpBuilder &b, ArrayRef<size_t> group) {
    Location loc = ifOp.getLoc();
    Type et = params[group.front()].type.getElementType();
    int64_t width = 0;
    SmallVector<int64_t> offsets;
    for (size_t i : group) {
      offsets.push_back(width);
      width += params[i].shard;
    }
    auto idx = [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); };
    Value packed = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{width}, et);
    for (auto [i, offset] : llvm::zip(group, offsets))
      packed = tensor::InsertSliceOp::create(
          b, loc, params[i].newShard, packed, ArrayRef<OpFoldResult>{idx(offset)},
          ArrayRef<OpFoldResult>{idx(params[i].shard)},
          ArrayRef<OpFoldResult>{idx(1)});
    Value rows = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{world, width}, et);
    Value gathered = AllGatherOp::create(b, loc, rows.getType(), packed, rows)
                         .getResult();
    auto ret = func.front().getTerminator();
    for (auto [i, offset] : llvm::zip(group, offsets)) {
      const Sharded &p = params[i];
      Value param = func.getArgument(p.paramArg);
      Value dst = flatten(b, loc, param);
      int64_t full = p.count / p.shard, rest = p.count % p.shard;
      auto copyRows = [&](int64_t row, int64_t numRows, int64_t width) {
        int64_t start = row * p.shard, n = numRows * width;
        auto srcType = numRows == 1 ? RankedTensorType::get({width}, et)
                                    : RankedTensorType::get({numRows, width}, et);
        Value src = tensor::ExtractSliceOp::create(
            b, loc, srcType, gathered,
            ArrayRef<OpFoldResult>{idx(row), idx(offset)},
            ArrayRef<OpFoldResult>{idx(numRows), idx(width)},
            ArrayRef<OpFoldResult>{idx(1), idx(1)});
        Value into = tensor::ExtractSliceOp::create(
            b, loc, RankedTensorType::get({n}, et), dst,
            ArrayRef<OpFoldResult>{idx(start)}, ArrayRef<OpFoldResult>{idx(n)},
            ArrayRef<OpFoldResult>{idx(1)});
        if (numRows != 1)
          into = tensor::ExpandShapeOp::create(
              b, loc, srcType, into, ArrayRef<ReassociationIndices>{{0, 1}});
        Value copied = linalg::CopyOp::create(b, loc, src, into).getResult(0);
        if (numRows != 1)
          copied = tensor::CollapseShapeOp::create(
              b, loc, RankedTensorType::get({n}, et), copied,
              ArrayRef<ReassociationIndices>{{0, 1}});
        dst = tensor::InsertSliceOp::create(
            b, loc, copied, dst, ArrayRef<OpFoldResult>{idx(start)},
            ArrayRef<OpFoldResult>{idx(n)}, ArrayRef<OpFoldResult>{idx(1)});
      };
      if (full > 0)
        copyRows(0, full, p.shard);
      if (rest > 0)
        copyRows(full, 1, rest);
      Value updated = unflatten(b, loc, dst, p.type);
      for (OpOperand &use : ret->getOpOperands())
        if (use.get() == oldIf.getResult(p.yielded))
          use.set(updated);
    }
  }

  func::FuncOp func;
  int64_t world;
  bool shardedGradients; ///< ZERO2: the update reads reduce-scattered slices
  bool shardedParameters; ///< FULL_SHARD: parameters are held as shards
  DenseMap<StringAttr, Value> gradientSlices;
  ArrayAttr bucketLayout; ///< `sinter.buckets`, read before ZERO2 drops it
  scf::IfOp ifOp;
  scf::IfOp oldIf; ///< replaced by ifOp, erased once nothing reads it
  SmallVector<Sharded> params;
};

struct DistShard : public impl::DistShardBase<DistShard> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string chosen = strategy;
    if (auto s = attrs::strategy.get(module); s && strategy.getNumOccurrences() == 0)
      chosen = s.str();
    int64_t ranks = worldSize;
    if (auto w = attrs::worldSize.get(module); w && worldSize.getNumOccurrences() == 0)
      ranks = w.getInt();
    if (chosen != "DDP" && chosen != "ZERO1" && chosen != "ZERO2" &&
        chosen != "FULL_SHARD") {
      module.emitError("dist-shard: no strategy ")
          << chosen << "; DDP, ZERO1, ZERO2 and FULL_SHARD are";
      return signalPassFailure();
    }
    if (ranks < 1) {
      module.emitError("dist-shard: a world of ") << ranks << " ranks";
      return signalPassFailure();
    }
    if (chosen == "DDP" || ranks == 1)
      return;
    bool fullShard = chosen == "FULL_SHARD";
    for (auto f : module.getOps<func::FuncOp>()) {
      auto phase = attrs::phase.get(f);
      if (!phase || f.isExternal())
        continue;
      // Every step reads the same parameter buffers: under FULL_SHARD, shards.
      if (phase == "train" &&
          failed(Sharder(f, ranks, chosen != "ZERO1", fullShard).run()))
        return signalPassFailure();
      if (phase != "train" && fullShard &&
          failed(shardParameters(f, ranks, /*keep=*/nullptr)))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace sinter::train
