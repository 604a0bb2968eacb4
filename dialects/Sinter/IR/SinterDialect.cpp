//===- SinterDialect.cpp - Verifying the sinter.* attributes --------------===//

#include "dialects/Sinter/IR/SinterDialect.h"
#include "dialects/Sinter/IR/SinterAttrs.h"
#include "runtime/contract/AbiNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/LLVMTranslationInterface.h"

using namespace mlir;

#include "dialects/Sinter/IR/SinterDialect.cpp.inc"

namespace sinter {
namespace {

/// One verifier rule per line of SinterAttrs.def.
struct Rule {
  llvm::StringLiteral name;
  unsigned places;
  bool (*hasClass)(Attribute);
  llvm::StringLiteral className;
};

template <typename AttrT> bool isA(Attribute a) { return isa<AttrT>(a); }

constexpr Rule kRules[] = {
#define SINTER_ATTR(ACCESSOR, NAME, CLASS, PLACES)                            \
  {attrs::ACCESSOR.name(), attrs::ACCESSOR.places(), &isA<attrs::CLASS>,      \
   #CLASS},
#include "dialects/Sinter/IR/SinterAttrs.def"
};

const char *placeName(unsigned place) {
  switch (place) {
  case attrs::Module:
    return "a module";
  case attrs::Function:
    return "a function";
  case attrs::Argument:
    return "a function argument";
  case attrs::Result:
    return "a function result";
  default:
    return "an operation";
  }
}

LogicalResult verifyAttr(Operation *op, NamedAttribute attr, unsigned place) {
  StringRef name = attr.getName().getValue();
  const Rule *rule = llvm::find_if(kRules, [&](const Rule &r) { return r.name == name; });
  if (rule == std::end(kRules))
    return op->emitOpError("has unknown attribute '") << name << "'";
  if (!(rule->places & place))
    return op->emitOpError("'") << name << "' does not belong on " << placeName(place);
  if (!rule->hasClass(attr.getValue()))
    return op->emitOpError("'") << name << "' must be " << rule->className
                                << ", not " << attr.getValue();
  return success();
}

} // namespace

void SinterDialect::initialize() {}

LogicalResult SinterDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  unsigned place = isa<ModuleOp>(op)                ? attrs::Module
                   : isa<FunctionOpInterface>(op)   ? attrs::Function
                                                    : attrs::Operation;
  return verifyAttr(op, attr, place);
}

LogicalResult SinterDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                      unsigned,
                                                      NamedAttribute attr) {
  return verifyAttr(op, attr, attrs::Argument);
}

LogicalResult SinterDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                         unsigned,
                                                         NamedAttribute attr) {
  return verifyAttr(op, attr, attrs::Result);
}

/// Loads the sinter dialect with `HostT`: an attribute's name alone does not
/// load its dialect, and one not loaded is not asked to verify.
template <typename HostT>
struct LoadWith : DialectExtension<LoadWith<HostT>, HostT> {
  void apply(MLIRContext *context, HostT *) const override {
    context->getOrLoadDialect<SinterDialect>();
  }
};

/// What the attributes say reaches the program through its plan; none of them
/// becomes LLVM IR (without this interface the translation warns about each).
struct NothingToTranslate : public LLVMTranslationDialectInterface {
  using LLVMTranslationDialectInterface::LLVMTranslationDialectInterface;
};

void registerSinterDialect(DialectRegistry &registry) {
  registry.insert<SinterDialect>();
  registry.addExtension(+[](MLIRContext *, SinterDialect *dialect) {
    dialect->addInterfaces<NothingToTranslate>();
  });
  registry.addExtensions<LoadWith<func::FuncDialect>, LoadWith<LLVM::LLVMDialect>>();
}

} // namespace sinter

bool sinter::attrs::fusesBatchNorm(mlir::Operation *op) {
  auto module = op->getParentOfType<mlir::ModuleOp>();
  StringAttr device = module ? attrs::device.get(module) : StringAttr();
  return device && device.getValue() == "cuda";
}

mlir::Type sinter::attrs::fusedAttentionType(mlir::Operation *op) {
  auto module = op->getParentOfType<mlir::ModuleOp>();
  StringAttr compute = module ? attrs::compute.get(module) : StringAttr();
  mlir::Builder b(op->getContext());
  return compute && compute.getValue() == "bf16" ? mlir::Type(b.getBF16Type())
                                                 : mlir::Type(b.getF32Type());
}

bool sinter::attrs::fusesAttention(mlir::Operation *op) {
  auto module = op->getParentOfType<mlir::ModuleOp>();
  StringAttr device = module ? attrs::device.get(module) : StringAttr();
  if (!device || device.getValue() != "cuda" || op->getNumOperands() < 3)
    return false;
  bool bf16 = fusedAttentionType(op).isBF16();
  // Query, key and value are the first three operands.
  SmallVector<mlir::RankedTensorType, 3> qkv;
  for (mlir::Value v : op->getOperands().take_front(3)) {
    auto type = llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape() || type.getRank() < 2)
      return false;
    qkv.push_back(type);
  }
  auto rows = [&](unsigned i) { return qkv[i].getShape()[qkv[i].getRank() - 2]; };
  auto head = [&](unsigned i) { return qkv[i].getShape().back(); };
  if (bf16) {
    // cuDNN's: head sizes a multiple of 8 up to 128, not one query against
    // one key (its backward pass refuses that).
    if (rows(0) == 1 && rows(1) == 1)
      return false;
    return llvm::all_of(llvm::seq(0u, 3u),
                        [&](unsigned i) { return head(i) % 8 == 0 && head(i) <= 128; });
  }
  // Sinter's own f32 kernels: self-attention's one length and one head size,
  // of the sizes they are built for.
  return llvm::all_of(qkv, [](mlir::RankedTensorType t) { return t.getElementType().isF32(); }) &&
         rows(0) == rows(1) && head(0) == head(1) && head(1) == head(2) &&
         abi::cudaAttentionF32Takes(head(0));
}
