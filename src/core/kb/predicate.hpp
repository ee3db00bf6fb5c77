// The `applies` language (docs/kb-format.md): all/any/not over leaf tests on fact paths
// of the facts JSON. Arrays on a path are existential; in gpu scope "gpu." is bound to
// the GPU under evaluation.
#pragma once

#include "kb/kb.hpp"
#include "kb/version.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct hs_database;  // Hyperscan's database (hs_common.h: typedef struct hs_database hs_database_t)

namespace rmcp::kb {

enum class LeafOp {
    equals,
    not_equals,
    in,
    not_in,
    matches,
    version,
    exists,
    gt,
    ge,
    lt,
    le,
    count,
    distinct,
    bits_set,
    major_minor_differs,
};

// The leaf operators, by their TOML key.
std::optional<LeafOp> parse_leaf_op(std::string_view key);
std::string_view leaf_op_name(LeafOp op);

// "==2", ">=2", "<1", "2": how count/distinct compare.
struct CountTest {
    VersionOp op = VersionOp::eq;
    unsigned long n = 0;
    [[nodiscard]] bool holds(unsigned long value) const;
};
std::optional<CountTest> parse_count_test(std::string_view text);

// The operand of `matches`, compiled with Hyperscan (block mode, Hyperscan's PCRE subset):
// matching takes time linear in the fact's length and constant stack, whatever the fact holds.
// std::regex recursed once per repeated character and a 50 KB PYTORCH_HIP_ALLOC_CONF overflowed
// the stack (adversarial review 2026-11-28, D3). Copies share the compiled database.
class FactRegex {
public:
    // An error names what Hyperscan refused (unsupported construct, bad syntax).
    static Result<FactRegex> compile(const std::string& pattern);
    // Whether the pattern matches somewhere in `text` (any bytes; no UTF-8 assumed).
    [[nodiscard]] bool search(std::string_view text) const;

private:
    std::shared_ptr<const hs_database> m_db;
};

struct Leaf {
    std::string path;  // "gpu.override.relation", "driver.params.cwsr_enable"
    LeafOp op = LeafOp::exists;
    nlohmann::json value;  // the operand as written
    std::optional<FactRegex> regex;
    std::optional<VersionRange> range;
    std::optional<CountTest> count;
    unsigned line = 0;
};

class Predicate {
public:
    enum class Kind { all, any, negation, leaf };
    Kind kind = Kind::leaf;
    std::vector<Predicate> children;  // all/any: many, negation: one
    Leaf leaf;
};

struct EvalResult {
    bool holds = false;
    std::vector<Evidence> evidence;  // the leaves that decided the result
};

// gpu_index: the GPU that "gpu." refers to (gpu scope), nullopt in system scope.
EvalResult evaluate_predicate(const Predicate& p, const nlohmann::json& facts, std::optional<std::size_t> gpu_index);

// The top-level keys of the facts JSON a path may start with (plus "gpu" in gpu scope).
bool is_known_fact_root(std::string_view first_segment);

}  // namespace rmcp::kb
