//===- WriteOverDeadInputs.cpp - Elementwise results over spent inputs ---===//
//
// Cross-entropy's gradient is a loop over the logits that writes one
// element per logit read, of the same type, and nothing reads the logits
// after it: GPT-2 124M's two arrays of [tokens, 50,257] were both live at
// the step's peak. A parallel loop that writes its result where it reads an
// input of the same type and shape, element for element, may write into
// that input's buffer once nothing reads the input after it. The loop's
// result then takes the input as its init, and bufferization writes it in
// place. A reader after the loop that only picks elements of the input, by
// indices its own inputs give (the loss's pick of each target's logit), has
// its picks made before the loop, into a tensor it then reads; other readers
// that do not depend on the loop move before it.
//
// Only a buffer the step makes for itself is reused this way (a product's
// or a loop's, started from a tensor.empty): never a parameter, a state,
// an argument or an accumulator carried by a loop.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <functional>

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_WRITEOVERDEADINPUTS
#include "compiler/Transforms/Passes.h.inc"

namespace {

bool isView(Operation *op) {
  return isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                         tensor::ExtractSliceOp>(op);
}

/// Whether `v` is a fresh buffer: a tensor.empty, a view of one, or what a
/// linalg op wrote into such a buffer (through its init).
bool isFresh(Value v) {
  for (int depth = 0; depth < 64; ++depth) {
    Operation *def = v.getDefiningOp();
    if (isa_and_nonnull<tensor::EmptyOp>(def))
      return true;
    if (isView(def)) {
      v = def->getOperand(0);
    } else if (auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(def);
               linalgOp && linalgOp.hasPureTensorSemantics()) {
      v = linalgOp.getDpsInits()[cast<OpResult>(v).getResultNumber()];
    } else {
      return false;
    }
  }
  return false;
}

/// Every tensor that shares `v`'s buffer once bufferized: the chain of
/// views and inits `v` was made from, and the views made from those.
llvm::SetVector<Value> sharers(Value v) {
  llvm::SetVector<Value> out;
  SmallVector<Value> work = {v};
  while (!work.empty()) {
    Value t = work.pop_back_val();
    if (!out.insert(t))
      continue;
    Operation *def = t.getDefiningOp();
    if (isView(def))
      work.push_back(def->getOperand(0));
    else if (auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(def))
      work.push_back(linalgOp.getDpsInits()[cast<OpResult>(t).getResultNumber()]);
    for (Operation *user : t.getUsers())
      if (isView(user) && user->getOperand(0) == t)
        work.push_back(user->getResult(0));
  }
  return out;
}

/// Adds `op`, an op of `loop`'s block after it, and the ops after `loop`
/// it reads from, to `moved`: false when one of them is not pure or reads
/// `loop`'s result.
bool movable(Operation *op, linalg::GenericOp loop, DominanceInfo &dominance,
             llvm::SetVector<Operation *> &moved) {
  if (moved.contains(op))
    return true;
  if (op == loop.getOperation() || !isMemoryEffectFree(op) || op->getNumResults() == 0)
    return false;
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(op->getRegions(), used);
  used.insert(op->operand_begin(), op->operand_end());
  moved.insert(op);
  for (Value u : used) {
    if (dominance.properlyDominates(u, loop))
      continue;
    Operation *def = u.getDefiningOp();
    Operation *at = def ? loop->getBlock()->findAncestorOpInBlock(*def) : nullptr;
    if (!at || !movable(at, loop, dominance, moved))
      return false;
  }
  return true;
}

/// The `tensor.extract`s of `shared` values in `reader`'s body, when they
/// are its only reads of them and what picks each element depends only on
/// its inputs' elements, its loop indices and values that `loop` sees (the
/// loss's pick of the target's logit): these can be made before `loop`, in
/// a loop over `reader`'s iterations. None otherwise.
SmallVector<tensor::ExtractOp> gathers(Operation *reader, const llvm::SetVector<Value> &shared,
                                       linalg::GenericOp loop, DominanceInfo &dominance) {
  auto generic = dyn_cast<linalg::GenericOp>(reader);
  if (!generic || !generic.hasPureTensorSemantics() ||
      llvm::any_of(generic->getOperands(), [&](Value v) { return shared.contains(v); }))
    return {};
  SmallVector<tensor::ExtractOp> extracts;
  Block *body = generic.getBody();
  bool ok = true;
  generic.getRegion().walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (shared.contains(v)) {
        auto extract = dyn_cast<tensor::ExtractOp>(op);
        ok &= extract && extract->getBlock() == body;
        if (extract)
          extracts.push_back(extract);
      }
  });
  // What picks the elements: pure ops of the body over input elements,
  // loop indices and values from above that `loop` sees.
  std::function<bool(Value)> picksFromInputs = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == body ? arg.getArgNumber() < generic.getNumDpsInputs()
                                    : dominance.properlyDominates(v, loop);
    Operation *def = v.getDefiningOp();
    if (def->getBlock() != body)
      return dominance.properlyDominates(v, loop);
    return isMemoryEffectFree(def) && def->getNumRegions() == 0 &&
           llvm::all_of(def->getOperands(), picksFromInputs);
  };
  for (tensor::ExtractOp extract : extracts)
    ok &= dominance.properlyDominates(extract.getTensor(), loop) &&
          llvm::all_of(extract.getIndices(), picksFromInputs);
  for (Value in : generic.getDpsInputs())
    ok &= dominance.properlyDominates(in, loop);
  if (!ok || !generic.hasPureTensorSemantics() ||
      llvm::any_of(generic.getStaticLoopRanges(), ShapedType::isDynamic))
    return {};
  return extracts;
}

