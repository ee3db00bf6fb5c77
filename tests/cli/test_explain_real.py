"""rmcp explain on REAL inputs that no one here wrote.

- threads/: excerpts copied exactly from public issue threads and forum posts, each record
  with its source URL, and the category and kb entry the thread established as the cause
  (threads/threads.toml, the records rmcp ships and indexes). The accuracy figures (bench/explain_accuracy.py -> docs/explain-accuracy.md)
  come from the same rows; this test holds the validation split to the thresholds the
  project promises and the whole corpus to "no shrug, no false alarm".
- tests/reports/real/: bug reports (rocminfo, collect_env, smi tools, versions, environment)
  as posted; explain must read the reporter's facts from them.
"""
import importlib.util
import json
import pathlib
import re
import tomllib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
REPORTS = REPO / "tests" / "reports" / "real"

_spec = importlib.util.spec_from_file_location("explain_accuracy", REPO / "bench" / "explain_accuracy.py")
accuracy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(accuracy)

REAL_LOGS = accuracy.REAL  # threads/excerpts/: the excerpts of the records rmcp itself indexes (threads/)
LOGS = accuracy.real_manifest()
REPORT_ROWS = tomllib.loads((REPORTS / "manifest.toml").read_text())["report"] if (REPORTS / "manifest.toml").exists() else []


def test_labels_are_consistent_with_the_kb():
    # The labelling rule (threads/README.md): when the thread establishes a kb entry as
    # the cause, the row's category is that entry's category (the kb classifies its causes; a
    # label must not contradict it), and the file name starts with the row's category (or
    # `clean`). Checked for every row of both splits alike.
    problems = accuracy.manifest_problems(LOGS)
    assert not problems, problems


def test_corpus_is_there_and_labelled():
    assert len(LOGS) >= 150, "the real corpus needs at least 150 excerpts"
    urls = {log["url"] for log in LOGS}
    for log in LOGS:
        assert (REAL_LOGS / log["file"]).is_file(), log["file"]
        assert log["url"].startswith("https://"), log["file"]
        assert log.get("clean") or log["category"] in accuracy.CATEGORIES, log["file"]
        # kb_entry names the cause the thread established: a specific entry of kb/, never a
        # family entry (those answer for a message, not a cause).
        if log.get("kb_entry"):
            assert (REPO / "kb" / f'{log["kb_entry"]}.toml').is_file(), log["file"]
            assert not log["kb_entry"].startswith("family-"), log["file"]
        # The split is a function of the URL alone, fixed before any result was seen.
        assert log["split"] == accuracy.split_for(log["url"]), log["file"]
    validation = {u for u in urls if accuracy.split_for(u) == "validation"}
    assert len(validation) >= 0.3 * len(urls)


_facts_spec = importlib.util.spec_from_file_location("threads_facts", REPO / "bench" / "threads_facts.py")
threads_facts = importlib.util.module_from_spec(_facts_spec)
_facts_spec.loader.exec_module(threads_facts)


def test_every_record_states_its_machine_facts_the_same_way():
    # Issue 31, item 5: every record, whatever its cause, carries the machine facts the thread
    # states: `overrides` (the failing run's "NAME=value" for the variables rmcp's facts read,
    # never the fix) and `kernel` (a release, "" when none), beside gfx_target/rocm/torch.
    release = re.compile(r"^\d+\.\d+(\.\d+[A-Za-z0-9_.+~-]*)?$")
    for log in LOGS:
        for key in ("gfx_target", "rocm", "torch", "kernel"):
            assert isinstance(log.get(key), str), (log["file"], key)
        assert isinstance(log.get("overrides"), list), log["file"]
        for o in log["overrides"]:
            name, sep, value = o.partition("=")
            assert sep and value and threads_facts.is_relevant_env(name), (log["file"], o)
        assert not log["kernel"] or release.match(log["kernel"]), (log["file"], log["kernel"])
    assert sum(bool(log["overrides"]) for log in LOGS) >= 30
    assert sum(bool(log["kernel"]) for log in LOGS) >= 40


def test_the_machine_facts_are_what_bench_threads_facts_derives():
    # One writer: the fields are bench/threads_facts.py's output (excerpts read mechanically,
    # causes decided by hand in its tables); a hand edit of threads.toml, or a new record whose
    # cause names a variable or kernel without a decision, fails here.
    text = threads_facts.threads_corpus.RECORDS.read_text()
    assert threads_facts.rewrite(text, threads_facts.derive(LOGS)) == text


