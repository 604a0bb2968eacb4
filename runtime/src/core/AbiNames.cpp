//===- AbiNames.cpp - abi.h declares every name of the list -------------===//
//
// Nothing here runs: it does not compile if abi_names.def names a symbol
// abi.h does not declare (a renamed entry point), on the runtime's side as
// AbiNames.h makes it on the compiler's.
//
//===----------------------------------------------------------------------===//

#include "runtime/contract/abi.h"

#define SINTER_ABI_DATA(name) static_assert(sizeof(&name) > 0, #name);
#define SINTER_ABI_FUNCTION(name) static_assert(sizeof(&name) > 0, #name);
#define SINTER_ABI_LIBRARY(device, op)                                         \
  static_assert(sizeof(&sinter_##device##_##op) > 0, #device "_" #op);
#include "runtime/contract/abi_names.def"
