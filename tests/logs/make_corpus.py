#!/usr/bin/python3
"""Writes the explain log corpus (tests/logs/*.log, *.log.gz) and its manifest EXPECTED.toml.

The logs are written here by hand in the message formats of docs/domain.md
("Crash signatures users see"), with the noise real logs carry: timestamps, Python
tracebacks, tqdm progress bars redrawn with '\\r', ANSI colours, CRLF line ends, a gzipped
log, very long lines and invalid UTF-8. Nothing is pasted from issue threads.

Each recognisable line is written with hit(ids, text): the generator knows where it put
it, and EXPECTED.toml records that line number as the truth the matcher must find.
Rerun after editing:  /usr/bin/python3 tests/logs/make_corpus.py
"""
import gzip
import pathlib
import random

HERE = pathlib.Path(__file__).resolve().parent
CATEGORY = {  # entry id -> category, as the knowledge base files say (checked by the tests)
    "memory-access-fault": "gpu-memory-fault",
    "rdna2-miopen-gemm-bwd-fault": "miopen-failure",
    "override-on-supported-gpu": "config-risk",
    "gpu-hang-ring-timeout": "gpu-hang",
    "gfxhub-page-fault": "kernel-driver-fault",
    "hip-invalid-device-function": "missing-code-object",
    "rdna1-official-wheels": "missing-code-object",
    "rdna2-no-override": "rocblas-missing-arch",
    "miopen-first-call-find": "miopen-failure",
    "dataloader-fork-after-init": "fork-after-init",
    "hip-out-of-memory": "out-of-memory",
    "kfd-no-access": "device-access",
    "no-hip-gpus": "device-access",
    "pcie-atomics-rejected": "device-access",
    "amdgpu-ids-missing": "config-risk",
    "torch-cpu-build": "install-mismatch",
    "hsa-invalid-isa": "hsa-runtime-error",
    "secure-boot-module-rejected": "kernel-driver-fault",
    "apu-gtt-limit": "config-risk",
    "hipblaslt-unsupported-warning": "rocblas-missing-arch",
    "sdpa-flash-attention-unavailable": "unsupported-gpu",
    "container-group-by-name": "device-access",
    "container-rootless-denied": "device-access",
    "mes-hang": "gpu-hang",
    "hsa-signal-wait-hang": "gpu-hang",
    "amdgpu-parameter-ignored": "config-risk",
    "kfd-node-missing": "device-access",
    "rocm-optional-library-missing": "install-mismatch",
    "amdgpu-not-live": "kernel-driver-fault",
    "spawn-main-guard-missing": "fork-after-init",
    "rocblas-no-kernels-for-target": "rocblas-missing-arch",
    "family-amdgpu-kernel-error": "kernel-driver-fault",
    "family-hsa-status-error": "hsa-runtime-error",
    "family-unhandled-exception": "hsa-runtime-error",
    "ollama-override-discovery-failed": "config-risk",
    "ollama-gpu-unsupported": "unsupported-gpu",
    "app-gpu-target-unsupported": "unsupported-gpu",
    "miopen-user-db-unusable": "miopen-failure",
    "rocm-library-execstack": "install-mismatch",
    "hip-toolchain-incomplete": "install-mismatch",
    "amdgpu-not-loaded": "kernel-driver-fault",
    "family-hip-runtime-error": "hsa-runtime-error",
    "kfd-driver-older-than-runtime": "install-mismatch",
    "ck-target-unsupported": "unsupported-gpu",
    "bitsandbytes-rocm-library-missing": "install-mismatch",
    "container-rootless-denied": "device-access",
    "rocm-library-load-failed": "install-mismatch",
    "cxx-runtime-too-old": "install-mismatch",
    "amdgpu-dkms-build-failed": "install-mismatch",
    "rocm-wheel-not-installable": "install-mismatch",
    "rocm-packages-conflict": "install-mismatch",
    "cuda-build-path-on-rocm": "install-mismatch",
    "compiler-target-unknown": "unsupported-gpu",
    "torch-companion-mismatch": "install-mismatch",
    "igpu-selected": "config-risk",
    "visible-devices-misnumbered": "config-risk",
    "alloc-conf-invalid": "config-risk",
    "miopen-kernel-build-failed": "miopen-failure",
    "override-malformed": "hsa-runtime-error",
    "ppfeaturemask-overdrive": "config-risk",
    "app-cpu-only-build": "install-mismatch",
    "library-missing-target": "missing-code-object",
}

RED, YEL, DIM, RST = "\x1b[31m", "\x1b[33m", "\x1b[2m", "\x1b[0m"


class Log:
    def __init__(self, name, first=None, crlf=False, gz=False, note=""):
        self.name, self.first, self.crlf, self.gz, self.note = name, first, crlf, gz, note
        self.lines = []    # str or bytes, one per line, without line end
        self.hits = {}     # id -> [line numbers]
        self.tail = b""    # bytes after the last line end (unterminated last line)

    def add(self, *lines):
        self.lines.extend(lines)

    def hit(self, ids, text):
        self.lines.append(text)
        for i in ids:
            self.hits.setdefault(i, []).append(len(self.lines))

    def data(self):
        end = b"\r\n" if self.crlf else b"\n"
        out = b"".join((l if isinstance(l, bytes) else l.encode()) + end for l in self.lines)
        return out + self.tail


def ts(rng, base=[0.0]):
    base[0] += rng.uniform(0.01, 2.5)
    return f"2024-03-{11 + int(base[0] // 86400):02d} {int(base[0] // 3600) % 24:02d}:{int(base[0] // 60) % 60:02d}:{base[0] % 60:06.3f}"


