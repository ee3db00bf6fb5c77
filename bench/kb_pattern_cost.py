#!/usr/bin/python3
"""What each knowledge-base pattern costs `rmcp explain`'s scan, measured by leaving it out.

    bench/explain_throughput.sh 1024        # once: writes the benchmark log to /tmp
    /usr/bin/python3 bench/kb_pattern_cost.py [--log FILE] [--mib 2] [--top 15] [--only ID#N ...]

Builds the same Hyperscan database as `rmcp explain` (every signature of kb/*.toml with
HS_FLAG_MULTILINE, every context word as a caseless literal, the report-facts line probes of
src/core/explain/report_facts.cpp), scans the first MiB of the log with it in stream mode, and
counts the instructions of the scan calls under `valgrind --tool=callgrind` (instructions, not
time: a shared machine blurs a 1% difference in time, not in instructions). Then it does the same
once per pattern with that pattern left out, on all cores, and prints the patterns whose absence
saves the most, in % of the whole scan. A pattern that saves more than about 1% is worth
rewriting (docs/kb-format.md: keep the long, rare words; break a literal before a common ending).
Needs Debian's libhyperscan-dev, a C compiler and valgrind; the log has no line any signature
matches, so what is measured is the literal matcher's work on healthy output.

Leaving one pattern out also moves others between Hyperscan's buckets, so rows within about
±0.5% of zero are noise (docs/PERFORMANCE.md, "Issue 13, round 12").
"""
import argparse
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import tomllib

REPO = pathlib.Path(__file__).resolve().parents[1]
HS_FLAG_CASELESS, HS_FLAG_MULTILINE = 1, 4

DRIVER = r"""
#include <hs/hs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int on_match(unsigned id, unsigned long long from, unsigned long long to, unsigned flags, void *ctx) {
    (void)id; (void)from; (void)to; (void)flags; ++*(long *)ctx; return 0;
}
static char *slurp(const char *path, long *size) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END); *size = ftell(f); fseek(f, 0, SEEK_SET);
    char *data = malloc(*size ? *size : 1);
    if (fread(data, 1, *size, f) != (size_t)*size) { perror(path); exit(2); }
    fclose(f); return data;
}
/* driver c PATTERNS DB: compile "FLAGS<TAB>PATTERN" lines (stream mode) and serialize;
   driver s DB LOG: scan LOG in 256 KiB pieces, as rmcp reads a file. */
int main(int argc, char **argv) {
    if (argc != 4) return 2;
    if (!strcmp(argv[1], "c")) {
        FILE *in = fopen(argv[2], "r"); char *line = NULL; size_t cap = 0; ssize_t n;
        const char **exprs = NULL; unsigned *flags = NULL, *ids = NULL; unsigned count = 0;
        while ((n = getline(&line, &cap, in)) > 0) {
            if (line[n - 1] == '\n') line[n - 1] = 0;
            char *tab = strchr(line, '\t'); *tab = 0;
            exprs = realloc(exprs, (count + 1) * sizeof *exprs); flags = realloc(flags, (count + 1) * sizeof *flags);
            ids = realloc(ids, (count + 1) * sizeof *ids);
            flags[count] = (unsigned)atoi(line); exprs[count] = strdup(tab + 1); ids[count] = count; ++count;
        }
        hs_database_t *db; hs_compile_error_t *err;
        if (hs_compile_multi(exprs, flags, ids, count, HS_MODE_STREAM, NULL, &db, &err) != HS_SUCCESS) {
            fprintf(stderr, "pattern %d: %s\n", err->expression, err->message); return 1;
        }
        char *bytes; size_t length; hs_serialize_database(db, &bytes, &length);
        FILE *out = fopen(argv[3], "wb"); fwrite(bytes, 1, length, out); fclose(out); return 0;
    }
    long db_size, size; char *db_bytes = slurp(argv[2], &db_size), *data = slurp(argv[3], &size);
    hs_database_t *db; hs_scratch_t *scratch = NULL; hs_stream_t *stream; long hits = 0;
    if (hs_deserialize_database(db_bytes, db_size, &db) != HS_SUCCESS) return 1;
    hs_alloc_scratch(db, &scratch); hs_open_stream(db, 0, &stream);
    for (long at = 0; at < size; at += 256 << 10)
        hs_scan_stream(stream, data + at, (unsigned)(size - at < (256 << 10) ? size - at : (256 << 10)), 0, scratch,
                       on_match, &hits);
    hs_close_stream(stream, scratch, on_match, &hits);
    printf("%ld\n", hits); return 0;
}
"""


