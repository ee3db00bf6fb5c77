// Test-only fault injection: a pause at named points of the patch machinery (before every
// journal or directory lock, before the rename of every atomic write), so that a stress test
// can widen the windows a preemption or a slow disk would open (docs/testing.md,
// "Concurrency stress"). Off unless the CLI turns it on, which it does only from
// RMCP_TEST_DELAY_AT under a --root other than "/" (docs/patches.md, test-only hooks).
#pragma once

#include <string_view>

namespace rmcp::test_hooks {

// `spec` is "POINT[,POINT...]:MS", e.g. "lock,rename:20"; an empty or malformed spec turns
// every delay off. Points: "lock", "rename".
void set_delays(std::string_view spec);

// Sleeps for the configured time when `point` is configured; otherwise returns at once.
void delay_at(std::string_view point);

}  // namespace rmcp::test_hooks