def test_in_situ_facts_carry_the_overrides_and_kernel(rmcp, tmp_path):
    # bench/explain_accuracy.py's in situ facts: the bug report it writes from a record is read
    # back by `rmcp detect --from-report` with the record's environment variables and kernel.
    log = dict(next(l for l in LOGS if l["url"] == "https://github.com/ROCm/ROCm/issues/1495"))
    log.update(overrides=["HSA_OVERRIDE_GFX_VERSION=10.3.0", "HIP_VISIBLE_DEVICES=0"], kernel="6.8.0-45-generic")
    facts = json.loads(accuracy.in_situ_facts(str(rmcp.binary), log, tmp_path).read_text())
    assert facts["env"]["HSA_OVERRIDE_GFX_VERSION"] == "10.3.0", facts["env"]
    assert facts["env"]["HIP_VISIBLE_DEVICES"] == "0", facts["env"]
    assert json.dumps(facts).count('"6.8.0-45-generic"') == 1, facts
    # and the corpus's own: a record with both
    real = next(l for l in LOGS if l["overrides"] and l["kernel"])
    facts = json.loads(accuracy.in_situ_facts(str(rmcp.binary), real, tmp_path).read_text())
    for o in real["overrides"]:
        name, _, value = o.partition("=")
        assert facts["env"][name] == value, (real["file"], facts["env"])
    assert f'"{real["kernel"]}"' in json.dumps(facts), real["file"]


def test_a_fix_named_by_the_cause_is_not_recorded_as_the_failing_machines_state():
    # The decisions by reading: a variable a cause names as the fix is never in the record
    # (ROCm/ROCm#1743's excerpt joins the failing run and the working run with the override).
    by_url = {log["url"]: log for log in LOGS}
    for url, (settings, why) in threads_facts.CAUSE_ENV.items():
        assert url in by_url, url
        if not settings:
            recorded = {o.split("=", 1)[0] for o in by_url[url]["overrides"]}
            assert not recorded & set(threads_facts.cause_names(by_url[url]["cause"])), (url, why)
    assert by_url["https://github.com/ROCm/ROCm/issues/1743"]["overrides"] == []
    assert "HSA_OVERRIDE_GFX_VERSION=12.0.1" in by_url["https://github.com/ROCm/ROCm/issues/5696"]["overrides"]


# The accuracy sweep: every real log through the binary once per test process. Its tests
# share one xdist group so that `pytest -n` computes `rows` in one worker, not in each.
def sweep_of_the_real_logs(test):
    return pytest.mark.sweep(pytest.mark.xdist_group("real-logs")(test))


@pytest.fixture(scope="module")
def rows(rmcp):
    return accuracy.evaluate_real(str(rmcp.binary))


