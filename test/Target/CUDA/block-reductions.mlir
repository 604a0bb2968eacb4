// RUN: sinter-opt %s -sinter-cuda-block-reductions -split-input-file | FileCheck %s

// A row sum over 300 elements (into f64, as the steps sum): one block of
// 256 threads per row. Each thread starts from 0 at its own element and
// strides by 256; the block's partials are summed by gpu.all_reduce and
// thread 0 adds the total to the output, as the generic would.
// CHECK-LABEL: func.func @row_sum(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: memref<6x300xf32>, %[[OUT:[a-z0-9]+]]: memref<6xf64>)
// CHECK:       gpu.launch blocks(%[[BID:[a-z0-9]+]], {{.*}}) in ({{.*}} = %c6{{.*}}) threads(%[[TID:[a-z0-9]+]], {{.*}}) in ({{.*}} = %c256
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[PART:.*]] = scf.for %[[K:.*]] = %[[TID]] to %c300{{.*}} step %c256{{.*}} iter_args(%[[P:.*]] = %[[ZERO]]) -> (f64)
// CHECK:           %[[V:.*]] = memref.load %[[X]][%[[BID]], %[[K]]]
// CHECK:           %[[W:.*]] = arith.extf %[[V]]
// CHECK:           %[[S:.*]] = arith.addf %[[P]], %[[W]]
// CHECK:           scf.yield %[[S]]
// CHECK:         %[[TOTAL:.*]] = gpu.all_reduce add %[[PART]] uniform
// CHECK:         %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0
// CHECK:         scf.if %[[FIRST]] {
// CHECK:           %[[OLD:.*]] = memref.load %[[OUT]][%[[BID]]]
// CHECK:           %[[NEW:.*]] = arith.addf %[[OLD]], %[[TOTAL]]
// CHECK:           memref.store %[[NEW]], %[[OUT]][%[[BID]]]
// CHECK-NOT:   linalg.generic
func.func @row_sum(%x: memref<6x300xf32>, %out: memref<6xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<6x300xf32>) outs(%out : memref<6xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %w = arith.extf %in : f32 to f64
    %s = arith.addf %acc, %w : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// Under 256 reduced elements, a warp per output; a maximum starts from
// -inf. The parallel loops are delinearized from the block index, the
// innermost fastest.
// CHECK-LABEL: func.func @row_max(
// CHECK:       gpu.launch blocks(%[[BID:[a-z0-9]+]], {{.*}}) in ({{.*}} = %c12{{.*}}) threads(%[[TID:[a-z0-9]+]], {{.*}}) in ({{.*}} = %c32
// CHECK:         %[[J:.*]] = arith.remui %[[BID]], %c3
// CHECK:         %[[I:.*]] = arith.divui %[[BID]], %c3
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         scf.for {{.*}} = %[[TID]] to %c64{{.*}} step %c32{{.*}} iter_args({{.*}} = %[[NEGINF]])
// CHECK:           memref.load %{{.*}}[%[[I]], %[[J]], %{{.*}}]
// CHECK:           arith.maximumf
// CHECK:         gpu.all_reduce maximumf
// CHECK:           memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK:           arith.maximumf
func.func @row_max(%x: memref<4x3x64xf32>, %out: memref<4x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<4x3x64xf32>) outs(%out : memref<4x3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Several reduced loops (a bias gradient over batch and time) are one
// flat range of 8 x 32 = 256 elements per output, delinearized in the
// thread's loop; the output and an input read by the parallel index alone
// (a row's mean) are loaded at it.
// CHECK-LABEL: func.func @column_sum(
// CHECK:       gpu.launch blocks(%[[BID:[a-z0-9]+]], {{.*}}) in ({{.*}} = %c64{{.*}}) threads({{.*}}) in ({{.*}} = %c256
// CHECK:         scf.for %[[K:.*]] = {{.*}} to %c256{{.*}} step %c256
// CHECK:           %[[T:.*]] = arith.remui %[[K]], %c32
// CHECK:           %[[B:.*]] = arith.divui %[[K]], %c32
// CHECK:           memref.load %{{.*}}[%[[B]], %[[T]], %[[BID]]] : memref<8x32x64xf32>
// CHECK:           memref.load %{{.*}}[%[[BID]]] : memref<64xf32>
// CHECK:         gpu.all_reduce add
func.func @column_sum(%x: memref<8x32x64xf32>, %mean: memref<64xf32>, %out: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0)>,
                                   affine_map<(d0, d1, d2) -> (d0)>],
                  iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x, %mean : memref<8x32x64xf32>, memref<64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%in: f32, %m: f32, %acc: f32):
    %d = arith.subf %in, %m : f32
    %s = arith.addf %acc, %d : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Two outputs (a sum and a sum of squares) are two all-reduces of one
