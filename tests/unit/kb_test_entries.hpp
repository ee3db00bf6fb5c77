// Knowledge-base entries and signatures built in code for the matcher's tests
// (explain_matcher_test, explain_log_source_test): an entry is its id, a file name and
// its signatures; a signature defined on line 7 of that file.
#pragma once

#include "explain/matcher.hpp"
#include "kb/kb.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace rmcp::kb_test {

inline kb::Entry entry(std::string id, std::vector<kb::Signature> sigs) {
    kb::Entry e;
    e.id = std::move(id);
    e.file = "kb/" + e.id + ".toml";
    e.signatures = std::move(sigs);
    return e;
}

inline kb::Signature sig(std::string pattern, std::vector<std::string> context = {}, unsigned window = 20) {
    kb::Signature s;
    s.pattern = std::move(pattern);
    s.context = std::move(context);
    s.window = window;
    s.line = 7;
    return s;
}

// The entries compiled; a compile error fails the test and gives a null set.
inline std::shared_ptr<const explain::SignatureSet> compile(
    const std::vector<kb::Entry>& entries, explain::Reporting reporting = explain::Reporting::every_line) {
    auto set = explain::SignatureSet::compile(entries, reporting);
    EXPECT_TRUE(set.ok()) << (set.ok() ? "" : set.error().message());
    return set.ok() ? *set : nullptr;
}

}  // namespace rmcp::kb_test
