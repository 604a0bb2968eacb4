// RUN: sinter-opt %s -sinter-entry-points -split-input-file -verify-diagnostics | FileCheck %s

// The runtime is built before any step, so it calls each one through
// `void sinter_step_<phase>(void **buffers)`, which passes the table on: the
// step loads one pointer per buffer from it, in plan order, where its
// arguments were. The table is marked noalias and readonly, so that code
// generation may load a pointer again where it is used. Next to it come
// the step's plan as `sinter_plan_<phase>` with its size; a step with an
// arena gets the workspace appended to its plan, since the memory planner
// added that argument after the plan was recorded. Functions without both a
// plan and a phase get nothing. The module gets the ABI version and the
// embedded config.
//
// The plans are hand-written wire bytes: model "mlp", the phase, and the
// buffers "x" (INPUT, F32) and "y" (LOSS in train, OUTPUT in eval; F32).

// CHECK-LABEL: llvm.func @sinter_step_train(
// CHECK-SAME:    %[[BUFS:[a-z0-9]+]]: !llvm.ptr) {
// CHECK-NEXT:    llvm.call @mlp(%[[BUFS]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return
// The recorded plan, then the workspace: WORKSPACE (7), BOOL (6), 4096 bytes.
// CHECK:       llvm.mlir.global external constant @sinter_plan_train("\0A\03mlp\12\05train\1A\07\0A\01x\10\00\18\01\1A\07\0A\01y\10\03\18\01\1A\12\0A\09workspace\10\07\18\06 \80 ")
// CHECK-NEXT:  llvm.mlir.global external constant @sinter_plan_train_size(50 : i64)
// CHECK:       llvm.func @mlp(%[[TABLE:[a-z0-9]+]]: !llvm.ptr {llvm.noalias, llvm.readonly})
// CHECK-NEXT:    %[[P0:.*]] = llvm.getelementptr %[[TABLE]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[X:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[P1:.*]] = llvm.getelementptr %[[TABLE]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[Y:.*]] = llvm.load %[[P1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[P2:.*]] = llvm.getelementptr %[[TABLE]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[W:.*]] = llvm.load %[[P2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[V:.*]] = llvm.load %[[X]] : !llvm.ptr -> f32
// CHECK-NEXT:    llvm.store %[[V]], %[[Y]] : f32, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[V]], %[[W]] : f32, !llvm.ptr
// CHECK-NEXT:    llvm.return
// CHECK:       llvm.func @sinter_step_eval(
// CHECK-SAME:    %[[EBUFS:[a-z0-9]+]]: !llvm.ptr) {
// CHECK:         llvm.call @mlp.eval(%[[EBUFS]]) : (!llvm.ptr) -> ()
// Without an arena the plan is copied as it is.
// CHECK:       llvm.mlir.global external constant @sinter_plan_eval("\0A\03mlp\12\04eval\1A\07\0A\01x\10\00\18\01\1A\07\0A\01y\10\06\18\01")
// CHECK-NEXT:  llvm.mlir.global external constant @sinter_plan_eval_size(29 : i64)
// CHECK:       llvm.func @mlp.eval(
// CHECK-NOT:   sinter_step_
// CHECK-NOT:   sinter_plan_
// CHECK:       llvm.mlir.global external constant @sinter_abi_version({{[0-9]+}} : i64)
// CHECK-NEXT:  llvm.mlir.global external constant @sinter_config("model: \22mlp\22")
// CHECK-NEXT:  llvm.mlir.global external constant @sinter_config_size(12 : i64)
// CHECK-NEXT:  llvm.mlir.global external constant @sinter_config_dir("/configs")
// CHECK-NEXT:  llvm.mlir.global external constant @sinter_config_dir_size(8 : i64)
module attributes {sinter.config = "model: \22mlp\22", sinter.config_dir = "/configs"} {
  llvm.func @mlp(%x: !llvm.ptr, %y: !llvm.ptr, %workspace: !llvm.ptr)
      attributes {sinter.phase = "train", sinter.arena_bytes = 4096 : i64,
                  sinter.plan = "\0A\03mlp\12\05train\1A\07\0A\01x\10\00\18\01\1A\07\0A\01y\10\03\18\01"} {
    %v = llvm.load %x : !llvm.ptr -> f32
    llvm.store %v, %y : f32, !llvm.ptr
    llvm.store %v, %workspace : f32, !llvm.ptr
    llvm.return
  }
  llvm.func @mlp.eval(%x: !llvm.ptr, %y: !llvm.ptr)
      attributes {sinter.phase = "eval",
                  sinter.plan = "\0A\03mlp\12\04eval\1A\07\0A\01x\10\00\18\01\1A\07\0A\01y\10\06\18\01"} {
    llvm.return
  }
  llvm.func @no_plan(%x: !llvm.ptr) attributes {sinter.phase = "eval"} {
    llvm.return
  }
  llvm.func @no_phase(%x: !llvm.ptr) attributes {sinter.plan = "\0A\03mlp"} {
    llvm.return
  }
}

// -----

// A module without a config embeds empty ones.
// CHECK-LABEL: module {
// CHECK:       llvm.mlir.global external constant @sinter_abi_version(
// CHECK-NEXT:  llvm.mlir.global external constant @sinter_config("")
// CHECK-NEXT:  llvm.mlir.global external constant @sinter_config_size(0 : i64)
// CHECK-NEXT:  llvm.mlir.global external constant @sinter_config_dir("")
// CHECK-NEXT:  llvm.mlir.global external constant @sinter_config_dir_size(0 : i64)
module {
}

// -----

// The entry point passes bare pointers: a step that takes a memref
// descriptor (or anything but pointers) was lowered with the wrong calling
// convention.
// expected-error @below {{a step must take only buffer pointers and return nothing}}
llvm.func @unpacked(%x: !llvm.ptr, %size: i64)
    attributes {sinter.phase = "eval", sinter.plan = "\0A\03mlp\12\04eval"} {
  llvm.return
}

// -----

// Results must have become out-params.
// expected-error @below {{a step must take only buffer pointers and return nothing}}
llvm.func @returns(%x: !llvm.ptr) -> !llvm.ptr
    attributes {sinter.phase = "eval", sinter.plan = "\0A\03mlp\12\04eval"} {
  llvm.return %x : !llvm.ptr
}
