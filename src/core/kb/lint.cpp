#include "kb/lint.hpp"

#include "kb/predicate.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace rmcp::kb {

namespace {

// Hosts whose pages are the vendor speaking (documentation, source, commits, mailing lists),
// and GitHub organisations whose repositories and trackers the vendor runs. Kept to the
// projects rmcp's advice depends on (docs/kb-format.md, "Confidence").
constexpr std::array<std::string_view, 14> k_vendor_hosts{
    "rocm.docs.amd.com", "amd.com",
    "www.amd.com",       "instinct.docs.amd.com",
    "pytorch.org",       "docs.pytorch.org",
    "docs.kernel.org",   "www.kernel.org",
    "kernel.org",        "git.kernel.org",
    "lore.kernel.org",   "llvm.org",
    "docs.python.org",   "gitlab.freedesktop.org",
};
constexpr std::array<std::string_view, 8> k_vendor_github_orgs{
    "rocm", "rocmsoftwareplatform", "radeonopencompute", "pytorch", "torvalds", "llvm", "python", "amd",
};
// Hosts that are discussion threads as a whole.
constexpr std::array<std::string_view, 8> k_thread_hosts{
    "discuss.pytorch.org", "community.amd.com", "www.reddit.com",    "reddit.com",
    "stackoverflow.com",   "askubuntu.com",     "bbs.archlinux.org", "forum.level1techs.com",
};

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

bool has(std::string_view set_member, auto const& set) {
    return std::find(set.begin(), set.end(), set_member) != set.end();
}

bool bare_cost(std::string_view cost) {
    // A cost that says nothing about what is lost: "none" alone must say why nothing is.
    std::string c = lower(cost);
    while (!c.empty() && (c.back() == '.' || c.back() == ' ')) c.pop_back();
    return c == "none" || c == "n/a" || c == "-" || c == "nothing" || c == "free";
}

}  // namespace

ReferenceKind classify_reference(std::string_view url) {
    ReferenceKind kind;
    const auto scheme = url.find("://");
    if (scheme == std::string_view::npos) return kind;
    std::string_view rest = url.substr(scheme + 3);
    const auto slash = rest.find('/');
    const std::string host = lower(rest.substr(0, slash));
    const std::string path = slash == std::string_view::npos ? std::string() : lower(rest.substr(slash));
    if (has(host, k_vendor_hosts) || host.ends_with(".amd.com") || host.ends_with(".kernel.org")) kind.vendor = true;
    if (has(host, k_thread_hosts)) kind.thread = true;
    if (host == "github.com" || host == "gitlab.freedesktop.org") {
        // /owner/repo/<kind>/...
        std::vector<std::string> parts;
        std::size_t start = 1;
        while (start < path.size()) {
            const auto end = path.find('/', start);
            parts.push_back(path.substr(start, end == std::string::npos ? std::string::npos : end - start));
            if (end == std::string::npos) break;
            start = end + 1;
        }
        if (host == "github.com" && !parts.empty() &&
            (has(parts[0], k_vendor_github_orgs) || parts[0].starts_with("rocm")))
            kind.vendor = true;
        for (const auto& p : parts)
            if (p == "issues" || p == "pull" || p == "discussions" || p == "merge_requests") kind.thread = true;
    }
    return kind;
}

std::string reference_address_problem(std::string_view url) {
    // Compared without case and scheme: GitHub's owner and repository names are case-insensitive.
    const std::string u = lower(url);
    const auto at = u.find("github.com/rocm/legacy-rocm-build/");
    if (at == std::string::npos) return {};
    const auto rest = std::string(url.substr(at + std::string_view("github.com/rocm/legacy-rocm-build/").size()));
    return fmt::format("{}: cite ROCm's tracker as users know it, https://github.com/ROCm/ROCm/{} (the same number; "
                       "legacy-rocm-build is the search index's name for it)",
                       url, rest);
}

std::vector<LintProblem> lint_reference_addresses(const std::vector<CitedBy>& sources) {
    std::vector<LintProblem> out;
    for (const auto& s : sources)
        for (const auto& r : s.references)
            if (auto why = reference_address_problem(r); !why.empty())
                out.push_back({s.id, s.file, "reference-address", std::move(why)});
    return out;
}