# The promise (issue "Diagnose the real world"): on the validation split, >= 95% top-1
# category, >= 85% right entry first, no failing log unrecognised, no clean log alarming.
# Measured now (docs/explain-accuracy.md): 78.3% top-1 (144/184), 71.8% entry first (61/85),
# 21 of 184 unrecognised, 0 of 14 clean logs alarming: the top-1, entry-first and "unrecognised"
# promises are not met yet. This test holds the validation split to what is measured, so that a kb change
# cannot make it worse unnoticed; the thresholds move up as the kb improves, never down for a
# kb change. They moved down once, for data: issue 13's eighth round added 25 threads, 7 of
# them to validation by the hash (6 of the 7 right), which took top-1 from 71/78 (0.910) to
# 77/85 with no kb change touching validation. They moved down a second time for data: the
# ninth round added 45 threads, 12 of them to validation (11 right at top-1, 4 of 6 naming an
# entry right first, 1 unrecognised), measured with the kb as the eighth round left it: top-1
# 88/97 (0.907), entry first from 33/37 to 37/43 (0.860), unrecognised from 3 to 4. And a third
# time, for the tenth round's 52 threads on stacks the corpus lacked (17 failing validation rows,
# 8 right at top-1, 6 unrecognised; 4 clean validation rows, none alarming), measured with the kb
# of the ninth round: top-1 96/114 (0.842), entry first 42/50 (0.840), unrecognised 10. And the
# eleventh round's 24 threads (12 failing validation rows, 4 right, 4 unrecognised), measured
# with the tenth round's kb: top-1 100/126 (0.794), entry first 43/52 (0.827), unrecognised 14.
# And the twelfth round's 46 threads (17 to validation: 12 failing, 7 right at top-1, 3 of the 10
# naming an entry right first, 2 unrecognised; 5 clean, none alarming), measured with the
# eleventh round's kb: top-1 114/138 (0.826), entry first 47/62 (0.758), unrecognised 11; the
# twelfth round's kb changes (written against its dev rows) left those figures unchanged.
# And the thirteenth round's 44 threads (17 to validation: 16 failing, 12 right at top-1, 5 of 7
# naming an entry right first, 3 unrecognised; 1 clean, not alarming), measured with the twelfth
# round's kb: top-1 126/154 (0.818), entry first 52/69 (0.754), unrecognised 14; with the
# thirteenth round's kb: 127/154 (0.825), 52/69, 13. And the fourteenth round's 46 threads (15
# to validation: 14 failing, 8 right at top-1, 4 of 8 naming an entry right first, 4
# unrecognised; 1 clean, not alarming), measured with the thirteenth round's kb: top-1 135/168
# (0.804), entry first 56/77 (0.727), unrecognised 17; the fourteenth round's kb changes left
# those figures unchanged. And the fifteenth round's 38 threads (10 failing validation rows, 5
# right at top-1, 2 of 4 naming an entry right first, 3 unrecognised; 1 clean, not alarming),
# measured with the fourteenth round's kb: top-1 140/178 (0.787), entry first 58/81 (0.716),
# unrecognised 20; the fifteenth round's kb changes left them unchanged. And the sixteenth
# round's 14 threads (6 failing validation rows, 3 right at top-1, 2 of 4 naming an entry right
# first, 1 unrecognised), measured with the fifteenth round's kb: top-1 143/184 (0.777), entry
# first 60/85 (0.706), unrecognised 21. Reading gfx1036 in rocBLAS's message as the iGPU (a
# hardware fact, written from dev rows) then gave 144/184 (0.783) and 61/85 (0.718): the floor
# moved up with it.
# Issue 31: the answer is the first problem, else the vote of the similar public threads (an
# index of dev threads only; docs/explain-accuracy.md), and "unrecognised" is basis `none`. Measured:
# top-1 146/184 (0.793), first 3 answers 152/184 (0.826), basis none 18, `signature` answers right
# 132/145 (0.910; issue 31's goal is 0.95, not met): the floors moved up to what was measured.
# Then `cause_varies` (test_cause_varies_matches_the_threads: 8 entries whose dev first answers
# are right less than 90% of the time answer `family`): `signature` answers right 74/78 (0.949),
# top-1 and top-3 unchanged (the ranking is the same; only the basis moved). Then "public threads
# with this message" (threads/message-causes.toml, its dev part only) after a family-basis first
# answer: first 3 answers 157/184 (0.853).
VALIDATION_FLOOR = {"top1": 0.79, "top3": 0.85, "entry_first": 0.71, "unrecognised_max": 18,
                    "false_positives_max": 0, "signature_precision": 0.94}


@sweep_of_the_real_logs
def test_validation_split_does_not_fall_below_what_was_measured(rows):
    v = accuracy.summarise(rows)["validation"]
    top1, entry, unrecognised, fp = v["top1"], v["entry_first"], v["unrecognised"], v["false_positives"]
    assert top1[0] >= VALIDATION_FLOOR["top1"] * top1[1], f"top-1 category {top1}"
    assert entry[0] >= VALIDATION_FLOOR["entry_first"] * entry[1], f"right entry first {entry}"
    assert unrecognised[0] <= VALIDATION_FLOOR["unrecognised_max"], f"nothing recognised {unrecognised}"
    assert fp[0] <= VALIDATION_FLOOR["false_positives_max"], f"false positives on clean logs {fp}"
    top3, signature = v["top3"], v["basis_signature"]
    assert top3[0] >= VALIDATION_FLOOR["top3"] * top3[1], f"category among the first 3 answers {top3}"
    assert signature[0] >= VALIDATION_FLOOR["signature_precision"] * signature[1], f"signature answers right {signature}"


