// Test-only delays (test_delay.hpp). Process-wide, set once by the CLI before any work.
#include "util/test_delay.hpp"

#include <charconv>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace rmcp::test_hooks {

namespace {

struct Delays {
    std::vector<std::string> points;
    unsigned ms = 0;
};

Delays& delays() {
    static Delays d;
    return d;
}

}  // namespace

void set_delays(std::string_view spec) {
    Delays parsed;
    const auto colon = spec.rfind(':');
    if (colon != std::string_view::npos) {
        const std::string_view ms = spec.substr(colon + 1);
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(ms.data(), ms.data() + ms.size(), value);
        // At most 10 s a point: a typo must not turn a test run into a hang.
        if (ec == std::errc{} && end == ms.data() + ms.size() && value <= 10000) {
            parsed.ms = value;
            std::string_view list = spec.substr(0, colon);
            while (!list.empty()) {
                const auto comma = list.find(',');
                const std::string_view point = list.substr(0, comma);
                if (!point.empty()) parsed.points.emplace_back(point);
                list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
            }
        }
    }
    delays() = std::move(parsed);
}

void delay_at(std::string_view point) {
    const Delays& d = delays();
    if (d.ms == 0) return;
    for (const auto& p : d.points)
        if (p == point) {
            std::this_thread::sleep_for(std::chrono::milliseconds(d.ms));
            return;
        }
}

}  // namespace rmcp::test_hooks