// loop; linalg.index reads the loop's own index.
// CHECK-LABEL: func.func @two_sums(
// CHECK:       gpu.launch
// CHECK:         %[[LOOP:.*]]:2 = scf.for %[[K:[a-z0-9]+]] = {{.*}} -> (f32, f32)
// CHECK:           arith.index_cast %[[K]]
// CHECK:         gpu.all_reduce add %[[LOOP]]#0 uniform
// CHECK:         gpu.all_reduce add %[[LOOP]]#1 uniform
// CHECK:         scf.if
// CHECK-COUNT-2:   memref.store
func.func @two_sums(%x: memref<2x100xf32>, %s: memref<2xf32>, %q: memref<2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x100xf32>) outs(%s, %q : memref<2xf32>, memref<2xf32>) {
  ^bb0(%in: f32, %a: f32, %b: f32):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    %v = arith.mulf %in, %kf : f32
    %sq = arith.mulf %v, %v : f32
    %a2 = arith.addf %a, %v : f32
    %b2 = arith.addf %b, %sq : f32
    linalg.yield %a2, %b2 : f32, f32
  }
  return
}

// -----

// What stays a thread per output: a short reduction (16 elements), a fold
// that reads its accumulator twice, a combiner with no all-reduce (a
// select), a reduction that is not last, and a sum down 8192 columns
// (a warp's threads read a row's neighbours together).
// CHECK-LABEL: func.func @stays(
// CHECK-NOT:   gpu.launch
// CHECK-COUNT-5: linalg.generic
func.func @stays(%short: memref<4x16xf32>, %x: memref<4x64xf32>, %out: memref<4xf32>,
                 %t: memref<64x4xf32>, %wide: memref<64x8192xf32>, %wout: memref<8192xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%wide : memref<64x8192xf32>) outs(%wout : memref<8192xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%short : memref<4x16xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %acc, %acc : f32
    %s = arith.addf %sq, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %gt = arith.cmpf ogt, %in, %acc : f32
    %m = arith.select %gt, %in, %acc : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%t : memref<64x4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A softmax's running (maximum, sum) pair (sinter-online-softmax): each
// thread folds its share into a pair from (-inf, 0) with the generic's own
// body; the block's maximum comes first, then each thread's sum rescaled to
// it by exp(m - max) (0 for a thread that saw only -inf) is added up;
// thread 0 folds the block's pair into the output's the same way.
// CHECK-LABEL: func.func @online_softmax(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: memref<8x500xf32>, %[[M:[a-z0-9]+]]: memref<8xf32>, %[[S:[a-z0-9]+]]: memref<8xf64>)
// CHECK:       gpu.launch blocks(%[[BID:[a-z0-9]+]], {{.*}}) in ({{.*}} = %c8{{.*}}) threads(%[[TID:[a-z0-9]+]], {{.*}}) in ({{.*}} = %c256
// CHECK-DAG:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[PAIR:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[NEGINF]], %{{.*}} = %[[ZERO]]) -> (f32, f64)
// CHECK:           math.exp
// CHECK:         %[[MAX:.*]] = gpu.all_reduce maximumf %[[PAIR]]#0 uniform
// CHECK:         %[[D:.*]] = arith.subf %[[PAIR]]#0, %[[MAX]]
// CHECK:         %[[E:.*]] = math.exp %[[D]]
// CHECK:         %[[E0:.*]] = arith.select %{{.*}}, %{{.*}}, %[[E]]
// CHECK:         %[[W:.*]] = arith.extf %[[E0]] : f32 to f64
// CHECK:         %[[R:.*]] = arith.mulf %[[PAIR]]#1, %[[W]]
// CHECK:         %[[SUM:.*]] = gpu.all_reduce add %[[R]] uniform
// CHECK:         scf.if
// CHECK:           %[[OLDM:.*]] = memref.load %[[M]][%[[BID]]]
// CHECK:           %[[OLDS:.*]] = memref.load %[[S]][%[[BID]]]
// CHECK:           %[[NEWM:.*]] = arith.maximumf %[[OLDM]], %[[MAX]]
// CHECK:           %[[NEWS:.*]] = arith.addf
// CHECK:           memref.store %[[NEWM]], %[[M]][%[[BID]]]
// CHECK:           memref.store %[[NEWS]], %[[S]][%[[BID]]]
func.func @online_softmax(%x: memref<8x500xf32>, %m: memref<8xf32>, %s: memref<8xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x500xf32>) outs(%m, %s : memref<8xf32>, memref<8xf64>)
      attrs = {sinter.online_softmax} {
  ^bb0(%v: f32, %acc: f32, %sum: f64):
    %max = arith.maximumf %acc, %v : f32
    %d = arith.subf %v, %max : f32
    %e = math.exp %d : f32
    %w = arith.extf %e : f32 to f64
    %r = arith.addf %sum, %w : f64
    linalg.yield %max, %r : f32, f64
  }
  return
}

