//===- InitDump.cpp - Print initial values for init_reference.py ----------===//
//
// Reads lines from stdin (InitLine.h's format) and prints the answer to
// each on one line, its values separated by spaces, or "error: MESSAGE".
//
//===----------------------------------------------------------------------===//

#include "InitLine.h"

#include <cstdint>
#include <cstdio>
#include <iostream>

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::string error;
    std::vector<std::string> values =
        sinter::rt::test::answerInitLine(line, SIZE_MAX, error);
    if (!error.empty()) {
      std::printf("error: %s\n", error.c_str());
      continue;
    }
    for (size_t i = 0; i < values.size(); ++i)
      std::printf("%s%s", i ? " " : "", values[i].c_str());
    std::printf("\n");
  }
  return 0;
}
