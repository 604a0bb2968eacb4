//===- SinterDialect.td - The owner of the sinter.* attributes -*- tablegen -*-===//
#ifndef SINTER_SINTER_DIALECT_TD
#define SINTER_SINTER_DIALECT_TD

include "mlir/IR/OpBase.td"

def Sinter_Dialect : Dialect {
  let name = "sinter";
  let cppNamespace = "::sinter";
  let summary = "The attributes that carry a step's contract through the pipeline";
  let description = [{
    The `sinter` dialect has no ops. It owns the discardable `sinter.*`
    attributes that mark what a step's arguments and results are (inputs,
    parameters, gradients, optimizer moments, ...), what sinterc recorded
    from the config, and what passes learned (the memory plan, the gradient
    buckets). They are listed once, in SinterAttrs.def; SinterAttrs.h gives
    each a named accessor, and the dialect verifies each one's class and
    where it sits. An unknown `sinter.*` name is an error.
  }];
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

#endif // SINTER_SINTER_DIALECT_TD
