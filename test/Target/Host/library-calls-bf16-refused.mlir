// RUN: sinter-opt %s -sinter-library-calls -verify-diagnostics

// A bf16 result the library cannot write in place (the CPU's takes dense
// buffers only) is refused: as loops it would be summed in bf16.
func.func @bf16_result_refused(%a: memref<6x4xbf16>, %b: memref<4x5xbf16>, %wc: memref<6x8xbf16>) {
  %c = memref.subview %wc[0, 0] [6, 5] [1, 1] : memref<6x8xbf16> to memref<6x5xbf16, strided<[8, 1]>>
  // expected-error @+1 {{internal error: a matmul with a bf16 result that the library cannot take in place}}
  linalg.matmul ins(%a, %b : memref<6x4xbf16>, memref<4x5xbf16>) outs(%c : memref<6x5xbf16, strided<[8, 1]>>)
  return
}
