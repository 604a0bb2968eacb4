//===- BufferAccesses.cpp - Which buffers an op touches, and overlaps ------===//

#include "compiler/Target/CUDA/BufferAccesses.h"

#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace sinter::cuda {
namespace {

/// Where a buffer's bytes lie: the allocation or argument it is a view of,
/// and, when its layout and the views' offsets are constants, its bytes'
/// range from that root's start.
struct Extent {
  Value root;
  std::optional<std::pair<int64_t, int64_t>> bytes;
  /// Bytes from the root to the view's base, when the views' shifts are
  /// constants.
  std::optional<int64_t> shift;
};

/// The range of elements `type` spans from its base, [offset, offset + span).
std::optional<std::pair<int64_t, int64_t>> elementRange(MemRefType type) {
  if (!type.hasStaticShape())
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  int64_t last = 0;
  for (auto [size, stride] : llvm::zip(type.getShape(), strides)) {
    if (size == 0)
      return std::make_pair(offset, offset);
    last += (size - 1) * stride;
  }
  return std::make_pair(offset, offset + last + 1);
}

Extent extentOf(Value v) {
  auto type = cast<MemRefType>(v.getType());
  std::optional<std::pair<int64_t, int64_t>> elements = elementRange(type);
  unsigned bits =
      type.getElementType().isIntOrFloat() ? type.getElementTypeBitWidth() : 0;
  bool known = elements && bits != 0 && bits % 8 == 0;
  bool shiftKnown = true;
  int64_t shift = 0;
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      std::optional<int64_t> at = getConstantIntValue(view.getByteShift());
      known &= at.has_value() && view.getSizes().empty();
      shiftKnown &= at.has_value() && view.getSizes().empty();
      shift += at.value_or(0);
      v = view.getSource();
      continue;
    }
    // Views that keep their source's base pointer: the result's layout
    // offset counts from it.
    if (!isa<memref::SubViewOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
             memref::CastOp, memref::ReinterpretCastOp>(def))
      break;
    v = cast<ViewLikeOpInterface>(def).getViewSource();
  }
  Extent e{v, std::nullopt, shiftKnown ? std::optional<int64_t>(shift) : std::nullopt};
  if (known)
    e.bytes = {shift + elements->first * int64_t(bits / 8),
               shift + elements->second * int64_t(bits / 8)};
  return e;
}

bool isAllocation(Value root) {
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(root.getDefiningOp());
}

/// The function whose entry block `v` is an argument of, if any.
func::FuncOp argumentOf(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || !arg.getOwner()->isEntryBlock())
    return {};
  return dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
}

/// Whether `root` is a buffer of its own: an allocation, or an argument of
/// a function.
bool isBase(Value root) { return isAllocation(root) || argumentOf(root); }

bool isWorkspace(Value root) {
  func::FuncOp function = argumentOf(root);
  return function &&
         attrs::workspace.getArg(function, cast<BlockArgument>(root).getArgNumber());
}

} // namespace

bool BufferOverlaps::isWrittenArgument(Value root) {
  func::FuncOp function = argumentOf(root);
  if (!function)
    return false;
  if (auto known = written.find(function); known != written.end())
    return known->second.contains(root);
  // Nothing is known written while the callers are asked (they may ask
  // about their own arguments, and so about this function again).
  written[function] = {};
  SmallVector<Value> args;
  function.walk([&](Operation *op) {
    auto mark = [&](Value buffer) {
      Value base = extentOf(buffer).root;
      if (argumentOf(base) == function && !llvm::is_contained(args, base))
        args.push_back(base);
    };
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
        linalgOp && linalgOp.hasPureBufferSemantics())
      llvm::for_each(linalgOp.getDpsInits(), mark);
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      mark(store.getMemRef());
  });
  // A private function's callers are here to ask: each call must give
  // every written argument bytes no other argument has. (A public one is
  // called by the runtime, which allocates each buffer apart.)
  DenseSet<Value> confirmed;
  for (Value arg : args)
    if (!function.isPrivate() ||
        givenOwnBytes(function, cast<BlockArgument>(arg).getArgNumber()))
      confirmed.insert(arg);
  bool answer = confirmed.contains(root);
  written[function] = std::move(confirmed);
  return answer;
}

bool BufferOverlaps::givenOwnBytes(func::FuncOp function, unsigned argument) {
  auto module = function->getParentOfType<ModuleOp>();
  std::optional<SymbolTable::UseRange> uses = function.getSymbolUses(module);
  if (!uses)
    return false;
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    if (!call)
      return false;
    Value mine = call.getOperand(argument);
    for (auto [i, other] : llvm::enumerate(call.getOperands()))
      if (i != argument && isa<MemRefType>(other.getType()) && !disjoint(mine, other))
        return false;
  }
  return true;
}

