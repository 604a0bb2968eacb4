//===- LibrarySite.h - Which .sn op a library call computes ------*- C++ -*-===//
//
// Before each library call (a matmul, convolution, attention or batch-norm
// of a device's library) the step names its site, an index into the
// program's table of .sn positions (abi.h's sinter_library_sites), so that
// the call's failure names the op the user wrote.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DEVICE_LIBRARYSITE_H
#define SINTER_RT_DEVICE_LIBRARYSITE_H

#include <cstdint>
#include <string>

namespace sinter::rt {

/// The library call that follows computes site `index` of the table; -1:
/// what follows is no library call.
void setLibrarySite(int64_t index);

/// " (op at FILE:LINE:COL ...)" for the library call in progress, or "" when
/// there is none or the program has no table.
std::string librarySiteSuffix();

} // namespace sinter::rt

#endif // SINTER_RT_DEVICE_LIBRARYSITE_H
