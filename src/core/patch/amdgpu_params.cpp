#include "patch/amdgpu_params.hpp"

#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace rmcp::patch {

namespace {
enum class ParamType { integer_set, integer_range, mask, timeout_list };
struct ParamRule {
    std::string_view name;
    ParamType type;
    std::int64_t lo;
    std::int64_t hi;
    std::initializer_list<std::int64_t> allowed;
    std::string_view meaning;
};

// Names from docs/domain.md; ranges from the MODULE_PARM_DESC strings in amdgpu_drv.c.
const ParamRule k_params[] = {
    {"noretry", ParamType::integer_set, 0, 0, {-1, 0, 1}, "-1 auto, 0 retry on page faults, 1 no retry"},
    {"vm_fragment_size", ParamType::integer_range, 4, 31, {-1}, "-1 auto, else 4..31 (bits)"},
    {"vm_update_mode",
     ParamType::integer_set,
     0,
     0,
     {-1, 0, 1, 2, 3},
     "-1 auto, 0 SDMA, 1 CPU gfx, 2 CPU compute, 3 both"},
    {"vm_fault_stop", ParamType::integer_set, 0, 0, {0, 1, 2}, "0 never, 1 first fault, 2 always"},
    {"mtype_local", ParamType::integer_set, 0, 0, {0, 1, 2}, "0 RW, 1 NC, 2 CC"},
    {"gpu_recovery", ParamType::integer_set, 0, 0, {-1, 0, 1}, "-1 auto, 0 off, 1 on"},
    {"sg_display", ParamType::integer_set, 0, 0, {-1, 0}, "-1 auto, 0 off"},
    {"cwsr_enable", ParamType::integer_set, 0, 0, {0, 1}, "0 off, 1 on"},
    {"lockup_timeout", ParamType::timeout_list, 0, 0, {}, "up to 4 comma-separated timeouts in ms (0 or -1: default)"},
    {"ppfeaturemask", ParamType::mask, 0, 0xffffffff, {}, "a 32-bit mask, e.g. 0xfff7bfff"},
    {"mes", ParamType::integer_set, 0, 0, {0, 1}, "0 off, 1 on"},
};

const ParamRule* find_param(std::string_view name) {
    for (const auto& p : k_params)
        if (p.name == name) return &p;
    return nullptr;
}

bool is_int(std::string_view s) {
    if (!s.empty() && s.front() == '-') s.remove_prefix(1);
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
}  // namespace

std::vector<std::string_view> known_amdgpu_parameters() {
    std::vector<std::string_view> out;
    for (const auto& p : k_params) out.push_back(p.name);
    return out;
}

std::optional<std::string> check_amdgpu_parameter(std::string_view name, std::string_view value) {
    const ParamRule* rule = find_param(name);
    if (!rule) {
        return fmt::format("unknown amdgpu module parameter '{}' (known: {})", name,
                           join(known_amdgpu_parameters(), ", "));
    }
    const auto bad = [&] { return fmt::format("invalid value '{}' for amdgpu.{}: {}", value, name, rule->meaning); };
    switch (rule->type) {
    case ParamType::integer_set:
    case ParamType::integer_range: {
        if (!is_int(value) || value.size() > 12) return bad();
        const auto v = std::stoll(std::string(value));
        const bool in_set = std::find(rule->allowed.begin(), rule->allowed.end(), v) != rule->allowed.end();
        const bool in_range = rule->type == ParamType::integer_range && v >= rule->lo && v <= rule->hi;
        if (!in_set && !in_range) return bad();
        return std::nullopt;
    }
    case ParamType::mask: {
        std::optional<std::uint64_t> v;
        if (value.size() > 2 && (value.substr(0, 2) == "0x" || value.substr(0, 2) == "0X")) v = parse_hex(value);
        else v = parse_u64(value);
        if (!v || *v > 0xffffffffULL) return bad();
        return std::nullopt;
    }
    case ParamType::timeout_list: {
        std::size_t parts = 0;
        std::size_t start = 0;
        while (true) {
            const auto comma = value.find(',', start);
            const auto part =
                value.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
            if (!is_int(part) || part.size() > 10 || std::stoll(std::string(part)) < -1) return bad();
            ++parts;
            if (comma == std::string_view::npos) break;
            start = comma + 1;
        }
        if (parts > 4) return bad();
        return std::nullopt;
    }
    }
    return bad();
}

}  // namespace rmcp::patch