namespace {
// A version test that holds for every release from some version on (as the predicate is
// evaluated: under a negation `<X` becomes `>=X`): a rule that will fire on kernels and
// runtimes nobody has tested (docs/kb-format.md, "Severity").
void collect_open_ended(const Predicate& p, bool negated, std::vector<std::string>& out) {
    if (p.kind == Predicate::Kind::leaf) {
        if (p.leaf.op != LeafOp::version || !p.leaf.range) return;
        const bool open_ended = negated ? !p.leaf.range->bounded_below() : !p.leaf.range->bounded_above();
        if (open_ended)
            out.push_back(fmt::format("{} {}\"{}\"", p.leaf.path, negated ? "not " : "", p.leaf.range->text()));
        return;
    }
    for (const auto& c : p.children) collect_open_ended(c, negated != (p.kind == Predicate::Kind::negation), out);
}
}  // namespace

std::vector<LintProblem> lint(const KnowledgeBase& kb, const std::set<std::string>* patches,
                              const std::vector<HealthyMachine>& healthy) {
    std::vector<LintProblem> out;
    for (const auto& e : kb.entries) {
        const auto add = [&](std::string check, std::string message) {
            out.push_back({e.id, e.file, std::move(check), std::move(message)});
        };
        if (e.references.empty()) add("reference", "no reference: every entry needs at least one source");
        for (const auto& r : e.references)
            if (auto why = reference_address_problem(r); !why.empty()) add("reference-address", std::move(why));
        bool vendor = false;
        bool thread = false;
        for (const auto& r : e.references) {
            const auto k = classify_reference(r);
            vendor = vendor || k.vendor;
            thread = thread || k.thread;
        }
        switch (e.confidence) {
        case Confidence::vendor_confirmed:
            if (!vendor)
                add("confidence-source", "vendor-confirmed needs a vendor reference (AMD/ROCm documentation, "
                                         "source, tracker; PyTorch, kernel, LLVM or Python documentation or source)");
            break;
        case Confidence::user_confirmed:
            if (!thread)
                add("confidence-source", "user-confirmed needs a thread (issue, pull request, discussion, forum "
                                         "post) where the reporter verified the cause or the fix");
            break;
        case Confidence::reported:
            if (!thread && !vendor) add("confidence-source", "reported needs a thread or vendor page that reports it");
            break;
        case Confidence::hypothesis:
        case Confidence::generic: break;  // any reference: the documentation the reasoning rests on
        }
        // Severity discipline (docs/kb-format.md, "Severity"): a critical or a warning names a
        // failure a source shows, so it cannot rest on a hypothesis; one driven by a version
        // range states where the range ends.
        if (e.severity != Severity::info && e.confidence == Confidence::hypothesis)
            add("severity", fmt::format("{} with confidence hypothesis: a warning or critical needs a source that "
                                        "shows the failure (reported or better); otherwise make it info",
                                        severity_name(e.severity)));
        if (e.applies && e.severity != Severity::info) {
            std::vector<std::string> open_ended;
            collect_open_ended(*e.applies, false, open_ended);
            for (const auto& t : open_ended)
                add("version-unbounded",
                    fmt::format("{} has no upper bound: state the last release the sources cover (and the date "
                                "checked in notes), or drive the entry by log evidence",
                                t));
        }
        if (e.applies && e.fixes.empty() && e.severity != Severity::info)
            add("cost", "an entry that doctor reports above info needs at least one fix");
        for (const auto& f : e.fixes) {
            if (bare_cost(f.cost))
                add("cost", fmt::format("fix {}: cost \"{}\" says nothing; say what it costs or why it costs nothing",
                                        f.patch, f.cost));
            if (patches && patches->count(f.patch) == 0)
                add("patch", fmt::format("fix {}: no such patch in patches/", f.patch));
        }
        if (e.applies && e.severity != Severity::info) {
            for (const auto& m : healthy) {
                const auto found = evaluate(m.facts, e);
                if (found.empty()) continue;
                std::string why;
                for (const auto& ev : found.front().evidence)
                    why += fmt::format("{}{} = {} ({})", why.empty() ? "" : "; ", ev.fact,
                                       ev.value.is_null() ? "absent" : json_text(ev.value), ev.test);
                add("healthy-fires",
                    fmt::format("fires ({}) on the healthy machine {}: {}", severity_name(e.severity), m.name, why));
            }
        }
    }
    return out;
}

}  // namespace rmcp::kb
