//===- SinterAttrs.h - Named accessors of the sinter.* attributes -*- C++ -*-===//
//
// Every sinter.* attribute is declared once, in SinterAttrs.def, and read and
// written through the accessor of that name:
//
//   attrs::phase.get(func)              // StringAttr, or null
//   attrs::gradient.getResult(func, i)
//   attrs::param.named(nameAttr)        // a NamedAttribute to attach
//
// The sinter dialect (SinterDialect.h) verifies each one's class and place.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_SINTER_IR_SINTERATTRS_H
#define SINTER_SINTER_IR_SINTERATTRS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace sinter::attrs {

/// Where an attribute may sit (a bit mask).
enum Place : unsigned {
  Module = 1,
  Function = 2,
  Argument = 4,
  Result = 8,
  Operation = 16,
};

/// The accessor of one attribute: its name and class.
template <typename AttrT> class Owned {
public:
  constexpr Owned(llvm::StringLiteral name, unsigned places)
      : fullName(name), allowed(places) {}

  constexpr llvm::StringLiteral name() const { return fullName; }
  constexpr unsigned places() const { return allowed; }
  mlir::StringAttr nameAttr(mlir::MLIRContext *context) const {
    return mlir::StringAttr::get(context, fullName);
  }

  // On an operation (module, function or other).
  AttrT get(mlir::Operation *op) const { return op->getAttrOfType<AttrT>(fullName); }
  bool has(mlir::Operation *op) const { return bool(get(op)); }
  void set(mlir::Operation *op, AttrT value) const { op->setAttr(fullName, value); }

  // On a function's argument or result.
  AttrT getArg(mlir::FunctionOpInterface f, unsigned i) const {
    return f.getArgAttrOfType<AttrT>(i, fullName);
  }
  AttrT getResult(mlir::FunctionOpInterface f, unsigned i) const {
    return f.getResultAttrOfType<AttrT>(i, fullName);
  }
  void setArg(mlir::FunctionOpInterface f, unsigned i, AttrT value) const {
    f.setArgAttr(i, fullName, value);
  }
  void setResult(mlir::FunctionOpInterface f, unsigned i, AttrT value) const {
    f.setResultAttr(i, fullName, value);
  }
  /// In an attribute dictionary (an argument's or result's; may be null).
  AttrT in(mlir::DictionaryAttr dict) const {
    return dict ? dict.getAs<AttrT>(fullName) : AttrT();
  }

  /// The attribute with `value`, to attach with others.
  mlir::NamedAttribute named(AttrT value) const {
    return mlir::NamedAttribute(nameAttr(value.getContext()), value);
  }

private:
  llvm::StringLiteral fullName;
  unsigned allowed;
};

using mlir::ArrayAttr;
using mlir::DenseF64ArrayAttr;
using mlir::DenseI64ArrayAttr;
using mlir::FloatAttr;
using mlir::IntegerAttr;
using mlir::StringAttr;
using mlir::UnitAttr;

#define SINTER_ATTR(ACCESSOR, NAME, CLASS, PLACES)                            \
  inline constexpr Owned<CLASS> ACCESSOR{"sinter." NAME, PLACES};
#include "dialects/Sinter/IR/SinterAttrs.def"

/// Whether the attention `op` (graph.attention or graph.attention_grad)
/// runs whole in its device's library, static shapes only: on CUDA, with
/// compute: BF16 cuDNN's fused attention (bf16 inputs, head sizes a multiple
/// of 8 up to 128), in f32 Sinter's own fused kernels (self-attention's one
/// length, one head size, 32 or 64).
bool fusesAttention(mlir::Operation *op);

/// The element type `op`'s fused attention takes: bf16 with compute: BF16,
/// f32 otherwise.
mlir::Type fusedAttentionType(mlir::Operation *op);

/// Whether the device of `op`'s module normalizes a batch whole in its
/// library (cuDNN's batch-norm, on CUDA), so the graph fuses batch-norm.
bool fusesBatchNorm(mlir::Operation *op);

} // namespace sinter::attrs

#endif // SINTER_SINTER_IR_SINTERATTRS_H
