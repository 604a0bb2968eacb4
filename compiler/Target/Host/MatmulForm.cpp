//===- MatmulForm.cpp - The matmuls the libraries take --------------------===//

#include "compiler/Target/Host/MatmulForm.h"

using namespace mlir;

namespace sinter::host {

SmallVector<AffineMap> matmulMaps(MLIRContext *ctx, MatmulForm f) {
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  return {AffineMap::get(3, 0, f.transposedA ? ArrayRef<AffineExpr>{k, m}
                                             : ArrayRef<AffineExpr>{m, k}, ctx),
          AffineMap::get(3, 0, f.transposedB ? ArrayRef<AffineExpr>{n, k}
                                             : ArrayRef<AffineExpr>{k, n}, ctx),
          AffineMap::get(3, 0, {m, n}, ctx)};
}

/// The form whose maps (`mapsOf`) `op` has, if any.
template <typename MapsOf>
std::optional<MatmulForm> formAmong(linalg::LinalgOp op, MapsOf mapsOf) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      if (maps == mapsOf(op->getContext(), MatmulForm{ta, tb}))
        return MatmulForm{ta, tb};
  return std::nullopt;
}

std::optional<MatmulForm> matmulFormOf(linalg::MatmulOp op) {
  return formAmong(op, matmulMaps);
}

SmallVector<AffineMap> batchMatmulMaps(MLIRContext *ctx, MatmulForm f) {
  AffineExpr b = getAffineDimExpr(0, ctx), m = getAffineDimExpr(1, ctx),
             n = getAffineDimExpr(2, ctx), k = getAffineDimExpr(3, ctx);
  return {AffineMap::get(4, 0, f.transposedA ? ArrayRef<AffineExpr>{b, k, m}
                                             : ArrayRef<AffineExpr>{b, m, k}, ctx),
          AffineMap::get(4, 0, f.transposedB ? ArrayRef<AffineExpr>{b, n, k}
                                             : ArrayRef<AffineExpr>{b, k, n}, ctx),
          AffineMap::get(4, 0, {b, m, n}, ctx)};
}

std::optional<MatmulForm> batchMatmulFormOf(linalg::BatchMatmulOp op) {
  return formAmong(op, batchMatmulMaps);
}

} // namespace sinter::host