/// Whether views `a` and `b` of one buffer, laid out alike (the same
/// shape and strides) at `x` and `y` bytes from its start, interleave
/// without meeting: each fills the same run of contiguous elements in
/// every row of R elements, at positions within the row that do not meet
/// (the query, key and value columns of one [tokens, 3 x features] buffer).
bool interleaveApart(Value a, Value b, int64_t x, int64_t y) {
  auto ta = cast<MemRefType>(a.getType()), tb = cast<MemRefType>(b.getType());
  SmallVector<int64_t> sa, sb;
  int64_t oa = 0, ob = 0;
  if (ta.getShape() != tb.getShape() || ta.getElementType() != tb.getElementType() ||
      !ta.hasStaticShape() || failed(ta.getStridesAndOffset(sa, oa)) ||
      failed(tb.getStridesAndOffset(sb, ob)) || sa != sb || ShapedType::isDynamic(oa) ||
      ShapedType::isDynamic(ob) || llvm::any_of(sa, ShapedType::isDynamic) ||
      !ta.getElementType().isIntOrFloat() || ta.getElementTypeBitWidth() % 8 != 0)
    return false;
  int64_t bytes = ta.getElementTypeBitWidth() / 8;
  if (x % bytes != 0 || y % bytes != 0)
    return false;
  // The contiguous run: innermost dimensions, each stride the run so far.
  ArrayRef<int64_t> shape = ta.getShape();
  int64_t run = 1, d = int64_t(shape.size()) - 1;
  for (; d >= 0 && sa[d] == run; --d)
    run *= shape[d];
  if (d < 0)
    return false; // all contiguous: the byte ranges decide
  int64_t row = sa[d];
  if (row <= 0)
    return false;
  for (int64_t k = 0; k <= d; ++k)
    if (shape[k] != 1 && sa[k] % row != 0)
      return false;
  int64_t pa = (x / bytes + oa) % row, pb = (y / bytes + ob) % row;
  return run <= row && pa + run <= row && pb + run <= row &&
         (pa + run <= pb || pb + run <= pa);
}

bool BufferOverlaps::disjoint(Value a, Value b) {
  Extent x = extentOf(a), y = extentOf(b);
  if (x.root != y.root) {
    // A walk that stopped elsewhere (a loop's carried buffer, a select)
    // knows nothing of where its buffer lies.
    if (!isBase(x.root) || !isBase(y.root))
      return false;
    return isAllocation(x.root) || isAllocation(y.root) || isWorkspace(x.root) ||
           isWorkspace(y.root) ||
           (argumentOf(x.root) == argumentOf(y.root) &&
            (isWrittenArgument(x.root) || isWrittenArgument(y.root)));
  }
  if (x.bytes && y.bytes &&
      (x.bytes->second <= y.bytes->first || y.bytes->second <= x.bytes->first))
    return true;
  return x.shift && y.shift && interleaveApart(a, b, *x.shift, *y.shift);
}

std::optional<Accesses> accessesOf(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (linalgOp ? !linalgOp.hasPureBufferSemantics() : !isa<scf::ParallelOp>(op))
    return std::nullopt;
  Accesses a;
  if (linalgOp) {
    for (Value v : linalgOp.getDpsInputs())
      if (isa<MemRefType>(v.getType()))
        a.reads.insert(v);
    for (Value v : linalgOp.getDpsInits()) {
      a.reads.insert(v);
      a.writes.insert(v);
    }
  }
  bool known = true;
  op->walk([&](Operation *inner) {
    if (inner == op)
      return;
    if (auto load = dyn_cast<memref::LoadOp>(inner))
      a.reads.insert(load.getMemRef());
    else if (auto store = dyn_cast<memref::StoreOp>(inner))
      a.writes.insert(store.getMemRef());
    else if (!isMemoryEffectFree(inner) && !inner->hasTrait<OpTrait::IsTerminator>())
      known = false;
  });
  if (!known)
    return std::nullopt;
  return a;
}

bool BufferOverlaps::independent(const Accesses &first, const Accesses &second) {
  auto misses = [&](const llvm::SetVector<Value> &writes, const Accesses &other) {
    return llvm::all_of(writes, [&](Value w) {
      return llvm::all_of(other.reads, [&](Value r) { return disjoint(w, r); }) &&
             llvm::all_of(other.writes, [&](Value o) { return disjoint(w, o); });
    });
  };
  return misses(first.writes, second) && misses(second.writes, first);
}

} // namespace sinter::cuda
