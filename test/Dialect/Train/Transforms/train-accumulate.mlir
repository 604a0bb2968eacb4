// RUN: sinter-opt %s -train-accumulate | FileCheck %s

// One micro-batch's computation becomes the step of one rank: k read at run
// time; the global count first, in a loop that loads only the targets; then
// the main loop, which loads every input into its own buffer (carried by the
// loop) and adds into accumulators the loop carries; the gradients are final
// only after the loop; metrics and states are means over the micro-batches;
// outputs are not part of a train step.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x3xf32> {sinter.input = "x"}, %[[Y:[a-z0-9]+]]: tensor<4xi32> {sinter.input = "y"}, %[[W:[a-z0-9]+]]: tensor<3xf32> {sinter.param = "w"}, %[[S:[a-z0-9]+]]: tensor<3xf32> {sinter.state = "s"})
// CHECK-SAME:    -> (tensor<f32> {sinter.loss = "loss"}, tensor<f32> {sinter.metric = "m"}, tensor<3xf32> {sinter.gradient = "w"}, tensor<3xf32> {sinter.state = "s"})
// CHECK:       %[[K:.*]] = train.micro_batch_count : index
// b / G, before any loop:
// CHECK:       %[[G:.*]] = train.global_batch : index
// CHECK:       %[[FRAC:.*]] = arith.divf
// CHECK:       %[[FT:.*]] = tensor.from_elements %[[FRAC]] : tensor<f32>
// The count loop reads y only:
// CHECK:       %[[COUNT:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %[[K]] step %{{.*}} iter_args(%[[N:.*]] = %{{.*}}, %[[YB:.*]] = %[[Y]]) -> (i64, tensor<4xi32>)
// CHECK-NEXT:    %[[YI:.*]] = train.micro_batch_input "y" %[[YB]][%[[I]]] : tensor<4xi32>
// CHECK-NOT:     train.micro_batch_input "x"
// CHECK:         arith.cmpi ne, %[[YI]]
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK:         scf.yield %{{.*}}, %[[YI]] : i64, tensor<4xi32>
// The count over all ranks:
// CHECK:       %[[ALL:.*]] = train.sum_over_ranks %[[COUNT]]#0 : i64
// CHECK:       %[[TOTAL:.*]] = arith.sitofp %[[ALL]] : i64 to f32
// CHECK:       %[[NT:.*]] = tensor.from_elements %[[TOTAL]] : tensor<f32>
// Zeroed accumulators, then the main loop; y's buffer comes from the count loop:
// CHECK:       linalg.fill
// CHECK:       %[[R:.*]]:6 = scf.for %[[J:.*]] = %{{.*}} to %[[K]] step %{{.*}} iter_args(%[[XB:.*]] = %[[X]], %[[YB2:.*]] = %[[COUNT]]#1, %[[LOSS:.*]] = %{{.*}}, %[[MET:.*]] = %{{.*}}, %[[GW:.*]] = %{{.*}}, %[[GS:.*]] = %{{.*}})
// CHECK-NEXT:    %[[XJ:.*]] = train.micro_batch_input "x" %[[XB]][%[[J]]] : tensor<4x3xf32>
// CHECK-NEXT:    %[[YJ:.*]] = train.micro_batch_input "y" %[[YB2]][%[[J]]] : tensor<4xi32>
// CHECK:         %[[L:.*]] = arith.divf %[[FT]], %[[NT]] : tensor<f32>
// CHECK-NOT:     train.gradients_ready
// CHECK:         %[[GRAD:.*]] = arith.addf %[[W]], %[[S]]
// CHECK:         %[[LA:.*]] = linalg.generic {{.*}} ins(%[[L]] : tensor<f32>) outs(%[[LOSS]] : tensor<f32>)
// CHECK:         %[[GA:.*]] = linalg.generic {{.*}} ins(%[[GRAD]] : tensor<3xf32>) outs(%[[GW]] : tensor<3xf32>)
// CHECK:           arith.addf
// CHECK:         scf.yield %[[XJ]], %[[YJ]], %[[LA]], %{{.*}}, %[[GA]], %{{.*}}
// CHECK:       train.gradients_ready
// CHECK:       %[[MEAN:.*]] = linalg.generic {{.*}} outs(%[[R]]#3 : tensor<f32>)
// CHECK:         arith.divf
// CHECK:       %[[SMEAN:.*]] = linalg.generic {{.*}} outs(%[[R]]#5 : tensor<3xf32>)
// CHECK:       return %[[R]]#2, %[[MEAN]], %[[R]]#4, %[[SMEAN]]
func.func @step(%x: tensor<4x3xf32> {sinter.input = "x"}, %y: tensor<4xi32> {sinter.input = "y"},
                %w: tensor<3xf32> {sinter.param = "w"}, %s: tensor<3xf32> {sinter.state = "s"})
    -> (tensor<f32> {sinter.loss = "loss"}, tensor<f32> {sinter.metric = "m"},
        tensor<4x3xf32> {sinter.output = "o"}, tensor<3xf32> {sinter.gradient = "w"},
        tensor<3xf32> {sinter.state = "s"})
    attributes {sinter.phase = "train"} {
  %f = train.sample_fraction : tensor<f32>
  %ignore = arith.constant dense<-1> : tensor<4xi32>
  %valid = arith.cmpi ne, %y, %ignore : tensor<4xi32>
  %n = train.global_count %valid : (tensor<4xi1>) -> tensor<f32>
  %l = arith.divf %f, %n : tensor<f32>
  %g = arith.addf %w, %s : tensor<3xf32>
  return %l, %f, %x, %g, %s : tensor<f32>, tensor<f32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
}

// The eval step has no loop.
// CHECK-LABEL: func.func @eval
// CHECK-NOT:   scf.for
// CHECK-NOT:   train.
func.func @eval(%x: tensor<4x3xf32> {sinter.input = "x"}) -> (tensor<4x3xf32> {sinter.output = "o"})
    attributes {sinter.phase = "eval"} {
  return %x : tensor<4x3xf32>
}
