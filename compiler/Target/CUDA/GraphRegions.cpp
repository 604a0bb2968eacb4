//===- GraphRegions.cpp - Runs of device work the runtime may replay ------===//
//
// A step queues hundreds of kernels and library calls, and between them the
// host does little: it loads a micro-batch, reads a loss, asks for a
// learning rate. Each stretch of device work with no host work inside is
// marked as a region: the runtime captures it in a CUDA graph once it has
// seen it run, and from then on launches the graph instead of each kernel.
//
// What the host computes inside a region (views, pointers, casts) is pure,
// so the region's work is a function of what flows in: its signature. The
// runtime replays a graph only for the signature it was captured with, so
// a region that takes a per-step value (a learning rate, a step count, a
// random key) simply runs direct.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/ArgumentSlots.h"
#include "compiler/Target/CUDA/Passes.h"
#include "compiler/Target/Host/CallBuilder.h"
#include "runtime/contract/AbiNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDAGRAPHREGIONS
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

/// A region replaces at least this many launches and library calls with
/// one graph launch; fewer gain nothing worth a graph.
constexpr int64_t kLeastWork = 2;

/// What an op is to a region.
enum class Role {
  Host,   ///< ends a region: the host waits, decides or talks to the runtime
  Pure,   ///< host arithmetic on the region's inputs (views, pointers, casts)
  Device, ///< queues device work: a launch, a library call
};

/// The runtime's calls that queue a library's device work and nothing else.
bool isLibraryCall(StringRef callee) { return abi::isLibraryCall("cuda", callee); }

class Roles {
public:
  explicit Roles(ModuleOp module) : module(module) {}

  Role of(Operation *op) {
    if (isa<gpu::LaunchFuncOp>(op))
      return Role::Device;
    if (auto call = dyn_cast<func::CallOp>(op)) {
      StringRef callee = call.getCallee();
      if (isLibraryCall(callee))
        return Role::Device;
      // The site a library call's failure names: host bookkeeping only.
      if (callee == abi::sinter_rt_library_site)
        return Role::Pure;
      auto f = module.lookupSymbol<func::FuncOp>(callee);
      return f && onlyDeviceWork(f) ? Role::Device : Role::Host;
    }
    if (op->getNumRegions() == 0 && !op->hasTrait<OpTrait::IsTerminator>() &&
        isMemoryEffectFree(op))
      return Role::Pure;
    return Role::Host;
  }

  /// Whether `f` is private and its body queues device work and does
  /// nothing else on the host: a call of it belongs in its caller's region.
  /// (A public function is a step the runtime calls: its own regions.)
  bool onlyDeviceWork(func::FuncOp f) {
    if (f.isExternal() || !f.isPrivate())
      return false;
    auto [it, inserted] = whole.try_emplace(f, false); // false while visited
    if (!inserted)
      return it->second;
    bool device = f.getBody().hasOneBlock(), any = false;
    for (Operation &op : f.getBody().front().without_terminator()) {
      Role role = of(&op);
      device &= role != Role::Host;
      any |= role == Role::Device;
    }
    whole[f] = device && any;
    return whole[f];
  }

private:
  ModuleOp module;
  DenseMap<Operation *, bool> whole;
};

/// One region: the ops from `first` to `last` of one block.
struct Run {
  Operation *first = nullptr, *last = nullptr;
  int64_t work = 0;
};

/// The ops of `run`, in order.
SmallVector<Operation *> opsOf(const Run &run) {
  SmallVector<Operation *> ops;
  for (Operation *op = run.first;; op = op->getNextNode()) {
    ops.push_back(op);
    if (op == run.last)
      return ops;
  }
}

/// Whether a value of this type is settled by its slot: a scalar, or a
/// buffer whose extent and strides are static (its pointer says the rest).
bool fitsSlot(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  if (isa<LLVM::LLVMPointerType>(t))
    return true;
  if (!m)
    return t.isIndex() || (t.isIntOrFloat() && t.getIntOrFloatBitWidth() <= 64);
  int64_t offset;
  SmallVector<int64_t> strides;
  return m.hasStaticShape() && succeeded(m.getStridesAndOffset(strides, offset)) &&
         !ShapedType::isDynamic(offset) && !llvm::any_of(strides, ShapedType::isDynamic);
}

