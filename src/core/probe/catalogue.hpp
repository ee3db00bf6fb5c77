// The probe's scenario catalogue and workaround switches: data in probe/catalogue.toml
// (docs/probe.md). The C++ side expands families into scenarios and hands each worker a
// complete JSON scenario, so the worker never has to agree with us on expansion rules.
#pragma once

#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::probe {

using EnvMap = std::map<std::string, std::string>;

// One convolution call: what the worker runs and the fault map records.
struct Scenario {
    std::string id;  // "<family>-b<batch>-<fwd|bwd-data|bwd-weight>-<fp32|fp16>"
    std::string family;
    std::string op;                   // conv1d | conv2d
    std::string direction;            // forward | backward_data | backward_weight
    std::string dtype;                // float32 | float16
    std::vector<std::int64_t> input;  // with the batch dimension
    std::vector<std::int64_t> weight;
    std::vector<std::int64_t> stride, padding, dilation;
    std::int64_t groups = 1;
    bool quick = false;  // part of --quick
};

// One workaround: variables that only it sets.
struct Switch {
    std::string id;
    EnvMap env;
    std::vector<EnvMap> alternatives;  // other values of the same variables
    std::string profile;               // take env from this profile, resolved for the GPU
    std::string cost;
    std::string source;
};

struct Catalogue {
    std::vector<Scenario> scenarios;  // in file order
    std::vector<Switch> switches;
    // Variables that the runtime reads while `import torch` runs, so that a forked child
    // setting them comes too late: configurations that set one get their own fork server.
    std::vector<std::string> import_time;
    std::string file;
};

// Loads and validates a catalogue; errors name file:line (ExitCode::usage).
Result<Catalogue> load_catalogue(const std::filesystem::path& file);
Result<Catalogue> parse_catalogue(std::string_view text, const std::string& file);

// The scenarios to run: `names` are scenario ids or family names (empty: all, or the
// quick subset with `quick`). An unknown name is a usage error.
Result<std::vector<Scenario>> select_scenarios(const Catalogue& catalogue, const std::vector<std::string>& names,
                                               bool quick);

nlohmann::json scenario_to_json(const Scenario& s);
std::string direction_tag(std::string_view direction);  // forward → fwd, ...
std::string dtype_tag(std::string_view dtype);          // float32 → fp32, ...

}  // namespace rmcp::probe
