//===- LibrarySite_test.cpp - The .sn op a failing library call names ----===//
//
// A program's table of library sites (here this binary's own) and the
// index the step names before each library call give the text a failure
// message ends with.
//
//===----------------------------------------------------------------------===//

#include "device/LibrarySite.h"
#include "runtime/contract/abi.h"

#include <gtest/gtest.h>

// What sinterc embeds in a program: NUL-terminated sites in index order.
extern "C" const char sinter_library_sites[] =
    "m.sn:4:9\0std/nn.sn:62:13, called at m.sn:7:5";
extern "C" const int64_t sinter_library_sites_size = sizeof(sinter_library_sites);

namespace {

using sinter::rt::librarySiteSuffix;

TEST(LibrarySite, NamesTheSiteTheStepNamed) {
  sinter_rt_library_site(1);
  EXPECT_EQ(librarySiteSuffix(), " (op at std/nn.sn:62:13, called at m.sn:7:5)");
  sinter_rt_library_site(0);
  EXPECT_EQ(librarySiteSuffix(), " (op at m.sn:4:9)");
}

TEST(LibrarySite, NothingOutsideALibraryCallOrTheTable) {
  sinter::rt::setLibrarySite(-1);
  EXPECT_EQ(librarySiteSuffix(), "");
  sinter_rt_library_site(2);
  EXPECT_EQ(librarySiteSuffix(), "");
  sinter::rt::setLibrarySite(-1);
}

} // namespace
