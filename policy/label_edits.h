// A node's labels as kubectl label changes them: an agent's labels are what
// it subscribed with, and an operator's edits (a label set, or one taken off)
// are laid over them, now and each time the agent subscribes again, so that
// an agent that changes its own labels keeps the operator's. Pure.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "policy/label_selector.h"

namespace uvsched {

// By key: the value set, or nullopt for a label taken off.
using LabelEdits = std::map<std::string, std::optional<std::string>, std::less<>>;

// `own` with `edits` laid over.
Labels with_edits(const Labels& own, const LabelEdits& edits);

// `current` with the change from `before` to `after` (the node's labels as a
// client saw them and as its patch leaves them) added: each key whose value
// changed is set, each key gone is taken off.
LabelEdits edits_between(const Labels& before, const Labels& after, LabelEdits current);

}  // namespace uvsched