def tqdm_line(epoch, steps, rng, stop=None):
    """One terminal line of tqdm redraws separated by '\\r' (what a captured log holds)."""
    parts = []
    stop = steps if stop is None else stop
    for s in range(0, stop + 1, max(1, steps // 8)):
        pct = 100 * s // steps
        bar = "█" * (pct // 10) + " " * (10 - pct // 10)
        parts.append(f"Epoch {epoch}: {pct:3d}%|{bar}| {s}/{steps} [00:{s // 10:02d}<00:{(steps - s) // 10:02d}, "
                     f"{rng.uniform(5, 9):.2f}it/s, loss={rng.uniform(0.2, 1.5):.4f}]")
    return "\r".join(parts)


def training_prologue(log, rng, device="AMD Radeon RX 6700 XT", arch="gfx1030"):
    log.add(f"{DIM}[{ts(rng)}]{RST} INFO  train.py: starting run 'resnet18-cifar10' seed=1234",
            f"[{ts(rng)}] INFO  torch 2.3.1+rocm6.0, hip 6.0.32830, python 3.11.8",
            f"[{ts(rng)}] INFO  device cuda:0 -> {device} ({arch}:sramecc-:xnack-), 12.0 GiB",
            f"[{ts(rng)}] INFO  dataset: 50000 train / 10000 val images, batch 128, 4 workers",
            "/home/ana/.venv/lib/python3.11/site-packages/torchvision/models/_utils.py:208: UserWarning: "
            "The parameter 'pretrained' is deprecated since 0.13 and may be removed in the future, please use "
            "'weights' instead.",
            "  warnings.warn(")


def epochs(log, rng, n, steps=390):
    for e in range(n):
        log.add(tqdm_line(e, steps, rng))
        log.add(f"[{ts(rng)}] INFO  epoch {e}: train_loss={rng.uniform(0.3, 1.2):.4f} "
                f"val_acc={rng.uniform(0.5, 0.9):.4f} lr=0.1 time={rng.uniform(40, 60):.1f}s")


def traceback(log, frames, exc_lines):
    log.add("Traceback (most recent call last):")
    for f, line, fn, code in frames:
        log.add(f'  File "{f}", line {line}, in {fn}', f"    {code}")
    for l in exc_lines:
        log.add(l)


TORCH = "/home/ana/.venv/lib/python3.11/site-packages/torch"


def build():
    rng = random.Random(3540)
    logs = []

    # --- miopen-failure: the MIOpen issue 3540 shape -------------------------------------
    log = Log("miopen-failure-gemm-bwd-fault.log", first="rdna2-miopen-gemm-bwd-fault",
              note="fault right after MIOpen logged a GEMM backward solver: the MIOpen entry ranks first")
    log.add("+ export HSA_OVERRIDE_GFX_VERSION=10.3.0", "+ export MIOPEN_ENABLE_LOGGING=1",
            "+ python3 train.py --arch resnet18 --batch 128")
    training_prologue(log, rng, "AMD Radeon RX 6700 XT", "gfx1030")
    epochs(log, rng, 3)
    log.add(tqdm_line(3, 390, rng, stop=200))
    log.add("MIOpen(HIP): Info [FindSolutionsImpl] ConvDirectNaiveConvBwd, ConvBinWinogradRxSf2x3g1, GemmBwdRest",
            "MIOpen(HIP): Info [GetSolutions] solver GemmBwdRest selected for 128x64x32x32 5x5 backward data",
            "MIOpen(HIP): Info [Run] kernel: gemm_bwd_rest (3 launches)",
            f"{TORCH}/autograd/graph.py:744: convolution_backward called from ConvBackward0")
    log.hit(["rdna2-miopen-gemm-bwd-fault", "memory-access-fault"],
            "Memory access fault by GPU node-1 (Agent handle: 0x5581f0c0a0b0) on address 0x7f4e8c200000. "
            "Reason: Page not present or supervisor privilege.")
    log.add("Failed to fetch queues snapshot", "GPU core dump failed",
            "run.sh: line 12: 48211 Aborted                 (core dumped) python3 train.py --arch resnet18")
    logs.append(log)

    # --- gpu-memory-fault: the same fault, but inside a rocBLAS GEMM ----------------------
    log = Log("gpu-memory-fault-rocblas-gemm.log", first="memory-access-fault",
              note="same fault text, no MIOpen nearby: the generic entry ranks first")
    training_prologue(log, rng, "AMD Radeon RX 6800 XT", "gfx1030")
    log.add("[transformer] building 12 layers, d_model=768, heads=12")
    epochs(log, rng, 2, steps=120)
    for i in range(50):  # a long, boring stretch so the earlier prologue is out of every window
        log.add(f"[{ts(rng)}] DEBUG step {i}: tokens/s={rng.uniform(9000, 11000):.0f} grad_norm={rng.uniform(0.1, 2):.3f}")
    log.add("rocblas-trace: rocblas_gemm_ex,T,N,768,3072,4096,1,f16_r,768,f16_r,4096,0,f16_r,768,f32_r")
    log.add("rocblas-trace: rocblas_gemm_ex,N,N,3072,768,4096,1,f16_r,3072,f16_r,4096,0,f16_r,3072,f32_r")
    # The MIOpen entry's pattern matches this line too; without its context it ranks lower.
    log.hit(["memory-access-fault", "rdna2-miopen-gemm-bwd-fault"],
            "Memory access fault by GPU node-2 (Agent handle: 0x2c4e5f0) on address 0x7fe1a8000000. "
            "Reason: Page not present or supervisor privilege.")
    log.add("GPU core dump failed", "Aborted (core dumped)")
    logs.append(log)

    # --- gpu-memory-fault: read-only page, CRLF, ANSI colours, aperture violation --------
    log = Log("gpu-memory-fault-readonly-crlf.log", crlf=True, first="memory-access-fault",
              note="captured on a Windows terminal over SSH: CRLF line ends and colour codes")
    log.add(f"{YEL}WARNING{RST} rocprofiler not found, tracing disabled")
    for i in range(30):
        log.add(f"{DIM}{ts(rng)}{RST} iter {i:5d} | loss {rng.uniform(1, 3):.3f} | {rng.uniform(30, 40):.1f} ms/iter")
    log.hit(["memory-access-fault"],
            f"{RED}Memory access fault by GPU node-1 (Agent handle: 0x55d0a1b2c3d0) on address 0x1000. "
            f"Reason: Write access to a read-only page.{RST}")
    log.add("Failed to fetch queues snapshot")
    log.hit(["memory-access-fault"],
            ":0:rocdevice.cpp            :2660: 2310474172 us: [pid:9081  tid:0x7f0a2bfff640] Callback: Queue "
            "0x7f0a1c000000 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted "
            "to access memory beyond the largest legal address. code: 0x29")
    log.add("Aborted (core dumped)")
    logs.append(log)

    # --- config-risk: a stale override on a natively supported MI210 ---------------------
    log = Log("config-risk-override-on-mi210.log", first="override-on-supported-gpu",
              note="(nil) address fault with HSA_OVERRIDE_GFX_VERSION in the environment dump")
    log.add("=== job 88123 on node gpu17 ===", "env: HSA_OVERRIDE_GFX_VERSION=10.3.0 ROCR_VISIBLE_DEVICES=0",
            "rocm-smi: GPU[0] : card series: AMD Instinct MI210 (gfx90a)")
    for i in range(12):
        log.add(f"{ts(rng)} rank0 step {i * 100} loss {rng.uniform(2, 4):.4f}")
    log.hit(["override-on-supported-gpu", "memory-access-fault"],
            "Memory access fault by GPU node-4 (Agent handle: 0x5627a9d9c780) on address (nil). Reason: Unknown.")
    log.add("srun: error: gpu17: task 0: Aborted (core dumped)")
    logs.append(log)

    # --- gpu-hang: ROCr HW exception -----------------------------------------------------
    log = Log("gpu-hang-hw-exception.log", first="gpu-hang-ring-timeout")
    training_prologue(log, rng, "AMD Radeon RX 7900 XTX", "gfx1100")
    epochs(log, rng, 1)
    log.hit(["gpu-hang-ring-timeout"], "HW Exception by GPU node-1 (Agent handle: 0x55b3f25e3d50) reason :GPU Hang")
    log.add("Aborted (core dumped)")
    logs.append(log)

    # --- gpu-hang: the kernel side (journalctl -k format) --------------------------------
    log = Log("gpu-hang-kernel-ring-timeout.log", first="gpu-hang-ring-timeout",
              note="journalctl -k: ring timeout, then the reset")
    host = "Mar 12 21:04:{:02d} ana-desktop kernel: "
    log.add(host.format(1) + "[drm] PCIE GART of 512M enabled (table at 0x000000F41FEB0000).",
            host.format(1) + "amdgpu 0000:0b:00.0: amdgpu: SMU is initialized successfully!")
    log.hit(["gpu-hang-ring-timeout"], host.format(44) + "amdgpu 0000:0b:00.0: [drm:amdgpu_job_timedout [amdgpu]] "
            "*ERROR* ring gfx_0.0.0 timeout, signaled seq=1083311, emitted seq=1083313")
    log.add(host.format(44) + "amdgpu 0000:0b:00.0: [drm:amdgpu_job_timedout [amdgpu]] *ERROR* Process information: "
            "process python3 pid 5512 thread python3 pid 5512")
    log.hit(["gpu-hang-ring-timeout"], host.format(44) + "amdgpu 0000:0b:00.0: amdgpu: GPU reset begin!")
    log.add(host.format(46) + "amdgpu 0000:0b:00.0: amdgpu: GPU reset(2) succeeded!")
    logs.append(log)

    # --- kernel-driver-fault: gfxhub page fault (dmesg format) ---------------------------
    log = Log("kernel-driver-fault-gfxhub-page-fault.log", first="gfxhub-page-fault")
    t = 812.0
    def dm(text):
        nonlocal t
        t += rng.uniform(0, 0.01)
        return f"[{t:12.6f}] {text}"
    log.add(dm("amdgpu 0000:03:00.0: amdgpu: VRAM: 8176M 0x0000008000000000 - 0x00000081FEFFFFFF (8176M used)"))
    log.hit(["gfxhub-page-fault"], dm("amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:3 "
                                       "pasid:32770, for process python3 pid 4242 thread python3 pid 4242)"))
    log.add(dm("amdgpu 0000:03:00.0: amdgpu:   in page starting at address 0x00007f4e8c200000 from client 0x1b (UTCL2)"))
    log.hit(["gfxhub-page-fault"], dm("amdgpu 0000:03:00.0: amdgpu: GCVM_L2_PROTECTION_FAULT_STATUS:0x00301031"))
    log.add(dm("amdgpu 0000:03:00.0: amdgpu: \t Faulty UTCL2 client ID: TCP (0x8)"),
            dm("amdgpu 0000:03:00.0: amdgpu: \t MORE_FAULTS: 0x1"),
            dm("amdgpu 0000:03:00.0: amdgpu: \t WALKER_ERROR: 0x0"))
    logs.append(log)

    # --- missing-code-object: RDNA1 with official wheels ---------------------------------
    log = Log("missing-code-object-invalid-device-function.log", first="rdna1-official-wheels",
              note="RX 5600 XT (gfx1010) with an official wheel: the RDNA1 entry's context words are nearby")
    training_prologue(log, rng, "AMD Radeon RX 5600 XT", "gfx1010")
    traceback(log, [("/home/ana/src/eeg/train.py", 141, "<module>", "main(args)"),
                    ("/home/ana/src/eeg/train.py", 97, "main", "out = model(x.to(device))"),
                    (f"{TORCH}/nn/modules/module.py", 1532, "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)"),
                    (f"{TORCH}/nn/modules/conv.py", 460, "_conv_forward", "return F.conv2d(input, weight, bias, self.stride,")],
              [])
    log.hit(["hip-invalid-device-function", "rdna1-official-wheels"], "RuntimeError: HIP error: invalid device function")
    log.add("HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
            "might be incorrect.", "For debugging consider passing AMD_SERIALIZE_KERNEL=3",
            "Compile with `TORCH_USE_HIP_DSA` to enable device-side assertions.", "")
    logs.append(log)

    # --- missing-code-object: gzipped, hipErrorNoBinaryForGpu ----------------------------
    log = Log("missing-code-object-no-binary.log.gz", gz=True, first="hip-invalid-device-function",
              note="gzip-compressed; the gfx1012 line is 2000 lines before the error, outside every window")
    log.add("$ rocminfo | grep gfx", "  Name:                    gfx1012", "$ python3 -c 'import torch; torch.ones(1).cuda()'")
    for i in range(2000):
        log.add(f"{DIM}[loader] prefetch shard {i:05d}/02000 ok{RST}")
    log.hit(["hip-invalid-device-function", "rdna1-official-wheels"],
            '"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"')
    log.add("Aborted (core dumped)")
    logs.append(log)

    # --- rocblas-missing-arch: RX 6600 (gfx1032) without override ------------------------
    log = Log("rocblas-missing-arch-gfx1032.log", first="rdna2-no-override")
    training_prologue(log, rng, "AMD Radeon RX 6600", "gfx1032")
    log.hit(["rdna2-no-override", "rocblas-no-kernels-for-target"],
            "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: "
            "No such file or directory for GPU arch : gfx1032")
    log.add(" List of available TensileLibrary Files : ")
    for arch in ["gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx940"]:
        log.add(f'"/opt/rocm/lib/rocblas/library/TensileLibrary_lazy_{arch}.dat"')
    log.add("Aborted (core dumped)")
    logs.append(log)

    # --- miopen-failure: first call find without the kernel database ---------------------
    log = Log("miopen-failure-missing-kdb.log", first="miopen-first-call-find",
              note="a long first step while MIOpen compiles kernels: the missing kdb warning explains it")
    training_prologue(log, rng, "AMD Radeon RX 6700 XT", "gfx1030")
    log.hit(["miopen-first-call-find"],
            "MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx1030_40.kdb Performance may degrade. "
            "Please follow instructions to install: https://github.com/ROCm/MIOpen#installing-miopen-kernels-package")
    log.add(tqdm_line(0, 390, rng, stop=1), f"[{ts(rng)}] WARN  step 0 took 412.3 s")
    logs.append(log)

    # --- fork-after-init: DataLoader workers forked after CUDA init ----------------------
    log = Log("fork-after-init-dataloader.log", first="dataloader-fork-after-init")
    training_prologue(log, rng)
    traceback(log, [("/home/ana/src/seg/train.py", 210, "<module>", "for batch in loader:"),
                    (f"{TORCH}/utils/data/dataloader.py", 631, "__next__", "data = self._next_data()"),
                    (f"{TORCH}/utils/data/dataloader.py", 1346, "_next_data", "return self._process_data(data)"),
                    (f"{TORCH}/_utils.py", 722, "reraise", "raise exception")],
              ["RuntimeError: Caught RuntimeError in DataLoader worker process 0.",
               "Original Traceback (most recent call last):",
               f'  File "{TORCH}/utils/data/_utils/worker.py", line 308, in _worker_loop',
               "    data = fetcher.fetch(index)",
               f'  File "{TORCH}/cuda/__init__.py", line 288, in _lazy_init',
               '    raise RuntimeError('])
    log.hit(["dataloader-fork-after-init"], "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA "
            "with multiprocessing, you must use the 'spawn' start method")
    logs.append(log)

    # The same fork problem as the HIP runtime reports it inside the worker (the message
    # family of PyTorch's c10 HIP checks), with the DataLoader frames nearby.
    log = Log("fork-after-init-initialization-error.log", first="dataloader-fork-after-init")
    training_prologue(log, rng)
    traceback(log, [("/home/ana/src/seg/train.py", 210, "<module>", "for batch in loader:"),
                    (f"{TORCH}/utils/data/dataloader.py", 1346, "_next_data", "return self._process_data(data)"),
                    (f"{TORCH}/_utils.py", 722, "reraise", "raise exception")],
              ["RuntimeError: Caught RuntimeError in DataLoader worker process 1.",
               "Original Traceback (most recent call last):",
               f'  File "{TORCH}/utils/data/_utils/worker.py", line 308, in _worker_loop',
               "    data = fetcher.fetch(index)",
               f'  File "{TORCH}/utils/data/_utils/pin_memory.py", line 58, in pin_memory',
               "    return data.pin_memory(device)"])
    log.hit(["dataloader-fork-after-init"], "RuntimeError: HIP error: initialization error")
    log.add("HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
            "might be incorrect.", "For debugging consider passing AMD_SERIALIZE_KERNEL=3")
    logs.append(log)

    # --- out-of-memory: a very long OOM line after a huge config dump line ---------------
    log = Log("out-of-memory-hip-alloc.log", first="hip-out-of-memory",
              note="a 300 KB single-line JSON config dump, then the OOM message")
    training_prologue(log, rng, "AMD Radeon RX 7900 XTX", "gfx1100")
    log.add("config: {" + ", ".join(f'"layer_{i}": {{"dim": {rng.randint(64, 4096)}, "dropout": 0.1}}'
                                    for i in range(7000)) + "}")
    traceback(log, [("/home/ana/llm/finetune.py", 77, "<module>", "loss.backward()")], [])
    log.hit(["hip-out-of-memory"], "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
            "total capacity of 23.98 GiB of which 1.23 GiB is free. Of the allocated memory 21.10 GiB is allocated "
            "by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
            "large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
            "documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
    logs.append(log)

    log = Log("out-of-memory-hipmalloc.log", first="hip-out-of-memory", note="a C++ HIP program, invalid UTF-8 in its output")
    log.add("alloc test: requesting 34359738368 bytes", b"device name: \xff\xfeRadeon\x80 (garbled by a broken locale)")
    log.hit(["hip-out-of-memory"], "hipMalloc(&buf, bytes) failed: hipErrorOutOfMemory (out of memory) at alloc.cpp:41")
    logs.append(log)

    # --- device-access -------------------------------------------------------------------
    log = Log("device-access-kfd-permission.log", first="kfd-no-access", note="rocminfo run by a user outside render")
    log.add("ROCk module is loaded")
    log.hit(["kfd-no-access"], "Unable to open /dev/kfd read-write: Permission denied")
    log.hit(["kfd-no-access"], 'ana is not member of "render" group, the default DRM access group. Users must be a '
            'member of the "render" group or another DRM access group in order for ROCm applications to run successfully.')
    logs.append(log)

    log = Log("device-access-no-hip-gpus.log", first="no-hip-gpus")
    log.add("$ docker run --rm -it rocm/pytorch python3 -c 'import torch; torch.zeros(1).cuda()'")
    traceback(log, [("<string>", 1, "<module>", ""), (f"{TORCH}/cuda/__init__.py", 314, "_lazy_init",
                                                      "torch._C._cuda_init()")], [])
    log.hit(["no-hip-gpus"], "RuntimeError: No HIP GPUs are available")
    log.add("$ ./hip_bandwidth")
    log.hit(["no-hip-gpus"], "hipGetDeviceCount failed: hipErrorNoDevice (no ROCm-capable device is detected)")
    logs.append(log)

    log = Log("device-access-pcie-atomics.log", first="pcie-atomics-rejected", note="dmesg: KFD skips the GPU")
    log.add("[    3.912001] [drm] amdgpu kernel modesetting enabled.",
            "[    4.100223] amdgpu 0000:0a:00.0: amdgpu: Fetched VBIOS from VFCT")
    log.hit(["pcie-atomics-rejected"], "[    5.018823] kfd kfd: amdgpu: skipped device 1002:73df, PCI rejects atomics 730<0")
    log.add("[    5.019011] [drm] Initialized amdgpu 3.54.0 20150101 for 0000:0a:00.0 on minor 0")
    logs.append(log)

    # --- config-risk: harmless noise -----------------------------------------------------
    log = Log("config-risk-amdgpu-ids-noise.log", first="amdgpu-ids-missing",
              note="harmless: every worker prints it; recognised so users stop chasing it")
    training_prologue(log, rng)
    for w in range(4):
        log.hit(["amdgpu-ids-missing"], "/opt/amdgpu/share/libdrm/amdgpu.ids: No such file or directory")
    epochs(log, rng, 2)
    logs.append(log)

    # --- install-mismatch ----------------------------------------------------------------
    log = Log("install-mismatch-torch-cpu.log", first="torch-cpu-build")
    traceback(log, [("/home/ana/src/demo.py", 4, "<module>", "x = torch.ones(3).cuda()"),
                    (f"{TORCH}/cuda/__init__.py", 284, "_lazy_init",
                     'raise AssertionError("Torch not compiled with CUDA enabled")')], [])
    log.hit(["torch-cpu-build"], "AssertionError: Torch not compiled with CUDA enabled")
    logs.append(log)

    # --- clean logs: nothing to recognise ------------------------------------------------
    log = Log("clean-training-run.log", note="a healthy run with all the usual noise")
    log.add("+ export MIOPEN_FIND_MODE=FAST")
    training_prologue(log, rng)
    epochs(log, rng, 12)
    log.add(f"[{ts(rng)}] INFO  saved checkpoint to runs/resnet18/epoch12.pt",
            "MIOpen(HIP): Info [Convolution] conv2d forward using ConvBinWinogradRxSf2x3g1",
            f"[{ts(rng)}] INFO  done in 602.1 s, best val_acc=0.9213")
    log.tail = b"final line without newline \xe2\x9c"
    logs.append(log)

    log = Log("clean-kernel-boot.log", note="a normal amdgpu boot in the kernel log")
    for i, text in enumerate(["[drm] amdgpu kernel modesetting enabled.",
                              "amdgpu 0000:0b:00.0: amdgpu: Fetched VBIOS from VFCT",
                              "amdgpu: ATOM BIOS: 113-D4120100-100",
                              "[drm] GPU posting now...",
                              "amdgpu 0000:0b:00.0: amdgpu: SMU is initialized successfully!",
                              "kfd kfd: amdgpu: added device 1002:73df",
                              "[drm] Initialized amdgpu 3.54.0 20150101 for 0000:0b:00.0 on minor 0"]):
        log.add(f"[    {3.9 + i * 0.1:.6f}] {text}")
    logs.append(log)
    logs += audit_logs()
    logs += source_format_logs()
    logs += application_and_loader_logs()
    logs += driver_build_and_package_logs()
    logs += install_logs()
    logs += target_and_config_logs()
    logs += backend_and_trace_logs()
    return logs


def audit_logs():
    """Logs for the entries added by the knowledge-base audit, written here in the
    message formats quoted in those entries' sources (older and newer forms of each message
    where both exist). A separate random stream keeps the logs above unchanged."""
    rng = random.Random(19)
    logs = []

    log = Log("hsa-runtime-error-invalid-isa.log", first="hsa-invalid-isa",
              note="ROCr's queue callback with the INVALID_ISA status (gfx1150 run as 11.0.0)")
    log.add("+ export HSA_OVERRIDE_GFX_VERSION=11.0.0", "+ python3 train.py")
    training_prologue(log, rng, "AMD Radeon 890M Graphics", "gfx1100")
    log.hit(["hsa-invalid-isa"], ":0:rocdevice.cpp            :3018: 1286886492100d us:  Callback: Queue "
                                 "0x7f7f4d000000 aborting with error : HSA_STATUS_ERROR_INVALID_ISA: The instruction "
                                 "set architecture is invalid. code: 0x100f")
    log.add("Aborted (core dumped)")
    logs.append(log)

    log = Log("kernel-driver-fault-secure-boot.log", first="secure-boot-module-rejected",
              note="journal at boot and a manual modprobe: Secure Boot refuses the DKMS-built amdgpu")
    log.hit(["secure-boot-module-rejected"],
            "Jan 12 10:00:01 box kernel: Lockdown: systemd-udevd: unsigned module loading is restricted; "
            "see man kernel_lockdown.7")
    log.hit(["secure-boot-module-rejected"],
            "Jan 12 10:00:01 box systemd-modules-load[412]: Failed to insert module 'amdgpu': Key was rejected by "
            "service")
    log.add("$ sudo modprobe amdgpu")
    log.hit(["secure-boot-module-rejected"], "modprobe: ERROR: could not insert 'amdgpu': Key was rejected by service")
    log.hit(["secure-boot-module-rejected"], "[   41.207711] Lockdown: modprobe: unsigned module loading is restricted; "
                                             "see man kernel_lockdown.7")
    logs.append(log)

    log = Log("config-risk-apu-gttsize.log", first="apu-gtt-limit", note="an APU booted with amdgpu.gttsize")
    for i, text in enumerate(["[drm] amdgpu kernel modesetting enabled.",
                              "amdgpu 0000:64:00.0: amdgpu: Fetched VBIOS from VFCT",
                              "amdgpu 0000:64:00.0: amdgpu: VRAM: 4096M 0x0000008000000000 - 0x00000080FFFFFFFF"]):
        log.add(f"[    {2.9 + i * 0.1:.6f}] {text}")
    log.hit(["apu-gtt-limit"], "[    3.212345] amdgpu 0000:64:00.0: amdgpu: [drm] Configuring gttsize via module "
                               "parameter is deprecated, please use ttm.pages_limit")
    log.add("[    3.312345] [drm] amdgpu: 16384M of GTT memory ready.")
    logs.append(log)

    log = Log("rocblas-missing-arch-hipblaslt-warning.log", first="hipblaslt-unsupported-warning",
              note="PyTorch's fallback warning in its C++ (newer) and Python UserWarning (older, 'a unsupported') forms")
    training_prologue(log, rng, "AMD Radeon RX 6700 XT", "gfx1030")
    log.hit(["hipblaslt-unsupported-warning"],
            "[W1016 17:27:46.690175963 Context.cpp:301] Warning: Attempting to use hipBLASLt on an unsupported "
            "architecture! Overriding blas backend to hipblas (function operator())")
    log.hit(["hipblaslt-unsupported-warning"],
            "/home/ana/.venv/lib/python3.11/site-packages/torch/nn/modules/linear.py:125: UserWarning: Attempting to "
            "use hipBLASLt on a unsupported architecture! Overriding blas backend to hipblas")
    epochs(log, rng, 2)
    logs.append(log)

    log = Log("unsupported-gpu-sdpa-fallback.log", first="sdpa-flash-attention-unavailable",
              note="scaled_dot_product_attention warnings from three PyTorch generations")
    training_prologue(log, rng, "AMD Radeon RX 7900 XTX", "gfx1100")
    log.hit(["sdpa-flash-attention-unavailable"],
            "/home/ana/.venv/lib/python3.11/site-packages/diffusers/models/attention_processor.py:1117: UserWarning: "
            "1Torch was not compiled with flash attention. (Triggered internally at "
            "../aten/src/ATen/native/transformers/hip/sdp_utils.cpp:253.)")
    log.hit(["sdpa-flash-attention-unavailable"],
            "/home/ana/.venv/lib/python3.11/site-packages/transformers/models/llama/modeling_llama.py:566: "
            "UserWarning: Flash attention support on Navi31 GPU is still experimental. Enable it with "
            "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1. (Triggered internally at "
            "/pytorch/aten/src/ATen/native/transformers/hip/sdp_utils.cpp:207.)")
    log.add("  attn_output = torch.nn.functional.scaled_dot_product_attention(")
    log.hit(["sdpa-flash-attention-unavailable"],
            "UserWarning: Mem Efficient attention on Current AMD GPU is still experimental. Enable it with "
            "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1. (Triggered internally at "
            "/pytorch/aten/src/ATen/native/transformers/hip/sdp_utils.cpp:663.)")
    epochs(log, rng, 1)
    logs.append(log)

    log = Log("device-access-container-group.log", first="container-group-by-name",
              note="Docker's and Podman's refusal of --group-add render in an image without that group")
    log.add("$ docker run --device=/dev/kfd --device=/dev/dri --group-add video --group-add render rocm/pytorch")
    log.hit(["container-group-by-name"],
            "docker: Error response from daemon: Unable to find group render: no matching entries in group file.")
    log.add("$ podman run --device /dev/kfd --group-add render localhost/train")
    log.hit(["container-group-by-name"], "Error: unable to find group render: no matching entries in group file")
    logs.append(log)

    log = Log("device-access-selinux-kfd.log", first="container-rootless-denied",
              note="audit log: SELinux denies a container the KFD device (open names it, ioctl gives the path)")
    log.hit(["container-rootless-denied"],
            'type=AVC msg=audit(1717400000.123:4567): avc:  denied  { read write } for  pid=20412 comm="python3" '
            'name="kfd" dev="devtmpfs" ino=1097 scontext=system_u:system_r:container_t:s0:c12,c345 '
            'tcontext=system_u:object_r:device_t:s0 tclass=chr_file permissive=0')
    log.hit(["container-rootless-denied"],
            'type=AVC msg=audit(1717400000.125:4568): avc:  denied  { ioctl } for  pid=20412 comm="python3" '
            'path="/dev/dri/renderD128" dev="devtmpfs" ino=1102 ioctlcmd=0x6440 '
            'scontext=system_u:system_r:container_t:s0:c12,c345 tcontext=system_u:object_r:dri_device_t:s0 '
            'tclass=chr_file permissive=0')
    logs.append(log)

    log = Log("gpu-hang-mes.log", first="mes-hang",
              note="MES stops answering (newer kernel text), then the older 'failed to response' form; a GPU reset")
    def dm(t, text):
        log.add(f"[{t:12.6f}] amdgpu 0000:c5:00.0: amdgpu: {text}")
    dm(950.818160, "ring comp_1.0.1 uses VM inv eng 8 on hub 0")
    log.hit(["mes-hang"], "[  950.818166] amdgpu 0000:c5:00.0: amdgpu: MES failed to respond to msg=REMOVE_QUEUE")
    log.hit(["mes-hang"], "[  950.818171] amdgpu 0000:c5:00.0: amdgpu: failed to remove hardware queue from MES, "
                          "doorbell=0x1802")
    log.hit(["mes-hang"], "[  950.818174] amdgpu 0000:c5:00.0: amdgpu: MES might be in unrecoverable state, issue a "
                          "GPU reset")
    log.hit(["gpu-hang-ring-timeout"], "[  950.818199] amdgpu 0000:c5:00.0: amdgpu: GPU reset begin!. Source:  3")
    log.hit(["gpu-hang-ring-timeout"], "[  951.466712] amdgpu 0000:c5:00.0: amdgpu: GPU reset(2) succeeded!")
    log.hit(["gpu-hang-ring-timeout"], "[  951.466730] amdgpu 0000:c5:00.0: [drm] device wedged, but recovered through reset")
    log.hit(["mes-hang"], "[ 1210.004411] [drm:mes_v11_0_submit_pkt_and_poll_completion.constprop.0 [amdgpu]] *ERROR* "
                          "MES failed to response msg=3")
    logs.append(log)

    log = Log("fork-after-init-spawn-guard.log", first="spawn-main-guard-missing",
              note="a script without a main guard under the spawn start method")
    traceback(log, [("<string>", 1, "<module>", ""),
                    ("/usr/lib/python3.12/multiprocessing/spawn.py", 122, "spawn_main",
                     "exitcode = _main(fd, parent_sentinel)"),
                    ("/usr/lib/python3.12/multiprocessing/spawn.py", 131, "_main", "prepare(preparation_data)")],
              ["RuntimeError: "])
    log.hit(["spawn-main-guard-missing"], "        An attempt has been made to start a new process before the")
    log.add("        current process has finished its bootstrapping phase.", "",
            "        This probably means that you are not using fork to start your",
            "        child processes and you have forgotten to use the proper idiom",
            "        in the main module:", "", "            if __name__ == '__main__':",
            "                freeze_support()", "                ...")
    logs.append(log)
    return logs


def source_format_logs():
    """Logs for the message shapes found by reading the printing software's sources (
    second round): each line is the source's format string with its variable parts filled in.
    Sources: ROCR-Runtime src/core/runtime/runtime.cpp (VMFaultHandler, HwExceptionHandler);
    ROCm/clr hipamd/src/hip_error.cpp (hipGetErrorString); llama.cpp ggml-cuda.cu (ggml_cuda_error,
    GGML_CUDA_NAME "ROCm" in the HIP build; older "CUDA error %d at %s:%d: %s"); Linux
    drivers/gpu/drm/amd/amdgpu (amdgpu_job.c, mes_v12_0.c, gmc_v8_0.c, amdgpu_kms.c); ollama
    llm/server.go. A separate random stream keeps the logs above unchanged."""
    rng = random.Random(13)
    logs = []

    log = Log("gpu-memory-fault-imprecise-nx.log", first="memory-access-fault",
              note="ROCr VMFaultHandler: an imprecise fault (address suffix) with the NX reason")
    epochs(log, rng, 1)
    log.hit(["memory-access-fault"], "Memory access fault by GPU node-1 (Agent handle: 0x5622a4f1c2d0) on address "
            "0x7f3a1c000000(may not be exact address). Reason: Execute access to a page marked NX.")
    log.add("Aborted (core dumped)")
    logs.append(log)

    log = Log("gpu-memory-fault-illegal-address.log", first="memory-access-fault",
              note="hipErrorIllegalAddress's string as PyTorch prints it")
    traceback(log, [("/home/ana/train.py", 88, "<module>", "loss.item()")], [])
    log.hit(["memory-access-fault"], "RuntimeError: HIP error: an illegal memory access was encountered")
    log.add("HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
            "might be incorrect.", "For debugging consider passing AMD_SERIALIZE_KERNEL=3")
    logs.append(log)

    log = Log("gpu-hang-generic-hang-recovery.log", first="gpu-hang-ring-timeout",
              note="ROCr VMFaultHandler with the hang reason (KFD error type 3)")
    epochs(log, rng, 1)
    log.hit(["gpu-hang-ring-timeout"], "Memory access fault by GPU node-1 (Agent handle: 0x55d1c06b1e40) on address "
            "0x7ee0a5400000. Reason: Generic hang recovery.")
    log.add("Aborted (core dumped)")
    logs.append(log)

    log = Log("gpu-hang-launch-timeout.log", first="gpu-hang-ring-timeout",
              note="llama.cpp's HIP build: hipErrorLaunchTimeOut's string after 'ROCm error:'")
    log.add("llama_new_context_with_model: graph splits = 2")
    log.hit(["gpu-hang-ring-timeout"],
            "ROCm error: the launch timed out and was terminated")
    log.add("  current device: 0, in function ggml_cuda_op_mul_mat at /src/ggml/src/ggml-cuda/ggml-cuda.cu:1627",
            "  hipGetLastError()", "/src/ggml/src/ggml-cuda/ggml-cuda.cu:84: ROCm error")
    logs.append(log)

    log = Log("gpu-hang-other-rings.log", first="gpu-hang-ring-timeout",
              note="journalctl -k: a timeout on a multimedia ring, then a MES(pipe) timeout (newer kernel text)")
    host = "Jun 02 10:11:{:02d} kai-desktop kernel: "
    log.hit(["gpu-hang-ring-timeout"], host.format(5) + "amdgpu 0000:03:00.0: amdgpu: ring vcn_unified_0 timeout, "
            "signaled seq=2261, emitted seq=2263")
    log.hit(["mes-hang"], host.format(7) + "amdgpu 0000:03:00.0: amdgpu: MES(0) failed to respond to msg=MISC "
            "(WAIT_REG_MEM)")
    log.add(host.format(7) + "amdgpu 0000:03:00.0: amdgpu: failed to reg_write_reg_wait")
    logs.append(log)

    log = Log("kernel-driver-fault-gmc-v8.log", first="gfxhub-page-fault",
              note="dmesg on a Polaris (gmc_v8): the pre-gfxhub VM fault report")
    log.hit(["gfxhub-page-fault"], "[ 4021.118734] amdgpu 0000:01:00.0: GPU fault detected: 146 0x0c80440c "
            "for process python3 pid 2291 thread python3 pid 2291")
    log.hit(["gfxhub-page-fault"], "[ 4021.118738] amdgpu 0000:01:00.0:   VM_CONTEXT1_PROTECTION_FAULT_ADDR   0x00104E00")
    log.hit(["gfxhub-page-fault"], "[ 4021.118740] amdgpu 0000:01:00.0:   VM_CONTEXT1_PROTECTION_FAULT_STATUS 0x0E04400C")
    log.add("[ 4021.118743] amdgpu 0000:01:00.0: VM fault (0x0c, vmid 7, pasid 32770) at page 1068544, read from "
            "'TC7' (0x54433700) (68)")
    logs.append(log)

    log = Log("kernel-driver-fault-gpu-init.log", first="amdgpu-not-live",
              note="dmesg: amdgpu fails to initialise the GPU (amdgpu_kms.c, driver core probe)")
    log.add("[    5.812204] [drm] amdgpu kernel modesetting enabled.")
    log.hit(["amdgpu-not-live"], "[    6.020931] amdgpu 0000:03:00.0: amdgpu_device_ip_init failed")
    log.hit(["amdgpu-not-live"], "[    6.020933] amdgpu 0000:03:00.0: Fatal error during GPU init")
    log.add("[    6.020935] [drm] amdgpu: finishing device.")
    log.hit(["amdgpu-not-live"], "[    6.031120] amdgpu: probe of 0000:03:00.0 failed with error -110")
    logs.append(log)

    log = Log("out-of-memory-rocm-error.log", first="hip-out-of-memory",
              note="llama.cpp's HIP build: hipErrorOutOfMemory's string; the older numbered form")
    log.hit(["hip-out-of-memory"], "ROCm error: out of memory")
    log.add("  current device: 0, in function ggml_backend_cuda_buffer_set_tensor at ggml-cuda.cu:512")
    log.hit(["hip-out-of-memory"], "CUDA error 2 at /llama.cpp/ggml-cuda.cu:6951: out of memory")
    logs.append(log)

    log = Log("missing-code-object-no-kernel-image.log", first="hip-invalid-device-function",
              note="hipErrorNoBinaryForGpu's string, as PyTorch prints it")
    traceback(log, [("/home/ana/infer.py", 12, "<module>", "x = torch.ones(4, device='cuda') * 2")], [])
    log.hit(["hip-invalid-device-function"],
            "RuntimeError: HIP error: no kernel image is available for execution on the device")
    logs.append(log)

    log = Log("hsa-runtime-error-hw-exception-ecc.log", first="family-hsa-status-error",
              note="ROCr HwExceptionHandler with the ECC cause")
    epochs(log, rng, 1)
    log.hit(["family-hsa-status-error"], "HW Exception by GPU node-2 (Agent handle: 0x55c8f0e2a710) reason :ECC")
    log.add("Aborted (core dumped)")
    logs.append(log)

    log = Log("hsa-runtime-error-ollama-runner.log", first="family-unhandled-exception",
              note="ollama's server after its runner died with no message of its own")
    log.add('time=2025-03-02T10:14:05.112+01:00 level=INFO source=server.go:594 msg="waiting for server to become '
            'available" status="llm server loading model"')
    log.hit(["family-unhandled-exception"], 'time=2025-03-02T10:14:07.880+01:00 level=ERROR source=sched.go:455 '
            'msg="error loading llama server" error="llama runner process has terminated: signal: aborted '
            '(core dumped)"')
    logs.append(log)
    # ollama >= 0.12 (discover/runner.go, overrideWarnings): the override warning pair, then the
    # discovery result. A failure after it is the override entry; a success after it is clean.
    log = Log("config-risk-ollama-override-discovery.log", first="ollama-override-discovery-failed",
              note="ollama warned about HSA_OVERRIDE_GFX_VERSION, then its discovery runner crashed")
    pre = "May 02 09:12:44 tower ollama[2211]: "
    log.add(pre + 'time=2026-05-02T09:12:44.101Z level=INFO source=routes.go:1614 msg="server config" '
            'env="map[HSA_OVERRIDE_GFX_VERSION:11.0.0 OLLAMA_DEBUG:INFO]"')
    log.add(pre + 'time=2026-05-02T09:12:44.102Z level=WARN source=runner.go:485 '
            'msg="user overrode visible devices" HSA_OVERRIDE_GFX_VERSION=11.0.0')
    log.add(pre + 'time=2026-05-02T09:12:44.102Z level=WARN source=runner.go:489 '
            'msg="if GPUs are not correctly discovered, unset and try again"')
    log.add(pre + 'time=2026-05-02T09:12:44.103Z level=INFO source=runner.go:67 msg="discovering available GPUs..."')
    log.hit(["ollama-override-discovery-failed"], pre + 'time=2026-05-02T09:12:45.871Z level=INFO '
            'source=runner.go:464 msg="failure during GPU discovery" OLLAMA_LIBRARY_PATH="[/usr/lib/ollama '
            '/usr/lib/ollama/rocm]" extra_envs=map[] error="runner crashed"')
    log.add(pre + 'time=2026-05-02T09:12:45.872Z level=INFO source=types.go:60 msg="inference compute" id=cpu '
            'library=cpu compute="" name=cpu description=cpu')
    logs.append(log)

    log = Log("clean-ollama-override-discovered.log",
              note="ollama warned about a needed override and then found the GPU: nothing to report")
    log.add(pre + 'time=2026-05-02T09:20:01.001Z level=WARN source=runner.go:485 '
            'msg="user overrode visible devices" HSA_OVERRIDE_GFX_VERSION=10.3.0')
    log.add(pre + 'time=2026-05-02T09:20:01.001Z level=WARN source=runner.go:489 '
            'msg="if GPUs are not correctly discovered, unset and try again"')
    log.add(pre + 'time=2026-05-02T09:20:01.002Z level=INFO source=runner.go:67 msg="discovering available GPUs..."')
    log.add(pre + 'time=2026-05-02T09:20:02.410Z level=INFO source=types.go:60 msg="inference compute" '
            'id=GPU-5f2a library=ROCm compute=gfx1030 name=ROCm0 description="AMD Radeon RX 6700 XT" '
            'total="12.0 GiB" available="11.8 GiB"')
    logs.append(log)
    return logs


def application_and_loader_logs():
    """Logs for the families added in issue 13's ninth round, each written from the format
    string of the program that prints it (named in the kb entry's notes or comments): an
    application's own refusal of a GPU target (ollama, TensorFlow-ROCm 1.x, LM Studio), MIOpen's
    database and cache files, glibc 2.41's executable-stack refusal, libdrm's render-node
    refusal, TensorFlow-ROCm's StreamExecutor device count. Nothing is pasted from a thread."""
    rng = random.Random(29)
    logs = []

    log = Log("unsupported-gpu-app-refuses-target.log", first="app-gpu-target-unsupported",
              note="TensorFlow-ROCm 1.x minimum-ISA check, then LM Studio's engine survey (both forms)")
    log.add("2019-03-04 10:21:07.118230: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1433] Found device 0 "
            "with properties: name: Device 67ef AMDGPU ISA: gfx803")
    log.hit(["app-gpu-target-unsupported"], "2019-03-04 10:21:07.118402: I tensorflow/core/common_runtime/gpu/"
            "gpu_device.cc:1605] Ignoring visible gpu device (device: 0, name: Device 9874, pci bus id: "
            "0000:00:01.0) with AMDGPU ISA gfx801. The minimum required AMDGPU ISA is gfx803.")
    log.add('        "status": "noSupportedGpus",')
    log.hit(["app-gpu-target-unsupported"], '        "message": "No ROCm GPUs detected of supported targets: '
            'gfx1030, gfx1100, gfx1101, gfx1102, gfx1151, gfx1200, gfx1201"')
    log.hit(["app-gpu-target-unsupported"], '[ { "status": "No supported GPUs", "message": "No compatible ROCm '
            'GPUs found on device" } ]')
    logs.append(log)

    log = Log("unsupported-gpu-ollama-too-old.log", first="ollama-gpu-unsupported",
              note="ollama's minimum-family check, the 2024 wording and the later slog form")
    log.hit(["ollama-gpu-unsupported"], 'time=2024-02-20T08:01:12.004Z level=INFO source=gpu.go:162 msg="AMD GPU '
            'too old, falling back to CPU gfx803"')
    log.hit(["ollama-gpu-unsupported"], 'time=2025-01-09T19:44:02.310+01:00 level=WARN source=amd_linux.go:281 '
            'msg="amdgpu too old gfx803" gpu=0')
    log.add('time=2025-01-09T19:44:02.311+01:00 level=INFO source=gpu.go:392 msg="no compatible GPUs were '
            'discovered"')
    logs.append(log)

    log = Log("clean-ollama-no-amd-target.log",
              note="ollama on a machine whose only KFD node has no GPU target (gfx000): not an AMD problem")
    log.add('time=2025-01-09T19:50:11.120Z level=WARN source=amd_linux.go:281 msg="amdgpu too old gfx000" gpu=0')
    log.add('time=2025-01-09T19:50:11.121Z level=INFO source=types.go:131 msg="inference compute" id=GPU-3f1e '
            'library=cuda compute=8.6 driver=12.4 name="NVIDIA GeForce RTX 3060" total="11.7 GiB"')
    logs.append(log)

    log = Log("miopen-failure-user-db.log", first="miopen-user-db-unusable",
              note="MIOpen's database and cache files: SQLite, text find-db, lock, boost and std filesystem forms")
    epochs(log, rng, 1)
    log.hit(["miopen-user-db-unusable"], "MIOpen(HIP): Warning [FindDataDirectSolutions] /src/MIOpen/src/sqlite_db.cpp"
            ":228: Internal error while accessing SQLite database: locking protocol")
    log.hit(["miopen-user-db-unusable"], "MIOpen(HIP): Error [FlushUnsafe] File is unreadable: "
            "/home/ana/.config/miopen//gfx906_60.HIP.2_2_0.ufdb.txt")
    log.hit(["miopen-user-db-unusable"], "MIOpen(HIP): Error [~FindDbRecord] Failed to store record to find-db at "
            "</home/ana/.config/miopen//gfx906_60.HIP.2_2_0.ufdb.txt>")
    log.hit(["miopen-user-db-unusable"], "MIOpen Error: /src/MIOpen/src/db.cpp:107: Db lock has failed to lock.")
    log.hit(["miopen-user-db-unusable"],
            "terminate called after throwing an instance of 'boost::filesystem::filesystem_error'  what():  "
            "boost::filesystem::permissions: Permission denied: \"/home/ana/.config/miopen//gfx906_60.HIP."
            "2_2_0.ufdb.txt\"")
    log.hit(["miopen-user-db-unusable"], "MIOpen Error: filesystem error: cannot create "
            "directories: Read-only file system [/opt/app/.cache/miopen/3.2.0.]")
    logs.append(log)

    log = Log("install-mismatch-execstack.log", first="rocm-library-execstack",
              note="glibc >= 2.41 refuses a library that asks for an executable stack (dlerror as Python shows it)")
    traceback(log, [("/home/ana/sd/launch.py", 4, "<module>", "import torch"),
                    (TORCH + "/__init__.py", 218, "<module>", "from torch._C import *  # noqa: F403")], [])
    log.hit(["rocm-library-execstack"], "ImportError: librccl.so.1: cannot enable executable stack as shared object "
            "requires: Invalid argument")
    logs.append(log)

    log = Log("device-access-render-node-refused.log", first="kfd-no-access",
              note="libdrm's amdgpu_device_initialize refused the render node (EPERM and EACCES forms)")
    log.add(">>> import torch", ">>> torch.cuda.is_available()")
    log.hit(["kfd-no-access"], "amdgpu_device_initialize: amdgpu_get_auth (1) failed (-1)")
    log.hit(["kfd-no-access"], "amdgpu_device_initialize: amdgpu_query_info(ACCEL_WORKING) failed (-13)")
    log.add("False")
    logs.append(log)

    log = Log("missing-code-object-triton-hip.log", first="hip-invalid-device-function",
              note="Triton's AMD driver: the three wordings of its HIP error (torch.compile on ROCm)")
    traceback(log, [("/home/ana/train.py", 40, "<module>", "loss = model(x).sum()"),
                    ("/home/ana/.venv/lib/python3.11/site-packages/triton/backends/amd/driver.py", 479,
                     "__call__", "self.launch(*args, **kwargs)")], [])
    log.hit(["hip-invalid-device-function"], "RuntimeError: Triton Error [HIP]:  Code: 98, Messsage: invalid device "
            "function")
    log.hit(["hip-invalid-device-function"], "Triton Error [HIP]: invalid device function")
    log.hit(["hip-out-of-memory"], "RuntimeError: Triton Error [HIP]: Code: 2, Message: out of memory")
    logs.append(log)

    log = Log("missing-code-object-invalid-image.log", first="hip-invalid-device-function",
              note="hipErrorInvalidImage: a code object for another target reached the GPU (llama.cpp, PyTorch)")
    log.add("ggml_cuda_compute_forward: SCALE failed")
    log.hit(["hip-invalid-device-function"], "ROCm error: device kernel image is invalid")
    log.add("  current device: 1, in function ggml_cuda_compute_forward at ggml/src/ggml-cuda/ggml-cuda.cu:3114",
            "", "$ AMD_LOG_LEVEL=3 python3 infer.py 2>&1 | grep -B2 Returned")
    log.hit(["hip-invalid-device-function"], ":3:hip_module.cpp           :83  : 8812355 us: [pid:2211 tid:0x7f55c] "
            "hipModuleLoadData: Returned hipErrorInvalidImage :")
    logs.append(log)

    log = Log("hsa-runtime-error-triton-hip.log", first="family-hip-runtime-error",
              note="Triton's AMD driver with a HIP error no specific entry claims")
    log.add("  File \"/usr/local/lib/python3.12/dist-packages/triton/backends/amd/driver.py\", line 479, in __call__",
            "    self.launch(*args, **kwargs)")
    log.hit(["family-hip-runtime-error"], "RuntimeError: Triton Error [HIP]:  Code: 1, Messsage: invalid argument")
    logs.append(log)

    log = Log("kernel-driver-fault-rocminfo-no-driver.log", first="amdgpu-not-loaded",
              note="rocminfo with no amdgpu module loaded (its first check), then the open that follows")
    log.add("$ /opt/rocm/bin/rocminfo --support")
    log.hit(["amdgpu-not-loaded"], "ROCk module is NOT loaded, possibly no GPU devices")
    logs.append(log)

    log = Log("clean-training-rocm-smi-poll.log",
              note="a healthy training run on a machine without amdgpu; a system monitor polled rocm-smi")
    epochs(log, rng, 1)
    log.add("ERROR:root:Driver not initialized (amdgpu not found in modules)")
    epochs(log, rng, 1)
    logs.append(log)

    log = Log("install-mismatch-hip-toolchain.log", first="hip-toolchain-incomplete",
              note="clang's AMDGPU driver without device libraries (current and clang 11-13 wordings), "
                   "without them for one target, without the HIP headers")
    log.add("-- Check for working HIP compiler: /usr/bin/clang++ - broken")
    log.hit(["hip-toolchain-incomplete"], "clang++: error: cannot find ROCm device library; provide its path via "
            "'--rocm-path' or '--rocm-device-lib-path', or pass '-nogpulib' to build without ROCm device library")
    log.hit(["hip-toolchain-incomplete"], "clang-15: error: cannot find ROCm device library for gfx1100; provide its "
            "path via '--rocm-path' or '--rocm-device-lib-path', or pass '-nogpulib' to build without ROCm device "
            "library")
    log.hit(["hip-toolchain-incomplete"], "clang-11: error: cannot find ROCm installation.  Provide its path via "
            "--rocm-path, or pass -nogpulib and -nogpuinc to build without ROCm device library and HIP includes.")
    log.hit(["hip-toolchain-incomplete"], "clang: error: cannot find HIP runtime; provide its path via "
            "'--rocm-path', or pass '-nogpuinc' to build without HIP runtime")
    log.hit(["hip-toolchain-incomplete"], "/src/ggml/src/ggml-cuda/vendors/hip.h:3:10: fatal error: "
            "'hip/hip_runtime.h' file not found")
    logs.append(log)

    log = Log("device-access-tensorflow-device-count.log", first="no-hip-gpus",
              note="TensorFlow-ROCm's StreamExecutor when HIP enumerates no GPU")
    log.hit(["no-hip-gpus"], "2020-06-11 09:14:02.511203: E tensorflow/stream_executor/rocm/rocm_driver.cc:1098] "
            "could not retrieve ROCM device count: HIP_ERROR_NoDevice")
    logs.append(log)
    return logs


def driver_build_and_package_logs():
    """Logs for the families added in issue 13's tenth round, each written from the format of the
    program that prints it (the kb entry's notes name it): the KFD driver older than the runtime
    (CLR's AMD_LOG_LEVEL lines, PyTorch, MIGraphX, RCCL), composable_kernel built for a target it
    lacks, bitsandbytes' native-library lookup, Flatpak's bubblewrap, Windows DLL loads, AITER's
    error and chip check, hipcc without ROCm's clang, a header newer than the ROCm installed."""
    rng = random.Random(31)
    logs = []

    log = Log("install-mismatch-kfd-driver-old.log", first="kfd-driver-older-than-runtime",
              note="hipMemGetInfo on an in-tree driver: CLR log lines, PyTorch's frame and error, MIGraphX, RCCL IPC")
    log.add(":3:hip_memory.cpp           :777 : 2210934412 us: [pid:881  tid:0x7f1c2a3fe740]  hipMemGetInfo ( "
            "0x7ffd2b1c91e8, 0x7ffd2b1c91f0 )")
    log.hit(["kfd-driver-older-than-runtime"], ":1:rocdevice.cpp            :1885: 2210934430 us: [pid:881  "
            "tid:0x7f1c2a3fe740] HSA_AMD_AGENT_INFO_MEMORY_AVAIL query failed.")
    log.hit(["kfd-driver-older-than-runtime"], ":3:hip_memory.cpp           :790 : 2210934433 us: [pid:881  "
            "tid:0x7f1c2a3fe740] hipMemGetInfo: Returned hipErrorInvalidValue :")
    log.add("Traceback (most recent call last):", '  File "/srv/probe.py", line 3, in <module>',
            "    free, total = torch.cuda.mem_get_info()",
            '  File "/opt/venv/lib/python3.10/site-packages/torch/cuda/memory.py", line 738, in mem_get_info')
    log.add("    return torch.cuda.cudart().cudaMemGetInfo(device)")
    # The signature spans the frame and the error line; a match is reported on the line it ends.
    log.hit(["kfd-driver-older-than-runtime"], "RuntimeError: HIP error: invalid argument")
    log.add("HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
            "might be incorrect.")
    log.hit(["kfd-driver-older-than-runtime"], "terminate called after throwing an instance of 'migraphx::version_1::"
            "exception'  what():  /src/AMDMIGraphX/src/targets/gpu/hip.cpp:67: get_available_gpu_memory: Failed "
            "getting available memory: invalid argument")
    log.hit(["kfd-driver-older-than-runtime"], "node7:2201:2217 [1] /src/rccl/src/transport/p2p.cc:235 NCCL WARN "
            "hipIpcGetMemHandle failed : invalid argument")
    logs.append(log)

    log = Log("unsupported-gpu-ck-target.log", first="ck-target-unsupported",
              note="composable_kernel compiled for a target outside its arch groups (clang's diagnostic)")
    log.add("[112/3077] Building HIP object csrc/CMakeFiles/ck_attn.dir/attention/fmha_fwd.hip.o")
    log.hit(["ck-target-unsupported"], "/src/composable_kernel/include/ck/utility/amd_buffer_addressing_builtins.hpp"
            ":33:48: error: use of undeclared identifier 'CK_BUFFER_RESOURCE_3RD_DWORD'")
    log.add("   33 |     wave_buffer_resource.config(Number<3>{}) = CK_BUFFER_RESOURCE_3RD_DWORD;",
            "4 errors generated when compiling for gfx1032.")
    logs.append(log)

    log = Log("install-mismatch-bitsandbytes-rocm.log", first="bitsandbytes-rocm-library-missing",
              note="bitsandbytes' native-library lookup, older and newer wording")
    log.hit(["bitsandbytes-rocm-library-missing"], "Could not find the bitsandbytes ROCm binary at PosixPath('/home/"
            "ana/.venv/lib/python3.11/site-packages/bitsandbytes/libbitsandbytes_rocm62.so')")
    log.hit(["bitsandbytes-rocm-library-missing"], "ROCm Setup failed despite ROCm being available. Please run the "
            "following command to get more information:")
    log.hit(["bitsandbytes-rocm-library-missing"], "RuntimeError: Configured ROCm binary not found at /home/ana/.venv/"
            "lib/python3.11/site-packages/bitsandbytes/libbitsandbytes_rocm71.so")
    logs.append(log)

    log = Log("device-access-flatpak-bwrap.log", first="container-rootless-denied",
              note="bubblewrap could not stat the device node it was asked to bind")
    log.hit(["container-rootless-denied"], "bwrap: Can't get type of source /dev/kfd: Permission denied")
    logs.append(log)

    log = Log("install-mismatch-windows-dll.log", first="rocm-library-load-failed",
              note="Python's ctypes on Windows looking for a HIP SDK DLL of another release")
    log.hit(["rocm-library-load-failed"], "Failed to load ZLUDA: Could not find module 'C:\\Program Files\\AMD\\ROCm\\"
            "6.4\\bin\\hiprtc0601.dll' (or one of its dependencies). Try using the full path with constructor syntax.")
    logs.append(log)

    log = Log("unsupported-gpu-aiter-arch.log", first="app-gpu-target-unsupported",
              note="AITER's chip check when vLLM imports it on a target it does not know")
    log.hit(["app-gpu-target-unsupported"], 'RuntimeError: Get GPU arch from rocminfo failed "Unknown GPU '
            'architecture: gfx1151. Supported architectures: gfx942, gfx950"')
    logs.append(log)

    log = Log("hsa-runtime-error-aiter-launch.log", first="family-hip-runtime-error",
              note="AITER's launcher reporting a HIP error from hipModuleLaunchKernel")
    log.hit(["family-hip-runtime-error"], "[AITER] /opt/aiter/aiter/jit/build/module_gemm/blob/gemm_a8w8.cpp:88 fail "
            "to call hipModuleLaunchKernel(kernel_func, gdx, gdy, 1, 256, 1, 1, 0, stream, NULL, args) ---> "
            "[HIP error](invalid resource handle)")
    logs.append(log)

    log = Log("install-mismatch-hipcc-paths.log", first="hip-toolchain-incomplete",
              note="hipcc with a ROCM_PATH that holds no ROCm clang; a header newer than the installed ROCm")
    log.add("$ hipcc vadd.cpp -o vadd")
    log.hit(["hip-toolchain-incomplete"], "sh: 1: /opt/rocm-tarball/lib/llvm/bin/clang++: not found")
    log.hit(["hip-toolchain-incomplete"], "/opt/rocm-5.6.0/include/hip/hip_bf16.h:30:10: fatal error: "
            "'hip/amd_detail/amd_hip_bf16.h' file not found")
    log.hit(["hip-toolchain-incomplete"], "failed to execute:C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\"
            "v12.6\\bin/nvcc  -Wno-deprecated-gpu-targets -x cu vadd.cpp -o vadd.exe")
    logs.append(log)

    log = Log("out-of-memory-command-submission.log", first="hip-out-of-memory",
              note="VRAM exhausted seen from the kernel driver (amdgpu_cs.c) and from Mesa's Vulkan driver")
    log.hit(["hip-out-of-memory"], "Mar 02 21:14:09 tower kernel: [drm:amdgpu_cs_ioctl [amdgpu]] *ERROR* Not enough "
            "memory for command submission!")
    log.add("Mar 02 21:14:10 tower kernel: [drm:amdgpu_dm_plane_helper_prepare_fb [amdgpu]] *ERROR* Failed to pin "
            "framebuffer with error -12")
    log.hit(["hip-out-of-memory"], "radv/amdgpu: Not enough memory for command submission.")
    logs.append(log)

    log = Log("install-mismatch-cxx-runtime.log", first="cxx-runtime-too-old",
              note="an older libstdc++ or glibc loaded first: the loader, the linker and dnf say so")
    traceback(log, [("/home/ana/run.py", 1, "<module>", "import torch")], [])
    log.hit(["cxx-runtime-too-old"], "ImportError: /home/ana/miniconda3/envs/sd/lib/libstdc++.so.6: version "
            "`GLIBCXX_3.4.30' not found (required by /opt/rocm-6.2.0/lib/libamdhip64.so.6)")
    log.hit(["cxx-runtime-too-old"], "/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by "
            "/opt/rocm/lib/librocprofiler-sdk.so.1)")
    log.hit(["cxx-runtime-too-old"], "/usr/bin/ld: /opt/rocm-6.0.0/lib/libamd_comgr.so.2: undefined reference to "
            "`std::condition_variable::wait(std::unique_lock<std::mutex>&)@GLIBCXX_3.4.30'")
    # dnf's line names both the missing runtime and the ROCm package that needs it.
    log.hit(["cxx-runtime-too-old", "rocm-packages-conflict"], "  - nothing provides libstdc++.so.6(GLIBCXX_3.4.32)(64bit) needed by "
            "amdrocm-runtime-7.1.0-1.x86_64 from rocm")
    logs.append(log)

    log = Log("install-mismatch-libdrm-missing.log", first="rocm-library-load-failed",
              note="amd-smi and the ROCm runtime without the system libraries they load at run time")
    log.add("$ amd-smi list")
    log.hit(["rocm-library-load-failed"], "Fail to open libdrm.so.2: libdrm.so.2: cannot open shared object file: "
            "No such file or directory")
    log.hit(["rocm-library-load-failed"], "rocminfo: error while loading shared libraries: libnuma.so.1: cannot open "
            "shared object file: No such file or directory")
    log.hit(["rocm-library-load-failed"], "ModuleNotFoundError: No module named 'amdsmi'")
    log.hit(["rocm-library-load-failed"], "ZLUDA device failed to pass basic operation test: index=0, "
            "device_name=AMD Radeon RX 6800 XT [ZLUDA]")
    log.hit(["rocm-library-load-failed"], "/opt/rocm-6.2.0/llvm/bin/ld.lld: error while loading shared libraries: "
            "libxml2.so.2: cannot open shared object file: No such file or directory")
    logs.append(log)
    return logs


def install_logs():
    """Logs for the install families of issue 13's eleventh round, from a survey of install threads
    (each entry's notes): DKMS builds, package managers, pip indexes, CUDA build paths, Windows DLLs,
    CMake and the perl hipcc, C++ headers. Each line is the printing program's format, filled in."""
    logs = []

    log = Log("install-mismatch-amdgpu-dkms.log", first="amdgpu-dkms-build-failed",
              note="dkms, dpkg and modprobe when amdgpu-dkms does not build or load for the running kernel")
    log.add("Setting up amdgpu-dkms (1:6.8.5.60202-2041575.24.04) ...", "Building for 6.14.0-24-generic",
            "Building initial module for 6.14.0-24-generic")
    log.hit(["amdgpu-dkms-build-failed"], "Error! Bad return status for module build on kernel: 6.14.0-24-generic "
            "(x86_64)")
    log.hit(["amdgpu-dkms-build-failed"], "Consult /var/lib/dkms/amdgpu/6.8.5-2041575.24.04/build/make.log for more "
            "information.")
    log.hit(["amdgpu-dkms-build-failed"], "dpkg: error processing package amdgpu-dkms (--configure):")
    log.hit(["amdgpu-dkms-build-failed"], " installed amdgpu-dkms package post-installation script subprocess "
            "returned error exit status 10")
    log.hit(["amdgpu-dkms-build-failed"], "Error! Your kernel headers for kernel 6.2.0-060200-generic cannot be found.")
    log.hit(["amdgpu-dkms-build-failed"], "modprobe: ERROR: could not insert 'amdgpu': Unknown symbol in module, or "
            "unknown parameter (see dmesg)")
    logs.append(log)

    log = Log("install-mismatch-rocm-wheel-index.log", first="rocm-wheel-not-installable",
              note="pip without a ROCm wheel for the request: no version, no distribution, wrong platform tag")
    log.add("$ pip install torch==2.3.0+rocm6.0 --index-url https://download.pytorch.org/whl/rocm6.0")
    log.add("ERROR: Could not find a version that satisfies the requirement torch==2.3.0+rocm6.0 (from versions: none)")
    log.hit(["rocm-wheel-not-installable"], "ERROR: No matching distribution found for torch==2.3.0+rocm6.0")
    log.hit(["rocm-wheel-not-installable"], "ERROR: No matching distribution found for pytorch-triton-rocm==3.0.0")
    log.hit(["rocm-wheel-not-installable"], "ERROR: flash_attn-2.6.3+rocm62-cp310-cp310-linux_x86_64.whl is not a "
            "supported wheel on this platform.")
    logs.append(log)

    log = Log("install-mismatch-rocm-packages.log", first="rocm-packages-conflict",
              note="apt, dpkg and dnf refusing a mixed or incomplete set of ROCm packages; the repository key")
    log.add("The following packages have unmet dependencies:")
    log.hit(["rocm-packages-conflict"], " rocm-hip-runtime : Depends: hip-runtime-amd (= 6.2.0.60200-66~24.04) but "
            "6.1.2.60102-119~24.04 is to be installed")
    log.add("E: Unable to correct problems, you have held broken packages.")
    log.hit(["rocm-packages-conflict"], "dpkg: error processing archive /var/cache/apt/archives/amdgpu-dkms_6.1.3.deb "
            "(--unpack): trying to overwrite '/usr/src/amdgpu-6.1.3/Makefile', which is also in package rock-dkms "
            "1:6.1.3")
    log.hit(["rocm-packages-conflict"], "  - nothing provides perl(File::BaseDir) needed by rocm-core-6.2.0-1.el9.x86_64")
    log.hit(["rocm-packages-conflict"], "W: GPG error: https://repo.radeon.com/rocm/apt/6.2 noble InRelease: The "
            "following signatures couldn't be verified because the public key is not available: NO_PUBKEY "
            "9386B48A1A693C5C")
    log.hit(["rocm-packages-conflict"], "E: Unable to locate package rocm-hip-sdk")
    logs.append(log)

    log = Log("install-mismatch-cuda-build-path.log", first="cuda-build-path-on-rocm",
              note="builds and extensions that took the CUDA path under a ROCm PyTorch")
    log.add("torch.__version__  = 2.4.1+rocm6.1")
    log.hit(["torch-cpu-build"], "RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to "
            "COMMANDLINE_ARGS variable to disable this check")
    log.hit(["cuda-build-path-on-rocm"], "RuntimeError: flash_attn was requested, but nvcc was not found.  Are you "
            "sure your environment has nvcc available?")
    log.hit(["cuda-build-path-on-rocm"], "OSError: CUDA_HOME environment variable is not set. Please set it to your "
            "CUDA install root.")
    log.hit(["torch-companion-mismatch"], "RuntimeError: operator torchvision::nms does not exist")
    log.hit(["cuda-build-path-on-rocm"], "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was "
            "built for: PyTorch 2.4.1+cu121 with CUDA 1201 (you have 2.4.1+rocm6.1)")
    logs.append(log)

    log = Log("install-mismatch-windows-torch-dll.log", first="rocm-library-load-failed",
              note="PyTorch's DLL loader and the Windows loader missing a HIP runtime DLL")
    log.hit(["rocm-library-load-failed"], 'OSError: [WinError 126] The specified module could not be found. Error '
            'loading "C:\\AI\\ComfyUI\\venv\\Lib\\site-packages\\torch\\lib\\amdhip64_7.dll" or one of '
            'its dependencies.')
    log.hit(["rocm-library-load-failed"], "The code execution cannot proceed because amdhip64_6.dll was not found. "
            "Reinstalling the program may fix this problem.")
    log.hit(["torch-companion-mismatch"], "ImportError: /home/ana/.venv/lib/python3.11/site-packages/mamba_ssm/"
            "selective_scan_cuda.so: undefined symbol: _ZN3c103hip19getCurrentHIPStreamEa")
    logs.append(log)

    log = Log("install-mismatch-cmake-hipcc.log", first="hip-toolchain-incomplete",
              note="CMake without HIP's package config, the perl hipconfig without clang, clang without C++ headers")
    log.hit(["hip-toolchain-incomplete"], '  Could not find a package configuration file provided by "hipblas" with '
            "any of the following names:")
    log.hit(["hip-toolchain-incomplete"], 'Can\'t exec "/opt/rocm/llvm/bin/clang++": No such file or directory at '
            "/opt/rocm/bin/hipconfig line 125.")
    log.hit(["hip-toolchain-incomplete"], "/opt/rocm/llvm/lib/clang/17/include/__clang_hip_runtime_wrapper.h:50:10: "
            "fatal error: 'cmath' file not found")
    logs.append(log)
    return logs


def target_and_config_logs():
    """Logs for the GPU-target and configuration families of issue 13's eleventh round, from two
    surveys of public threads (each entry's notes): compilers refusing a target, code objects and
    allow-lists for other targets, library build-time target lists, visibility variables, the
    allocator variable, a malformed override, OverDrive, the driver older than the runtime."""
    logs = []

    log = Log("unsupported-gpu-compiler-target.log", first="compiler-target-unknown",
              note="clang, hipcc, LLVM and Triton refusing a GPU target they do not know")
    log.hit(["compiler-target-unknown"], "clang: error: unsupported HIP gpu architecture: gfx1200")
    log.hit(["compiler-target-unknown"], "clang-14: error: invalid target ID 'gfx1100'; format is a processor name "
            "followed by an optional colon-delimited list of features followed by an enable/disable sign (e.g., "
            "'gfx908:sramecc+:xnack-')")
    log.hit(["compiler-target-unknown"], "Warning: The specified HIP target: gfx902 is unknown. Correct compilation "
            "is not guaranteed.")
    log.hit(["compiler-target-unknown"], "'gfx1100' is not a recognized processor for this target (ignoring processor)")
    log.hit(["compiler-target-unknown"], 'loc("/home/ana/vllm/attention/triton_flash_attention.py":211:0): error: '
            "unsupported target: 'gfx906'")
    logs.append(log)

    log = Log("missing-code-object-foreign-isa.log", first="hip-invalid-device-function",
              note="a code object for another ISA (CLR), a ggml build without code for the arch, Blender's fatbin")
    log.hit(["hip-invalid-device-function"], ":1:devprogram.cpp           :1873: 5521 us: Error: The program ISA "
            "amdgcn-amd-amdhsa--gfx1100 is not compatible with the device ISA amdgcn-amd-amdhsa--gfx1151")
    log.hit(["hip-invalid-device-function"], "/src/ggml/src/ggml-cuda/fattn-mma-f16.cuh:1521: ERROR: HIP kernel "
            "flash_attn_ext_f16 has no device code compatible with HIP arch 1300.")
    log.hit(["hip-invalid-device-function"], "HIP binary kernel for this graphics card compute capability (11.0) not "
            "found.")
    logs.append(log)

    log = Log("unsupported-gpu-allow-lists.log", first="app-gpu-target-unsupported",
              note="projects' own target allow-lists: flash-attention, sgl-kernel, Blender, Lemonade")
    log.hit(["app-gpu-target-unsupported"], "AssertionError: One of GPU archs of ['gfx1100'] is invalid or not "
            "supported by Flash-Attention")
    log.hit(["app-gpu-target-unsupported"], "RuntimeError: FlashAttention only supports AMD MI200 GPUs or newer.")
    log.hit(["app-gpu-target-unsupported"], "Warning: Unsupported GPU architecture detected 'gfx1101'. Expected "
            "'gfx942' or 'gfx950'.")
    log.hit(["app-gpu-target-unsupported"], "HIP backend requires AMD RDNA graphics card or up, but found AMD Radeon "
            "RX 580 Series.")
    logs.append(log)

    log = Log("unsupported-gpu-library-target-lists.log", first="ck-target-unsupported",
              note="rocWMMA, hipSPARSELt and a target-feature builtin refusing a target at build time")
    log.hit(["ck-target-unsupported"], "/opt/rocm/include/rocwmma/internal/config.hpp:142:5: error: static assertion "
            "failed: Unsupported architecture")
    log.hit(["ck-target-unsupported"], "  Unsupported GPU target: gfx1030")
    log.hit(["ck-target-unsupported"], "error: '__builtin_amdgcn_wmma_f32_16x16x16_f16_w32' needs target feature "
            "gfx11-insts,wavefrontsize32")
    logs.append(log)

    log = Log("config-risk-visible-devices.log", first="visible-devices-misnumbered",
              note="a device index past what the visibility variables leave; Ray refusing mixed variables")
    log.hit(["visible-devices-misnumbered"], "RuntimeError: HIP error: invalid device ordinal")
    log.hit(["visible-devices-misnumbered"], "RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "
            '"/pytorch/aten/src/ATen/hip/HIPContext.cpp":50, please report a bug to PyTorch. device=1, num_gpus=1')
    log.hit(["visible-devices-misnumbered"], "RuntimeError: Please use HIP_VISIBLE_DEVICES instead of "
            "ROCR_VISIBLE_DEVICES")
    logs.append(log)

    log = Log("config-risk-alloc-conf.log", first="alloc-conf-invalid",
              note="PyTorch's allocator-config parser rejecting PYTORCH_HIP_ALLOC_CONF")
    log.hit(["alloc-conf-invalid"], "RuntimeError: Unrecognized CachingAllocator option: expandable_segments")
    log.hit(["alloc-conf-invalid"], "RuntimeError: garbage_collect_threshold too small, set it 0.0~1.0")
    logs.append(log)

    log = Log("install-mismatch-runtime-checks.log", first="kfd-driver-older-than-runtime",
              note="ROCr's driver check, LM Studio's survey, libhsakmt's override parser, MIOpen's old asm, "
                   "Tensile without kernels, OverDrive at boot")
    log.hit(["kfd-driver-older-than-runtime"], "HSA Error:  Incompatible kernel and userspace, AMD Radeon VII "
            "disabled. Upgrade amdgpu.")
    log.add("", "")
    log.hit(["no-hip-gpus"], "Backend 'llama.cpp-linux-x86_64-amd-rocm-avx2' requires gpu acceleration, but GPU "
            "survey on hardware was unsuccessful with message 'Error trying to query ROCm gpus: No hip devices "
            "found!'")
    log.add("", "", "", "", "", "", "", "", "", "", "")
    log.hit(["override-malformed"], "hsakmt: HSA_OVERRIDE_GFX_VERSION 11.0 is invalid")
    log.add("", "", "", "", "", "", "", "", "", "", "")
    log.hit(["miopen-kernel-build-failed"], "<stdin>:1:2: error: Only Gfx8 and Gfx9 ISA is supported")
    log.add("", "", "", "", "", "", "", "", "", "", "")
    log.hit(["rocblas-no-kernels-for-target"], "rocBLAS error: Tensile solution found, but kernel not found in any "
            "loaded module.")
    log.add("", "", "", "", "", "", "", "", "", "", "")
    log.hit(["ppfeaturemask-overdrive"], "[    4.118233] amdgpu: Overdrive is enabled, please disable it before "
            "reporting any bugs unrelated to overdrive.")
    logs.append(log)
    return logs


def backend_and_trace_logs():
    """Logs for the signatures of issue 13's twelfth to fifteenth rounds (each from a dev row of
    the real corpus, named in the entry's comments): CPU-only LLM runtimes, Triton's backends, the
    runtime's code-object trace and fatal checks, hipBLASLt's lazy loading, CK's MFMA kernels,
    PyTorch's SDPA selector, TensorFlow's target check, ROCm 7's private system libraries; HIP
    samples' error check, gdb backtraces through the HIP runtime, an elided memory fault, dkms
    with amdgpu only added; MIOpen's db directory, clang without device libraries, PSP firmware
    loads, LLVM lowering an intrinsic the target lacks; from the fifteenth round, the runtime naming
    the library without the target, amdgpu's resume after a reset, the assembler and Tensile refusing
    a target, pip's companion conflict, rocBLAS running on the gfx1036 iGPU. Each line is the printing
    program's format, filled in."""
    logs = []

    log = Log("install-mismatch-cpu-only-runtime.log", first="app-cpu-only-build",
              note="ollama's runner list without a rocm runner (both spellings), llama.cpp's offload warning")
    log.add('time=2024-05-02T09:12:40.101+02:00 level=INFO source=routes.go:1118 msg="Listening on 127.0.0.1:11434 '
            '(version 0.1.32)"')
    log.hit(["app-cpu-only-build"], 'time=2024-05-02T09:12:40.233+02:00 level=INFO source=payload.go:44 '
            'msg="Dynamic LLM libraries [cpu cpu_avx cpu_avx2]"')
    log.hit(["app-cpu-only-build"], 'time=2025-02-11T18:03:07.512Z level=INFO source=routes.go:1267 '
            'msg="Dynamic LLM libraries" runners="[cpu cpu_avx cpu_avx2]"')
    log.hit(["app-cpu-only-build"], "warning: not compiled with GPU offload support, --gpu-layers option will be "
            "ignored")
    log.add("warning: see main README.md for information on enabling GPU BLAS support")
    logs.append(log)

    log = Log("install-mismatch-triton-backends.log", first="cuda-build-path-on-rocm",
              note="inductor compiling with NVIDIA's Triton on ROCm; Triton's AMD backend without ROCm's linker")
    log.add("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:")
    log.hit(["cuda-build-path-on-rocm"], "RuntimeError: Internal Triton PTX codegen error: ")
    log.hit(["cuda-build-path-on-rocm"], "ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'")
    log.add(*[""] * 12)
    log.hit(["hip-toolchain-incomplete"], "torch._inductor.exc.InductorError: LoweringException: Exception: ROCm "
            "linker /opt/rocm/llvm/bin/ld.lld not found. Set 'TRITON_HIP_LLD_PATH' to its path.")
    logs.append(log)

    log = Log("missing-code-object-trace.log", first="hip-invalid-device-function",
              note="AMD_LOG_LEVEL=1 code-object search: the device's target not found in the bundle")
    log.add(":1:hip_code_object.cpp      :507 : 1203311540 us: 8811: [tid:0x7f2c1a7fe740]   Devices:")
    log.hit(["hip-invalid-device-function"], ":1:hip_code_object.cpp      :510 : 1203311544 us: 8811: "
            "[tid:0x7f2c1a7fe740]     amdgcn-amd-amdhsa--gfx1101 - [Not Found]")
    log.add(":1:hip_code_object.cpp      :514 : 1203311547 us: 8811: [tid:0x7f2c1a7fe740]   Bundled Code Objects:")
    logs.append(log)

    log = Log("hsa-runtime-error-fatal-check.log", first="family-hip-runtime-error",
              note="a fatal check of the HIP runtime, printed with its source path at level 0")
    log.add("Epoch 1/10")
    log.hit(["family-hip-runtime-error"], ":0:/longer_pathname_so_that_rpms_can_support_packaging_the_debug_info_"
            "for_all_os_profiles/src/clr/hipamd/src/hip_global.cpp:158 : 2203471102 us:  Module not initialized")
    log.add("Aborted (core dumped)")
    logs.append(log)

    log = Log("rocblas-missing-arch-hipblaslt-lazy.log", first="rocblas-no-kernels-for-target",
              note="hipBLASLt's lazy loader finding no library for the GPU, then the GEMM failing")
    log.hit(["rocblas-no-kernels-for-target"], "rocblaslt warning: No paths matched /opt/venv/lib/python3.12/"
            "site-packages/torch/lib/hipblaslt/library/*gfx1030*co. Make sure that HIPBLASLT_TENSILE_LIBPATH is "
            "set correctly.")
    log.add("RuntimeError: CUDA error: HIPBLAS_STATUS_NOT_SUPPORTED when calling `HIPBLAS_STATUS_NOT_SUPPORTED`")
    logs.append(log)

    log = Log("unsupported-gpu-ck-xdl.log", first="ck-target-unsupported",
              note="a composable_kernel MFMA attention operation refusing the problem on a GPU without MFMA")
    log.hit(["ck-target-unsupported"], "RuntimeError: DeviceGroupedMultiheadAttentionForward_Xdl_CShuffle_V2<256, "
            "128, 64, 32, 8, 8, 64, 64, 32, 2, Default, ASpecDefault, B0SpecDefault, B1SpecDefault, CSpecDefault, "
            "MaskDisabled> does not support this problem")
    logs.append(log)

    log = Log("unsupported-gpu-sdpa-selector.log", first="sdpa-flash-attention-unavailable",
              note="PyTorch's ROCm SDPA selector saying why it skipped the fused kernels")
    log.hit(["sdpa-flash-attention-unavailable"], "/work/attn.py:12: UserWarning: Flash attention kernel not used "
            "because: (Triggered internally at /pytorch/aten/src/ATen/native/transformers/hip/sdp_utils.cpp:861.)")
    log.add("  out = F.scaled_dot_product_attention(q, k, v)")
    logs.append(log)

    log = Log("rocblas-missing-arch-tensorflow-rdna2.log", first="rdna2-no-override",
              note="TensorFlow's ROCm build skipping a gfx1032 it was not built for, gfx1030 in its list")
    log.hit(["library-missing-target", "rdna2-no-override"], "2023-06-01 10:02:11.104311: I tensorflow/core/"
            "common_runtime/gpu/gpu_device.cc:2001] Ignoring visible gpu device (device: 0, name: AMD Radeon RX "
            "6600, pci bus id: 0000:0b:00.0) with AMDGPU version : gfx1032. The supported AMDGPU versions are "
            "gfx1030, gfx900, gfx906, gfx908, gfx90a.")
    logs.append(log)

    log = Log("rocblas-missing-arch-ollama-rdna2.log", first="rdna2-no-override",
              note="ollama skipping a gfx1032 its bundled ROCm libraries lack, gfx1030 in its list; both wordings")
    log.hit(["ollama-gpu-unsupported", "rdna2-no-override"], 'time=2025-02-02T19:28:37.628+08:00 level=WARN '
            'source=amd_linux.go:378 msg="amdgpu is not supported (supported types:[gfx1030 gfx1100 gfx1101 gfx1102 '
            'gfx900 gfx906 gfx908 gfx90a gfx940 gfx941 gfx942])" gpu_type=gfx1032 gpu=0 library=/usr/lib/ollama')
    log.hit(["ollama-gpu-unsupported", "rdna2-no-override"], "time=2024-05-20T10:00:01.000Z level=WARN "
            "source=amd_linux.go:296 msg=\"amdgpu [0] gfx1032 is not supported by /usr/lib/ollama [gfx1030 gfx1100 "
            "gfx1101 gfx1102 gfx900 gfx906 gfx908 gfx90a gfx940 gfx941 gfx942]\"")
    log.add('time=2025-02-02T19:28:37.630+08:00 level=INFO source=gpu.go:392 msg="no compatible GPUs were '
            'discovered"')
    logs.append(log)

    log = Log("config-risk-module-parameter-ignored.log", first="amdgpu-parameter-ignored",
              note="the kernel dropping module options it does not know: a typo'd amdgpu option and a ttm one")
    log.add("[    0.000000] Command line: BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=4f1c ro amdgpu.gttsise=16384")
    log.hit(["amdgpu-parameter-ignored"], "[    3.912044] amdgpu: unknown parameter 'gttsise' ignored")
    log.hit(["amdgpu-parameter-ignored"], "[    3.912101] ttm: unknown parameter 'page_pool_sise' ignored")
    log.add("[    3.990512] [drm] amdgpu kernel modesetting enabled.")
    logs.append(log)

    log = Log("device-access-kfd-node-missing.log", first="kfd-node-missing",
              note="rocminfo on a machine with no /dev/kfd (driver not loaded, WSL2, or a container without it)")
    log.add("$ /opt/rocm/bin/rocminfo")
    log.hit(["amdgpu-not-loaded"], "ROCk module is NOT loaded, possibly no GPU devices")
    log.hit(["kfd-node-missing"], "Unable to open /dev/kfd read-write: No such file or directory")
    log.add("Failed to get user name to check for video group membership")
    logs.append(log)

    log = Log("install-mismatch-rccl-net-plugin.log", first="rocm-optional-library-missing",
              note="NCCL_DEBUG=INFO: RCCL finds no network plugin and uses its own transport (no failure)")
    log.add("node1:4411:4411 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.5<0>")
    log.hit(["rocm-optional-library-missing"], "node1:4411:4411 [0] NCCL INFO NET/Plugin : Plugin load (librccl-net.so) "
            "returned 2 : librccl-net.so: cannot open shared object file: No such file or directory")
    log.hit(["rocm-optional-library-missing"], "node1:4411:4411 [0] NCCL INFO NET/Plugin : No plugin found, using "
            "internal implementation")
    log.add("RCCL version 2.18.3+hip6.0 HEAD:2f3a5b1", "node1:4411:4411 [0] NCCL INFO Init COMPLETE nranks 2")
    logs.append(log)

    log = Log("gpu-hang-signal-wait-stack.log", first="hsa-signal-wait-hang",
              note="a hung PyTorch process: py-spy's native dump and gdb's frame, parked in ROCr's interrupt wait")
    log.add("Thread 48213 (idle): \"MainThread\"")
    log.hit(["hsa-signal-wait-hang"], "    rocr::core::InterruptSignal::WaitRelaxed (libhsa-runtime64.so.1)")
    log.add("    rocr::HSA::hsa_signal_wait_scacquire (libhsa-runtime64.so.1)",
            "    hip::Stream::finish (libamdhip64.so.6)", "    hipStreamSynchronize (libamdhip64.so.6)",
            "    synchronize (torch/cuda/__init__.py:985)")
    log.add(*[""] * 40)
    log.hit(["hsa-signal-wait-hang"], "#3  0x00007f1c4b2a91f0 in rocr::core::InterruptSignal::WaitRelaxed(hsa_signal_condition_t, "
            "long, unsigned long, hsa_wait_state_t) () from /opt/rocm/lib/libhsa-runtime64.so.1")
    logs.append(log)

    log = Log("hsa-runtime-error-native-crash.log", first="family-hip-runtime-error",
              note="a HIP sample's error check; gdb backtraces whose top frame is in the HIP runtime")
    log.hit(["family-hip-runtime-error"], 'checkHipErrors() HIP API error = 0101 "invalid device ordinal" from file '
            "<hipInfo.cpp>, line 180.")
    log.add(*[""] * 12)
    log.add("Thread 1 \"python3\" received signal SIGSEGV, Segmentation fault.")
    log.hit(["family-hip-runtime-error"], "#0  0x00007ffff1c2d3e8 in ?? () from /opt/rocm/lib/libamdhip64.so.6")
    log.add(*[""] * 12)
    log.hit(["family-hip-runtime-error"], 'GGML_ASSERT: /src/llama.cpp/ggml/src/ggml-cuda.cu:255: !"CUDA error"')
    log.add(*[""] * 12)
    log.hit(["family-hip-runtime-error"], "node1:4411:4415 [0] /src/rccl/src/enqueue.cc:66 NCCL WARN HIP failure "
            "'invalid argument'")
    log.add(*[""] * 12)
    log.hit(["family-hip-runtime-error"], "#0  hip::FatBinaryInfo::AddDevProgram (this=0x5555560a1c20, device_id=1) at "
            "/usr/src/debug/hip-runtime-amd/clr-rocm-6.1.2/hipamd/src/hip_fatbin.cpp:118")
    logs.append(log)

    log = Log("gpu-memory-fault-elided.log", first="memory-access-fault",
              note="ROCr's memory fault as people paste it: handle and address elided, wrapped after the handle")
    log.hit(["memory-access-fault"], "Memory access fault by GPU node-1 (Agent handle: 0x...)")
    log.add("on address 0x...", "Reason: Page not present or supervisor privilege.")
    logs.append(log)

    log = Log("install-mismatch-dkms-added.log", first="amdgpu-dkms-build-failed",
              note="dkms status with the amdgpu module registered but never built (both formats)")
    log.add("$ dkms status")
    log.hit(["amdgpu-dkms-build-failed"], "amdgpu, 1.9-307: added")
    log.hit(["amdgpu-dkms-build-failed"], "amdgpu/6.3.6-1697589.22.04: added")
    logs.append(log)

    log = Log("miopen-failure-db-directory.log", first="miopen-user-db-unusable",
              note="MIOpen's text database warning that its directory cannot be created")
    log.hit(["miopen-user-db-unusable"], 'MIOpen(HIP): Warning [PlainTextDb] Unable to create a directory: '
            '"/scratch/job-81234/miopen/config"')
    logs.append(log)

    log = Log("install-mismatch-device-libs.log", first="hip-toolchain-incomplete",
              note="clang's error without the rest of its sentence, as a build log shows it")
    log.hit(["hip-toolchain-incomplete"], "clang++: error: cannot find ROCm device library")
    logs.append(log)

    log = Log("kernel-driver-fault-psp-firmware.log", first="family-amdgpu-kernel-error",
              note="the PSP refusing firmware blocks while amdgpu initialises")
    log.hit(["family-amdgpu-kernel-error"], "[    5.104220] amdgpu 0000:03:00.0: amdgpu: failed to load ucode SMC(0x32)")
    log.hit(["family-amdgpu-kernel-error"], "[    5.110931] amdgpu 0000:03:00.0: amdgpu: psp gfx command LOAD_IP_FW(0x6) "
            "failed and response status is (0x80000306)")
    logs.append(log)

    log = Log("unsupported-gpu-llvm-intrinsic.log", first="compiler-target-unknown",
              note="LLVM lowering a dot instruction the target lacks (Triton, bf16 on RDNA2)")
    log.hit(["compiler-target-unknown"], "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.fdot2.bf16.bf16")
    logs.append(log)

    log = Log("install-mismatch-rocm-sysdeps.log", first="rocm-library-load-failed",
              note="a ROCm 7 wheel's private system library not on the loader's path")
    log.add("Traceback (most recent call last):", '  File "<string>", line 1, in <module>')
    log.hit(["rocm-library-load-failed"], "ImportError: librocm_sysdeps_libelf.so.1: cannot open shared object "
            "file: No such file or directory")
    logs.append(log)

    log = Log("missing-code-object-fatbin-library.log", first="library-missing-target",
              note="AMD_LOG_LEVEL=1: the runtime names the library whose bundle lacks the device's target")
    log.hit(["library-missing-target"], ":1:hip_fatbin.cpp           :255 : 0412230011 us: [pid:2231  "
            "tid:0x7f51d2c4e740] Cannot find CO in the bundle /opt/rocm-6.3.1/lib/librocsolver.so.0.3 for ISA: "
            "amdgcn-amd-amdhsa--gfx1032")
    log.add(":1:hip_fatbin.cpp           :109 : 0412230019 us: [pid:2231  tid:0x7f51d2c4e740] Missing CO for these "
            "ISAs - ")
    logs.append(log)

    log = Log("gpu-hang-reset-resume.log", first="gpu-hang-ring-timeout",
              note="shader errors, then a full reset; only amdgpu's resume line says the GPU was reset")
    log.add("[ 1832.440117] amdgpu 0000:0b:00.0: amdgpu: sq_intr: error, detail 0x00000000, type 2, sh 1, priv 1, "
            "wave_id 7, simd_id 1, wgp_id 2")
    log.add("[ 1833.020554] amdgpu 0000:0b:00.0: amdgpu: MODE1 reset")
    log.hit(["gpu-hang-ring-timeout"], "[ 1833.210906] amdgpu 0000:0b:00.0: amdgpu: GPU reset succeeded, trying to "
            "resume")
    logs.append(log)

    log = Log("unsupported-gpu-asm-tensile.log", first="compiler-target-unknown",
              note="the assembler refusing an instruction the target lacks; Tensile refusing a target it does not know")
    log.hit(["compiler-target-unknown"], "/build/csrc/kernels/reduce.hip:211:13: error: instruction not supported on "
            "this GPU")
    log.add(*[""] * 12)
    log.hit(["compiler-target-unknown"], "Tensile::FATAL: Architecture gfx1036 not supported")
    logs.append(log)

    log = Log("install-mismatch-pip-companion.log", first="torch-companion-mismatch",
              note="pip's resolver after a ROCm torch replaced the one torchaudio was built for")
    log.add("ERROR: pip's dependency resolver does not currently take into account all the packages that are "
            "installed. This behaviour is the source of the following dependency conflicts.")
    log.hit(["torch-companion-mismatch"], "torchaudio 2.4.1 requires torch==2.4.1, but you have torch 2.5.0+rocm6.2 "
            "which is incompatible.")
    logs.append(log)

    log = Log("config-risk-igpu-rocblas.log", first="igpu-selected",
              note="rocBLAS running on gfx1036, the desktop Ryzen iGPU, instead of the discrete GPU")
    log.add("ggml_cuda_init: found 2 ROCm devices:")
    log.hit(["igpu-selected", "rocblas-no-kernels-for-target"], "rocBLAS error: Cannot read /opt/rocm-6.2.1/lib/"
            "rocblas/library/TensileLibrary.dat: Illegal seek for GPU arch : gfx1036")
    log.add(" List of available TensileLibrary Files : ")
    log.add('"/opt/rocm-6.2.1/lib/rocblas/library/TensileLibrary_lazy_gfx1100.dat"')
    logs.append(log)
    return logs


def main():
    logs = build()
    manifest = ["# Generated by make_corpus.py: edit the generator, not this file.",
                "# For each log: the entries `rmcp explain --no-facts` must recognise, their",
                "# categories, the lines the generator put their messages on, and which entry must",
                "# rank first. A log with no [[log.expect]] must give exit 1 (nothing recognised).", ""]
    for log in logs:
        data = log.data()
        path = HERE / log.name
        if log.gz:
            path.write_bytes(gzip.compress(data, mtime=0))
        else:
            path.write_bytes(data)
        manifest += ["[[log]]", f'file = "{log.name}"']
        if log.note:
            manifest.append(f'note = "{log.note}"')
        if log.first:
            manifest.append(f'first = "{log.first}"')
        for id_, lines in sorted(log.hits.items()):
            manifest += ["[[log.expect]]", f'id = "{id_}"', f'category = "{CATEGORY[id_]}"',
                         f"lines = {lines}"]
        manifest.append("")
    (HERE / "EXPECTED.toml").write_text("\n".join(manifest))


if __name__ == "__main__":
    main()
