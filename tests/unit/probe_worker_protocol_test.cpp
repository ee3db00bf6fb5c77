// The fork server's messages parsed against their schema (probe/worker_protocol.cpp): every
// message the real zygote sends is accepted, and every field of the wrong type, out of
// range, missing or unknown is an error naming it, never an exception (review 2026-11-28,
// D9 and D12).
#include "probe/worker_protocol.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

namespace rmcp::probe::protocol {
namespace {

using json = nlohmann::json;

const json k_hello = {{"event", "hello"},
                      {"protocol", 1},
                      {"python", "3.11.2"},
                      {"executable", "/usr/bin/python3"},
                      {"pid", 4242},
                      {"torch", {{"found", true}, {"origin", "/x/torch/__init__.py"}, {"version", "2.3.0"}}}};
const json k_ready = {{"event", "ready"},     {"torch_version", "2.3.0+rocm6.0"}, {"gpu_build", "hip"},
                      {"hip_version", "6.0"}, {"cuda_version", nullptr},          {"cuda_initialized", false},
                      {"threads", 1},         {"device_calls", json::array()}};
const json k_started = {{"event", "started"}, {"id", 7}, {"pid", 4343}, {"zygote_threads", 1}};
const json k_exited = {{"event", "exited"}, {"id", 7}, {"pid", 4343}, {"wait_status", 9}};

Result<Message> parse(const json& message) { return parse_worker_message(message.dump()); }

// The cause of the error for `message`, which must fail.
std::string why(const json& message) {
    const auto parsed = parse(message);
    EXPECT_FALSE(parsed.ok()) << message.dump();
    if (parsed.ok()) return {};
    EXPECT_EQ(parsed.error().code, ExitCode::environment);
    return parsed.error().cause;
}

json with(json message, const std::string& key, json value) {
    message[key] = std::move(value);
    return message;
}

json without(json message, const std::string& key) {
    message.erase(key);
    return message;
}

TEST(ProbeWorkerProtocol, TheZygotesOwnMessagesParse) {
    const auto hello = parse(k_hello);
    ASSERT_TRUE(hello.ok()) << hello.error().cause;
    const auto& h = std::get<Hello>(*hello);
    EXPECT_EQ(h.python, "3.11.2");
    EXPECT_TRUE(h.torch_found);
    EXPECT_EQ(h.torch_version, "2.3.0");

    const auto ready = parse(k_ready);
    ASSERT_TRUE(ready.ok()) << ready.error().cause;
    EXPECT_EQ(std::get<Ready>(*ready).gpu_build, "hip");
    EXPECT_EQ(std::get<Ready>(*ready).threads, 1);
    EXPECT_EQ(std::get<Ready>(*parse(with(k_ready, "gpu_build", nullptr))).gpu_build, "");

    const auto started = parse(k_started);
    ASSERT_TRUE(started.ok()) << started.error().cause;
    EXPECT_EQ(std::get<Started>(*started).id, 7);

    const auto exited = parse(k_exited);
    ASSERT_TRUE(exited.ok()) << exited.error().cause;
    EXPECT_EQ(std::get<Exited>(*exited).id, 7);
    EXPECT_EQ(std::get<Exited>(*exited).wait_status, 9);
    EXPECT_FALSE(std::get<Exited>(*parse(with(k_exited, "id", nullptr))).id.has_value());  // a stranger reaped

    const auto no_torch = parse(json{{"event", "no_torch"}, {"message", "import torch failed"}});
    ASSERT_TRUE(no_torch.ok());
    EXPECT_EQ(std::get<NoTorch>(*no_torch).message, "import torch failed");
    EXPECT_TRUE(parse(json{{"event", "rejected"}, {"id", 3}, {"message", "unknown op"}}).ok());
    EXPECT_TRUE(parse(json{{"event", "status"},
                           {"id", 3},
                           {"cuda_initialized", false},
                           {"threads", 1},
                           {"device_calls", json::array()}})
                    .ok());
    // The torch of a missing install: found false, with a message.
    EXPECT_TRUE(parse(with(k_hello, "torch", {{"found", false}, {"message", "No module named 'torch'"}})).ok());
}

TEST(ProbeWorkerProtocol, PidsMustBeIntegersFromOneToIntMax) {
    // D9: 0 was kill(0) (rmcp's own group), 2^32+1 became kill(-1) once truncated to int.
    for (const json& pid : {json(0), json(-1), json(-4343), json(4294967297LL), json(1LL << 40), json(1e300),
                            json(43.5), json("4343"), json(true), json(nullptr), json::array({4343})}) {
        const std::string cause = why(with(k_started, "pid", pid));
        EXPECT_NE(cause.find("field \"pid\" of \"started\""), std::string::npos) << cause;
        EXPECT_NE(cause.find("an integer from 1 to 2147483647"), std::string::npos) << cause;
        EXPECT_FALSE(parse(with(k_exited, "pid", pid)).ok()) << pid.dump();
    }
    EXPECT_NE(why(without(k_started, "pid")).find("field \"pid\" is missing"), std::string::npos);
    EXPECT_TRUE(parse(with(k_started, "pid", 2147483647)).ok());
}

TEST(ProbeWorkerProtocol, EveryFieldIsTypeAndRangeChecked) {
    // D12's eight variants, and the rest of the schema.
    EXPECT_NE(why(with(k_hello, "python", 3)).find("\"python\" of \"hello\": expected a string"), std::string::npos);
    EXPECT_NE(why(with(k_hello, "torch", "yes")).find("\"torch\" of \"hello\": expected an object"), std::string::npos);
    EXPECT_NE(why(with(k_hello, "torch", {{"found", "yes"}})).find("\"found\""), std::string::npos);
    EXPECT_NE(why(with(k_hello, "torch", {{"found", true}, {"version", 2}})).find("\"version\""), std::string::npos);
    EXPECT_NE(why(with(k_hello, "protocol", 2)).find("\"protocol\""), std::string::npos);
    EXPECT_NE(why(with(k_hello, "protocol", 1.0)).find("\"protocol\""), std::string::npos);
    EXPECT_NE(why(without(k_hello, "torch")).find("\"torch\" is missing"), std::string::npos);
    EXPECT_NE(why(with(k_hello, "python", std::string(100'000, '3'))).find("at most 64 bytes"), std::string::npos);
    EXPECT_NE(why(with(k_ready, "threads", "x")).find("\"threads\""), std::string::npos);
    EXPECT_NE(why(with(k_ready, "threads", -1)).find("\"threads\""), std::string::npos);
    EXPECT_NE(why(with(k_ready, "threads", 1e300)).find("\"threads\""), std::string::npos);
    EXPECT_NE(why(with(k_ready, "cuda_initialized", "no")).find("\"cuda_initialized\""), std::string::npos);
    EXPECT_NE(why(with(k_ready, "device_calls", {1})).find("\"device_calls\""), std::string::npos);
    EXPECT_NE(why(with(k_ready, "device_calls", "init")).find("\"device_calls\""), std::string::npos);
    EXPECT_NE(why(with(k_ready, "gpu_build", "metal")).find("\"gpu_build\""), std::string::npos);
    EXPECT_NE(why(with(k_ready, "torch_version", 2.3)).find("\"torch_version\""), std::string::npos);
    EXPECT_NE(why(with(k_started, "id", "1")).find("\"id\""), std::string::npos);
    EXPECT_NE(why(with(k_started, "id", 0)).find("\"id\""), std::string::npos);
    EXPECT_NE(why(with(k_started, "id", 1e300)).find("\"id\""), std::string::npos);
    EXPECT_NE(why(with(k_started, "id", nullptr)).find("\"id\""), std::string::npos);  // only exited may say null
    EXPECT_NE(why(with(k_exited, "wait_status", "x")).find("\"wait_status\""), std::string::npos);
    EXPECT_NE(why(with(k_exited, "wait_status", 65536)).find("\"wait_status\""), std::string::npos);
    EXPECT_NE(why(with(k_exited, "wait_status", -1)).find("\"wait_status\""), std::string::npos);
    EXPECT_NE(why(json{{"event", "no_torch"}, {"message", json::array()}}).find("\"message\""), std::string::npos);
    EXPECT_NE(why(json{{"event", "rejected"}, {"id", 1}}).find("\"message\" is missing"), std::string::npos);
}

TEST(ProbeWorkerProtocol, UnknownKeysAndEventsAreRefused) {
    EXPECT_NE(why(with(k_started, "extra", 1)).find("unexpected field \"extra\""), std::string::npos);
    EXPECT_NE(why(with(k_hello, "torch", {{"found", true}, {"evil", 1}})).find("\"evil\""), std::string::npos);
    EXPECT_NE(why(json{{"event", "hullo"}}).find("unknown event \"hullo\""), std::string::npos);
    EXPECT_NE(why(json{{"event", 5}}).find("\"event\""), std::string::npos);
    EXPECT_NE(why(json{{"id", 1}}).find("\"event\""), std::string::npos);
}

TEST(ProbeWorkerProtocol, BytesThatAreNotAJsonObjectAreRefused) {
    const auto refuse = [](std::string_view bytes, bool truncated = false) {
        const auto parsed = parse_worker_message(bytes, truncated);
        EXPECT_FALSE(parsed.ok()) << bytes.substr(0, 60);
        return parsed.ok() ? std::string() : parsed.error().cause;
    };
    EXPECT_NE(refuse("{\"event\": \"hello\", \"python\": \"\xff\xfe\"}").find("not UTF-8"), std::string::npos);
    EXPECT_NE(refuse("hello").find("not JSON"), std::string::npos);
    EXPECT_NE(refuse("").find("not JSON"), std::string::npos);
    EXPECT_NE(refuse("[1, 2]").find("not a JSON object"), std::string::npos);
    EXPECT_NE(refuse(k_started.dump(), /*truncated=*/true).find("the protocol's limit"), std::string::npos);
    EXPECT_NE(refuse(std::string(k_max_message, ' ')).find("the protocol's limit"), std::string::npos);
    EXPECT_NE(refuse(std::string(100'000, '[')).find("not JSON"), std::string::npos);  // deep, unclosed
}

TEST(ProbeWorkerProtocol, AChildReportsFieldsHaveTheirTypes) {
    const json ok = {{"schema_version", 1},
                     {"scenario", "tiny"},
                     {"status", "ok"},
                     {"median_ms", 1.5},
                     {"min_ms", 1},
                     {"times_ms", {1.5, 1.25}},
                     {"env_seen", {{"A", "1"}}},
                     {"env_inherited", json::object()},
                     {"torch_version", "2.3.0"},
                     {"gfx_target", nullptr},
                     {"miopen_enabled", true}};
    EXPECT_EQ(child_report_problem(ok), "");
    EXPECT_EQ(child_report_problem(json{{"status", "device"}, {"available", true}, {"count", 2}, {"name", "gfx"}}), "");
    EXPECT_NE(child_report_problem(with(ok, "status", 1)).find("\"status\""), std::string::npos);
    EXPECT_NE(child_report_problem(without(ok, "status")).find("\"status\" is missing"), std::string::npos);
    EXPECT_NE(child_report_problem(with(ok, "median_ms", "x")).find("\"median_ms\""), std::string::npos);
    EXPECT_NE(child_report_problem(with(ok, "times_ms", {"x"})).find("\"times_ms\""), std::string::npos);
    EXPECT_NE(child_report_problem(with(ok, "env_seen", {{"A", 1}})).find("\"env_seen\""), std::string::npos);
    EXPECT_NE(child_report_problem(with(ok, "message", json::object())).find("\"message\""), std::string::npos);
    EXPECT_NE(child_report_problem(with(ok, "count", -1)).find("\"count\""), std::string::npos);
    EXPECT_NE(child_report_problem(with(ok, "available", "yes")).find("\"available\""), std::string::npos);
    EXPECT_NE(child_report_problem(json::array()), "");
}

}  // namespace
}  // namespace rmcp::probe::protocol
