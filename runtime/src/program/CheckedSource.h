//===- CheckedSource.h - Integer inputs checked against their model ----===//
//
// A token id past the embedding's rows or a class target past the logits'
// classes would be clamped by the compiled step (memory stays safe) and give
// a wrong loss without a word. The plan knows each integer input's valid
// range from its use; this source checks every gathered batch against it
// and refuses the first value outside, naming the file, the sample, the
// value and the op and line of the model that bounds it.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_PROGRAM_CHECKEDSOURCE_H
#define SINTER_RT_PROGRAM_CHECKEDSOURCE_H

#include "data/BatchSource.h"
#include "program/StepPlan.h"

#include <map>
#include <memory>
#include <string>

namespace sinter::rt {

/// `source`, with every gathered tensor of a bounded integer input of `plan`
/// checked. `fileOf` names the file each input is read from (for messages);
/// `what` is the config's section ("data.train").
std::unique_ptr<BatchSource>
checkValueBounds(std::unique_ptr<BatchSource> source, const StepPlan &plan,
                 std::map<std::string, std::string> fileOf, std::string what);

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_CHECKEDSOURCE_H