/// Makes `extracts` of `reader` before `loop`: a parallel loop over
/// `reader`'s iterations picks each element into a tensor, which `reader`
/// then reads as one more input (the reader is made again: the new one is
/// returned). The picks are made as early as what they
/// read allows, so that they do not come between `loop` and a reduction
/// it may join (the softmax's statistics).
linalg::GenericOp gatherBefore(linalg::GenericOp reader,
                               ArrayRef<tensor::ExtractOp> extracts,
                               linalg::GenericOp loop) {
  MLIRContext *ctx = reader.getContext();
  Location loc = reader.getLoc();
  SmallVector<int64_t> ranges = reader.getStaticLoopRanges();
  AffineMap id = AffineMap::getMultiDimIdentityMap(ranges.size(), ctx);
  Block *block = loop->getBlock();
  Block *body = reader.getBody();
  // What the picks need: ops of the body, its input arguments, and values
  // from outside it.
  llvm::SetVector<Operation *> needed;
  llvm::SetVector<Value> outside;
  SmallVector<unsigned> args;
  std::function<void(Value)> need = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == body) {
      if (!llvm::is_contained(args, arg.getArgNumber()))
        args.push_back(arg.getArgNumber());
      return;
    }
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body) {
      outside.insert(v);
      return;
    }
    if (needed.insert(def))
      for (Value o : def->getOperands())
        need(o);
  };
  for (tensor::ExtractOp extract : extracts) {
    needed.insert(extract);
    for (Value o : extract->getOperands())
      need(o);
  }
  llvm::sort(args);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (unsigned i : args) {
    inputs.push_back(reader.getDpsInputs()[i]);
    maps.push_back(reader.getMatchingIndexingMap(reader.getDpsInputOperand(i)));
  }
  maps.append(extracts.size(), id);
  // As early as those allow.
  Operation *after = nullptr;
  SmallVector<Value> read(inputs);
  read.append(outside.begin(), outside.end());
  for (Value v : read)
    if (Operation *def = v.getDefiningOp())
      if (Operation *at = block->findAncestorOpInBlock(*def);
          at && (!after || after->isBeforeInBlock(at)))
        after = at;
  OpBuilder b(loop);
  if (after)
    b.setInsertionPointAfter(after);
  else
    b.setInsertionPointToStart(block);
  SmallVector<Value> empties;
  SmallVector<Type> types;
  for (tensor::ExtractOp extract : extracts) {
    types.push_back(RankedTensorType::get(ranges, extract.getType()));
    empties.push_back(tensor::EmptyOp::create(b, loc, ranges, extract.getType()));
  }
  auto gather = linalg::GenericOp::create(
      b, loc, types, inputs, empties, maps,
      SmallVector<utils::IteratorType>(ranges.size(), utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange gathered) {
        IRMapping mapping;
        for (auto [k, i] : llvm::enumerate(args))
          mapping.map(body->getArgument(i), gathered[k]);
        for (Operation &op : body->without_terminator())
          if (needed.contains(&op))
            nb.clone(op, mapping);
        SmallVector<Value> picked;
        for (tensor::ExtractOp extract : extracts)
          picked.push_back(mapping.lookup(extract.getResult()));
        linalg::YieldOp::create(nb, nl, picked);
      });
  // The reader takes the picks as inputs after its own.
  unsigned first = reader.getNumDpsInputs();
  SmallVector<Value> newInputs = reader.getDpsInputs();
  newInputs.append(gather->result_begin(), gather->result_end());
  SmallVector<AffineMap> newMaps;
  for (OpOperand *in : reader.getDpsInputOperands())
    newMaps.push_back(reader.getMatchingIndexingMap(in));
  newMaps.append(extracts.size(), id);
  for (OpOperand &init : reader.getDpsInitsMutable())
    newMaps.push_back(reader.getMatchingIndexingMap(&init));
  OpBuilder rb(reader);
  auto made = linalg::GenericOp::create(rb, loc, reader->getResultTypes(), newInputs,
                                        reader.getDpsInits(), newMaps,
                                        reader.getIteratorTypesArray());
  made->setDiscardableAttrs(reader->getDiscardableAttrDictionary());
  made.getRegion().takeBody(reader.getRegion());
  Block *moved = made.getBody();
  for (unsigned i = 0; i < extracts.size(); ++i) {
    tensor::ExtractOp extract = extracts[i];
    BlockArgument arg = moved->insertArgument(first + i, extract.getType(), loc);
    extract.getResult().replaceAllUsesWith(arg);
    extract->erase();
  }
  reader->replaceAllUsesWith(made->getResults());
  reader->erase();
  return made;
}