// -----

// An output filled just before the reduction (its accumulator's zeros):
// thread 0 folds the block's total into the fill's value, without reading
// the output, and the fill (a launch of its own) is gone. A fill of another
// buffer stays.
// CHECK-LABEL: func.func @filled(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: memref<6x300xf32>, %[[OUT:[a-z0-9]+]]: memref<6xf64>, %[[OTHER:[a-z0-9]+]]: memref<6xf64>)
// CHECK:       linalg.fill ins(%{{.*}} : f64) outs(%[[OTHER]] : memref<6xf64>)
// CHECK-NOT:   linalg.fill
// CHECK:       gpu.launch
// CHECK:         %[[TOTAL:.*]] = gpu.all_reduce add
// CHECK:         scf.if
// CHECK-NOT:       memref.load %[[OUT]]
// CHECK:           %[[NEW:.*]] = arith.addf %[[ZERO:.*]], %[[TOTAL]]
// CHECK:           memref.store %[[NEW]], %[[OUT]]
func.func @filled(%x: memref<6x300xf32>, %out: memref<6xf64>, %other: memref<6xf64>) {
  %zero = arith.constant 0.0 : f64
  linalg.fill ins(%zero : f64) outs(%other : memref<6xf64>)
  linalg.fill ins(%zero : f64) outs(%out : memref<6xf64>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<6x300xf32>) outs(%out : memref<6xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %w = arith.extf %in : f32 to f64
    %s = arith.addf %acc, %w : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// A reduction that also stores the values it folds (a fused residual add,
// sinter-cuda-fuse-into-row-reductions): each thread stores the sum it
// computes at its own element, in the strided loop, and only the folded
// output is combined over the block.
// CHECK-LABEL: func.func @row_sum_storing(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: memref<6x300xf32>, %[[B:[a-z0-9]+]]: memref<6x300xf32>, %[[X:[a-z0-9]+]]: memref<6x300xf32>, %[[OUT:[a-z0-9]+]]: memref<6xf64>)
// CHECK:       gpu.launch blocks(%[[BID:[a-z0-9]+]], {{.*}}) threads(%[[TID:[a-z0-9]+]], {{.*}}) in ({{.*}} = %c256
// CHECK:         %[[PART:.*]] = scf.for %[[K:.*]] = %[[TID]] to %c300{{.*}} step %c256{{.*}} iter_args(%[[P:.*]] = %{{.*}}) -> (f64)
// CHECK:           %[[VA:.*]] = memref.load %[[A]][%[[BID]], %[[K]]]
// CHECK:           %[[VB:.*]] = memref.load %[[B]][%[[BID]], %[[K]]]
// CHECK:           %[[V:.*]] = arith.addf %[[VA]], %[[VB]] : f32
// CHECK:           %[[S:.*]] = arith.addf %[[P]], %{{.*}} : f64
// CHECK:           memref.store %[[V]], %[[X]][%[[BID]], %[[K]]]
// CHECK:           scf.yield %[[S]] : f64
// CHECK:         %[[TOTAL:.*]] = gpu.all_reduce add %[[PART]] uniform
// CHECK-NOT:     gpu.all_reduce
// CHECK:         scf.if
// CHECK-NOT:       memref.store %{{.*}}, %[[X]]
// CHECK:           memref.store %{{.*}}, %[[OUT]][%[[BID]]]
// CHECK-NOT:   linalg.generic
func.func @row_sum_storing(%a: memref<6x300xf32>, %b: memref<6x300xf32>, %x: memref<6x300xf32>, %out: memref<6xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a, %b : memref<6x300xf32>, memref<6x300xf32>) outs(%x, %out : memref<6x300xf32>, memref<6xf64>) {
  ^bb0(%va: f32, %vb: f32, %unused: f32, %acc: f64):
    %v = arith.addf %va, %vb : f32
    %w = arith.extf %v : f32 to f64
    %s = arith.addf %acc, %w : f64
    linalg.yield %v, %s : f32, f64
  }
  return
}

// -----

// An output indexed by a reduced loop that the body reads is no stored
// output: the generic stays for the thread-per-output mapping.
// CHECK-LABEL: func.func @reads_its_row_output(
// CHECK-NOT:   gpu.launch
// CHECK:       linalg.generic
func.func @reads_its_row_output(%a: memref<6x300xf32>, %x: memref<6x300xf32>, %out: memref<6xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<6x300xf32>) outs(%x, %out : memref<6x300xf32>, memref<6xf64>) {
  ^bb0(%va: f32, %old: f32, %acc: f64):
    %v = arith.addf %va, %old : f32
    %w = arith.extf %v : f32 to f64
    %s = arith.addf %acc, %w : f64
    linalg.yield %v, %s : f32, f64
  }
  return
}

