#include "scan/bundle.hpp"

#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <memory>

namespace rmcp::scan {

namespace {

struct RawEntry {
    std::uint64_t offset = 0;  // from the bundle start
    std::uint64_t size = 0;
    std::string id;
    std::uint64_t table_pos = 0;  // where the entry's record starts, from the bundle start
};

enum class TableStatus { complete, need_more, malformed };

struct Table {
    TableStatus status = TableStatus::malformed;
    std::vector<RawEntry> entries;
    std::uint64_t end = 0;  // first byte after the table
    Warning problem;        // offset relative to the bundle start
};

std::string printable(std::string_view raw) {
    std::string out;
    out.reserve(raw.size());
    for (const char c : raw) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f && c != '\\') out += c;
        else out += fmt::format("\\x{:02x}", u);
    }
    return out;
}

// Reads the entry table of a plain bundle at buf[0]. need_more: buf ends inside the table.
Table parse_table(Bytes buf, const ScanLimits& limits) {
    Table t;
    const auto count = read_le<std::uint64_t>(buf, k_bundle_magic.size());
    if (!count) {
        t.status = TableStatus::need_more;
        return t;
    }
    std::uint64_t pos = k_bundle_magic.size() + 8;
    // Each record is at least 24 bytes: a count that cannot fit is hostile, not truncated,
    // unless the buffer is only a prefix (the caller decides by what it can inflate).
    if (*count > limits.max_entries) {
        t.problem = {k_bundle_magic.size(),
                     fmt::format("bundle claims {} entries (limit {})", *count, limits.max_entries)};
        return t;
    }
    for (std::uint64_t i = 0; i < *count; ++i) {
        const auto off = read_le<std::uint64_t>(buf, pos);
        const auto size = read_le<std::uint64_t>(buf, pos + 8);
        const auto id_len = read_le<std::uint64_t>(buf, pos + 16);
        if (!off || !size || !id_len) {
            t.status = TableStatus::need_more;
            t.problem = {pos, fmt::format("bundle entry table ends inside entry {} of {}", i, *count)};
            return t;
        }
        if (*id_len > limits.max_entry_id) {
            t.problem = {pos + 16, fmt::format("bundle entry {} has an id of {} bytes (limit {})", i, *id_len,
                                               limits.max_entry_id)};
            return t;
        }
        const auto id = sub(buf, pos + 24, *id_len);
        if (!id) {
            t.status = TableStatus::need_more;
            t.problem = {pos + 24, fmt::format("bundle entry table ends inside the id of entry {} of {}", i, *count)};
            return t;
        }
        t.entries.push_back({*off, *size, std::string(as_chars(*id)), pos});
        pos += 24 + *id_len;
    }
    t.status = TableStatus::complete;
    t.end = pos;
    return t;
}

// Turns table records into entries, checking each against the bundle's size.
// `available`: bytes of the bundle that exist (plain) or its claimed inflated size (CCOB);
// `contents`: the bytes of the bundle we can look into for code-object headers.
void add_entries(Bundle& bundle, const Table& table, std::uint64_t available, Bytes contents, std::uint64_t file_base,
                 bool absolute_offsets, std::vector<Warning>& warnings) {
    for (std::size_t i = 0; i < table.entries.size(); ++i) {
        const auto& raw = table.entries[i];
        BundleEntry e;
        e.id = printable(raw.id);
        if (e.id != raw.id)
            warnings.push_back({file_base + raw.table_pos, fmt::format("bundle entry {} has a non-printable id", i)});
        e.parsed = parse_entry_id(e.id);
        // clang rejects offset 0 and entries reaching past the bundle (BinaryFileHandler::ReadHeader).
        if (raw.offset == 0 || !in_bounds(available, raw.offset, raw.size)) {
            warnings.push_back({file_base + raw.table_pos,
                                fmt::format("bundle entry {} ({}) has offset {} size {} outside the bundle of {} bytes",
                                            i, e.id, raw.offset, raw.size, available)});
            continue;
        }
        e.offset = absolute_offsets ? bundle.offset + raw.offset : raw.offset;
        e.size = raw.size;
        if (auto obj = sub(contents, raw.offset, std::min<std::uint64_t>(raw.size, contents.size()));
            obj && raw.size > 0) {
            std::vector<Warning> obj_warnings;
            e.code_object = read_code_object(*obj, absolute_offsets ? e.offset : file_base, obj_warnings);
            if (!e.parsed.target.empty() && is_amdgpu_elf(*obj)) {
                warnings.insert(warnings.end(), obj_warnings.begin(), obj_warnings.end());
                if (e.code_object) {
                    const auto id_target = parse_target_id(e.parsed.target);
                    if (id_target && id_target->processor != e.code_object->target.processor)
                        warnings.push_back({absolute_offsets ? e.offset : file_base,
                                            fmt::format("bundle entry {} says {} but its code object is for {}", i,
                                                        e.parsed.target, e.code_object->target.processor)});
                }
            }
        }
        bundle.entries.push_back(std::move(e));
    }
}

