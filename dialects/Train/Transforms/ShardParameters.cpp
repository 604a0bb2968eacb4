//===- ShardParameters.cpp - Parameters gathered before use (FULL_SHARD) --===//
//
// A step's parameter arguments become this rank's shards. Where the step
// used a parameter, it now uses the parameter gathered from every rank's
// shard: the gathered rows, flattened and cut where the padding starts, are
// the parameter itself, so a gather needs no copy.
//
// Gathers are planned per group (one block of a repeat, or one top-level
// name), per block of code (the step's body, the micro-batch loop's body)
// and per pass: the forward pass (whatever the loss or a metric depends on)
// and the backward pass (the rest) gather separately, so no gathered
// parameter lives from the forward pass to the backward pass, and the
// memory plan frees each at its pass's last use of it. A group's gather
// starts when the previous group's is waited for: while one block
// computes, the next one's parameters arrive.
//
//===----------------------------------------------------------------------===//

#include "dialects/Train/Transforms/ShardParameters.h"

#include "dialects/Sinter/IR/SinterAttrs.h"
#include "dialects/Train/IR/TrainOps.h"
#include "dialects/Train/Transforms/ShardGradients.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <map>

using namespace mlir;

namespace sinter::train {

StringRef parameterGroup(StringRef name) {
  SmallVector<StringRef> parts;
  name.split(parts, '.');
  size_t end = 0;
  for (StringRef part : parts) {
    end += part.size();
    if (!part.empty() && llvm::all_of(part, llvm::isDigit))
      return name.take_front(end);
    ++end; // the dot
  }
  return parts.front();
}

namespace {

/// Collective ids of the gathers: above those of the gradient buckets.
constexpr int64_t kFirstGatherId = int64_t(1) << 32;

enum Pass { Forward = 0, Backward = 1 };

struct Parameter {
  BlockArgument arg;
  RankedTensorType type; ///< the whole parameter's
  int64_t shard = 0;
  unsigned group = 0;
};

/// The uses of one group's parameters in one pass of one block.
struct GroupUses {
  SmallVector<std::pair<size_t, OpOperand *>> uses; ///< (parameter, use)
  Operation *first = nullptr; ///< the earliest op of the block that uses one
};

class ParameterSharder {
public:
  ParameterSharder(func::FuncOp f, int64_t world, Operation *keep)
      : func(f), world(world), keep(keep) {}

  LogicalResult run() {
    collect();
    if (params.empty())
      return success();
    if (attrs::phase.get(func) == "train")
      markForward();
    sinkBackwardUses();
    planAndGather();
    for (Parameter &p : params) {
      p.arg.setType(RankedTensorType::get({p.shard}, p.type.getElementType()));
      attrs::globalShape.setArg(func, p.arg.getArgNumber(),
                                DenseI64ArrayAttr::get(func.getContext(),
                                                       p.type.getShape()));
    }
    func.setFunctionType(FunctionType::get(func.getContext(),
                                           func.front().getArgumentTypes(),
                                           func.getResultTypes()));
    return success();
  }

private:
  void collect() {
    llvm::StringMap<unsigned> groups;
    for (BlockArgument arg : func.getArguments()) {
      StringAttr name = attrs::param.getArg(func, arg.getArgNumber());
      if (!name)
        continue;
      auto type = cast<RankedTensorType>(arg.getType());
      Parameter p{arg, type, (type.getNumElements() + world - 1) / world};
      p.group = groups.try_emplace(parameterGroup(name.getValue()), groups.size())
                    .first->second;
      params.push_back(p);
    }
  }

  /// The blocks gathers are planned in: the step's, and the micro-batch
  /// loop's.
  bool isPlanned(Block *block) {
    Block *body = &func.getFunctionBody().front();
    if (block == body)
      return true;
    Operation *parent = block->getParentOp();
    return isa<scf::ForOp>(parent) && parent->getBlock() == body;
  }

  /// The op of a planned block that holds `op`, or null.
  Operation *anchorOf(Operation *op) {
    while (op && op != func && !isPlanned(op->getBlock()))
      op = op->getParentOp();
    return op == func ? nullptr : op;
  }

