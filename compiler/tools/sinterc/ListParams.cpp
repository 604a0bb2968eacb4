//===- ListParams.cpp - The `--list-params` table -------------------------===//

#include "compiler/tools/sinterc/ListParams.h"

#include <algorithm>
#include <iomanip>
#include <ostream>

namespace sinter {

/// 124439808 -> "124,439,808".
static std::string withCommas(int64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

void printParamTable(const ModelGraph &graph, std::ostream &os) {
  size_t nameWidth = 4, shapeWidth = 5;
  for (const ParamInfo &p : graph.params) {
    nameWidth = std::max(nameWidth, p.name.size());
    shapeWidth = std::max(shapeWidth, shape::str(p.type.shape).size());
  }
  os << std::left << std::setw(nameWidth) << "name" << "  " << std::setw(5)
     << "kind" << "  " << std::setw(5) << "dtype" << "  "
     << std::setw(shapeWidth) << "shape" << "  " << std::right << std::setw(13)
     << "elements" << "\n";
  int64_t trainable = 0, states = 0;
  for (const ParamInfo &p : graph.params) {
    int64_t n = p.numElements();
    (p.isState ? states : trainable) += n;
    os << std::left << std::setw(nameWidth) << p.name << "  " << std::setw(5)
       << (p.isState ? "state" : "param") << "  " << std::setw(5)
       << shape::dtypeName(p.type.dtype) << "  " << std::setw(shapeWidth)
       << shape::str(p.type.shape) << "  " << std::right << std::setw(13)
       << withCommas(n) << "\n";
  }
  os << "trainable parameters: " << withCommas(trainable) << "\n";
  if (states)
    os << "state elements: " << withCommas(states) << "\n";
}

} // namespace sinter
