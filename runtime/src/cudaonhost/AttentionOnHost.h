//===- AttentionOnHost.h - abi.h's fused attention, on host memory -*- C++ -*-===//
//
// What the CUDA device's fused attention computes (cuDNN's in bf16, the
// runtime's own kernels in f32), written plainly for a step run on the CPU
// (sinterc --cuda-on-host): scores, softmax and products one query at a
// time, summed in f32 as the device sums them, through the same strides
// the device reads and writes.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_CUDAONHOST_ATTENTIONONHOST_H
#define SINTER_RT_CUDAONHOST_ATTENTIONONHOST_H

#include "device/AttentionLayout.h"

#include <cstdint>

namespace sinter::rt::cudaonhost {

// The shapes and layouts of the calls: device/AttentionLayout.h.
using rt::AttentionShape;
using rt::AttentionStrides;
using rt::headsMajorAttention;
using rt::packedAttention;

/// Elements as the device stores them: f32, or bf16 (16-bit patterns,
/// rounded to nearest even as they are written).
template <typename T> struct Element;

/// o = softmax(q k^T / sqrt(d)) v; each query's natural log-sum-exp of its
/// scaled scores into `stats` ([batch, heads, tq]) unless it is null.
template <typename T>
void attentionForward(const AttentionShape &s, const T *q, const T *k, const T *v, T *o,
                      float *stats);
/// The gradients of q, k and v from o's, written (not added). Where the
/// device's call takes the forward call's o and statistics (the packed
/// layout), so does this one: each probability from its row's statistic and
/// each row's dO . o from o, so that a step that passed the wrong ones
/// computes the wrong gradients here too. Null: computed again.
template <typename T>
void attentionBackward(const AttentionShape &s, const T *q, const T *k, const T *v,
                       const T *o, const float *stats, const T *gradO, T *gradQ,
                       T *gradK, T *gradV);

} // namespace sinter::rt::cudaonhost

#endif // SINTER_RT_CUDAONHOST_ATTENTIONONHOST_H
