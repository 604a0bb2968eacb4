//===- OutlineLoops.cpp - One function per loop nest ----------------------===//
//
// OpenMP outlining scans the function that holds a region, once per region;
// a step of hundreds of parallel loops made translation quadratic, and LLVM's
// loop passes were slow on one function of hundreds of loops. Each outermost
// loop nest moves into a function of its own, shared by equal nests (see
// Passes.td).
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace sinter::cpu {
#define GEN_PASS_DEF_CPUOUTLINELOOPS
#include "compiler/Target/CPU/Passes.h.inc"

namespace {

/// Whether the bare-pointer calling convention can pass a value of `type`.
bool passable(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return !memref || (memref.hasStaticShape() && memref.getLayout().isIdentity());
}

/// Builds the body of an outlined loop: values from outside are cloned when
/// a pure op computes them, and become arguments otherwise.
class LoopOutliner {
public:
  explicit LoopOutliner(Block &body) : body(body), builder(&body, body.end()) {}

  /// The value standing for `outer` inside the new function, or null when
  /// it cannot be passed. A buffer that can be passed is an argument, so
  /// that the same loop over another layer's buffers is the same function;
  /// constants, index arithmetic and strided views are cloned. Any other
  /// scalar is an argument: cloning the arithmetic that computes it (such
  /// as a gradient norm summed over every parameter) into each loop would
  /// grow with the model.
  Value materialize(Value outer) {
    if (Value inner = mapping.lookupOrNull(outer))
      return inner;
    Operation *def = outer.getDefiningOp();
    if (def && isClonable(def)) {
      for (Value operand : def->getOperands())
        if (!materialize(operand))
          return nullptr;
      builder.clone(*def, mapping);
      return mapping.lookup(outer);
    }
    if (!passable(outer.getType()))
      return nullptr;
    arguments.push_back(outer);
    Value inner = body.addArgument(outer.getType(), outer.getLoc());
    mapping.map(outer, inner);
    return inner;
  }

  static bool isClonable(Operation *def) {
    if (def->getNumRegions() != 0 || !isMemoryEffectFree(def))
      return false;
    if (def->hasTrait<OpTrait::ConstantLike>())
      return true;
    return llvm::all_of(def->getResultTypes(), [](Type type) {
      return isa<IndexType>(type) ||
             (isa<MemRefType>(type) && !passable(type));
    });
  }

  /// Clones `loop` after everything it uses from outside, and returns its
  /// results; false if some value cannot be passed.
  bool outline(Operation *loop) {
    SmallVector<Value> used(loop->getOperands());
    loop->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        Region *home = operand.getParentRegion();
        if (!loop->isProperAncestor(home->getParentOp()) &&
            home->getParentOp() != loop)
          used.push_back(operand);
      }
    });
    for (Value value : used)
      if (!materialize(value))
        return false;
    if (!llvm::all_of(loop->getResultTypes(), passable))
      return false;
    Operation *clone = builder.clone(*loop, mapping);
    func::ReturnOp::create(builder, loop->getLoc(), clone->getResults());
    return true;
  }

  /// The values the call passes, in the order of the new arguments.
  ArrayRef<Value> callArguments() const { return arguments; }

private:
  Block &body;
  OpBuilder builder;
  IRMapping mapping;
  SmallVector<Value> arguments;
};

/// A kernel or a block is called once per layer: inlined, it would make the
/// step one giant function again.
void markNoInline(func::FuncOp function) {
  function->setAttr("passthrough",
                    Builder(function.getContext()).getStrArrayAttr({"noinline"}));
}

/// The function's text; outlined functions are all named alike until one
/// is kept, so equal keys mean equal functions.
std::string structuralKey(func::FuncOp function) {
  std::string key;
  llvm::raw_string_ostream os(key);
  function->print(os, OpPrintingFlags().useLocalScope().assumeVerified());
  return key;
}

struct CPUOutlineLoops
    : public impl::CPUOutlineLoopsBase<CPUOutlineLoops> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    outlined.clear();
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions) {
      if (function.isExternal())
        continue;
      if (attrs::block.has(function))
        markNoInline(function);
      SmallVector<Operation *> loops;
      function.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!isLeafLoop(op))
          return WalkResult::advance();
        loops.push_back(op);
        return WalkResult::skip();
      });
      for (Operation *loop : loops)
        outline(function, loop, symbols);
    }
  }

  /// A parallel loop, or a sequential one that calls nothing (a loop
  /// around the steps' calls, such as the micro-batch loop, stays).
  static bool isLeafLoop(Operation *op) {
    if (isa<scf::ParallelOp>(op))
      return true;
    if (!isa<scf::ForOp>(op))
      return false;
    return !op->walk([](func::CallOp) { return WalkResult::interrupt(); })
                .wasInterrupted();
  }

  /// Moves `loop` into a new function, or calls an equal one made before
  /// (the same loop of another layer, or of the other step).
  void outline(func::FuncOp parent, Operation *loop, SymbolTable &symbols) {
    OpBuilder b(parent);
    b.setInsertionPointToEnd(parent->getParentOfType<ModuleOp>().getBody());
    auto function = func::FuncOp::create(b, loop->getLoc(), "outlined",
                                         b.getFunctionType({}, {}));
    function.setPrivate();
    markNoInline(function);
    Block *body = function.addEntryBlock();
    LoopOutliner outliner(*body);
    if (!outliner.outline(loop)) {
      function.erase();
      return;
    }
    SmallVector<Type> types;
    for (BlockArgument argument : body->getArguments())
      types.push_back(argument.getType());
    function.setFunctionType(b.getFunctionType(types, loop->getResultTypes()));
    auto [known, added] = outlined.try_emplace(structuralKey(function), function);
    if (!added) {
      function.erase();
      function = known->second;
    } else {
      // Unique name: <parent>_loop, <parent>_loop_1, ...
      function.setName((parent.getName() + "_loop").str());
      symbols.insert(function);
    }
    b.setInsertionPoint(loop);
    auto call = func::CallOp::create(b, loop->getLoc(), function,
                                     outliner.callArguments());
    loop->replaceAllUsesWith(call.getResults());
    loop->erase();
  }

  llvm::StringMap<func::FuncOp> outlined;
};

} // namespace
} // namespace sinter::cpu
