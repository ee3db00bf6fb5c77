#include "probe/probe.hpp"

#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace rmcp::probe {

EnvMap Configuration::env() const {
    EnvMap env;
    for (const auto& c : changes) env.insert(c.env.begin(), c.env.end());
    return env;
}

std::string Configuration::key() const {
    if (changes.empty()) return "default";
    std::vector<std::string_view> ids;
    for (const auto& c : changes) ids.push_back(c.id);
    return join(ids, "+");
}

std::vector<std::string> Configuration::ids() const {
    std::vector<std::string> ids;
    for (const auto& c : changes) ids.push_back(c.id);
    return ids;
}

bool ConfigurationResult::passes(const std::vector<std::string>& ids) const {
    return std::all_of(ids.begin(), ids.end(), [&](const std::string& id) {
        const auto it = results.find(id);
        return it != results.end() && !is_failure(it->second.outcome);
    });
}

std::optional<double> ConfigurationResult::total_ms(const std::vector<std::string>& ids) const {
    double total = 0;
    for (const auto& id : ids) {
        const auto it = results.find(id);
        if (it == results.end() || is_failure(it->second.outcome)) return std::nullopt;
        total += it->second.median_ms;
    }
    return total;
}

double scenario_work(const Scenario& s) {
    // Output elements x (input channels per group x kernel volume); every direction does
    // about this much (backward-data and backward-weight are the same product rearranged).
    double out =
        s.input.empty() ? 0 : static_cast<double>(s.input[0]) * static_cast<double>(s.weight.empty() ? 0 : s.weight[0]);
    for (std::size_t d = 2; d < s.input.size() && d < s.weight.size(); ++d) {
        const std::size_t i = d - 2;
        const double size = static_cast<double>(s.input[d]);
        const double pad = i < s.padding.size() ? static_cast<double>(s.padding[i]) : 0;
        const double dil = i < s.dilation.size() ? static_cast<double>(s.dilation[i]) : 1;
        const double stride = i < s.stride.size() ? static_cast<double>(std::max<std::int64_t>(s.stride[i], 1)) : 1;
        const double k = static_cast<double>(s.weight[d]);
        out *= std::max(0.0, std::floor((size + 2 * pad - dil * (k - 1) - 1) / stride) + 1) * k;
    }
    return out * (s.weight.size() > 1 ? static_cast<double>(s.weight[1]) : 1);
}

void EtaModel::add(double work, double wall_s) {
    m_n += 1;
    m_x += work;
    m_y += wall_s;
    m_xx += work * work;
    m_xy += work * wall_s;
}

std::optional<double> EtaModel::estimate(double work) const {
    if (m_n == 0) return std::nullopt;
    const double mean_x = m_x / m_n, mean_y = m_y / m_n;
    const double var = m_xx / m_n - mean_x * mean_x;
    double a = mean_y, b = 0;
    if (m_n >= 2 && var > 1e-12 * std::max(1.0, mean_x * mean_x)) {
        b = (m_xy / m_n - mean_x * mean_y) / var;
        a = mean_y - b * mean_x;
        if (b < 0) {  // noise: time does not shrink with work; the mean is the better guess
            a = mean_y;
            b = 0;
        } else if (a < 0) {  // no fixed cost: proportional through the origin
            a = 0;
            b = m_xy / m_xx;
        }
    }
    return std::max(0.0, a + b * work);
}

Result<std::vector<std::size_t>> minimal_passing_subset(
    std::size_t n, const std::function<Result<bool>(const std::vector<std::size_t>&)>& passes) {
    std::vector<std::size_t> required;
    std::vector<std::size_t> candidates(n);
    for (std::size_t i = 0; i < n; ++i) candidates[i] = i;
    const auto with = [](std::vector<std::size_t> base, const std::vector<std::size_t>& cand, std::size_t count) {
        base.insert(base.end(), cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(count));
        std::sort(base.begin(), base.end());
        return base;
    };
    // Invariant: passes(required ∪ candidates) holds.
    for (;;) {
        auto now = passes(with(required, candidates, 0));
        if (!now) return now.error();
        if (*now || candidates.empty()) break;
        // The shortest prefix of the candidates that, added to required, passes: its last
        // change is necessary (without it the prefix before it fails, and so does any
        // subset of that, by monotonicity).
        std::size_t lo = 1, hi = candidates.size();
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            auto ok = passes(with(required, candidates, mid));
            if (!ok) return ok.error();
            if (*ok) hi = mid;
            else lo = mid + 1;
        }
        required.push_back(candidates[hi - 1]);
        candidates.resize(hi - 1);
    }
    std::sort(required.begin(), required.end());
    return required;
}

