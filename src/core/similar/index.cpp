#include "similar/index.hpp"

#include "explain/db_cache.hpp"
#include "similar/terms.hpp"
#include "similar/threads.hpp"

#include "similar/xapian_abi.h"
#include "util/text.hpp"

#include <fmt/format.h>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>

namespace rmcp::similar {

using nlohmann::json;

// Calibrated on the dev threads (leave-one-thread-out, 2026-11-28; docs/explain-accuracy.md,
// "Calibration"): below 0.3 the nearest thread's category is the log's in about half the
// cases or fewer (0.2-0.3: 15 of 28; 0.3-0.4: 13 of 19; at or above 0.7: 110 of 146).
const double k_show_similarity = 0.3;
const double k_vote_similarity = 0.3;

struct ThreadIndex::Module {
    void* handle = nullptr;
    char* (*call)(const char*) = nullptr;
    void (*release)(char*) = nullptr;

    // One request to librmcp_xapian.so; its {"error"} becomes an Error about `path`.
    [[nodiscard]] Result<json> request(const json& req, const std::string& doing, const std::string& path) const {
        char* answer = call(json_text(req).c_str());
        if (!answer) return Error{doing, path, "out of memory", ExitCode::environment};
        json out = json::parse(answer, nullptr, false);
        release(answer);
        if (out.is_discarded() || !out.is_object())
            return Error{doing, path, "unreadable answer from Xapian", ExitCode::environment};
        if (out.contains("error")) return Error{doing, path, out["error"].get<std::string>(), ExitCode::environment};
        return out;
    }
};

namespace {

constexpr const char* k_digest_key = "rmcp-digest";

// The module, opened once per process (dlopen keeps it for the process's life anyway).
Result<std::shared_ptr<const ThreadIndex::Module>> load_module(const ModulePaths& paths) {
    static std::mutex lock;
    static std::shared_ptr<const ThreadIndex::Module> loaded;
    const std::lock_guard guard(lock);
    if (loaded) return loaded;
    std::string tried;
    for (const auto& candidate : paths.candidates) {
        std::error_code ec;
        if (candidate.empty() || !std::filesystem::is_regular_file(candidate, ec)) continue;
        void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char* why = ::dlerror();
            return Error{"loading", candidate.string(), why ? why : "dlopen failed", ExitCode::environment};
        }
        auto abi = reinterpret_cast<int (*)()>(::dlsym(handle, "rmcp_xapian_abi"));
        auto module = std::make_shared<ThreadIndex::Module>();
        module->handle = handle;
        module->call = reinterpret_cast<char* (*)(const char*)>(::dlsym(handle, "rmcp_xapian_call"));
        module->release = reinterpret_cast<void (*)(char*)>(::dlsym(handle, "rmcp_xapian_free"));
        if (!abi || !module->call || !module->release || abi() != RMCP_XAPIAN_ABI) {
            ::dlclose(handle);
            return Error{"loading", candidate.string(), "not the librmcp_xapian.so of this rmcp",
                         ExitCode::environment};
        }
        loaded = module;
        return loaded;
    }
    for (const auto& c : paths.candidates) tried += (tried.empty() ? "" : ", ") + c.string();
    return Error{"finding", "librmcp_xapian.so", "not found (looked at " + tried + ")", ExitCode::environment};
}

// A digest for staleness, not for security (the cache directory's owner check is the guard,
// as in explain/db_cache.cpp): two 64-bit multiply-xorshift lanes over 8-byte words. SHA-256
// of the 600 KB of records took 33 M instructions, most of a lookup; this takes about 0.5 M.
std::string staleness_digest(std::string_view bytes) {
    std::uint64_t a = 0x9e3779b97f4a7c15ULL ^ bytes.size(), b = 0xc2b2ae3d27d4eb4fULL;
    std::size_t i = 0;
    auto mix = [](std::uint64_t h, std::uint64_t w, std::uint64_t k) {
        h = (h ^ w) * k;
        return h ^ (h >> 29);
    };
    for (; i + 8 <= bytes.size(); i += 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, bytes.data() + i, 8);
        a = mix(a, w, 0xff51afd7ed558ccdULL);
        b = mix(b, w, 0xc4ceb9fe1a85ec53ULL);
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
    a = mix(a, tail, 0xff51afd7ed558ccdULL);
    b = mix(b, tail + 1, 0xc4ceb9fe1a85ec53ULL);
    return fmt::format("{:016x}{:016x}", a, b);
}

// Whether `dir` is an index built from `digest`.
bool current(const ThreadIndex::Module& module, const std::filesystem::path& dir, const std::string& digest) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) return false;
    auto answer =
        module.request({{"op", "metadata"}, {"path", dir.string()}, {"key", k_digest_key}}, "reading", dir.string());
    return answer && (*answer)["value"] == digest;
}

