// An `[applies]` predicate in words, for `rmcp kb show` and the rendered knowledge-base
// pages (docs/kb/): the same tree the evaluator walks (kb/predicate.hpp), one line per leaf.
#pragma once

#include "kb/predicate.hpp"

#include <string>
#include <vector>

namespace rmcp::kb {

// One line of the description: its nesting depth (0 = top) and text.
struct DescribedLine {
    unsigned depth = 0;
    std::string text;
};

// The predicate as nested lines: "all of:", "any of:", "none of:" / "not:", and one line per
// fact test ("`gpu.gfx_target` (the GPU's chip) is one of gfx1031, gfx1032").
std::vector<DescribedLine> describe_predicate(const Predicate& p);

// What a fact path means in words ("gpu.family" → "the GPU's architecture family"); empty
// when the glossary does not list it.
std::string_view fact_gloss(std::string_view path);

// One fact test in words.
std::string describe_leaf(const Leaf& leaf);

}  // namespace rmcp::kb