ConfigurationResult& Probe::slot(const Configuration& c) {
    const std::string key = c.key();
    for (auto& r : m_configs)
        if (r.configuration.key() == key) return r;
    m_configs.push_back(ConfigurationResult{c, {}});
    return m_configs.back();
}

const Scenario& Probe::scenario(const std::string& id) const {
    for (const auto& s : m_scenarios)
        if (s.id == id) return s;
    return m_scenarios.front();  // ids come from m_scenarios
}

std::vector<std::string> Probe::all_ids() const {
    std::vector<std::string> ids;
    for (const auto& s : m_scenarios) ids.push_back(s.id);
    return ids;
}

Result<const ScenarioResult*> Probe::run_one(const Configuration& c, const Scenario& s, const std::string& phase) {
    ConfigurationResult& r = slot(c);
    if (const auto it = r.results.find(s.id); it != r.results.end()) return &it->second;
    auto result = m_runner.run(s, c.env());
    if (!result) return result.error();
    ++m_child_runs;
    if (m_phase_counter) ++*m_phase_counter;
    ConfigurationResult& again = slot(c);
    const ScenarioResult* stored = &(again.results[s.id] = std::move(*result));
    if (m_bisect) m_bisect->steps.push_back({c.key(), s.id, stored->outcome, phase});
    m_eta.add(scenario_work(s), stored->wall_s);
    std::erase(m_pending, &s);
    if (m_progress) {
        ProgressEvent e;
        e.index = m_child_runs;
        e.total = phase == "baseline" ? static_cast<int>(m_scenarios.size()) : 0;
        if (phase == "baseline") {
            double left = 0;
            for (const Scenario* p : m_pending) left += m_eta.estimate(scenario_work(*p)).value_or(0);
            e.eta_s = left;
        } else if (!m_testing.empty()) {
            // The configuration under test: this child's place among its scenarios, and the
            // time the rest of them should take if every one passes (newcomer review, finding 23).
            e.in_configuration = ++m_tested;
            e.configuration_total = static_cast<int>(m_testing.size());
            double left = 0;
            for (std::size_t i = static_cast<std::size_t>(m_tested); i < m_testing.size(); ++i)
                left += m_eta.estimate(scenario_work(*m_testing[i])).value_or(0);
            e.eta_s = left;
        }
        e.phase = phase;
        e.configuration = &again.configuration;
        e.scenario = &s;
        e.result = stored;
        m_progress(e);
    }
    return stored;
}

Result<bool> Probe::test(const Configuration& c, const std::vector<std::string>& ids, const std::string& phase) {
    std::vector<std::string> order = ids;
    // The scenario that failed last is the likeliest to fail again: one child decides.
    if (const auto it = std::find(order.begin(), order.end(), m_last_failing); it != order.end())
        std::rotate(order.begin(), it, it + 1);
    // What this configuration still has to run (results it already has are not run again).
    m_testing.clear();
    m_tested = 0;
    const ConfigurationResult& known = slot(c);
    for (const auto& id : order)
        if (!known.results.contains(id)) m_testing.push_back(&scenario(id));
    for (const auto& id : order) {
        auto r = run_one(c, scenario(id), phase);
        if (!r) return r.error();
        if (is_failure((*r)->outcome)) {
            m_last_failing = id;
            m_testing.clear();
            return false;
        }
    }
    m_testing.clear();
    return true;
}

Status Probe::run_baseline() {
    const Configuration none;
    m_pending.clear();
    for (const auto& s : m_scenarios) m_pending.push_back(&s);
    for (const auto& s : m_scenarios) {
        auto r = run_one(none, s, "baseline");
        if (!r) return r.error();
    }
    return ok_status();
}