/// The ops of `loop`'s block that read `x`'s buffer after `loop`: those
/// whose reads are picks to make before it (`gathered`), and the others,
/// with what they read that is made after `loop`, to move before it
/// (`moved`). False when one can do neither.
bool laterReaders(Value x, linalg::GenericOp loop, DominanceInfo &dominance,
                  llvm::SetVector<Operation *> &moved,
                  llvm::MapVector<Operation *, SmallVector<tensor::ExtractOp>> &gathered) {
  Block *block = loop->getBlock();
  llvm::SetVector<Value> shared = sharers(x);
  for (Value t : shared) {
    // An empty tensor holds nothing: its other users get buffers of their
    // own (sinter-split-empty-tensors).
    if (t.getDefiningOp<tensor::EmptyOp>())
      continue;
    for (Operation *user : t.getUsers()) {
      if (isView(user) && shared.contains(user->getResult(0)))
        continue;
      Operation *at = block->findAncestorOpInBlock(*user);
      if (!at)
        return false;
      if (at == loop.getOperation() || at->isBeforeInBlock(loop) || gathered.count(at))
        continue;
      SmallVector<tensor::ExtractOp> picks = gathers(at, shared, loop, dominance);
      if (!picks.empty()) {
        gathered[at] = picks;
        continue;
      }
      if (!movable(at, loop, dominance, moved))
        return false;
    }
  }
  return true;
}

struct WriteOverDeadInputs : impl::WriteOverDeadInputsBase<WriteOverDeadInputs> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> loops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureTensorSemantics() && op.getNumResults() == 1 &&
          op.getNumLoops() == op.getNumParallelLoops() &&
          !op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)) &&
          isFresh(op.getDpsInits()[0]))
        loops.push_back(op);
    });
    for (size_t next = 0; next < loops.size(); ++next) {
      linalg::GenericOp loop = loops[next];
      DominanceInfo dominance(loop->getParentOp());
      OpOperand *init = loop.getDpsInitOperand(0);
      AffineMap written = loop.getMatchingIndexingMap(init);
      if (!written.isPermutation())
        continue;
      for (OpOperand *input : loop.getDpsInputOperands()) {
        Value x = input->get();
        llvm::SetVector<Operation *> readers;
        llvm::MapVector<Operation *, SmallVector<tensor::ExtractOp>> gathered;
        if (x.getType() != init->get().getType() ||
            loop.getMatchingIndexingMap(input) != written || !x.getDefiningOp() ||
            !isFresh(x) || !laterReaders(x, loop, dominance, readers, gathered) ||
            llvm::any_of(readers, [&](Operation *op) { return gathered.count(op); }))
          continue;
        for (auto &[reader, picks] : gathered) {
          // A later candidate that is this reader is its new self.
          auto old = cast<linalg::GenericOp>(reader);
          linalg::GenericOp made = gatherBefore(old, picks, loop);
          std::replace(loops.begin() + next + 1, loops.end(), old, made);
        }
        // In their order, so that one that reads another stays after it.
        SmallVector<Operation *> ordered(readers.begin(), readers.end());
        llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
        for (Operation *reader : ordered)
          reader->moveBefore(loop);
        init->set(x);
        break;
      }
    }
  }
};

} // namespace
} // namespace sinter