// -----

// Loops that read a reduction's results one per row (a gradient's sum
// rounded to f32, its mean) join its launch: thread 0 computes them from
// the block's totals, each reading the values the loops before it
// computed, and stores them all. The fill of the sum's
// output, before an op that touches other bytes of the workspace, is
// folded in. Buffers are views of the workspace at constant offsets, as
// the memory plan gives them, so the pass can tell they share no byte.
// CHECK-LABEL: func.func @row_consumers(
// CHECK-NOT:   linalg.fill ins(%{{.*}} : f64)
// CHECK:       linalg.fill ins(%{{.*}} : f32)
// CHECK:       gpu.launch
// CHECK:         %[[TOTAL:.*]] = gpu.all_reduce add
// CHECK:         scf.if
// CHECK:           %[[SUM:.*]] = arith.addf %{{.*}}, %[[TOTAL]] : f64
// CHECK:           %[[F:.*]] = arith.truncf %[[SUM]] : f64 to f32
// CHECK:           %[[M:.*]] = arith.divf %[[F]], %{{.*}} : f32
// CHECK:           memref.store %[[SUM]], %[[S:.*]][%[[BID:.*]]] : memref<6xf64>
// CHECK:           memref.store %[[F]], %{{.*}}[%[[BID]]] : memref<6xf32>
// CHECK:           memref.store %[[M]], %{{.*}}[%[[BID]], %c0{{.*}}] : memref<6x1xf32>
// CHECK-NOT:   linalg.generic
func.func @row_consumers(%x: memref<6x300xf32>, %ws: memref<1024xi8> {sinter.workspace}) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  %n = arith.constant 300.0 : f32
  %one = arith.constant 1.0 : f32
  %s = memref.view %ws[%c0][] : memref<1024xi8> to memref<6xf64>
  linalg.fill ins(%zero : f64) outs(%s : memref<6xf64>)
  %c512 = arith.constant 512 : index
  %elsewhere = memref.view %ws[%c512][] : memref<1024xi8> to memref<6xf32>
  linalg.fill ins(%one : f32) outs(%elsewhere : memref<6xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<6x300xf32>) outs(%s : memref<6xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %w = arith.extf %in : f32 to f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  }
  %c64 = arith.constant 64 : index
  %f = memref.view %ws[%c64][] : memref<1024xi8> to memref<6xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%s : memref<6xf64>) outs(%f : memref<6xf32>) {
  ^bb0(%v: f64, %unused: f32):
    %t = arith.truncf %v : f64 to f32
    linalg.yield %t : f32
  }
  %c128 = arith.constant 128 : index
  %mean = memref.view %ws[%c128][] : memref<1024xi8> to memref<6x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%f : memref<6xf32>) outs(%mean : memref<6x1xf32>) {
  ^bb0(%v: f32, %unused: f32):
    %m = arith.divf %v, %n : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A loop whose output may be the reduction's input (the plan gave them
// overlapping bytes: the input dead after the reduction) stays a launch of
// its own: in one launch, a block would write it while others still read.
// So does a loop that an op between them writes the input of.
// CHECK-LABEL: func.func @row_consumers_stay(
// CHECK:       gpu.launch
// CHECK:       linalg.generic {{.*}} ins(%{{.*}} : memref<6xf64>) outs(%{{.*}} : memref<6xf32>)
// CHECK:       linalg.fill
// CHECK:       linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<6xf64>, memref<6xf32>)
func.func @row_consumers_stay(%ws: memref<8192xi8> {sinter.workspace}) {
  %c0 = arith.constant 0 : index
  %c7200 = arith.constant 7200 : index
  %c7168 = arith.constant 7168 : index
  %c7680 = arith.constant 7680 : index
  %one = arith.constant 1.0 : f32
  %x = memref.view %ws[%c0][] : memref<8192xi8> to memref<6x300xf32>
  %s = memref.view %ws[%c7200][] : memref<8192xi8> to memref<6xf64>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<6x300xf32>) outs(%s : memref<6xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %w = arith.extf %in : f32 to f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  }
  // Bytes 7168 to 7192: the end of x's.
  %f = memref.view %ws[%c7168][] : memref<8192xi8> to memref<6xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%s : memref<6xf64>) outs(%f : memref<6xf32>) {
  ^bb0(%v: f64, %unused: f32):
    %t = arith.truncf %v : f64 to f32
    linalg.yield %t : f32
  }
  %g = memref.view %ws[%c7680][] : memref<8192xi8> to memref<6xf32>
  %h = memref.view %ws[%c7680][] : memref<8192xi8> to memref<6xf32>
  linalg.fill ins(%one : f32) outs(%g : memref<6xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%s, %g : memref<6xf64>, memref<6xf32>) outs(%h : memref<6xf32>) {
  ^bb0(%v: f64, %u: f32, %unused: f32):
    %t = arith.truncf %v : f64 to f32
    %p = arith.addf %t, %u : f32
    linalg.yield %p : f32
  }
  return
}

