// RUN: sinter-opt %s -split-input-file -sinter-cuda-launches-on-host | FileCheck %s

// A ballot whose predicate comes from the lane's thread index and a buffer
// the launch only reads: each thread computes its warp's 32 predicates
// (the lane's index is the warp's first plus the lanes loop's), and the
// launch runs as host loops.
// CHECK-LABEL: func.func @ballot_of_reads(
// CHECK-NOT:     gpu.launch
// CHECK-NOT:     nvvm.vote.sync
// CHECK-NOT:     gpu.lane_id
// CHECK:         scf.for %[[LANE:.*]] = %{{.*}} to %c32{{.*}} iter_args(%[[BITS:.*]] = %{{.*}}) -> (i32)
// CHECK:           memref.load %arg0
// CHECK:           arith.shli
// CHECK:           arith.ori %[[BITS]]
// CHECK:         memref.store %{{.*}}, %arg1
func.func @ballot_of_reads(%flags: memref<64xi32>, %out: memref<64xi32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %lane = gpu.lane_id
    %warp = arith.subi %tx, %lane : index
    %me = arith.addi %warp, %lane : index
    %f = memref.load %flags[%me] : memref<64xi32>
    %zero = arith.constant 0 : i32
    %set = arith.cmpi ne, %f, %zero : i32
    %all = arith.constant -1 : i32
    %votes = nvvm.vote.sync ballot %all, %set -> i32
    memref.store %votes, %out[%tx] : memref<64xi32>
    gpu.terminator
  }
  return
}

// -----

// Left as a launch: the predicate reads a buffer the launch writes (another
// lane's store may come before or after the vote), and a launch whose
// blocks are not whole warps.
// CHECK-LABEL: func.func @ballot_of_writes(
// CHECK:         gpu.launch
// CHECK:           nvvm.vote.sync
// CHECK-LABEL: func.func @partial_warp(
// CHECK:         gpu.launch
// CHECK:           nvvm.vote.sync
func.func @ballot_of_writes(%flags: memref<64xi32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %f = memref.load %flags[%tx] : memref<64xi32>
    %zero = arith.constant 0 : i32
    %set = arith.cmpi ne, %f, %zero : i32
    %all = arith.constant -1 : i32
    %votes = nvvm.vote.sync ballot %all, %set -> i32
    memref.store %votes, %flags[%tx] : memref<64xi32>
    gpu.terminator
  }
  return
}
func.func @partial_warp(%flags: memref<64xi32>, %out: memref<64xi32>) {
  %c1 = arith.constant 1 : index
  %c48 = arith.constant 48 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c48, %sy = %c1, %sz = %c1) {
    %f = memref.load %flags[%tx] : memref<64xi32>
    %zero = arith.constant 0 : i32
    %set = arith.cmpi ne, %f, %zero : i32
    %all = arith.constant -1 : i32
    %votes = nvvm.vote.sync ballot %all, %set -> i32
    memref.store %votes, %out[%tx] : memref<64xi32>
    gpu.terminator
  }
  return
}

// -----

// A step's buffers are views of one planned arena: a predicate that reads
// one view while the launch writes another, at bytes of its own, is still
// computed by each thread; a view over bytes the launch writes is not.
// CHECK-LABEL: func.func @disjoint_views(
// CHECK-NOT:     gpu.launch
// CHECK-NOT:     nvvm.vote.sync
// CHECK-LABEL: func.func @overlapping_views(
// CHECK:         gpu.launch
// CHECK:           nvvm.vote.sync
func.func @disjoint_views(%arena: memref<512xi8>) {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %flags = memref.view %arena[%c0][] : memref<512xi8> to memref<64xi32>
  %out = memref.view %arena[%c256][] : memref<512xi8> to memref<64xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %f = memref.load %flags[%tx] : memref<64xi32>
    %zero = arith.constant 0 : i32
    %set = arith.cmpi ne, %f, %zero : i32
    %all = arith.constant -1 : i32
    %votes = nvvm.vote.sync ballot %all, %set -> i32
    memref.store %votes, %out[%tx] : memref<64xi32>
    gpu.terminator
  }
  return
}
func.func @overlapping_views(%arena: memref<512xi8>) {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %flags = memref.view %arena[%c0][] : memref<512xi8> to memref<64xi32>
  %out = memref.view %arena[%c128][] : memref<512xi8> to memref<64xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %f = memref.load %flags[%tx] : memref<64xi32>
    %zero = arith.constant 0 : i32
    %set = arith.cmpi ne, %f, %zero : i32
    %all = arith.constant -1 : i32
    %votes = nvvm.vote.sync ballot %all, %set -> i32
    memref.store %votes, %out[%tx] : memref<64xi32>
    gpu.terminator
  }
  return
}
