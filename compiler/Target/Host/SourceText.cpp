//===- SourceText.cpp - An op's .sn position as text ----------------------===//

#include "compiler/Target/Host/SourceText.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

using namespace mlir;

namespace sinter::host {

std::string sourceOf(Location loc) {
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return sourceOf(call.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    return fused.getLocations().empty() ? "" : sourceOf(fused.getLocations()[0]);
  if (auto name = dyn_cast<NameLoc>(loc))
    return sourceOf(name.getChildLoc());
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().str() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  return "";
}

/// The outermost caller's position in `loc`, or "" when it is no call.
static std::string outermostCaller(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc))
    return fused.getLocations().empty() ? "" : outermostCaller(fused.getLocations()[0]);
  if (auto name = dyn_cast<NameLoc>(loc))
    return outermostCaller(name.getChildLoc());
  auto call = dyn_cast<CallSiteLoc>(loc);
  if (!call)
    return "";
  Location caller = call.getCaller();
  while (auto outer = dyn_cast<CallSiteLoc>(caller))
    caller = outer.getCaller();
  return sourceOf(caller);
}

std::string sourceWithCaller(Location loc) {
  std::string text = sourceOf(loc), caller = outermostCaller(loc);
  if (!caller.empty() && caller != text)
    text += ", called at " + caller;
  return text;
}

} // namespace sinter::host
