// The probe's orchestration: the baseline pass over all scenarios under the default
// configuration (which gives the fault map), and --bisect, the search for the smallest
// set of workaround switches under which every scenario passes, then the fastest
// passing configuration by measured time. Pure logic over a ScenarioRunner.
#pragma once

#include "probe/catalogue.hpp"
#include "probe/runner.hpp"

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rmcp::probe {

// One change of the search space: a switch, or one of its alternative values.
struct Change {
    std::string id;  // switch id, or "<switch id>=<alternative index + 1>" for alternatives
    EnvMap env;
};

struct Configuration {
    std::vector<Change> changes;  // in switch order

    [[nodiscard]] EnvMap env() const;
    [[nodiscard]] std::string key() const;  // "default" or "a+b+c"
    [[nodiscard]] std::vector<std::string> ids() const;
};

struct ConfigurationResult {
    Configuration configuration;
    std::map<std::string, ScenarioResult> results;  // by scenario id

    // No failure among `ids` (scenarios never run here count as not passing).
    [[nodiscard]] bool passes(const std::vector<std::string>& ids) const;
    // Sum of medians over `ids`, when all of them ran ok or unsupported.
    [[nodiscard]] std::optional<double> total_ms(const std::vector<std::string>& ids) const;
};

struct BisectStep {
    std::string configuration;  // key
    std::string scenario;
    Outcome outcome;
    std::string phase;  // "search" | "verify" | "fastest"
};

struct BisectReport {
    bool found = false;                    // some configuration passed every scenario
    std::vector<std::string> minimal;      // ids of the smallest passing set of switches
    std::optional<Configuration> fastest;  // the fastest passing configuration measured
    std::optional<double> fastest_total_ms;
    std::optional<double> default_total_ms;  // when the default passes, for comparison
    int search_runs = 0;                     // child runs spent finding the minimal set
    int verify_runs = 0;                     // running the minimal set on every scenario
    int fastest_runs = 0;                    // alternatives timed for the fastest configuration
    std::vector<BisectStep> steps;
    std::string note;  // why nothing was found, when so
};

struct ProgressEvent {
    int index = 0;                // 1-based child count
    int total = 0;                // 0 when unknown (bisect)
    std::optional<double> eta_s;  // seconds the rest of the phase should take (baseline), or of
                                  // the configuration under test (bisect)
    // Bisect: this child's place among the scenarios the configuration under test runs (the
    // search's own length is not known in advance); 0 in the baseline.
    int in_configuration = 0;
    int configuration_total = 0;
    std::string phase;  // "baseline", "search", "verify", "fastest"
    const Configuration* configuration = nullptr;
    const Scenario* scenario = nullptr;
    const ScenarioResult* result = nullptr;
};
using ProgressSink = std::function<void(const ProgressEvent&)>;

// Multiply-adds of one call of the scenario's convolution: what its time grows with.
double scenario_work(const Scenario& s);

// Expected wall seconds of a child as a + b * work, least squares over the children measured
// so far (a: the fixed cost of a child, b: seconds per multiply-add on this device).
class EtaModel {
public:
    void add(double work, double wall_s);
    [[nodiscard]] std::optional<double> estimate(double work) const;

private:
    double m_n = 0, m_x = 0, m_y = 0, m_xx = 0, m_xy = 0;
};

struct ProbeRun {
    std::vector<Scenario> scenarios;
    ConfigurationResult baseline;  // the default configuration
    std::optional<BisectReport> bisect;
    std::vector<ConfigurationResult> configurations;  // every configuration run (baseline first)
    int child_runs = 0;
};

class Probe {
public:
    Probe(ScenarioRunner& runner, std::vector<Scenario> scenarios, ProgressSink progress = {})
        : m_runner(runner), m_scenarios(std::move(scenarios)), m_progress(std::move(progress)) {}

    // Every scenario under the default configuration.
    Status run_baseline();
    // Needs run_baseline() first. `switches` are the usable ones (profile switches resolved).
    Status bisect(const std::vector<Switch>& switches);

    [[nodiscard]] ProbeRun result() const;
    [[nodiscard]] int child_runs() const { return m_child_runs; }

private:
    // Runs the scenarios (failing-first order) under `c` until one fails; cached.
    Result<bool> test(const Configuration& c, const std::vector<std::string>& ids, const std::string& phase);
    Result<const ScenarioResult*> run_one(const Configuration& c, const Scenario& s, const std::string& phase);
    ConfigurationResult& slot(const Configuration& c);
    [[nodiscard]] const Scenario& scenario(const std::string& id) const;
    [[nodiscard]] std::vector<std::string> all_ids() const;

    ScenarioRunner& m_runner;
    std::vector<Scenario> m_scenarios;
    ProgressSink m_progress;
    std::deque<ConfigurationResult> m_configs;  // baseline first; a deque keeps references stable
    std::optional<BisectReport> m_bisect;
    std::string m_last_failing;              // scenario that failed most recently: tried first
    std::vector<const Scenario*> m_pending;  // the baseline's scenarios not yet run (for the ETA)
    // Bisect: the scenarios test() runs for the configuration under test, and how many ran.
    std::vector<const Scenario*> m_testing;
    int m_tested = 0;
    EtaModel m_eta;
    int m_child_runs = 0;
    int* m_phase_counter = nullptr;
};

// The smallest subset of `changes` for which `passes` holds, assuming passes(all) and
// monotonicity (adding workarounds never breaks a passing set). One necessary change is
// found per round by binary search over prefixes, so k necessary changes among n cost at
// most k * (ceil(log2 n) + 1) + 1 calls. Exposed for unit tests.
Result<std::vector<std::size_t>> minimal_passing_subset(
    std::size_t n, const std::function<Result<bool>(const std::vector<std::size_t>&)>& passes);

}  // namespace rmcp::probe