// -----

// A loop that writes an argument of the function joins the launch of a
// reduction that reads another: the caller gives what a function writes
// (a result, a buffer updated in place) bytes no other argument has.
// CHECK-LABEL: func.func @row_consumer_into_argument(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: memref<6x300xf32>, %[[OUT:[a-z0-9]+]]: memref<6xf32>
// CHECK:       gpu.launch
// CHECK:         scf.if
// CHECK:           %[[F:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK:           memref.store %[[F]], %[[OUT]]
// CHECK-NOT:   linalg.generic
func.func @row_consumer_into_argument(%x: memref<6x300xf32>, %out: memref<6xf32>,
                                      %ws: memref<64xi8> {sinter.workspace}) {
  %c0 = arith.constant 0 : index
  %s = memref.view %ws[%c0][] : memref<64xi8> to memref<6xf64>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<6x300xf32>) outs(%s : memref<6xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %w = arith.extf %in : f32 to f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%s : memref<6xf64>) outs(%out : memref<6xf32>) {
  ^bb0(%v: f64, %unused: f32):
    %t = arith.truncf %v : f64 to f32
    linalg.yield %t : f32
  }
  return
}

// -----

// A loop over the row's elements that reads the block's results (a
// normalization by the row's sum) runs in the launch too: every thread
// computes the row's values, waits at a barrier (no thread may read an
// output's old value after thread 0 stores the new one), thread 0 stores,
// and each thread walks its elements again, reading what it stored there.
// CHECK-LABEL: func.func @row_then_elements(
// CHECK:       gpu.launch
// CHECK:         %[[PART:.*]] = scf.for
// CHECK:           memref.store
// CHECK:         %[[TOTAL:.*]] = gpu.all_reduce add %[[PART]] uniform
// CHECK:         %[[OLD:.*]] = memref.load
// CHECK:         %[[SUM:.*]] = arith.addf %[[OLD]], %[[TOTAL]] : f64
// CHECK:         gpu.barrier
// CHECK:         scf.if
// CHECK:           memref.store %[[SUM]]
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %c300{{.*}} step %c256
// CHECK:           %[[X:.*]] = memref.load %{{.*}}[%{{.*}}, %[[K]]] : memref<6x300xf32>
// CHECK:           arith.divf
// CHECK:           memref.store
// CHECK-NOT:   linalg.generic
func.func @row_then_elements(%a: memref<6x300xf32>, %b: memref<6x300xf32>,
                             %ws: memref<16384xi8> {sinter.workspace}) {
  %c0 = arith.constant 0 : index
  %c7200 = arith.constant 7200 : index
  %c7248 = arith.constant 7248 : index
  %x = memref.view %ws[%c0][] : memref<16384xi8> to memref<6x300xf32>
  %s = memref.view %ws[%c7200][] : memref<16384xi8> to memref<6xf64>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a, %b : memref<6x300xf32>, memref<6x300xf32>) outs(%x, %s : memref<6x300xf32>, memref<6xf64>) {
  ^bb0(%va: f32, %vb: f32, %unused: f32, %acc: f64):
    %v = arith.addf %va, %vb : f32
    %w = arith.extf %v : f32 to f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %v, %r : f32, f64
  }
  %y = memref.view %ws[%c7248][] : memref<16384xi8> to memref<6x300xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<6x300xf32>, memref<6xf64>) outs(%y : memref<6x300xf32>) {
  ^bb0(%v: f32, %t: f64, %unused: f32):
    %tf = arith.truncf %t : f64 to f32
    %q = arith.divf %v, %tf : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// A loop that writes, element by element, over the row the reduction read
// (cross-entropy's gradient over the logits) joins its launch: each thread
// writes the elements it folded, after the block's total.
// CHECK-LABEL: func.func @elements_over_the_row(
// CHECK:       gpu.launch
// CHECK:         gpu.all_reduce add
// CHECK:         scf.for
// CHECK:           memref.load %[[X:.*]][%{{.*}}, %{{.*}}] : memref<6x300xf32>
// CHECK:           arith.divf
// CHECK:           memref.store %{{.*}}, %[[X]]
// CHECK-NOT:   linalg.generic
func.func @elements_over_the_row(%ws: memref<16384xi8> {sinter.workspace}) {
  %c0 = arith.constant 0 : index
  %c7200 = arith.constant 7200 : index
  %x = memref.view %ws[%c0][] : memref<16384xi8> to memref<6x300xf32>
  %s = memref.view %ws[%c7200][] : memref<16384xi8> to memref<6xf64>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<6x300xf32>) outs(%s : memref<6xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %w = arith.extf %in : f32 to f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<6x300xf32>, memref<6xf64>) outs(%x : memref<6x300xf32>) {
  ^bb0(%v: f32, %t: f64, %unused: f32):
    %tf = arith.truncf %t : f64 to f32
    %q = arith.divf %v, %tf : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// Over what the reduction stores, not: the loop stays a launch of its own.
// CHECK-LABEL: func.func @elements_over_a_stored_row(
// CHECK:       gpu.launch
// CHECK:       linalg.generic
func.func @elements_over_a_stored_row(%a: memref<6x300xf32>, %ws: memref<16384xi8> {sinter.workspace}) {
  %c0 = arith.constant 0 : index
  %c7200 = arith.constant 7200 : index
  %x = memref.view %ws[%c0][] : memref<16384xi8> to memref<6x300xf32>
  %s = memref.view %ws[%c7200][] : memref<16384xi8> to memref<6xf64>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<6x300xf32>) outs(%x, %s : memref<6x300xf32>, memref<6xf64>) {
  ^bb0(%in: f32, %unused: f32, %acc: f64):
    %w = arith.extf %in : f32 to f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %in, %r : f32, f64
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<6x300xf32>, memref<6xf64>) outs(%x : memref<6x300xf32>) {
  ^bb0(%v: f32, %t: f64, %unused: f32):
    %tf = arith.truncf %t : f64 to f32
    %q = arith.divf %v, %tf : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// A loop whose body loads the reduction's output itself (here another
// row's) stays a launch of its own: in the reduction's launch it would
// read a row another block may not have stored yet.
// CHECK-LABEL: func.func @consumer_loads_other_rows(
// CHECK:       gpu.launch
// CHECK:       linalg.generic
func.func @consumer_loads_other_rows(%x: memref<6x300xf32>, %ws: memref<128xi8> {sinter.workspace}) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c5 = arith.constant 5 : index
  %s = memref.view %ws[%c0][] : memref<128xi8> to memref<6xf64>
  %y = memref.view %ws[%c64][] : memref<128xi8> to memref<6xf64>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<6x300xf32>) outs(%s : memref<6xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %w = arith.extf %in : f32 to f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%s : memref<6xf64>) outs(%y : memref<6xf64>) {
  ^bb0(%v: f64, %unused: f64):
    %i = linalg.index 0 : index
    %j = arith.subi %c5, %i : index
    %other = memref.load %s[%j] : memref<6xf64>
    %t = arith.addf %v, %other : f64
    linalg.yield %t : f64
  }
  return
}

// -----

// A private function writes its argument %out; one of its callers passes
// the buffer it reads as %x there too, so the written argument may share
// bytes with the reduction's input: the loop that writes it stays apart.
// CHECK-LABEL: func.func private @called_with_aliases(
// CHECK:       gpu.launch
// CHECK:       linalg.generic
func.func private @called_with_aliases(%x: memref<6x300xf32>, %out: memref<6x300xf32>,
                                       %ws: memref<64xi8> {sinter.workspace}) {
  %c0 = arith.constant 0 : index
  %s = memref.view %ws[%c0][] : memref<64xi8> to memref<6xf64>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<6x300xf32>) outs(%s : memref<6xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %w = arith.extf %in : f32 to f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<6xf64>) outs(%out : memref<6x300xf32>) {
  ^bb0(%v: f64, %unused: f32):
    %t = arith.truncf %v : f64 to f32
    linalg.yield %t : f32
  }
  return
}
func.func @caller(%a: memref<6x300xf32>, %ws: memref<64xi8>) {
  call @called_with_aliases(%a, %a, %ws) : (memref<6x300xf32>, memref<6x300xf32>, memref<64xi8>) -> ()
  return
}
