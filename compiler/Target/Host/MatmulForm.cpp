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

std::optional<MatmulForm> matmulFormOf(linalg::MatmulOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      if (maps == matmulMaps(op.getContext(), {ta, tb}))
        return MatmulForm{ta, tb};
  return std::nullopt;
}

} // namespace sinter::host