  /// The forward pass: every op the step's loss or metrics depend on,
  /// through the micro-batch loop's carried values.
  void markForward() {
    SmallVector<Value> work;
    Operation *ret = func.front().getTerminator();
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (attrs::loss.getResult(func, i) || attrs::metric.getResult(func, i))
        work.push_back(ret->getOperand(i));
    DenseSet<Value> seen;
    auto carried = [&](scf::ForOp loop, unsigned i) {
      work.push_back(loop.getInitArgs()[i]);
      work.push_back(loop.getBody()->getTerminator()->getOperand(i));
    };
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
        if (loop && arg.getArgNumber() > 0)
          carried(loop, arg.getArgNumber() - 1);
        continue;
      }
      Operation *op = v.getDefiningOp();
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        carried(loop, cast<OpResult>(v).getResultNumber());
        continue;
      }
      if (!forward.insert(op).second)
        continue;
      // Its operands, and what its regions read from outside.
      op->walk([&](Operation *inner) {
        for (Value o : inner->getOperands())
          if (inner == op || !op->isProperAncestor(o.getParentRegion()->getParentOp()))
            work.push_back(o);
      });
    }
  }

  Pass passOf(Operation *anchor) {
    if (attrs::phase.get(func) != "train" || forward.contains(anchor))
      return Forward;
    return Backward;
  }

  bool isKept(OpOperand &use) {
    return keep && keep->isAncestor(use.getOwner());
  }

  /// A pure op of the backward pass that reads a parameter early (a weight
  /// transposed ahead of its gradient's matmul) moves to just before its
  /// first user, so the backward pass's gather need not start early.
  void sinkBackwardUses() {
    SetVector<Operation *> movable;
    for (Parameter &p : params)
      for (OpOperand &use : p.arg.getUses()) {
        Operation *anchor = isKept(use) ? nullptr : anchorOf(use.getOwner());
        if (anchor && passOf(anchor) == Backward && isMemoryEffectFree(anchor) &&
            !anchor->use_empty())
          movable.insert(anchor);
      }
    for (Operation *op : movable) {
      Operation *first = nullptr;
      bool local = true; // every user is in the op's block
      for (Operation *user : op->getUsers()) {
        Operation *a = anchorOf(user);
        local &= a && a->getBlock() == op->getBlock();
        if (local && (!first || a->isBeforeInBlock(first)))
          first = a;
      }
      if (local && first && first != op)
        op->moveBefore(first);
    }
  }

  void planAndGather() {
    // (block, pass) -> group -> its uses there.
    std::map<std::pair<Block *, int>, std::map<unsigned, GroupUses>> plan;
    for (auto [i, p] : llvm::enumerate(params))
      for (OpOperand &use : p.arg.getUses()) {
        if (isKept(use))
          continue;
        Operation *anchor = anchorOf(use.getOwner());
        GroupUses &g = plan[{anchor->getBlock(), passOf(anchor)}][p.group];
        g.uses.push_back({i, &use});
        if (!g.first || anchor->isBeforeInBlock(g.first))
          g.first = anchor;
      }
    for (auto &[where, groups] : plan) {
      SmallVector<GroupUses *> order;
      for (auto &[group, uses] : groups)
        order.push_back(&uses);
      llvm::sort(order, [](GroupUses *a, GroupUses *b) {
        return a->first->isBeforeInBlock(b->first);
      });
      int pass = where.second;
      OpBuilder b(order.front()->first);
      DenseMap<size_t, Value> started = start(b, *order.front(), pass);
      for (size_t i = 0; i < order.size(); ++i) {
        b.setInsertionPoint(order[i]->first);
        DenseMap<size_t, Value> full = wait(b, started, pass);
        if (i + 1 < order.size())
          started = start(b, *order[i + 1], pass);
        for (auto [param, use] : order[i]->uses)
          use->set(full.lookup(param));
      }
    }
  }

  int64_t idOf(size_t param, int pass) {
    return kFirstGatherId + 2 * int64_t(param) + pass;
  }

  /// Starts gathering each parameter the group's uses read, once.
  DenseMap<size_t, Value> start(OpBuilder &b, const GroupUses &g, int pass) {
    DenseMap<size_t, Value> rows;
    for (auto [param, use] : g.uses) {
      if (rows.count(param))
        continue;
      const Parameter &p = params[param];
      auto type = RankedTensorType::get({world, p.shard}, p.type.getElementType());
      rows[param] = AllGatherStartOp::create(
          b, p.arg.getLoc(), type, b.getI64IntegerAttr(idOf(param, pass)), p.arg,
          Value()).getResult();
    }
    return rows;
  }

  /// Waits for the started gathers: each parameter, whole.
  DenseMap<size_t, Value> wait(OpBuilder &b, const DenseMap<size_t, Value> &rows,
                               int pass) {
    DenseMap<size_t, Value> full;
    // In parameter order: the same on every rank.
    SmallVector<size_t> order;
    for (auto &[param, r] : rows)
      order.push_back(param);
    llvm::sort(order);
    for (size_t param : order) {
      const Parameter &p = params[param];
      Location loc = p.arg.getLoc();
      Value r = rows.lookup(param);
      Value done = CollectiveWaitOp::create(b, loc, r.getType(),
                                            b.getI64IntegerAttr(idOf(param, pass)),
                                            r, p.arg)
                       .getResult();
      Value flat = tensor::CollapseShapeOp::create(
          b, loc, RankedTensorType::get({world * p.shard}, p.type.getElementType()),
          done, ArrayRef<ReassociationIndices>{{0, 1}});
      int64_t n = p.type.getNumElements();
      if (n != world * p.shard)
        flat = tensor::ExtractSliceOp::create(
            b, loc, RankedTensorType::get({n}, p.type.getElementType()), flat,
            ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(n)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
      full[param] = unflatten(b, loc, flat, p.type);
    }
    return full;
  }

  func::FuncOp func;
  int64_t world;
  Operation *keep;
  SmallVector<Parameter> params;
  DenseSet<Operation *> forward;
};

} // namespace

LogicalResult shardParameters(func::FuncOp step, int64_t world, Operation *keep) {
  return ParameterSharder(step, world, keep).run();
}

} // namespace sinter::train