# `cause_varies` (docs/kb-format.md) is decided by the threads, for every entry at once: an entry
# that answers first on at least CAUSE_VARIES_SUPPORT dev threads and is right (its category is the
# thread's) on fewer than CAUSE_VARIES_PRECISION of them names a message, not a cause, and must
# say so (its answers are then `family`, "likely"); an entry that the threads do not show to vary
# must not carry it. A `signature` answer is one a user can trust (issue 31): this is the test that
# keeps every entry, present and future, honest about that. Dev rows only: the kb is written
# against dev, validation measures it.
CAUSE_VARIES_SUPPORT = 5
CAUSE_VARIES_PRECISION = 0.9


def first_answer_precision(rows, split="dev"):
    """kb entry id -> (first answers right, first answers), over the failing and clean logs of `split`."""
    tally = {}
    for r in rows:
        if r["split"] != split or not r["first_id"]:
            continue
        right, total = tally.get(r["first_id"], (0, 0))
        tally[r["first_id"]] = (right + (not r["clean"] and r["first_category"] == r["category"]), total + 1)
    return tally


@sweep_of_the_real_logs
def test_cause_varies_matches_the_threads(rows):
    entries = {f.stem: tomllib.loads(f.read_text()) for f in (REPO / "kb").glob("*.toml")}
    wrong = []
    for entry_id, (right, total) in sorted(first_answer_precision(rows).items()):
        entry = entries[entry_id]
        if entry.get("confidence") == "generic":
            continue  # a family entry is `family` by definition
        varies = total >= CAUSE_VARIES_SUPPORT and right < CAUSE_VARIES_PRECISION * total
        if varies != entry.get("cause_varies", False):
            wrong.append(f"{entry_id}: {right} of {total} dev first answers right, "
                         f"cause_varies should be {str(varies).lower()}")
    answering = set(first_answer_precision(rows))
    wrong += [f"{i}: cause_varies without {CAUSE_VARIES_SUPPORT} dev first answers to show it"
              for i, e in sorted(entries.items()) if e.get("cause_varies") and i not in answering]
    assert not wrong, "\n".join(wrong)


# threads/message-causes.toml (src/core/similar/message_causes.hpp) is generated from the first
# answers; a kb change that moves one makes it stale, and explain would then show what the threads
# established behind another message. Regenerate with the command in the file's header.
@sweep_of_the_real_logs
def test_message_causes_are_the_first_answers_of_this_kb(rows):
    want = accuracy.message_causes_text(rows)
    assert accuracy.MESSAGE_CAUSES.read_text() == want, (
        "threads/message-causes.toml is stale: run /usr/bin/python3 bench/explain_accuracy.py --update-message-causes")


# "0 nothing recognised for logs with an error line of a known family" (the promise),
# with the family lines recognised by the script's own KNOWN_FAMILY_LINES, written from the
# issue's list and independent of the kb's signatures. Measured (docs/explain-accuracy.md):
# dev 0 of 137, validation 0 of 87 such logs unrecognised.
KNOWN_FAMILY_UNRECOGNISED_MAX = {"dev": 0, "validation": 0}


@sweep_of_the_real_logs
def test_no_log_with_a_known_family_error_line_is_unrecognised(rows):
    s = accuracy.summarise(rows)
    for split, most in KNOWN_FAMILY_UNRECOGNISED_MAX.items():
        shrugged, with_line = s[split]["family_unrecognised"]
        assert with_line > 0, split
        assert shrugged <= most, f"{split}: {shrugged} of {with_line} logs with a known-family error line unrecognised"


