//===- Passes.h - Passes over the graph dialect -----------------*- C++ -*-===//
#ifndef SINTER_GRAPH_TRANSFORMS_PASSES_H
#define SINTER_GRAPH_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace sinter::graph {

#define GEN_PASS_DECL
#include "dialects/Graph/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/Graph/Transforms/Passes.h.inc"

} // namespace sinter::graph

#endif // SINTER_GRAPH_TRANSFORMS_PASSES_H
