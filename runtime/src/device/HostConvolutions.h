//===- HostConvolutions.h - How the CPU's convolutions may compute -*- C++ -*-===//
//
// The CPU's convolution kernels (src/cpu) read what the host device was
// allowed (precision.convolution) when they make a primitive; the device
// sets it before the first step.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DEVICE_HOSTCONVOLUTIONS_H
#define SINTER_RT_DEVICE_HOSTCONVOLUTIONS_H

namespace sinter::rt {

/// Whether f32 convolutions may run oneDNN's Winograd kernels
/// (hostDevice().allowWinogradConvolutions).
bool hostWinogradConvolutions();

} // namespace sinter::rt

#endif // SINTER_RT_DEVICE_HOSTCONVOLUTIONS_H