@pytest.mark.parametrize("line, family", [
    ("Device::callbackQueue aborting with error : HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid. code: 0x100f", "HSA status error"),
    (":3:hip_module.cpp :685 : 2219486103 us: hipLaunchKernel: Returned hipErrorInvalidDeviceFunction :", "HIP error name"),
    ("MIOpen(HIP): Error [Compile] 'hiprtcCompileProgram(prog.get(), c_options.size(), c_options.data())' naive_conv.cpp: HIPRTC_ERROR_COMPILATION (6)", "MIOpen error"),
    ("MIOpen Error: /long_pathname_so_that_rpms_can_package_the_debug_info/src/MIOpen/src/ocl/convolutionocl.cpp:150: No suitable algorithm was found to execute the required convolution", "MIOpen error"),
    ("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal seek for GPU arch : gfx1031", "rocBLAS error"),
    ("amdgpu 0000:03:00.0: amdgpu: [gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:8 pasid:32773)", "amdgpu page fault"),
    ("amdgpu 0000:03:00.0: amdgpu:   GCVM_L2_PROTECTION_FAULT_STATUS:0x00801031", "amdgpu page fault"),
    ("[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=1234, emitted seq=1236", "amdgpu ring timeout"),
    ("[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring comp_1.0.0 timeout, but soft recovered", "amdgpu ring timeout"),
    ("amdgpu 0000:03:00.0: amdgpu: GPU reset begin!", "amdgpu GPU reset"),
    ("kfd kfd: amdgpu: GC IP 090400 not supported in kfd", "kfd not supported"),
    ("terminate called after throwing an instance of 'ihipException'", "unhandled C++ exception"),
    ("RuntimeError: HIP error: invalid device function", "Python HIP error"),
    ("torch.AcceleratorError: HIP error: initialization error", "Python HIP error"),
    ("100%|##########| 50/50 [00:12<00:00,  4.01it/s]", None),
    ("MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx1030_40.kdb Performance may degrade.", None),
    ("amdgpu 0000:03:00.0: amdgpu: SMU is initialized successfully!", None),
    ("Using device: cuda:0 (AMD Radeon RX 7900 XTX, gfx1100)", None),
])
def test_known_family_line_recogniser(tmp_path, line, family):
    # The independent recogniser behind the metric above: the families, nothing else.
    log = tmp_path / "x.log"
    log.write_text("starting\n" + line + "\nexit\n")
    assert accuracy.known_family_line(log) == family


@sweep_of_the_real_logs
def test_dev_split_shrugs_only_where_no_error_line_is_shown(rows):
    # The kb is written against dev: every failing dev log is recognised (validation: above),
    # except those whose excerpt shows no error line at all, which no signature could fit
    # without matching healthy output: a script's own print of an empty GPU list
    # (TensorFlow's `GPUs available: []`) and a display-driver WARNING trace from amdgpu_dm.
    shrugged = sorted(r["file"] for r in rows if r["split"] == "dev" and not r["clean"] and r["first_id"] is None)
    # Issue 13's tenth round adds a third: a Blender crash whose excerpt is a backtrace only
    # (two libLLVM versions in one process), with no error line of any program.
    # The eleventh round adds a fourth: rocminfo's pool sizes and sysfs's VRAM total disagreeing
    # on a Strix Halo (a kernel without the UMA fixes), with no error line printed.
    # The twelfth round adds two: a WSL setup whose only output is torch.cuda.is_available()
    # printing False (the wheel's own libhsa-runtime64 cannot use WSL's GPU path), and an ollama
    # crash whose stored excerpt keeps only the register dump at its end.
    # The thirteenth round adds three: another torch.cuda.is_available() printing False (two
    # visibility variables masking every GPU), a rocminfo fragment whose thread names the missing
    # code object only in its title, and a launcher's "llama-server failed to start".
    # The fourteenth round adds three: amd-smi's own "driver not initialized" where amdgpu is
    # built into the kernel, the kernel ignoring two module parameters, and an application's
    # own "no usable HIP accelerator" after it set the visibility variables itself.
    # The fifteenth round adds two: a TensorFlow "stack smashing detected" abort right after
    # libamdhip64 loads (no ROCm message at all), and a Windows report listing amdgpu-arch's
    # gfx1036 next to the RX 6800 XT (the iGPU picked; nothing failed in the excerpt), which left
    # the list again once the report reader took amdgpu-arch's output (its gfx1036 raises
    # rdna2-no-override, a critical entry, from the report's facts). The sixteenth adds one: a single py-spy frame of a process waiting in ROCr's
    # InterruptSignal::WaitRelaxed (a lost completion interrupt; a wait, not an error line); it
    # left the list in issue 13's fourth session, when that wait became hsa-signal-wait-hang; so
    # did the kernel ignoring two module parameters (amdgpu-parameter-ignored).
    # Issue 28 (KB audit 2) brings two back, on purpose: neither excerpt shows a failure, and the
    # critical their report facts raised is gone from the kb. rocm-4390's gfx1036 next to an RX
    # 6800 XT no longer raises rdna2-no-override (an iGPU next to a dGPU is hidden, never
    # overridden), and ollama-8743's RX 5700 run as 10.3.0 is rdna1-override-gfx1030, now a
    # warning (no source shows the harm): without a failure or a critical state a report's facts
    # stay silent (docs/explain.md, "Ranking").
    assert shrugged == ["config-risk--amdsmi-172.log", "config-risk--llamacpp-rocm-96.log",
                        "config-risk--ollama-8743.log", "config-risk--rocm-4390.log",
                        "config-risk--swarmui-565.log", "config-risk--unsloth-6118.log",
                        "install-mismatch--howto-7900xtx-win-rocm-4.log", "install-mismatch--nixpkgs-530702.log",
                        "install-mismatch--tensorflow-upstream-1196.log", "kernel-driver-fault--rocm-5444.log",
                        "missing-code-object--rocminstaller-6.log", "rocblas-missing-arch--ollama-2870.log",
                        "rocblas-missing-arch--tensorflow-upstream-2629.log", "unsupported-gpu--rocm-5121.log"], shrugged


