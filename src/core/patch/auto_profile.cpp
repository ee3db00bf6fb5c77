#include "patch/auto_profile.hpp"

#include "facts/facts.hpp"
#include "util/toml_read.hpp"

#include <fstream>
#include <sstream>

namespace rmcp::patch {

namespace detail = toml_read;
using detail::data_error;
using detail::line_of;

namespace {
Result<std::optional<bool>> opt_bool_condition(const toml::table& t, std::string_view key, const std::string& file) {
    const toml::node* n = t.get(key);
    if (!n) return std::optional<bool>{};
    if (!n->is_boolean()) return data_error(file, line_of(*n), fmt::format("'{}' must be true or false", key));
    return std::optional<bool>{n->as_boolean()->get()};
}
}  // namespace

Result<AutoChoice> choose_auto_profile(const ProfileSet& profiles, const std::filesystem::path& rules_file,
                                       const Facts& facts) {
    const std::string file = rules_file.string();
    std::ifstream in(rules_file, std::ios::binary);
    if (!in) return Error{"reading auto-profile rules", file, "cannot open", ExitCode::environment};
    std::stringstream buf;
    buf << in.rdbuf();
    auto parsed = detail::parse_toml(buf.str(), file);
    if (!parsed) return parsed.error();
    if (auto s = detail::check_keys(*parsed, file, {"rule"}, "the auto-profile rules"); !s) return s.error();
    const toml::node* rules = parsed->get("rule");
    if (!rules || !rules->is_array_of_tables()) return data_error(file, 1, "expected [[rule]] tables");

    const auto targets = gpu_targets(facts);
    for (const auto& item : *rules->as_array()) {
        const auto& t = *item.as_table();
        const unsigned line = line_of(item);
        if (auto s = detail::check_keys(t, file,
                                        {"profile", "why", "gpu_count", "kfd_accessible", "officially_supported",
                                         "override_applies"},
                                        "a rule");
            !s)
            return s.error();
        auto name = detail::req_string(t, "profile", file, line);
        if (!name) return name.error();
        auto why = detail::req_string(t, "why", file, line);
        if (!why) return why.error();
        const Profile* profile = profiles.find(*name);
        if (!profile) return data_error(file, line, fmt::format("rule names no profile: '{}'", *name));
        bool holds = true;
        if (const toml::node* n = t.get("gpu_count")) {
            if (!n->is_integer()) return data_error(file, line_of(*n), "'gpu_count' must be an integer");
            holds = holds && static_cast<std::int64_t>(targets.size()) == n->as_integer()->get();
        }
        auto kfd = opt_bool_condition(t, "kfd_accessible", file);
        if (!kfd) return kfd.error();
        // An unknown fact never satisfies a condition.
        if (*kfd) holds = holds && facts.kfd.accessible.is_known() && *facts.kfd.accessible == **kfd;
        auto supported = opt_bool_condition(t, "officially_supported", file);
        if (!supported) return supported.error();
        if (*supported) {
            bool all_supported = !facts.gpus.empty();
            bool all_known = true;
            for (const auto& g : facts.gpus) {
                all_known = all_known && g.officially_supported.is_known();
                all_supported = all_supported && g.officially_supported.value_or(false);
            }
            holds = holds && all_known && all_supported == **supported;
        }
        auto applies = opt_bool_condition(t, "override_applies", file);
        if (!applies) return applies.error();
        if (*applies) holds = holds && ProfileSet::override_applies(*profile, targets) == **applies;
        if (holds) return AutoChoice{*name, *why, line};
    }
    return Error{"choosing a profile with", file, "no rule matched (end the file with a rule without conditions)",
                 ExitCode::usage};
}

}  // namespace rmcp::patch
