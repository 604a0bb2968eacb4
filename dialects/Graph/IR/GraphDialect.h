//===- GraphDialect.h - The Sinter graph dialect ----------------*- C++ -*-===//
#ifndef SINTER_GRAPH_GRAPHDIALECT_H
#define SINTER_GRAPH_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Graph/IR/GraphDialect.h.inc"

#endif // SINTER_GRAPH_GRAPHDIALECT_H
