//===- InitLine.h - One line of the initialisers' text protocol -*- C++ -*-===//
//
// The line format that sinter-init-dump reads (for init_reference.py) and
// Init_test replays:
//   NAME KIND DTYPE SHAPE SEED FIRST COUNT [ARG...]   (SHAPE like 8x24, "-"
//       for a scalar) -> the elements' bit patterns in hex
//   perm N SEED EPOCH -> the sampler's ordering of epoch EPOCH, in decimal
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TEST_RUNTIME_INITLINE_H
#define SINTER_TEST_RUNTIME_INITLINE_H

#include <cstddef>
#include <string>
#include <vector>

namespace sinter::rt::test {

/// The answer to `line`, at most `limit` values; on a bad line, none, with
/// `error` set.
std::vector<std::string> answerInitLine(const std::string &line, size_t limit,
                                        std::string &error);

} // namespace sinter::rt::test

#endif // SINTER_TEST_RUNTIME_INITLINE_H
