// The fork server's messages (python/rmcp/zygote.py) as typed, validated values. They come
// from the user's interpreter and whatever it imported, so they are untrusted structured
// data (docs/security.md, "Untrusted child replies"): one function, parse_worker_message,
// checks every field's JSON type and range before anything reads it. A message that breaks
// the schema (a wrong type, a number out of range or not an integer, a missing or unknown
// key, text that is not JSON or not UTF-8, a packet cut at the size limit) is an error
// naming the field, never an exception (review 2026-11-28, D12).
//
// Nothing in a message is ever used as a process id (D9): the "pid" fields are checked and
// dropped. rmcp signals only what it started itself: the fork server's session (its own
// spawn), and a child's process group through the fork server ("signal" request).
#pragma once

#include "util/error.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rmcp::probe::protocol {

inline constexpr int k_protocol = 1;
// zygote.py MAX_MESSAGE: a packet this long may have been cut (SOCK_SEQPACKET truncates).
inline constexpr std::size_t k_max_message = std::size_t{1} << 20;

struct Hello {
    std::string python;  // "3.11.2"
    std::string executable;
    bool torch_found = false;
    std::string torch_origin;
    std::string torch_version;
    std::string torch_message;  // why it was not found
};

struct Ready {
    std::string torch_version;
    std::string gpu_build;  // "hip", "cuda", or "" (null: a CPU-only build)
    bool cuda_initialized = false;
    int threads = 0;
    std::vector<std::string> device_calls;
};

struct NoTorch {
    std::string message;
};

// Request ids are rmcp's own counter: positive, or absent (null) for a child the server did
// not know (it reaped something it never started).
struct Started {
    long id = 0;
};

struct Exited {
    std::optional<long> id;
    int wait_status = 0;  // as waitpid() reports it: 0..0xffff
};

struct Rejected {
    std::optional<long> id;
    std::string message;
};

struct StatusReply {  // "status" (the tests' request): recognised, never used by rmcp
    std::optional<long> id;
};

using Message = std::variant<Hello, Ready, NoTorch, Started, Exited, Rejected, StatusReply>;

// One packet as received; `truncated`: recv reported MSG_TRUNC. Errors carry only a cause
// ("field \"pid\" of \"started\": expected an integer from 1 to 2147483647, got \"x\""),
// with ExitCode::environment; the caller names the interpreter.
Result<Message> parse_worker_message(std::string_view packet, bool truncated = false);

// A child's report (the last JSON object line of its stdout, python/rmcp/worker.py): an open
// document, but every field rmcp reads or keeps in its result must have its type (status
// and message strings, times numbers, env_seen/env_inherited objects of strings, ...).
// Empty when it does; else why not, naming the field.
std::string child_report_problem(const nlohmann::json& report);

}  // namespace rmcp::probe::protocol
