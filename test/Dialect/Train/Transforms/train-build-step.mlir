// RUN: sinter-opt %s -train-build-step | FileCheck %s --check-prefix=ADAMW
// RUN: sinter-opt %s -train-build-step=optimizer=sgd | FileCheck %s --check-prefix=SGD
// RUN: sinter-opt %s -train-build-step=optimizer=sgd_momentum | FileCheck %s --check-prefix=MOMENTUM
// RUN: not sinter-opt %s -train-build-step=optimizer=lion 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// A step that ends with its final gradients gets the update appended: the
// global norm, the finiteness check, and in an scf.if one update per
// parameter, whose results replace the parameter and its moments (new
// arguments) in place. Matrices decay with `weight_decay`, vectors with
// `weight_decay_1d`.

func.func @step(%w: tensor<4x3xf32> {sinter.param = "w"},
                %b: tensor<3xf32> {sinter.param = "b"},
                %gw: tensor<4x3xf32>, %gb: tensor<3xf32>, %loss: tensor<f32>)
    -> (tensor<f32> {sinter.loss = "loss"},
        tensor<4x3xf32> {sinter.gradient = "w"},
        tensor<3xf32> {sinter.gradient = "b"})
    attributes {sinter.phase = "train"} {
  return %loss, %gw, %gb : tensor<f32>, tensor<4x3xf32>, tensor<3xf32>
}

// ADAMW-LABEL: func.func @step(
// ADAMW-SAME:    %[[W:[^:]*]]: tensor<4x3xf32> {sinter.param = "w"}
// ADAMW-SAME:    %[[B:[^:]*]]: tensor<3xf32> {sinter.param = "b"}
// ADAMW-SAME:    %[[GW:[^:]*]]: tensor<4x3xf32>, %[[GB:[^:]*]]: tensor<3xf32>, %[[L:[^:]*]]: tensor<f32>
// ADAMW-SAME:    %[[WM:[^:]*]]: tensor<4x3xf32> {sinter.optimizer_state = "w", sinter.slot = "m"}
// ADAMW-SAME:    %[[WV:[^:]*]]: tensor<4x3xf32> {sinter.optimizer_state = "w", sinter.slot = "v"}
// ADAMW-SAME:    %[[BM:[^:]*]]: tensor<3xf32> {sinter.optimizer_state = "b", sinter.slot = "m"}
// ADAMW-SAME:    %[[BV:[^:]*]]: tensor<3xf32> {sinter.optimizer_state = "b", sinter.slot = "v"}
// ADAMW-SAME:    tensor<f64> {sinter.grad_norm = "grad_norm"}, tensor<i32> {sinter.non_finite = "non_finite"}
// ADAMW-SAME:    tensor<4x3xf32> {sinter.updates = 0 : i64}, tensor<4x3xf32> {sinter.updates = 5 : i64}, tensor<4x3xf32> {sinter.updates = 6 : i64}
// ADAMW-SAME:    tensor<3xf32> {sinter.updates = 1 : i64}, tensor<3xf32> {sinter.updates = 7 : i64}, tensor<3xf32> {sinter.updates = 8 : i64}
// ADAMW-SAME:    sinter.optimizer = "adamw"
// ADAMW:       %[[NORM:.*]] = train.global_norm %[[GW]], %[[GB]] : tensor<4x3xf32>, tensor<3xf32>
// ADAMW:       %[[LOSS:.*]] = tensor.extract %[[L]][]
// ADAMW:       arith.extf %[[LOSS]] : f32 to f64
// ADAMW:       %[[FINITE:.*]] = arith.andi
// ADAMW:       train.hyperparameter "apply"
// ADAMW:       %[[OK:.*]] = arith.andi %[[FINITE]]
// ADAMW:       %[[MAX:.*]] = train.hyperparameter "max_grad_norm"
// ADAMW:       %[[SCALE:.*]] = arith.select
// ADAMW:       %[[NEW:.*]]:6 = scf.if %[[OK]]
// ADAMW:         %[[LR:.*]] = train.hyperparameter "lr" : f64
// ADAMW:         %[[DECAY:.*]] = train.hyperparameter "weight_decay" : f64
// ADAMW:         train.adamw_update %[[W]], %[[GW]], %[[WM]], %[[WV]] lr(%[[LR]]) weight_decay(%[[DECAY]]) {{.*}} grad_scale(%[[SCALE]]) : tensor<4x3xf32>
// ADAMW:         %[[DECAY1:.*]] = train.hyperparameter "weight_decay_1d" : f64
// ADAMW:         train.adamw_update %[[B]], %[[GB]], %[[BM]], %[[BV]] lr(%[[LR]]) weight_decay(%[[DECAY1]]) {{.*}} : tensor<3xf32>
// ADAMW:       } else {
// ADAMW-NEXT:    scf.yield %[[W]], %[[WM]], %[[WV]], %[[B]], %[[BM]], %[[BV]]
// ADAMW:       %[[N:.*]] = tensor.from_elements %[[NORM]] : tensor<f64>
// ADAMW:       %[[BAD:.*]] = arith.xori %[[FINITE]]
// ADAMW:       arith.extui %[[BAD]] : i1 to i32
// ADAMW:       return %[[L]], %[[GW]], %[[GB]], %[[N]], %{{.*}}, %[[NEW]]#0, %[[NEW]]#1, %[[NEW]]#2, %[[NEW]]#3, %[[NEW]]#4, %[[NEW]]#5

// Plain SGD keeps no moments.
// SGD-LABEL: func.func @step(
// SGD-NOT:     sinter.optimizer_state
// SGD-SAME:    tensor<4x3xf32> {sinter.updates = 0 : i64}, tensor<3xf32> {sinter.updates = 1 : i64}
// SGD:         train.sgd_update %{{.*}}, %{{.*}} lr(
// SGD-NOT:     momentum_buffer

// MOMENTUM-LABEL: func.func @step(
// MOMENTUM-SAME:    %[[WM:[^:]*]]: tensor<4x3xf32> {sinter.optimizer_state = "w", sinter.slot = "m"}
// MOMENTUM-NOT:     sinter.slot = "v"
// MOMENTUM:         train.sgd_update %{{.*}}, %{{.*}} momentum_buffer(%[[WM]] : tensor<4x3xf32>)

// UNKNOWN: unknown optimizer 'lion'; expected adamw, sgd or sgd_momentum
