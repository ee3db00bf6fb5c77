// Which knowledge-base entry names a crash, from the dead process's output: the first entry
// whose log signature matches (explain's matcher, without context words). The probe uses it
// for children that crash; run's watcher (run/kb_watcher.hpp) streams the same signatures,
// compiled by the same step (first_match_signatures).
#pragma once

#include "explain/matcher.hpp"
#include "kb/kb.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace rmcp::explain {

// The knowledge base with every signature compiled for first matches: Reporting::first_only
// (which entries fired, and where; SINGLEMATCH keeps the scan cheap on chatty output) and
// ContextWords::skip (context words rank causes for explain; classifying is by entry).
struct FirstMatchSignatures {
    kb::KnowledgeBase kb;
    std::shared_ptr<const SignatureSet> set;
};
using FirstMatchSignaturesLoader = std::function<Result<std::shared_ptr<const FirstMatchSignatures>>()>;

// Loads and compiles the knowledge base in kb_dir at the first call only (a run without a
// crash never pays for it); every later call, on any copy, answers the same set or error.
FirstMatchSignaturesLoader first_match_signatures(std::filesystem::path kb_dir);

// Returns the entry id, or "" when nothing matched or the kb could not be used.
using CrashClassifier = std::function<std::string(std::string_view output)>;

// Classifies with first_match_signatures(kb_dir); when the kb cannot be used, on_unavailable
// is told why, once, and every call answers "".
CrashClassifier first_entry_classifier(std::filesystem::path kb_dir,
                                       std::function<void(const std::string&)> on_unavailable);

}  // namespace rmcp::explain