// Only the user's own directory, which nobody else may write (explain/db_cache.hpp's rule).
bool own_directory(const std::filesystem::path& dir) {
    struct stat st {};
    return ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 022) == 0;
}

Status build_at(const ThreadIndex::Module& module, const std::filesystem::path& threads_dir,
                const std::filesystem::path& out, const std::string& digest) {
    auto records = load_threads(threads_dir);
    if (!records) return records.error();
    json docs = json::array();
    for (const auto& r : *records) {
        auto text = read_data_file(threads_dir / "excerpts" / r.excerpt);
        if (!text) return text.error();
        TermCollector terms;
        std::string_view rest = *text;
        while (!rest.empty()) {
            const auto nl = rest.find('\n');
            if (!terms.add_line(rest.substr(0, nl))) break;
            rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        }
        // An id per record: the URL, and the excerpt for a thread with two records.
        docs.push_back(
            {{"id", r.url + "#" + r.excerpt}, {"terms", terms.terms()}, {"data", json_text(record_json(r))}});
    }
    auto answer = module.request(
        {{"op", "build"}, {"path", out.string()}, {"metadata", {{k_digest_key, digest}}}, {"docs", std::move(docs)}},
        "building index", out.string());
    if (!answer) return answer.error();
    return ok_status();
}

}  // namespace

Result<std::string> threads_digest(const std::filesystem::path& threads_dir) {
    // The records' text and the excerpts' names and sizes, without parsing the records: a
    // lookup pays for this on every call (docs/PERFORMANCE.md, "Similar public reports").
    auto records_text = read_data_file(threads_dir / "threads.toml");
    if (!records_text) return records_text.error();
    std::string inputs = fmt::format("rmcp threads index, terms v{}, abi {}\n", k_terms_version, RMCP_XAPIAN_ABI);
    inputs += *records_text;
    std::vector<std::string> excerpts;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(threads_dir / "excerpts", ec), end; !ec && it != end;
         it.increment(ec)) {
        std::error_code size_ec;
        const auto size = it->file_size(size_ec);
        excerpts.push_back(
            fmt::format("\n{} {}", it->path().filename().string(), size_ec ? -1LL : static_cast<long long>(size)));
    }
    std::sort(excerpts.begin(), excerpts.end());
    for (const auto& e : excerpts) inputs += e;
    return staleness_digest(inputs);
}

Status ThreadIndex::build(const std::filesystem::path& threads_dir, const std::filesystem::path& out,
                          const ModulePaths& paths) {
    auto module = load_module(paths);
    if (!module) return module.error();
    auto digest = threads_digest(threads_dir);
    if (!digest) return digest.error();
    return build_at(**module, threads_dir, out, *digest);
}

Result<ThreadIndex> ThreadIndex::open(const std::filesystem::path& threads_dir, const ModulePaths& paths,
                                      const std::filesystem::path& build_index) {
    auto module = load_module(paths);
    if (!module) return module.error();
    auto digest = threads_digest(threads_dir);
    if (!digest) return digest.error();
    ThreadIndex index;
    index.m_module = *module;
    for (const auto& shipped : {threads_dir / "index", build_index}) {
        if (!shipped.empty() && current(**module, shipped, *digest)) {
            index.m_path = shipped;
            return index;
        }
    }
    const auto cache = explain::db_cache::directory();
    if (cache.empty())
        return Error{"finding", "the cache directory", "neither XDG_CACHE_HOME nor HOME is set", ExitCode::environment};
    const auto dir = cache / ("threads-" + digest->substr(0, 16));
    if (own_directory(dir) && current(**module, dir, *digest)) {
        index.m_path = dir;
        return index;
    }
    // Build beside it under a private name, then rename: a reader never sees half an index.
    std::error_code ec;
    std::filesystem::create_directories(cache, ec);
    ::chmod(cache.c_str(), 0700);
    const auto tmp = cache / fmt::format("threads-{}.tmp-{}", digest->substr(0, 16), ::getpid());
    std::filesystem::remove_all(tmp, ec);
    if (auto built = build_at(**module, threads_dir, tmp, *digest); !built) {
        std::filesystem::remove_all(tmp, ec);
        return built.error();
    }
    std::filesystem::remove_all(dir, ec);  // stale or foreign
    if (::rename(tmp.c_str(), dir.c_str()) != 0) {
        // Another rmcp renamed its copy first: use that one if current, else this one.
        std::filesystem::remove_all(tmp, ec);
        if (!current(**module, dir, *digest))
            return Error{"writing", dir.string(), "could not store the index", ExitCode::environment};
    }
    index.m_path = dir;
    return index;
}

