// The reporter's machine, read from a bug report: people paste `rocminfo`, `python -m
// torch.utils.collect_env`, `rocm-smi`/`amd-smi`, `uname -a`, `pip list`, environment lines
// and issue-template version fields next to the crash. explain reads those sections as
// facts about the machine the log came from and evaluates the knowledge base on them
// instead of on this machine (docs/explain.md, "Bug reports as facts").
//
//   ProbeHits (LogScanner, same Hyperscan pass as the signatures) → ReportReader → ReportFacts
//   ReportFacts → report_facts_document() → the facts JSON the kb evaluator reads
//
// Each probe is a line pattern (report_probes()); ReportReader parses the matched line and
// the lines after it. What a report does not show stays absent: a report never says the
// driver is unloaded or the user lacks a group because it did not mention them.
#pragma once

#include "explain/matcher.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rmcp::explain {

struct ReportGpu {
    // The chip's own target. Under an override, rocminfo and PyTorch show the overridden
    // target; the real one then comes from the marketing name, or stays unknown ("").
    std::string gfx_target;
    std::string shown_target;    // the target the text shows for it (possibly overridden)
    std::string marketing_name;  // as shown, "" when not shown
    std::string source;          // "rocminfo", "amd-smi", "rocm-smi", "collect_env", ...
};

struct ReportFacts {
    std::vector<ReportGpu> gpus;
    std::optional<std::string> rocm_version;
    std::optional<std::string> torch_version;
    std::optional<std::string> torch_hip_version;
    std::optional<std::string> kernel_release;
    std::map<std::string, std::string> env;  // relevant variables the text shows being set

    // Whether the report says enough about the machine to stand in for it: a GPU target or a
    // ROCm/PyTorch version. Environment lines alone (a training log echoing its settings)
    // do not describe a machine.
    [[nodiscard]] bool describes_machine() const;
};

// The line probes explain adds to its SignatureSet; ReportReader understands their hits.
std::span<const LineProbe> report_probes();

// Collects probe hits of any number of sources (fed in stream order per source) into one
// ReportFacts. Later values win for versions and variables (the last run of a pasted
// session is the one that crashed).
class ReportReader {
public:
    void add(const std::string& source, const ProbeHit& hit);
    [[nodiscard]] ReportFacts facts() const;

private:
    struct Candidate {
        int rank = 0;  // lower is better: rocminfo, amd-smi, rocm-smi, collect_env, torch, ollama, template
        std::string source;
        std::string input;  // which input it came from, to keep one source's list together
        std::string shown_target;
        std::string marketing_name;
        bool shows_real_target = false;  // read from KFD (smi tools, ollama), not the HSA runtime
        // One run of one tool (a rocminfo output, a collect_env GPU list, an agent
        // enumerator's lines): its rows are distinct GPUs, so eight alike are eight GPUs; the
        // same GPU in two listings is one.
        int listing = 0;
    };
    void gpu_line(const std::string& input, int rank, std::string source, std::string target, std::string name,
                  bool real, int listing);
    int new_listing() { return ++m_listings; }
    int listing_of(const std::string& key);  // one listing per key (a tool and an input)
    int m_listings = 0;
    std::map<std::string, int> m_keyed_listings;
    // rocminfo numbers its agents from 1: a number that does not grow starts another run. A
    // Name line without its "Agent N" just before (rocminfo | grep gfx, clinfo) is a listing
    // of its own, so that alike rows there stay one GPU.
    struct AgentLine {
        std::string input;
        std::uint64_t line = 0;
        unsigned long number = 0;
    };
    std::optional<AgentLine> m_last_agent;
    int m_rocminfo_listing = 0;
    std::vector<Candidate> m_gpus;
    // rocminfo prints "Name:" then "Marketing Name:" per agent (CPU and NPU agents too);
    // clinfo prints "Board name:" before its "Name:". Pairing goes by line distance.
    struct NameLine {
        std::string input;
        std::uint64_t line = 0;
        std::optional<std::size_t> gpu;  // index into m_gpus when the name is a gfx target
    };
    std::optional<NameLine> m_last_name;
    std::optional<std::pair<NameLine, std::string>> m_pending_board;
    std::map<std::string, std::pair<int, std::string>> m_versions;  // key → (source rank, value)
    std::map<std::string, std::string> m_env;
    void version(const std::string& key, int rank, std::string value);
};

// The facts document (the `detect --format json` shape) for the reporter's machine: GPUs
// with their targets, families and overrides derived the way detect derives them, versions,
// kernel release and environment. Everything the report does not show is absent (null).
nlohmann::json report_facts_document(const ReportFacts& facts);

// `"report_facts"` of explain's JSON: gpus [{gfx_target, marketing_name}], versions, env,
// kernel_release; absent fields omitted.
nlohmann::json report_facts_json(const ReportFacts& facts);

// One line for text output: "gfx1031 (AMD Radeon RX 6700 XT), ROCm 6.1.0, PyTorch 2.3.0+rocm6.0,
// HSA_OVERRIDE_GFX_VERSION=10.3.0, kernel 6.5.0-28-generic".
std::string report_facts_line(const ReportFacts& facts);

}  // namespace rmcp::explain
