#include "probe/worker_protocol.hpp"

#include "util/text.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <set>

namespace rmcp::probe::protocol {

namespace {

using json = nlohmann::json;

constexpr std::size_t k_max_short = 4096;       // versions, paths, names
constexpr std::size_t k_max_text = 64 * 1024;   // messages (an exception's text)
constexpr std::size_t k_max_device_calls = 64;  // zygote.py's tripwires are 17 names
constexpr long long k_max_threads = 1'000'000;

// A value as the error shows it: short, and JSON (valid UTF-8 by now).
std::string shown(const json& v) {
    std::string text = json_text(v);
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
}

// The fields of one object of one message, read once each; the first violation is kept and
// every later read returns a default. finish() refuses keys the schema does not name.
class Fields {
public:
    Fields(const json& object, std::string where) : m_object(object), m_where(std::move(where)) {}

    std::string text(const char* key, std::size_t max, bool required = true) {
        const json* v = get(key, required);
        if (!v) return {};
        if (!v->is_string()) return fail(key, "a string", *v), std::string();
        const auto& s = v->get_ref<const std::string&>();
        if (s.size() > max) return fail(key, fmt::format("a string of at most {} bytes", max), *v), std::string();
        return s;
    }

    // null reads as "".
    std::string text_or_null(const char* key, std::size_t max) {
        const json* v = get(key, false);
        if (!v || v->is_null()) return {};
        return text(key, max);
    }

    bool boolean(const char* key, bool required = true) {
        const json* v = get(key, required);
        if (!v) return false;
        if (!v->is_boolean()) return fail(key, "true or false", *v), false;
        return v->get<bool>();
    }

    // An integer (not a float, not a bool) in [lo, hi]; nullable: null reads as nullopt.
    std::optional<long long> integer(const char* key, long long lo, long long hi, bool required = true,
                                     bool nullable = false) {
        const json* v = get(key, required);
        if (!v) return std::nullopt;
        if (nullable && v->is_null()) return std::nullopt;
        const std::string expected =
            fmt::format("an integer from {} to {}{}", lo, hi, nullable ? std::string(" or null") : std::string());
        if (!v->is_number_integer()) return fail(key, expected, *v), std::nullopt;
        if (v->is_number_unsigned()) {
            const auto u = v->get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(hi) || static_cast<long long>(u) < lo)
                return fail(key, expected, *v), std::nullopt;
            return static_cast<long long>(u);
        }
        const auto i = v->get<std::int64_t>();
        if (i < lo || i > hi) return fail(key, expected, *v), std::nullopt;
        return i;
    }

    const json* object(const char* key, bool required = true) {
        const json* v = get(key, required);
        if (v && !v->is_object()) return fail(key, "an object", *v), nullptr;
        return v;
    }

    std::vector<std::string> strings(const char* key, std::size_t max_items, std::size_t max_each,
                                     bool required = true) {
        std::vector<std::string> out;
        const json* v = get(key, required);
        if (!v) return out;
        if (!v->is_array() || v->size() > max_items)
            return fail(key, fmt::format("an array of at most {} strings", max_items), *v), out;
        for (const auto& item : *v) {
            if (!item.is_string() || item.get_ref<const std::string&>().size() > max_each)
                return fail(key, fmt::format("an array of strings of at most {} bytes", max_each), item), out;
            out.push_back(item.get<std::string>());
        }
        return out;
    }

    // Every key of the object must have been read: an unknown one is refused.
    [[nodiscard]] const std::optional<std::string>& error() const { return m_error; }

    std::optional<std::string> finish() {
        if (!m_error)
            for (const auto& [key, _] : m_object.items())
                if (!m_read.contains(key)) {
                    m_error = fmt::format("{}: unexpected field {}", m_where, shown(json(key)));
                    break;
                }
        return m_error;
    }

    void require(bool holds, const char* key, std::string_view expected) {
        if (!holds && !m_error) {
            const auto it = m_object.find(key);
            m_error = fmt::format("field \"{}\" of {}: expected {}, got {}", key, m_where, expected,
                                  it == m_object.end() ? std::string("nothing") : shown(*it));
        }
    }

private:
    const json* get(const char* key, bool required) {
        m_read.insert(key);
        const auto it = m_object.find(key);
        if (it == m_object.end()) {
            if (required && !m_error) m_error = fmt::format("{}: field \"{}\" is missing", m_where, key);
            return nullptr;
        }
        return m_error ? nullptr : &*it;
    }
    void fail(const char* key, std::string_view expected, const json& got) {
        if (!m_error)
            m_error = fmt::format("field \"{}\" of {}: expected {}, got {}", key, m_where, expected, shown(got));
    }

    const json& m_object;
    std::string m_where;
    std::set<std::string> m_read;
    std::optional<std::string> m_error;
};

Error schema_error(std::string cause) { return Error{"", "", std::move(cause), ExitCode::environment}; }

// What ends every parse: the first violation (of the message or a nested object), or the value.
Result<Message> finished(std::initializer_list<Fields*> all, Message message) {
    for (Fields* f : all)
        if (auto why = f->finish()) return schema_error(std::move(*why));
    return message;
}

std::optional<long> id_of(const std::optional<long long>& v) {
    return v ? std::optional<long>(static_cast<long>(*v)) : std::nullopt;
}

}  // namespace

