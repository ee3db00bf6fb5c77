// librmcp_xapian.so (src/core/similar/xapian_abi.h): Xapian behind a C interface of JSON text.
#include "similar/xapian_abi.h"
#include "util/text.hpp"

#include <nlohmann/json.hpp>
#include <xapian.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

namespace {

using nlohmann::json;

// Every document's id is a boolean term with this prefix (Xapian's convention for unique ids:
// "Q"), so that a search can leave documents out by id and ids never collide with terms,
// which are lower case or start with '<'.
constexpr const char* k_id_prefix = "Q";

json build(const json& req) {
    const std::string path = req.at("path").get<std::string>();
    Xapian::WritableDatabase db(path, Xapian::DB_CREATE | Xapian::DB_BACKEND_GLASS);
    unsigned count = 0;
    for (const auto& d : req.at("docs")) {
        Xapian::Document doc;
        for (const auto& t : d.at("terms")) doc.add_term(t.get<std::string>());
        doc.add_boolean_term(k_id_prefix + d.at("id").get<std::string>());
        doc.set_data(d.at("data").get<std::string>());
        db.add_document(doc);
        ++count;
    }
    const json meta = req.value("metadata", json::object());  // named: items() must not outlive it
    for (const auto& [key, value] : meta.items()) db.set_metadata(key, value.get<std::string>());
    db.commit();
    db.close();
    return {{"documents", count}};
}

json metadata(const json& req) {
    Xapian::Database db(req.at("path").get<std::string>());
    return {{"value", db.get_metadata(req.at("key").get<std::string>())}};
}

json search(const json& req) {
    Xapian::Database db(req.at("path").get<std::string>());
    std::vector<std::string> terms = req.at("terms").get<std::vector<std::string>>();
    json freq = json::object();
    for (const auto& t : terms) freq[t] = db.get_termfreq(t);
    json out{{"documents", db.get_doccount()}, {"hits", json::array()}};
    if (terms.empty()) {
        out["term_frequency"] = freq;
        return out;
    }
    Xapian::Query query(Xapian::Query::OP_OR, terms.begin(), terms.end());
    std::vector<std::string> excluded;
    for (const auto& id : req.value("exclude", json::array())) excluded.push_back(k_id_prefix + id.get<std::string>());
    if (!excluded.empty())
        query = Xapian::Query(Xapian::Query::OP_AND_NOT, query,
                              Xapian::Query(Xapian::Query::OP_OR, excluded.begin(), excluded.end()));
    Xapian::Enquire enquire(db);
    enquire.set_query(query);
    enquire.set_weighting_scheme(Xapian::BM25Weight());
    const auto limit = req.value("limit", 10U);
    const Xapian::MSet mset = enquire.get_mset(0, limit);
    for (auto it = mset.begin(); it != mset.end(); ++it) {
        const Xapian::Document doc = it.get_document();
        json hit_terms = json::array();
        std::string id;
        for (auto t = doc.termlist_begin(); t != doc.termlist_end(); ++t) {
            const std::string term = *t;
            if (term.rfind(k_id_prefix, 0) == 0) {
                id = term.substr(1);
                continue;
            }
            hit_terms.push_back(term);
            if (!freq.contains(term)) freq[term] = t.get_termfreq();
        }
        out["hits"].push_back(
            {{"id", id}, {"data", doc.get_data()}, {"weight", it.get_weight()}, {"terms", hit_terms}});
    }
    out["term_frequency"] = freq;
    return out;
}

char* copy_out(const std::string& text) {
    char* p = static_cast<char*>(std::malloc(text.size() + 1));
    if (p) std::memcpy(p, text.c_str(), text.size() + 1);
    return p;
}

}  // namespace

extern "C" int rmcp_xapian_abi(void) { return RMCP_XAPIAN_ABI; }

extern "C" char* rmcp_xapian_call(const char* request_json) {
    json answer;
    try {
        const json req = json::parse(request_json);
        const std::string op = req.at("op").get<std::string>();
        if (op == "build") answer = build(req);
        else if (op == "metadata") answer = metadata(req);
        else if (op == "search") answer = search(req);
        else answer = {{"error", "unknown request " + op}};
    } catch (const Xapian::Error& e) {
        answer = {{"error", e.get_description()}};
    } catch (const std::exception& e) {
        answer = {{"error", e.what()}};
    } catch (...) {
        answer = {{"error", "unknown failure"}};
    }
    return copy_out(rmcp::json_text(answer));
}

extern "C" void rmcp_xapian_free(char* answer) { std::free(answer); }