/// Whether `v` is the same in every run: a constant, a null pointer.
bool isFixed(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         isMemoryEffectFree(def);
}

/// What flows into the run from outside it, constants aside, in the order
/// of first use: the values its signature holds. Fails when one cannot be
/// a slot (the run then stays direct).
FailureOr<SmallVector<Value>> inputsOf(const Run &run) {
  SmallVector<Operation *> ops = opsOf(run);
  llvm::SmallPtrSet<Operation *, 32> inside(ops.begin(), ops.end());
  llvm::SetVector<Value> inputs;
  for (Operation *op : ops)
    for (Value v : op->getOperands()) {
      if (inside.contains(v.getDefiningOp()) || isFixed(v))
        continue;
      if (!fitsSlot(v.getType()))
        return failure();
      inputs.insert(v);
    }
  return SmallVector<Value>(inputs.begin(), inputs.end());
}

class RegionMarker {
public:
  explicit RegionMarker(ModuleOp module) : module(module), roles(module) {}

  LogicalResult markFunction(func::FuncOp f) {
    // A function of device work only is in its callers' regions.
    if (f.isExternal() || roles.onlyDeviceWork(f))
      return success();
    SmallVector<Block *> blocks;
    f.walk<WalkOrder::PreOrder>([&](Block *b) { blocks.push_back(b); });
    SmallVector<Run> runs;
    for (Block *b : blocks)
      collectRuns(*b, runs);
    SmallVector<std::pair<Run, SmallVector<Value>>> regions;
    int64_t longest = 0;
    for (const Run &run : runs) {
      FailureOr<SmallVector<Value>> inputs = inputsOf(run);
      if (failed(inputs))
        continue;
      longest = std::max<int64_t>(longest, inputs->size());
      regions.push_back({run, std::move(*inputs)});
    }
    if (regions.empty())
      return success();
    Value signature = slotArray(f, longest);
    for (auto &[run, inputs] : regions)
      if (failed(mark(run, inputs, signature)))
        return failure();
    return success();
  }

private:
  /// The block's maximal runs of device work with no host op between: each
  /// from the first op after a host op (the pointers and views its calls
  /// take are computed inside) to its last device op.
  void collectRuns(Block &block, SmallVectorImpl<Run> &runs) {
    Run current;
    auto close = [&] {
      if (current.work >= kLeastWork)
        runs.push_back(current);
      current = Run();
    };
    for (Operation &op : block) {
      Role role = roles.of(&op);
      if (role == Role::Host) {
        close();
        continue;
      }
      if (!current.first)
        current.first = &op;
      if (role == Role::Device) {
        current.last = &op;
        // A call of a function of device work counts as a whole region.
        auto call = dyn_cast<func::CallOp>(op);
        current.work += call && !isLibraryCall(call.getCallee()) ? kLeastWork : 1;
      }
    }
    close();
  }

  /// Brackets the run with the runtime's graph calls, its signature
  /// stored in `signature` first.
  LogicalResult mark(const Run &run, ArrayRef<Value> inputs, Value signature) {
    int64_t id = nextRegion++;
    host::CallBuilder cb(module, run.first);
    OpBuilder &b = cb.builder();
    Location loc = run.first->getLoc();
    for (auto [i, v] : llvm::enumerate(inputs)) {
      FailureOr<Value> slot = asSlot(b, loc, v);
      if (failed(slot))
        return run.first->emitError("internal error: a graph region's input of type ")
               << v.getType();
      memref::StoreOp::create(b, loc, *slot, signature,
                              ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
    }
    cb.call(loc, abi::sinter_cuda_graph_begin,
            {cb.constant(loc, id), cb.pointer(signature),
             cb.constant(loc, int64_t(inputs.size()))});
    host::CallBuilder after(module, run.last->getNextNode());
    after.call(run.last->getLoc(), abi::sinter_cuda_graph_end,
               {after.constant(run.last->getLoc(), id)});
    return success();
  }

  ModuleOp module;
  Roles roles;
  int64_t nextRegion = 0;
};

struct CUDAGraphRegions : public impl::CUDAGraphRegionsBase<CUDAGraphRegions> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    RegionMarker marker(module);
    for (auto f : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (failed(marker.markFunction(f)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace sinter::cuda
