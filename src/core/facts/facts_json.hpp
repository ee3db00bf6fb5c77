// The JSON projection of Facts: `detect --format json`, snapshot facts.json, and the
// document knowledge-base predicates address ("gpus.gfx_target", "driver.params.noretry").
#pragma once

#include "facts/facts.hpp"

#include <nlohmann/json.hpp>

namespace rmcp {

nlohmann::json facts_to_json(const Facts& facts);
std::string_view override_relation_name(OverrideRelation r);

}  // namespace rmcp