@sweep_of_the_real_logs
def test_no_clean_log_alarms(rows):
    alarms = [(r["file"], r["ids"]) for r in rows if r["clean"] and r["ids"]]
    assert not alarms, alarms
    assert all(r["exit"] == 1 for r in rows if r["clean"])


# How logs reach us wrapped (src/core/explain/line_wrappers.hpp): quoted in an issue reply,
# printed by docker compose, coloured by a terminal, saved with Windows line ends, indented
# (bench/explain_wrapped.py). Each must give the answer the bare excerpt gives.
_wspec = importlib.util.spec_from_file_location("explain_wrapped", REPO / "bench" / "explain_wrapped.py")
wrapped = importlib.util.module_from_spec(_wspec)
_wspec.loader.exec_module(wrapped)


def _anchored_entries():
    """Entries with a signature anchored at a line start or end: the ones a wrapper can break."""
    out = set()
    for path in (REPO / "kb").glob("*.toml"):
        entry = tomllib.loads(path.read_text())
        if any("^" in s["pattern"].replace("[^", "") or "$" in s["pattern"] for s in entry.get("signatures", [])):
            out.add(entry["id"])
    return out


@sweep_of_the_real_logs
def test_real_logs_read_the_same_wrapped(rmcp, rows, tmp_path):
    # The logs a wrapper could change: answered by an anchored signature, or read as a report
    # (the report probes are anchored). Every real log of both splits was checked under these
    # wrappers when they were added (docs/explain.md, "Pasted logs"); this keeps the subset.
    anchored = _anchored_entries()
    chosen = [r for r in rows if r["facts_source"] == "report" or r["first_id"] in anchored]
    assert len(chosen) >= 30, len(chosen)
    bare = {r["file"]: (r["first_id"], r["facts_source"]) for r in chosen}
    changed = wrapped.wrapped_changes(str(rmcp.binary), sorted(bare), sorted(wrapped.WRAPPERS), tmp_path, bare)
    assert not changed, changed


@pytest.mark.parametrize("report", REPORT_ROWS, ids=[r["file"] for r in REPORT_ROWS])
def test_real_report_gives_the_reporters_facts(rmcp, report):
    proc = rmcp("--format", "json", "explain", "--no-facts", REPORTS / report["file"])
    assert proc.returncode in (0, 1), proc.stderr
    out = json.loads(proc.stdout)
    shows = [k for k in ("gpus", "rocm_version", "torch_version", "torch_hip_version") if report.get(k)]
    if not shows:
        # The excerpt shows nothing that describes a machine: this machine must not be replaced.
        assert out["facts_source"] != "report", out.get("report_facts")
        return
    assert out["facts_source"] == "report", out.get("report_facts")
    got = out["report_facts"]
    want_gpus = [g["gfx_target"] for g in report.get("gpus", []) if g.get("gfx_target")]
    got_gpus = [g.get("gfx_target", "") for g in got.get("gpus", [])]
    for target in want_gpus:
        # As many as the report lists (an eight-GPU node's agent list is eight GPUs).
        assert got_gpus.count(target) >= want_gpus.count(target), (want_gpus, got.get("gpus"))
    assert len(got.get("gpus", [])) <= max(len(report.get("gpus", [])), 1) * 2, got.get("gpus")
    for key in ("rocm_version", "torch_version", "torch_hip_version", "kernel_release"):
        if key in report:
            assert got.get(key, "").startswith(report[key]) or report[key].startswith(got.get(key, "\0")), \
                (key, report[key], got.get(key))
    for name, value in report.get("env", {}).items():
        assert got.get("env", {}).get(name) == value, (name, got.get("env"))


def test_enough_real_reports():
    assert len(REPORT_ROWS) >= 8
