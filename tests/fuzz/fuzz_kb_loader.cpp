// libFuzzer target: one knowledge-base TOML file (kb/loader.cpp), then evaluation of what
// loaded on a small facts document. Invariants: loading never crashes or throws; an error
// always names "kb/fuzz.toml:<line>" with exit code 2; a loaded entry evaluates without
// crashing and its findings carry the entry.
#include "kb/kb.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {
const nlohmann::json& facts() {
    static const auto f = nlohmann::json::parse(R"({
      "gpus": [{"node": 1, "gfx_target": "gfx1031", "family": "RDNA2", "integrated": false, "visible": true,
                "override": {"relation": "same_family", "target": "gfx1030", "valid": true}},
               {"node": null, "visible": false, "override": null}],
      "driver": {"loaded": true, "params": {"cwsr_enable": "1", "ppfeaturemask": "0xfff7bfff"},
                 "kernel_release": "6.8.0-45-generic", "dkms_version": null},
      "user": {"groups": [44, 109]}, "kfd": {"present": true, "accessible": false},
      "rocm": [{"version": "6.1.3"}], "torch": [{"hip_version": "6.0.32830-"}],
      "env": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, "render_nodes": [], "unreadable": []})");
    return f;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto entry = rmcp::kb::load_entry(text, "kb/fuzz.toml");
    if (!entry) {
        if (entry.error().code != rmcp::ExitCode::usage) std::abort();
        if (entry.error().path.rfind("kb/fuzz.toml:", 0) != 0) std::abort();
        return 0;
    }
    for (const auto& f : rmcp::kb::evaluate(facts(), *entry))
        if (f.entry != &*entry) std::abort();
    return 0;
}
