//===- ListParams.h - The `--list-params` table ---------------------------===//
#ifndef SINTER_TOOLS_SINTERC_LISTPARAMS_H
#define SINTER_TOOLS_SINTERC_LISTPARAMS_H

#include "frontend/Program.h"

#include <iosfwd>

namespace sinter {
/// Prints every param and state (name, kind, dtype, shape, elements) and the
/// number of trainable parameters: the `state_dict` view.
void printParamTable(const ModelGraph &graph, std::ostream &os);
} // namespace sinter

#endif // SINTER_TOOLS_SINTERC_LISTPARAMS_H
