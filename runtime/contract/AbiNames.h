//===- AbiNames.h - abi.h's symbols as the compiler spells them -*- C++ -*-===//
//
// Each name of abi_names.def as a constant of the same name in
// sinter::abi (abi::sinter_rt_rank is "sinter_rt_rank"), and the library
// calls by device and op. Generated code calls and defines these names
// only: a renamed entry point is a compile error on both sides.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_CONTRACT_ABINAMES_H
#define SINTER_CONTRACT_ABINAMES_H

#include <string_view>

namespace sinter::abi {

#define SINTER_ABI_DATA(name) inline constexpr const char name[] = #name;
#define SINTER_ABI_FUNCTION(name) inline constexpr const char name[] = #name;
#define SINTER_ABI_LIBRARY(device, op)                                         \
  inline constexpr const char sinter_##device##_##op[] = "sinter_" #device "_" #op;
#include "runtime/contract/abi_names.def"

/// A device's library call (abi_names.def's SINTER_ABI_LIBRARY).
struct LibraryCall {
  std::string_view device, op, name;
};
inline constexpr LibraryCall kLibraryCalls[] = {
#define SINTER_ABI_LIBRARY(device, op) {#device, #op, sinter_##device##_##op},
#include "runtime/contract/abi_names.def"
};

/// The name of library call `op` ("matmul_f32") on `device` ("cpu",
/// "cuda"), or empty when that device has none.
constexpr std::string_view libraryCall(std::string_view device, std::string_view op) {
  for (const LibraryCall &c : kLibraryCalls)
    if (c.device == device && c.op == op)
      return c.name;
  return {};
}

/// Whether `name` is one of `device`'s library calls.
constexpr bool isLibraryCall(std::string_view device, std::string_view name) {
  for (const LibraryCall &c : kLibraryCalls)
    if (c.device == device && c.name == name)
      return true;
  return false;
}

/// The head sizes sinter_cuda_attention_qkv_f32 and its backward call take
/// (the runtime's own kernels are built for these).
constexpr bool cudaAttentionF32Takes(long long headSize) {
  return headSize == 32 || headSize == 64;
}

} // namespace sinter::abi

#endif // SINTER_CONTRACT_ABINAMES_H