Result<std::vector<SimilarReport>> ThreadIndex::nearest(const std::vector<std::string>& terms, std::size_t limit,
                                                        const std::vector<std::string>& exclude) const {
    std::vector<SimilarReport> out;
    if (terms.empty() || limit == 0) return out;
    // Document ids are URL#excerpt: exclusion by URL leaves out every record of that thread.
    auto answer = m_module->request({{"op", "search"},
                                     {"path", m_path.string()},
                                     {"terms", terms},
                                     {"limit", limit + 8 * exclude.size()},
                                     {"exclude", json::array()}},
                                    "searching", m_path.string());
    if (!answer) return answer.error();
    const double n = std::max(1.0, (*answer)["documents"].get<double>());
    const auto& freq = (*answer)["term_frequency"];
    auto idf = [&](const std::string& t) {
        const double df = freq.contains(t) ? freq[t].get<double>() : 0.0;
        return df > 0 ? std::log(1.0 + n / df) : 0.0;
    };
    double query_norm = 0;
    std::map<std::string, double> query_weight;
    for (const auto& t : terms) {
        const double w = idf(t);
        if (w > 0 && query_weight.emplace(t, w).second) query_norm += w * w;
    }
    for (const auto& hit : (*answer)["hits"]) {
        const std::string id = hit["id"].get<std::string>();
        const std::string url = id.substr(0, id.find('#'));
        if (std::find(exclude.begin(), exclude.end(), url) != exclude.end()) continue;
        double doc_norm = 0, shared = 0;
        for (const auto& t : hit["terms"]) {
            const double w = idf(t.get<std::string>());
            doc_norm += w * w;
            if (query_weight.contains(t.get<std::string>())) shared += w * w;
        }
        SimilarReport r;
        r.record = json::parse(hit["data"].get<std::string>(), nullptr, false);
        r.similarity = query_norm > 0 && doc_norm > 0 ? shared / std::sqrt(query_norm * doc_norm) : 0;
        out.push_back(std::move(r));
    }
    // BM25 found the candidates; they are shown by similarity (a number a user can compare).
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.similarity > b.similarity; });
    if (out.size() > limit) out.resize(limit);
    return out;
}

std::optional<Vote> vote(const std::vector<SimilarReport>& nearest) {
    std::map<std::string, std::pair<unsigned, double>> tally;  // category -> votes, similarity
    unsigned voters = 0;
    for (const auto& r : nearest) {
        if (voters == k_vote_threads) break;
        if (r.similarity < k_vote_similarity) break;
        ++voters;
        auto& t = tally[r.clean() ? std::string() : r.category()];
        ++t.first;
        t.second += r.similarity;
    }
    if (voters == 0) return std::nullopt;
    auto best = std::max_element(tally.begin(), tally.end(), [](const auto& a, const auto& b) {
        return a.second.first != b.second.first ? a.second.first < b.second.first : a.second.second < b.second.second;
    });
    if (best->first.empty()) return std::nullopt;  // most of them are clean runs
    // One thread is an anecdote: on the dev threads a clean log's nearest failing thread
    // reached similarity 1.0 (benign lines both print), but never two agreeing ones.
    if (best->second.first < k_min_votes) return std::nullopt;
    return Vote{best->first, best->second.first, voters};
}

std::filesystem::path build_tree_index(const std::filesystem::path& executable_dir) {
    return executable_dir.empty() ? std::filesystem::path() : executable_dir / "threads-index";
}

ModulePaths module_paths(const std::filesystem::path& executable_dir, const std::filesystem::path& library_dir) {
    ModulePaths paths;
    for (const auto& dir : {executable_dir, library_dir})
        if (!dir.empty()) paths.candidates.push_back(dir / "librmcp_xapian.so");
    return paths;
}

std::vector<SimilarReport> shown(std::vector<SimilarReport> nearest, std::size_t limit) {
    std::vector<SimilarReport> out;
    for (auto& r : nearest)
        if (r.similarity >= k_show_similarity && !r.clean() && out.size() < limit) out.push_back(std::move(r));
    return out;
}

json reports_json(const std::vector<SimilarReport>& reports) {
    json out = json::array();
    for (const auto& r : reports) {
        json item = r.record;
        item.erase("clean");
        item["similarity"] = std::round(r.similarity * 100) / 100;
        out.push_back(std::move(item));
    }
    return out;
}

}  // namespace rmcp::similar
