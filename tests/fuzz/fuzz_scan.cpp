// libFuzzer target for the scan parsers: host ELF section tables, plain and compressed
// offload bundles, AMDGPU code-object headers and notes, and the embedded-code search.
// Build: clang++ -fsanitize=fuzzer,address (RMCP_FUZZ=ON; see tests/fuzz/CMakeLists.txt).
#include "scan/bundle.hpp"
#include "scan/code_object.hpp"
#include "scan/scan.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const rmcp::scan::Bytes bytes{data, size};
    rmcp::scan::ScanLimits limits;
    limits.max_inflated = 64 * 1024;  // keep each run fast; the cap logic is what is tested
    // The file-level entry point decides by content: ELF, bundle, CCOB, or a raw sweep.
    (void)rmcp::scan::scan_image(bytes, "fuzz.so", limits);
    // The parsers on their own, at an odd base offset (offset arithmetic must not overflow).
    std::vector<rmcp::scan::Warning> warnings;
    (void)rmcp::scan::parse_bundle(bytes, UINT64_MAX - size, limits, warnings);
    (void)rmcp::scan::read_code_object(bytes, 0, warnings);
    if (size > 0 && size < 64) {
        const std::string text(reinterpret_cast<const char*>(data), size);
        (void)rmcp::scan::parse_entry_id(text);
        (void)rmcp::scan::parse_target_id(text);
        (void)rmcp::scan::target_from_file_name(text + ".kdb", rmcp::scan::FileKind::miopen_kdb);
    }
    return 0;
}