std::optional<Bundle> parse_plain(Bytes data, std::uint64_t base, const ScanLimits& limits,
                                  std::vector<Warning>& warnings) {
    Table table = parse_table(data, limits);
    if (table.status != TableStatus::complete) {
        const std::string why = table.status == TableStatus::need_more && table.problem.message.empty()
                                    ? "bundle header is truncated"
                                    : table.problem.message;
        warnings.push_back({base + table.problem.offset,
                            table.status == TableStatus::need_more ? fmt::format("{} (file ends)", why) : why});
        if (table.entries.empty()) return std::nullopt;
    }
    Bundle bundle;
    bundle.offset = base;
    add_entries(bundle, table, data.size(), data, base, true, warnings);
    std::uint64_t end = std::max<std::uint64_t>(table.end, k_bundle_magic.size() + 8);
    for (const auto& raw : table.entries)
        if (raw.offset != 0 && in_bounds(data.size(), raw.offset, raw.size)) end = std::max(end, raw.offset + raw.size);
    bundle.extent = std::min<std::uint64_t>(end, data.size());
    return bundle;
}

struct DctxDeleter {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

std::optional<Bundle> parse_compressed(Bytes data, std::uint64_t base, const ScanLimits& limits,
                                       std::vector<Warning>& warnings) {
    const auto version = read_le<std::uint16_t>(data, 4);
    const auto method = read_le<std::uint16_t>(data, 6);
    if (!version || !method) {
        warnings.push_back({base, "compressed bundle header is truncated (file ends)"});
        return std::nullopt;
    }
    Bundle bundle;
    bundle.offset = base;
    bundle.compressed_version = *version;
    std::uint64_t header_size = 0;
    std::optional<std::uint64_t> total;
    switch (*version) {
    case 1:
        header_size = 20;
        if (auto u = read_le<std::uint32_t>(data, 8)) bundle.uncompressed_size = *u;
        break;
    case 2:
        header_size = 24;
        if (auto t = read_le<std::uint32_t>(data, 8)) total = *t;
        if (auto u = read_le<std::uint32_t>(data, 12)) bundle.uncompressed_size = *u;
        break;
    case 3:
        header_size = 32;
        total = read_le<std::uint64_t>(data, 8);
        if (auto u = read_le<std::uint64_t>(data, 16)) bundle.uncompressed_size = *u;
        break;
    default:
        warnings.push_back({base + 4, fmt::format("compressed bundle has unknown version {}", *version)});
        return std::nullopt;
    }
    if (data.size() < header_size) {
        warnings.push_back({base, "compressed bundle header is truncated (file ends)"});
        return std::nullopt;
    }
    std::uint64_t payload_end = data.size();
    if (total) {
        if (*total < header_size || *total > data.size()) {
            warnings.push_back(
                {base + 8, fmt::format("compressed bundle claims {} bytes but {} are there", *total, data.size())});
            if (*total < header_size) return std::nullopt;
        } else {
            payload_end = *total;
        }
    }
    const Bytes payload =
        data.subspan(static_cast<std::size_t>(header_size), static_cast<std::size_t>(payload_end - header_size));
    if (*method == 0) {
        bundle.compression = Compression::zlib;
        warnings.push_back({base + 6, "zlib-compressed bundle: its entries are not read (zstd only)"});
        bundle.extent = payload_end;
        return bundle;
    }
    if (*method != 1) {
        warnings.push_back({base + 6, fmt::format("compressed bundle has unknown method {}", *method)});
        return std::nullopt;
    }
    bundle.compression = Compression::zstd;
    if (total) {
        bundle.extent = payload_end;
    } else {
        // v1 has no total size: the zstd frame header walk finds where the payload ends.
        const auto frame = ZSTD_findFrameCompressedSize(payload.data(), payload.size());
        bundle.extent = ZSTD_isError(frame) ? payload_end : header_size + frame;
    }

    // Inflate in steps until the entry table is complete, never beyond the cap: a claimed
    // uncompressed size is never trusted for an allocation.
    std::unique_ptr<ZSTD_DCtx, DctxDeleter> dctx(ZSTD_createDCtx());
    if (!dctx) {
        warnings.push_back({base, "cannot allocate a zstd decompression context"});
        return bundle;
    }
    std::vector<unsigned char> out;
    ZSTD_inBuffer in{payload.data(), payload.size(), 0};
    std::uint64_t step = 4096;
    Table table;
    while (true) {
        const std::uint64_t want = std::min<std::uint64_t>(limits.max_inflated, out.size() + step);
        step *= 2;
        const std::size_t produced_before = out.size();
        out.resize(static_cast<std::size_t>(want));
        ZSTD_outBuffer ob{out.data(), out.size(), produced_before};
        std::size_t rc = 0;
        while (ob.pos < ob.size && in.pos < in.size) {
            rc = ZSTD_decompressStream(dctx.get(), &ob, &in);
            if (ZSTD_isError(rc)) break;
            if (rc == 0) break;  // frame complete
        }
        out.resize(ob.pos);
        if (ZSTD_isError(rc)) {
            warnings.push_back({base + header_size + in.pos,
                                fmt::format("compressed bundle does not inflate: {}", ZSTD_getErrorName(rc))});
            return bundle;
        }
        const Bytes inflated{out.data(), out.size()};
        if (!has_prefix(inflated, 0, k_bundle_magic)) {
            if (inflated.size() >= k_bundle_magic.size()) {
                warnings.push_back({base + header_size, "compressed bundle does not inflate to an offload bundle"});
                return bundle;
            }
        } else {
            table = parse_table(inflated, limits);
            if (table.status != TableStatus::need_more) break;
        }
        const bool stalled = out.size() == produced_before;
        if (out.size() >= limits.max_inflated || in.pos >= in.size || rc == 0 || stalled) {
            if (out.size() >= limits.max_inflated)
                warnings.push_back({base + header_size,
                                    fmt::format("compressed bundle's entry table exceeds the {}-byte inspection cap",
                                                limits.max_inflated)});
            else
                warnings.push_back(
                    {base + header_size + in.pos, "compressed bundle ends inside its entry table (truncated)"});
            table.status = TableStatus::need_more;
            break;
        }
    }
    if (table.status == TableStatus::malformed) {
        warnings.push_back({base + header_size, "compressed bundle: " + table.problem.message + " (inflated offset " +
                                                    std::to_string(table.problem.offset) + ")"});
        return bundle;
    }
    if (table.status == TableStatus::complete && bundle.uncompressed_size < table.end)
        warnings.push_back({base + 8, fmt::format("compressed bundle claims {} inflated bytes, less than its entry "
                                                  "table ({} bytes)",
                                                  bundle.uncompressed_size, table.end)});
    add_entries(bundle, table, bundle.uncompressed_size, Bytes{out.data(), out.size()}, base, false, warnings);
    return bundle;
}

}  // namespace

std::string_view compression_name(Compression c) {
    switch (c) {
    case Compression::zstd: return "zstd";
    case Compression::zlib: return "zlib";
    default: return "none";
    }
}

std::optional<Bundle> parse_bundle(Bytes data, std::uint64_t base, const ScanLimits& limits,
                                   std::vector<Warning>& warnings) {
    if (has_prefix(data, 0, k_bundle_magic)) return parse_plain(data, base, limits, warnings);
    if (has_prefix(data, 0, k_compressed_magic)) return parse_compressed(data, base, limits, warnings);
    return std::nullopt;
}

}  // namespace rmcp::scan
