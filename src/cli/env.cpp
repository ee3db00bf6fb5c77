// `rmcp env [--profile NAME|auto] [--shell sh|fish|dotenv]`: the environment of a profile,
// safely quoted for eval (docs/patches.md "Profiles"). The user's profile.env (written by
// env patches) comes first, then the profile's own changes.
#include "context.hpp"
#include "json_output.hpp"
#include "process/spawn.hpp"

#include "detect/detect.hpp"
#include "facts/facts.hpp"
#include "facts/facts_json.hpp"
#include "kb/doctor.hpp"
#include "kb/kb.hpp"
#include "kb/libraries.hpp"
#include "scan/coverage.hpp"
#include "patch/auto_profile.hpp"
#include "patch/patch.hpp"
#include "patch/profile.hpp"
#include "util/strings.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>

namespace rmcp::cli {

namespace {

struct EnvOptions {
    std::string profile = "default";
    std::string shell = "sh";
    std::string profile_dir;
    std::string patch_dir;
};

// dotenv: the value in single quotes. Inside them nothing is special to sh (POSIX 2.2.2), so a
// file sourced with `set -a; . FILE` runs nothing and expands nothing, and dotenv readers
// (docker compose, python-dotenv) take a single-quoted value literally too. What has no
// spelling both read the same way (a ' or a line break in the value) is refused, naming the
// variable: double quotes left backticks to sh (adversarial review 2026-11-28, D17).
Result<std::string> dotenv_line(const std::string& name, std::string_view v) {
    if (v.find_first_of("'\n\r") != std::string_view::npos)
        return Error{"writing dotenv", name,
                     "its value holds a ' or a line break, which dotenv cannot quote the way sh reads it; use "
                     "--shell sh",
                     ExitCode::usage};
    return fmt::format("{}='{}'\n", name, v);
}

int do_env(Context& ctx, const EnvOptions& eo) {
    // The output is shell syntax (--shell); json wraps it in one document (docs/exit-codes.md).
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    auto root = ctx.open_root();
    if (!root) return fail(ctx, root.error());
    const std::filesystem::path profile_dir =
        eo.profile_dir.empty() ? ctx.data_dir() / "profiles" : std::filesystem::path(eo.profile_dir);
    std::vector<std::string> profile_notes;
    auto profiles =
        patch::load_profiles_with_user(profile_dir, *root, process::current_environment_map(), profile_notes);
    if (!profiles) return fail(ctx, profiles.error());
    for (const auto& n : profile_notes) ctx.diag.note(n);

    const Facts facts = detect(*root);
    const auto targets = patch::gpu_targets(facts);
    std::optional<patch::ProfileEnv> resolved;
    if (eo.profile == "auto") {
        // The one auto decision (patch/auto_profile.hpp), on the facts doctor evaluates.
        auto doctor_facts = facts_to_json(facts);
        kb::merge_libraries(doctor_facts, scan::libraries_facts(*root, facts));
        patch::AutoSources sources{profile_dir / "rules" / "auto.toml",
                                   eo.patch_dir.empty() ? ctx.data_dir() / "patches"
                                                        : std::filesystem::path(eo.patch_dir),
                                   ctx.kb_dir()};
        auto decision = patch::choose_auto(*profiles, facts, doctor_facts, sources);
        if (!decision) return fail(ctx, decision.error());
        for (const auto& n : decision->notes) ctx.diag.note(n);
        for (const auto& v : decision->verbose) ctx.diag.verbose(v);
        resolved = std::move(decision->env);
    } else {
        auto named = profiles->resolve(eo.profile, targets);
        if (!named) return fail(ctx, named.error());
        resolved = std::move(*named);
    }
    for (const auto& n : resolved->notes) ctx.diag.note(n);

    // The user's profile.env first; the profile's changes override it.
    patch::UserEnv user;
    const std::string env_file = patch::user_env_file_path(process::current_environment_map());
    if (auto text = root->read_file(env_file)) {
        auto parsed = patch::parse_user_env(*text, root->host_path(env_file));
        if (!parsed) return fail(ctx, parsed.error());
        user = *parsed;
    }
    std::map<std::string, std::string> set = user.set;
    std::vector<std::string> unset = user.unset;
    for (const auto& k : resolved->unset) {
        set.erase(k);
        if (std::find(unset.begin(), unset.end(), k) == unset.end()) unset.push_back(k);
    }
    for (const auto& [k, v] : resolved->set) {
        set[k] = v;
        unset.erase(std::remove(unset.begin(), unset.end(), k), unset.end());
    }
    std::sort(unset.begin(), unset.end());

    // The output is shell code, and may be read on a terminal: a value with a terminal control
    // (ESC, C1, DEL, other C0 than tab and newline) is refused rather than printed raw or changed.
    for (const auto& [k, v] : set)
        if (has_terminal_controls(v, Shown::lines))
            return fail(ctx, Error{"printing the environment", k,
                                   fmt::format("its value holds a control character ('{}'); fix it where it is set",
                                               terminal_safe(v, Shown::lines)),
                                   ExitCode::usage});
    std::string out;
    for (const auto& k : unset) {
        if (eo.shell == "fish") out += fmt::format("set -e {}\n", k);
        else if (eo.shell == "dotenv") out += fmt::format("# unset {} (dotenv cannot express unset)\n", k);
        else out += fmt::format("unset {}\n", k);
    }
    for (const auto& [k, v] : set) {
        if (eo.shell == "fish") out += fmt::format("set -gx {} {}\n", k, fish_quote(v));
        else if (eo.shell == "dotenv") {
            auto line = dotenv_line(k, v);
            if (!line) return fail(ctx, line.error());
            out += *line;
        } else out += fmt::format("export {}={}\n", k, sh_quote(v));
    }
    if (*format == OutputFormat::json) {
        // One document on every exit path (docs/exit-codes.md): the same script, and its parts.
        nlohmann::json set_json = nlohmann::json::object();
        for (const auto& [k, v] : set) set_json[k] = v;
        ctx.out.print("{}", json_output(ctx, nlohmann::json{{"schema_version", 1},
                                                            {"shell", eo.shell},
                                                            {"set", set_json},
                                                            {"unset", unset},
                                                            {"script", out}}));
        return 0;
    }
    // Nothing to print is an answer too, said where a script's eval does not read it (newcomer
    // review, finding 13): a silent empty output looked like a failure.
    if (out.empty())
        ctx.diag.note(eo.profile == "default"
                          ? fmt::format("no profile applied: {} holds no changes (an env patch writes it: `{} patch "
                                        "apply ID`), and the default profile changes nothing",
                                        shown_path(*root, env_file), command_prefix(ctx))
                          : fmt::format("profile {} changes nothing on this machine", eo.profile));
    ctx.out.print("{}", out);
    return 0;
}

}  // namespace

void add_env_command(CLI::App& app, Context& ctx, Action& action) {
    static EnvOptions eo;
    auto* cmd = app.add_subcommand("env", "Print a profile's environment, ready for eval");
    cmd->add_option("--profile", eo.profile, "Profile name, or auto (from this machine's facts and findings)")
        ->type_name("NAME|auto");
    cmd->add_option("--shell", eo.shell, "Output syntax: sh, fish or dotenv")
        ->check(CLI::IsMember({"sh", "fish", "dotenv"}))
        ->type_name("SHELL");
    cmd->add_option("--profile-dir", eo.profile_dir, "Profile definitions (default: the shipped profiles/)")
        ->type_name("DIR");
    cmd->add_option("--patch-dir", eo.patch_dir, "Patch definitions (default: the shipped patches/)")->type_name("DIR");
    cmd->footer("sh:   eval \"$(rmcp env --profile miopen-no-gemm)\"\n"
                "fish: rmcp env --profile miopen-no-gemm --shell fish | source\n"
                "Profiles (least to most strict): see docs/patches.md; `auto` is chosen by profiles/rules/auto.toml "
                "and doctor's findings.");
    cmd->callback([&] { action = [&] { return do_env(ctx, eo); }; });
}

}  // namespace rmcp::cli