Result<Message> parse_worker_message(std::string_view packet, bool truncated) {
    if (truncated || packet.size() >= k_max_message)
        return schema_error(fmt::format("a message of {} bytes or more (the protocol's limit)", k_max_message));
    const json doc = json::parse(packet.begin(), packet.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return schema_error("a message that is not JSON (or not UTF-8)");
    if (!doc.is_object()) return schema_error(fmt::format("a message that is not a JSON object: {}", shown(doc)));
    const auto event_it = doc.find("event");
    if (event_it == doc.end() || !event_it->is_string())
        return schema_error(fmt::format("a message without a string \"event\": {}", shown(doc)));
    const std::string event = event_it->get<std::string>();
    Fields f(doc, "\"" + event + "\"");
    f.text("event", 64);
    constexpr long long k_max_id = LONG_MAX;
    // Checked, then dropped: never a pid for rmcp (D9).
    const auto check_pid = [&](bool required) { (void)f.integer("pid", 1, INT_MAX, required); };

    if (event == "hello") {
        Hello h;
        const auto version = f.integer("protocol", 0, INT_MAX);
        f.require(!version || *version == k_protocol, "protocol", fmt::format("{}", k_protocol));
        h.python = f.text("python", 64);
        h.executable = f.text("executable", k_max_short, false);
        check_pid(false);
        const json* torch = f.object("torch");
        static const json k_none = json::object();
        Fields t(torch ? *torch : k_none, "\"torch\" of \"hello\"");
        if (torch) {
            h.torch_found = t.boolean("found");
            h.torch_origin = t.text("origin", k_max_short, false);
            h.torch_version = t.text("version", 256, false);
            h.torch_message = t.text("message", k_max_text, false);
        }
        return finished({&f, &t}, std::move(h));
    }
    if (event == "ready") {
        Ready r;
        r.torch_version = f.text("torch_version", 256);
        r.gpu_build = f.text_or_null("gpu_build", 16);
        f.require(r.gpu_build.empty() || r.gpu_build == "hip" || r.gpu_build == "cuda", "gpu_build",
                  "\"hip\", \"cuda\" or null");
        (void)f.text_or_null("hip_version", 256);
        (void)f.text_or_null("cuda_version", 256);
        r.cuda_initialized = f.boolean("cuda_initialized");
        r.threads = static_cast<int>(f.integer("threads", 0, k_max_threads).value_or(0));
        r.device_calls = f.strings("device_calls", k_max_device_calls, 256);
        return finished({&f}, std::move(r));
    }
    if (event == "no_torch") {
        NoTorch n;
        n.message = f.text("message", k_max_text);
        return finished({&f}, std::move(n));
    }
    if (event == "started") {
        Started s;
        s.id = static_cast<long>(f.integer("id", 1, k_max_id).value_or(0));
        check_pid(true);
        (void)f.integer("zygote_threads", 0, k_max_threads, false);
        return finished({&f}, s);
    }
    if (event == "exited") {
        Exited e;
        e.id = id_of(f.integer("id", 1, k_max_id, true, true));
        check_pid(true);
        e.wait_status = static_cast<int>(f.integer("wait_status", 0, 0xffff).value_or(0));
        return finished({&f}, e);
    }
    if (event == "rejected") {
        Rejected r;
        r.id = id_of(f.integer("id", 1, k_max_id, true, true));
        r.message = f.text("message", k_max_text);
        return finished({&f}, std::move(r));
    }
    if (event == "status") {
        StatusReply s;
        s.id = id_of(f.integer("id", 1, k_max_id, true, true));
        (void)f.boolean("cuda_initialized");
        (void)f.integer("threads", 0, k_max_threads);
        (void)f.strings("device_calls", k_max_device_calls, 256);
        return finished({&f}, s);
    }
    return schema_error(fmt::format("a message with an unknown event {}", shown(*event_it)));
}

std::string child_report_problem(const json& report) {
    if (!report.is_object()) return "the report is not a JSON object";
    Fields f(report, "the child's report");
    (void)f.text("status", 64);
    (void)f.text("message", k_max_text, false);
    for (const char* key : {"torch_version", "device_name", "gfx_target", "name", "hip_version", "cuda_version"})
        (void)f.text_or_null(key, k_max_short);
    (void)f.boolean("available", false);
    (void)f.integer("count", 0, 1'000'000, false);
    const auto number = [&](const char* key) {
        const auto it = report.find(key);
        if (it != report.end()) f.require(it->is_number(), key, "a number");
    };
    for (const char* key : {"median_ms", "min_ms", "tolerance"}) number(key);
    // A non-finite error is written as a word (JSON has no NaN or infinity: worker.py writes "inf").
    if (const auto it = report.find("error"); it != report.end())
        f.require(it->is_number() || (it->is_string() && it->get_ref<const std::string&>().size() <= 16), "error",
                  "a number, or a word for a non-finite one");
    if (const auto it = report.find("times_ms"); it != report.end()) {
        const bool numbers = it->is_array() && it->size() <= 100'000 &&
                             std::all_of(it->begin(), it->end(), [](const json& t) { return t.is_number(); });
        f.require(numbers, "times_ms", "an array of numbers");
    }
    for (const char* key : {"env_seen", "env_inherited"})
        if (const auto it = report.find(key); it != report.end()) {
            const bool strings =
                it->is_object() && std::all_of(it->begin(), it->end(), [](const json& v) { return v.is_string(); });
            f.require(strings, key, "an object of strings");
        }
    // Other keys are the worker's own (schema_version, scenario, ...): not read here.
    return f.error().value_or("");
}

}  // namespace rmcp::probe::protocol