def literal(word):
    """A context word as rmcp compiles it (matcher.cpp literal_pattern): all but [A-Za-z0-9] escaped."""
    return "".join(c if c.isascii() and c.isalnum() else "".join(f"\\x{b:02x}" for b in c.encode()) for c in word)


def line_wrapper():
    """k_line_wrapper of src/core/explain/line_wrappers.cpp (its raw-string pieces joined)."""
    source = (REPO / "src/core/explain/line_wrappers.cpp").read_text()
    block = source[source.index("k_line_wrapper ="):]
    return "".join(re.findall(r'R"\((.*?)\)"', block[:block.index(";")], re.S))


def anchor_wrapped(pattern, wrapper):
    """What SignatureSet::compile gives Hyperscan for `pattern` (line_wrappers.hpp: a wrapper
    after each '^', an optional CR before each '$', outside classes and escapes)."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
            for lead in "^]":
                if pattern[i + 1:i + 2] == lead:
                    out.append(lead)
                    i += 1
        else:
            out.append("^" + wrapper if c == "^" else "\\r?$" if c == "$" else c)
        i += 1
    return "".join(out)


def patterns():
    """(name, pattern, flags) in the order rmcp compiles them: signatures, context words, probes."""
    rows, words = [], {}
    wrapper = line_wrapper()
    for path in sorted((REPO / "kb").glob("*.toml")):
        entry = tomllib.loads(path.read_text())
        for i, sig in enumerate(entry.get("signatures", [])):
            rows.append((f"{entry['id']}#{i}", anchor_wrapped(sig["pattern"], wrapper), HS_FLAG_MULTILINE))
            for word in sig.get("context", []):
                if word:
                    words.setdefault(word.lower(), word)
    rows += [(f"word:{w}", literal(w), HS_FLAG_CASELESS) for w in words.values()]
    source = (REPO / "src/core/explain/report_facts.cpp").read_text()
    block = source[source.index("k_probes{"):]
    block = block[:block.index("\n    };")]
    rows += [(f"probe:{p}", anchor_wrapped(p, wrapper), HS_FLAG_MULTILINE)
             for p in re.findall(r'R"\((.*?)\)"', block, re.S)]
    return rows


def cost(driver, work, rows, log, tag):
    """Instructions of the scan calls with this set of patterns."""
    pats, db = work / f"{tag}.pats", work / f"{tag}.db"
    pats.write_text("".join(f"{flags}\t{pattern}\n" for _, pattern, flags in rows))
    subprocess.run([driver, "c", pats, db], check=True)
    out = subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=*scan_stream*",
                          "--callgrind-out-file=/dev/null", driver, "s", db, log],
                         capture_output=True, text=True, check=True).stderr
    return int(re.search(r"Collected : (\d+)", out).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", default="/tmp/rmcp-explain-bench-1024M.log", help="the benchmark log")
    ap.add_argument("--mib", type=int, default=2, help="MiB of the log to scan (default 2)")
    ap.add_argument("--top", type=int, default=15, help="rows to print (default 15)")
    ap.add_argument("--only", nargs="*", help="measure only these names (ENTRY#N, word:W, probe:P)")
    args = ap.parse_args()
    if not pathlib.Path(args.log).is_file():
        sys.exit(f"no benchmark log at {args.log}: run bench/explain_throughput.sh first, or pass --log")
    with tempfile.TemporaryDirectory(prefix="rmcp-pattern-cost-") as tmp:
        work = pathlib.Path(tmp)
        driver = work / "driver"
        (work / "driver.c").write_text(DRIVER)
        subprocess.run(["cc", "-O2", "-o", driver, work / "driver.c", "-lhs"], check=True)
        log = work / "sample.log"
        with open(args.log, "rb") as f:
            log.write_bytes(f.read(args.mib << 20))
        rows = patterns()
        base = cost(driver, work, rows, log, "all")
        print(f"{len(rows)} patterns; scan of {args.mib} MiB: {base} instructions")
        picked = [i for i, r in enumerate(rows) if not args.only or r[0] in args.only]
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
            saved = dict(zip(picked, pool.map(
                lambda i: base - cost(driver, work, rows[:i] + rows[i + 1:], log, f"without-{i}"), picked)))
        for i in sorted(picked, key=lambda i: -saved[i])[:args.top]:
            print(f"{100 * saved[i] / base:6.2f}%  {rows[i][0]}  {rows[i][1][:90]}")


if __name__ == "__main__":
    main()