Status Probe::bisect(const std::vector<Switch>& switches) {
    m_bisect = BisectReport{};
    BisectReport& report = *m_bisect;
    const ConfigurationResult baseline = m_configs.front();
    const std::vector<std::string> all = all_ids();
    std::vector<std::string> must;
    for (const auto& id : all)
        if (!baseline.passes({id})) must.push_back(id);
    report.default_total_ms = baseline.total_ms(all);
    if (must.empty()) {
        report.found = true;
        report.fastest = Configuration{};
        report.fastest_total_ms = report.default_total_ms;
        report.note = "every scenario passes under the default configuration";
        return ok_status();
    }

    std::vector<Change> changes;
    for (const auto& sw : switches) changes.push_back({sw.id, sw.env});
    const auto config_of = [&](const std::vector<std::size_t>& subset) {
        Configuration c;
        for (const auto i : subset) c.changes.push_back(changes[i]);
        return c;
    };

    std::vector<std::size_t> minimal;
    for (int round = 0;; ++round) {
        m_phase_counter = &report.search_runs;
        std::vector<std::size_t> everything(changes.size());
        for (std::size_t i = 0; i < changes.size(); ++i) everything[i] = i;
        auto all_pass = test(config_of(everything), must, "search");
        if (!all_pass) return all_pass.error();
        if (!*all_pass) {
            const auto& failing = slot(config_of(everything)).results.at(m_last_failing);
            report.note = fmt::format("no combination of the {} switches makes every scenario pass: with all of "
                                      "them {} still ends {}",
                                      changes.size(), m_last_failing, outcome_name(failing.outcome));
            m_phase_counter = nullptr;
            return ok_status();
        }
        auto found = minimal_passing_subset(changes.size(), [&](const std::vector<std::size_t>& subset) {
            return test(config_of(subset), must, "search");
        });
        if (!found) return found.error();
        minimal = *found;

        // Scenarios that passed by default were not run during the search: a workaround
        // may break them. Verify on everything; a newly broken one joins the search.
        m_phase_counter = &report.verify_runs;
        auto verified = test(config_of(minimal), all, "verify");
        if (!verified) return verified.error();
        if (*verified || round == 2) break;
        for (const auto& [id, r] : slot(config_of(minimal)).results)
            if (is_failure(r.outcome) && std::find(must.begin(), must.end(), id) == must.end()) must.push_back(id);
    }
    const Configuration chosen = config_of(minimal);
    report.minimal = chosen.ids();
    if (!slot(chosen).passes(all)) {
        report.note = "the smallest set found still fails some scenario after re-searching; the switches interact";
        m_phase_counter = nullptr;
        return ok_status();
    }
    report.found = true;

    // The fastest passing configuration: the minimal set, and the minimal set with each
    // member replaced by each of its alternative values.
    m_phase_counter = &report.fastest_runs;
    std::vector<Configuration> candidates{chosen};
    for (std::size_t m = 0; m < minimal.size(); ++m) {
        const Switch& sw = switches[minimal[m]];
        for (std::size_t a = 0; a < sw.alternatives.size(); ++a) {
            Configuration c = chosen;
            c.changes[m] = Change{fmt::format("{}={}", sw.id, a + 1), sw.alternatives[a]};
            candidates.push_back(std::move(c));
        }
    }
    for (const auto& c : candidates) {
        auto passed = test(c, all, "fastest");
        if (!passed) return passed.error();
        const auto total = slot(c).total_ms(all);
        if (*passed && total && (!report.fastest_total_ms || *total < *report.fastest_total_ms)) {
            report.fastest = c;
            report.fastest_total_ms = total;
        }
    }
    m_phase_counter = nullptr;
    return ok_status();
}

ProbeRun Probe::result() const {
    ProbeRun run;
    run.scenarios = m_scenarios;
    if (!m_configs.empty()) run.baseline = m_configs.front();
    run.bisect = m_bisect;
    run.configurations.assign(m_configs.begin(), m_configs.end());
    run.child_runs = m_child_runs;
    return run;
}

}  // namespace rmcp::probe
