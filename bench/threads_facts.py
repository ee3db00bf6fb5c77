#!/usr/bin/python3
"""The machine facts each public thread states, written into threads/threads.toml (issue 31,
item 5): `overrides` (the environment variables of the FAILING run, "NAME=value") and `kernel`
(the Linux kernel release), for every record in the same way, whatever its cause.

    /usr/bin/python3 bench/threads_facts.py           rewrite the two fields of every record
    /usr/bin/python3 bench/threads_facts.py --check   exit 1 when threads.toml differs from what this derives
    /usr/bin/python3 bench/threads_facts.py --list    print each record's derived facts and their sources

Two sources, the same for every record:

- the excerpt (machine output only, as posted): `NAME=value` as a shell prefix, `export`,
  `--env` or a log line prints it, and ollama's server-config `map[NAME:value ...]`; kernel
  releases from uname, dmesg, collect_env, DKMS and the like (`excerpt_kernel`). Extracted
  mechanically. A runtime's own message that suggests a setting ("try setting
  PYTORCH_HIP_ALLOC_CONF=...", "consider passing AMD_SERIALIZE_KERNEL=3") is not a setting, nor
  a CMake `-D NAME=value`; runtime traces that print a variable's value whether or not anyone set
  it ("value of HIP_FORCE_SPIRV_CODEOBJECT: 0", tensorflow's "LD_LIBRARY_PATH: ...") are not read.
- the `cause` field (our own summary of the thread): read BY HAND. What a cause names as the fix
  ("setting HSA_OVERRIDE_GFX_VERSION=10.3.0 fixed it") is not the failing machine's state and is
  never recorded (it would also leak the answer into the measurement); what it leaves ambiguous
  is not recorded either. Every record whose cause names a variable has a decision in `CAUSE_ENV`,
  every record whose cause names a kernel version one in `CAUSE_KERNEL`, each with a few words of
  why; the script refuses to run while one is missing, so a new record cannot skip the review.
  `EXCERPT_ENV_EXCLUDED` lists the excerpt settings set aside by reading (a joined block that is
  the working run after the fix).

Clean records (runs that worked) get what the working run had. Variables are those rmcp's facts
read (`is_relevant_env`, src/core/detect/detect.cpp); kernel releases the shape
`is_kernel_release` accepts (src/core/explain/report_facts.cpp), or the major.minor a cause gives.
"""
import argparse
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import threads_corpus  # noqa: E402

# is_relevant_env (src/core/detect/detect.cpp): the variables rmcp's facts understand.
ENV_PREFIXES = ("HSA_", "HIP_", "ROCR_", "ROCM_", "MIOPEN_", "ROCBLAS_", "PYTORCH_", "AMD_", "GPU_", "TORCH_ROCM_")
ENV_EXACT = ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "LD_PRELOAD", "VIRTUAL_ENV", "CONDA_PREFIX", "RMCP_PROFILE")
# Names with those prefixes that are status and error codes or query enums, not variables.
NOT_VARIABLES = re.compile(r"^(HSA_STATUS_|HIP_ERROR_|HSA_AMD_AGENT_INFO_|AMD_COMGR_ACTION_)")


def is_relevant_env(name):
    return (name.startswith(ENV_PREFIXES) or name in ENV_EXACT) and not NOT_VARIABLES.match(name)


NAME = r"(?<![A-Za-z0-9_])([A-Z][A-Z0-9_]*[A-Z0-9])"
SETTING = re.compile(NAME + r"""=("[^"]*"|'[^']*'|[^\s;,)\]"']+)""")
OLLAMA_MAP = re.compile(r"map\[([^\]]*)\]")
OLLAMA_ITEM = re.compile(NAME + r":([^\s\]]+)")
ADVICE = ("setting", "passing", "try", "consider", "set")  # the runtime suggesting a setting
PLAUSIBLE = re.compile(r"^[A-Za-z0-9.,:/_+=-]+$")  # rmcp's plausible_value: no placeholders

# Excerpt settings set aside by reading: url -> (names, why).
EXCERPT_ENV_EXCLUDED = {
    "https://github.com/ROCm/ROCm/issues/1743": (
        ["HSA_OVERRIDE_GFX_VERSION"], "the second joined block is the working run after the fix (9.0.0); the failing run had none"),
    "https://github.com/ollama/ollama/issues/12071": (
        ["HSA_OVERRIDE_GFX_VERSION"], "the poster's '(or gfx1103)' after the value leaves which value ran ambiguous"),
    "https://github.com/ROCm/rccl/issues/908": (
        ["HSA_FORCE_FINE_GRAIN_PCIE"], "RCCL warns the setting is MISSING from the environment"),
}

# Every record whose cause names a variable: url -> (settings of the FAILING run the cause
# states, why). An empty list: the cause names it as the fix, a suggestion, a tried variant, or
# ambiguously.
CAUSE_ENV = {
    # -- the failing (or, for clean records, the working) run had it
    "https://github.com/invoke-ai/InvokeAI/issues/3967": (["HSA_OVERRIDE_GFX_VERSION=10.3.0"], "clean: the working run had it exported"),
    "https://github.com/ollama/ollama/issues/2718": (["HSA_OVERRIDE_GFX_VERSION=gfx1103"], "the failing run's malformed value"),
    "https://github.com/ollama/ollama/issues/8743": (["HSA_OVERRIDE_GFX_VERSION=10.3.0"], "the global override of the failing run"),
    "https://github.com/ROCm/ROCm/issues/5696": (["HSA_OVERRIDE_GFX_VERSION=12.0.1"], "forgotten in .bashrc: the cause itself"),
    "https://github.com/ROCm/rocm-systems/issues/3531": (["HSA_OVERRIDE_GFX_VERSION=12.0.1"], "the failing run was started with it"),
    "https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/15434": (
        ["HSA_OVERRIDE_GFX_VERSION=11.0.0"], "run with it (kept in the fix too; the fix is the wheel)"),
    "https://github.com/ROCm/MIOpen/issues/600": (
        ["MIOPEN_FIND_MODE=1", "MIOPEN_FIND_ENFORCE=3"], "the failing run's settings; the passing 3/1 pair is the fix"),
    "https://github.com/lemonade-sdk/llamacpp-rocm/issues/10": (["ROCBLAS_USE_HIPBLASLT=1"], "set in the failing run"),
    "https://github.com/ROCm/ROCm/issues/4440": (["HSA_OVERRIDE_GFX_VERSION=11.0.0"], "the failing run was with it"),
    "https://github.com/Crosstalk-Solutions/project-nomad/issues/810": (
        ["HSA_OVERRIDE_GFX_VERSION=11.0.0"], "the app set it in the failing run (the excerpt prints it too)"),
    "https://github.com/ROCm/ROCm/issues/5824": (["HSA_OVERRIDE_GFX_VERSION=11.0.0"], "the failing run's command line"),
    "https://github.com/ROCm/ROCm/issues/6003": (["HSA_OVERRIDE_GFX_VERSION=10.3.0"], "the reporter's command line"),
    "https://github.com/ggml-org/llama.cpp/pull/4454": (
        ["HSA_OVERRIDE_GFX_VERSION=10.3.0"], "the GPU ran as gfx1030 under it when the code object was missing"),
    "https://github.com/ROCm/ROCm/issues/5121": (["HSA_OVERRIDE_GFX_VERSION=9.0.0"], "run with it (maintainer: part of the cause)"),
    "https://github.com/ROCm/ROCm/issues/5238": (
        ["HSA_OVERRIDE_GFX_VERSION=10.3.0"], "a forgotten global override 'for gfx1030', the value that reports gfx1030"),
    "https://github.com/ollama/ollama/issues/8851": (["HSA_OVERRIDE_GFX_VERSION=11.0.0"], "the container was started with it"),
    "https://github.com/ROCm/ROCm/issues/5773": (
        ["ROCM_PATH=/home/user/aipc_programming/gpu_program/therock-tarball"],
        "set to the tarball directory, the one the excerpt's paths name; install/ is the fix"),
    "https://github.com/ROCm/ROCm/issues/3246": (["AMD_LOG_LEVEL=3"], "the excerpt is the failing run's AMD_LOG_LEVEL=3 trace"),
    "https://github.com/ROCm/ROCm/issues/4208": (["AMD_LOG_LEVEL=6"], "the excerpt is the failing run's AMD_LOG_LEVEL=6 trace"),
    "https://github.com/ollama/ollama/issues/8473": (["HSA_OVERRIDE_GFX_VERSION=10.3.0"], "clean: the working configuration"),
    "https://github.com/ROCm/ROCm/issues/1756": (["HSA_OVERRIDE_GFX_VERSION=10.3.0"], "clean: the after-the-fix run that worked"),
    "https://github.com/ROCm/ROCm/issues/5180": (["AMD_LOG_LEVEL=7"], "the excerpt is the failing run's AMD_LOG_LEVEL=7 trace"),
    "https://github.com/pytorch/pytorch/issues/97074": (["HSA_OVERRIDE_GFX_VERSION=10.3.0"], "the failing run had it"),
    "https://github.com/mcmonkeyprojects/SwarmUI/issues/565": (
        ["ROCR_VISIBLE_DEVICES=1", "HIP_VISIBLE_DEVICES=1"], "both set in the failing run (the excerpt's exports)"),
    "https://github.com/ROCm/ROCm/issues/4748": (
        ["HSA_OVERRIDE_GFX_VERSION=11.0.0", "ROCBLAS_USE_HIPBLASLT=1"], "clean: the working run's command line"),
    "https://github.com/likelovewant/ROCmLibs-for-gfx1103-AMD780M-APU/issues/37": (
        ["HSA_OVERRIDE_GFX_VERSION=11.0.0"], "the excerpt is the INVALID_ISA run, the one with 11.0.0 (11.5.1 gave another error)"),
    "https://github.com/ROCm/rocm-systems/issues/2209": (
        ["HSA_ENABLE_IPC_MODE_LEGACY=1"], "baked into the images the failing run used; unset is the fix"),
    "https://github.com/unslothai/unsloth/issues/6118": (
        ["CUDA_VISIBLE_DEVICES=1", "HIP_VISIBLE_DEVICES=1", "ROCR_VISIBLE_DEVICES=1"],
        "the app set all three to '1' in the failing run"),
    "https://github.com/NixOS/nixpkgs/issues/302412": (["HSA_OVERRIDE_GFX_VERSION=10.1.0"], "the failing run had it"),
    "https://github.com/ROCm/ROCm/issues/1867": (["HSA_OVERRIDE_GFX_VERSION=10.3.0"], "run as gfx1030 through it when it faulted"),
    "https://github.com/lemonade-sdk/lemonade/issues/2002": (["HSA_OVERRIDE_GFX_VERSION=11.5.1"], "clean: the working run had it"),
    # -- named as the fix, a suggestion, a tried variant, or ambiguous: not recorded
    "https://github.com/segurac/force-host-alloction-APU/issues/2": ([], "HSA_ENABLE_SDMA=0 is a later suggestion"),
    "https://github.com/ollama/ollama/issues/8772": ([], "the override had NOT reached the failing service; applying it is the fix"),
    "https://github.com/ROCm/ROCm/issues/3015": ([], "the override is a later attempt; the excerpt's run is gfx1036 without it"),
    "https://github.com/ROCm/rocm-libraries/issues/4547": ([], "GPU_TARGETS is a CMake variable of a build, not the environment"),
    "https://github.com/ggml-org/llama.cpp/issues/19949": ([], "the override made it run: the fix"),
    "https://github.com/ROCm/ROCm/issues/1852": ([], "LD_LIBRARY_PATH=/opt/rocm/lib fixed the first error: the fix"),
    "https://github.com/ROCm/ROCm/issues/6396": ([], "the override is listed as a workaround attempted; which run had it is not said"),
    "https://github.com/ROCm/TheRock/issues/3044": ([], "MIOPEN_DEBUG_AMD_WINOGRAD_FURY_RXS_F2X3=0 avoids it: the fix"),
    "https://github.com/ROCm/rocALUTION/issues/197": ([], "the override fixes it"),
    "https://github.com/ROCm/rocBLAS/issues/1398": ([], "the maintainer pointed to the override, then it worked: the fix"),
    "https://github.com/ROCm/ROCm/issues/1797": ([], "overriding works: the fix"),
    "https://github.com/AshleyYakeley/stable-diffusion-rocm/issues/4": ([], "setting the override works around it: the fix"),
    "https://github.com/ROCm/ROCm/issues/3402": ([], "the override 'does not help' on WSL: no value, not said to be set"),
    "https://github.com/vllm-project/vllm/pull/46741": ([], "PYTORCH_NVML_BASED_CUDA_CHECK=1 set too late in the failing run; on the command is the fix"),
    "https://github.com/ggml-org/llama.cpp/issues/25807": ([], "LD_LIBRARY_PATH works around it: the fix"),
    "https://github.com/leejet/stable-diffusion.cpp/issues/160": ([], "Windows has no override route: not set"),
    "https://github.com/NixOS/nixpkgs/issues/530702": ([], "LD_PRELOAD of libamd_comgr is the fix"),
    "https://github.com/ROCm/ROCm/issues/2930": ([], "HSA_ENABLE_SDMA=0 was a variant tried later that did not help"),
    "https://github.com/ROCm/rccl/issues/1454": ([], "HSA_ENABLE_IPC_MODE_LEGACY was a pointer, and ignored: its setting is not stated"),
    "https://github.com/ROCm/ROCm/issues/4380": ([], "the override run segfaulted separately; the excerpt's run is as gfx1102"),
    "https://github.com/ROCm/ROCm/issues/5555": ([], "whether the override was set in this run is not stated"),
    "https://github.com/ROCm/ROCm/issues/4437": ([], "AMD_LOG_LEVEL trace without its level"),
    "https://github.com/ROCm/ROCm/issues/5370": ([], "the override in the service is the fix"),
    "https://github.com/ROCm/ROCm/issues/3680": ([], "HIP_PLATFORM=amd is the workaround"),
    "https://github.com/NixOS/nixpkgs/issues/453789": ([], "wrapping with LD_LIBRARY_PATH is the fix"),
    "https://github.com/vllm-project/vllm/issues/36180": ([], "ROCM_ATTN is a vLLM attention backend, not a variable"),
    "https://github.com/ROCm/pytorch/issues/2241": ([], "exporting HIP_VISIBLE_DEVICES=0 is the fix; the os.environ attempt's value is not stated"),
    "https://github.com/ollama/ollama/issues/2823": ([], "the usual override guidance: advice"),
    "https://github.com/ROCm/ROCm/issues/5814": ([], "PYTORCH_ROCM_ARCH=gfx1201 was tried and did not help; which run had it is not said"),
    "https://github.com/ggml-org/llama.cpp/issues/8618": ([], "HIP_VISIBLE_DEVICES=0 avoids it: the fix"),
    "https://github.com/pytorch/pytorch/issues/188561": ([], "LD_LIBRARY_PATH is the workaround; the failing run's value is not stated"),
    "https://github.com/ROCm/ROCm/issues/1743": ([], "the override maps it to gfx900 and works: the fix"),
    "https://github.com/ROCm/TheRock/issues/1184": ([], "with the override it runs but hangs: another run than the excerpt's"),
    "https://github.com/RVC-Project/Retrieval-based-Voice-Conversion-WebUI/issues/272": ([], "AMD_LOG_LEVEL trace without its level"),
    "https://github.com/ollama/ollama/issues/2870": ([], "set after the crash and it worked: the fix"),
    "https://github.com/ROCm/ROCm/issues/2353": ([], "the override makes it work: the fix"),
    "https://github.com/ROCm/hip/issues/3282": ([], "the override let training run: the fix"),
    "https://github.com/ROCm/rccl/issues/908": ([], "RCCL warns HSA_FORCE_FINE_GRAIN_PCIE is missing: not set"),
    "https://github.com/ROCm/rocm-libraries/issues/3550": ([], "log levels the maintainer asked for, not the failing run's"),
    "https://github.com/Lumi-supercomputer/LUMI-AI-Guide/pull/108": ([], "MIOPEN_USER_DB_PATH under a mktemp dir: its value is not stated"),
    "https://github.com/vllm-project/vllm/issues/6565": ([], "PYTORCH_ROCM_ARCH=gfx906 is a suggestion"),
    "https://github.com/ROCm/TheRock/issues/3392": ([], "CUDA_VISIBLE_DEVICES=1 is the workaround"),
    "https://github.com/gbtb/nix-stable-diffusion/issues/10": ([], "the override made it work: the fix"),
    "https://github.com/oobabooga/textgen/issues/5": ([], "the maintainer suggested the override and it worked: the fix"),
    "https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/13534": ([], "setting the override got it running: the fix"),
    "https://github.com/ROCm/ROCm/issues/2061": ([], "the override made it work: the fix"),
    "https://github.com/pytorch/pytorch/issues/164346": ([], "the override was suggested and confirmed: the fix"),
    "https://github.com/ROCm/ROCm/issues/6530": ([], "HSA_ENABLE_INTERRUPT=0 removed the hangs: the fix"),
}

# Kernel releases: the shape rmcp's report reader accepts (is_kernel_release).
REL = r"(\d+\.\d+\.\d+[A-Za-z0-9_.+~-]*)"
# The running kernel, as tools print it; ranked before the kernels DKMS builds for.
RUNNING_KERNEL = [
    re.compile(r"\bLinux \S+ " + REL + r" #\d"),  # uname -a
    re.compile(r"\bLinux version " + REL + r" \("),  # dmesg
    re.compile(r"\bPlatform: Linux-(\d+\.\d+\.\d+.*?)-(?:x86_64|aarch64)\b"),  # collect_env, MIOpen/TF env dumps
    re.compile(r"uname_result\(.*?release='" + REL + "'"),  # python platform.uname()
    re.compile(r"\bKernel(?: version| release)?\s*[:=]\s*v?" + REL),  # NCCL "Kernel version:", fastfetch "Kernel:"
    re.compile(r"\(Linux " + REL + r"\)"),  # "Arch Linux (Linux 6.19.12-arch1-1)"
    re.compile(r"\bComm: .*?(?:Not tainted|Tainted: [A-Z ]*?) +" + REL + r" #"),  # oops / warning header
    re.compile(r"BOOT_IMAGE=\S*/vmlinuz-" + REL),  # /proc/cmdline
    re.compile(r"\bDRM \d+\.\d+\.\d+ " + REL + r"\b"),  # glxinfo / inxi renderer string
]
DKMS_KERNEL = [
    re.compile(r"^Building (?:initial module )?for " + REL + r"\s*$"),
    re.compile(r"\b(?:on|for) kernel:? " + REL + r" \("),
    re.compile(r"\bKERNELVER=" + REL),
]
DKMS_STATUS = re.compile(r"^amdgpu[,/] ?\S+?, " + REL + r", \S+: (?:installed|built)")
IS_REL = re.compile("^" + REL + "$")

# Every record whose cause names a kernel version: url -> (the failing machine's release as the
# cause states it, "" when the cause's versions are not the failing machine's, why). The
# excerpt's release wins where the cause's is the start of it (same kernel, less of it).
CAUSE_KERNEL_MENTION = re.compile(r"(?i)\bkernels?\b[^.;:]{0,40}?\b\d+\.\d+|\b\d+\.\d+(?:\.\d+)?\S* (?:HWE |OEM |backports )?kernel")
CAUSE_KERNEL = {
    "https://github.com/ROCm/ROCm/issues/6166": ("6.19.12-arch1-1", "open() fails on it"),
    "https://github.com/pop-os/cosmic-epoch/issues/3764": ("7.0", "the timeouts returned on it"),
    "https://github.com/ROCm/ROCm/issues/5443": ("", "6.17.2 is where the fix was backported"),
    "https://github.com/ROCm/amdgpu/issues/204": ("", "faults on 6.17 and 6.18 kernels: which ran the excerpt is not said"),
    "https://github.com/ollama/ollama/issues/13589": ("6.17", "the faults happen on it"),
    "https://github.com/ROCm/ROCm/issues/6186": ("6.19", "the faults happen on it"),
    "https://github.com/ROCm/ROCm/issues/259": ("4.15", "the mainline kernel whose KFD lacks Vega: the cause"),
    "https://github.com/ROCm/ROCm/issues/539": ("4.19", "the mainline kernel whose KFD lacks the RX 560: the cause"),
    "https://github.com/ROCm/ROCm/issues/6018": ("", "7.0-rc1 is another kernel it ALSO happened on, not said to be the excerpt's"),
    "https://github.com/ROCm/ROCm/issues/651": ("5.0.3", "the kernel whose KFD lacks Vega M: the cause"),
    "https://github.com/ROCm/ROCm/issues/397": ("4.15", "the stock kernel whose KFD lacks the GPU: the cause"),
    "https://github.com/ROCm/ROCm/issues/558": ("4.15", "the HWE kernel in use (the excerpt's uname gives all of it)"),
    "https://github.com/ROCm/ROCm/issues/4557": ("6.12.15", "the commenter's TrueNAS kernel"),
    "https://github.com/ROCm/ROCm/issues/5151": ("6.14", "the OEM kernel the hangs happen on"),
    "https://github.com/alpaka-group/alpaka/issues/2282": ("", "names the kernel driver, no kernel version"),
    "https://github.com/ROCm/tensorflow-upstream/issues/173": ("4.18", "clean: the working run's kernel"),
    "https://github.com/ROCm/ROCm/issues/5444": ("6.12.48", "Debian 13's kernel of the excerpt; 6.16.3 is the one that works"),
    "https://github.com/ROCm/ROCm/issues/4437": ("6.12", "the failing Debian 12 kernel; 6.11 is where it ran"),
    "https://github.com/ROCm/ROCm/issues/5999": ("", "6.17.0-19 is AMD's machine, not the reporter's"),
    "https://github.com/ROCm/ROCm/issues/2596": ("6.6.2", "Arch's kernel of the excerpt; 6.7.2 and 6.8 are where it was gone"),
    "https://github.com/ROCm/ROCm/issues/5990": ("6.18.9", "crashes on it, never on 6.17.9"),
    "https://github.com/ROCm/ROCm/issues/6323": ("5.10", "the WSL kernel the failing run had"),
    "https://github.com/ROCm/amdgpu/issues/192": ("6.14.0-24", "the HWE kernel the module no longer builds for"),
    "https://github.com/ROCm/ROCm/issues/1375": ("5.8", "the kernel the module does not build for"),
    "https://github.com/ROCm/ROCm/issues/2155": ("4.18.0-490", "the kernel the module failed to build for"),
    "https://github.com/ROCm/ROCm/issues/1431": ("5.11.6", "the upstream kernel of the failing upgrade"),
    "https://github.com/ROCm/ROCm/issues/624": ("4.4", "the kernel the module does not build on"),
    "https://github.com/ROCm/ROCm/issues/753": ("4.18", "no /dev/kfd on it; 4.15 is the fix"),
    "https://github.com/ROCm/ROCm/issues/692": ("4.18", "the reporter's kernel whose KFD rejects the APU; 4.19 added it"),
    "https://github.com/ROCm/ROCm/issues/6146": ("6.17.0-20-generic", "the faulting kernel; 6.14.0-1018-oem is the fix"),
    "https://github.com/ROCm/ROCm/issues/1495": ("5.13", "the report's kernel (ROCm 4.2, as the record); 5.14 is a later retest"),
    "https://github.com/ROCm/ROCm/issues/3701": ("6.8.0-45", "the HWE kernel the module is not built for"),
    "https://github.com/ROCm/ROCm/issues/5111": ("6.12.100+deb13", "the kernel headers the module fails against"),
    "https://github.com/ROCm/ROCm/issues/5624": ("6.17.0-8-generic", "clean: the kernel it builds and loads on (the excerpt lists 6.17.0-5 too)"),
    "https://github.com/ROCm/ROCm/issues/1423": ("", "'the distribution kernel', no version"),
    "https://github.com/ROCm/ROCm/issues/5905": ("6.18.7", "the mainline kernel the module failed to build for"),
    "https://github.com/ROCm/rocm-systems/pull/11299": ("", "'kernel 6.12 and later' is a general statement, not the machine's"),
}


def settings_in_excerpt(text):
    """NAME=value settings the excerpt's machine output shows, in order (first value wins)."""
    out = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        found = []
        for m in SETTING.finditer(line):
            before = ((lines[i - 1] + " ") if i > 0 else "") + line[:m.start()]
            words = before.lower().split()
            if words and words[-1] in ADVICE:
                continue  # a runtime's suggestion, also when the message wraps before the name
            if re.search(r"(?:^|\s)-D\s*$", line[:m.start()]):
                continue  # a CMake definition
            found.append((m.group(1), m.group(2)))
        for mp in OLLAMA_MAP.finditer(line):
            found += [(m.group(1), m.group(2)) for m in OLLAMA_ITEM.finditer(mp.group(1))]
        for name, value in found:
            value = value.strip("\"'")
            if is_relevant_env(name) and PLAUSIBLE.match(value):
                out.setdefault(name, value)
    return out


def excerpt_kernel(text):
    """(release, source) of the kernel the excerpt shows: the running kernel first, then the
    one DKMS built for, then the one release `dkms status` lists (when only one)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        for p in RUNNING_KERNEL:
            m = p.search(line)
            if m:
                return m.group(1), "running"
        if re.search(r"\buname -r\s*$", line):
            for nxt in lines[i + 1:i + 3]:
                if IS_REL.match(nxt.strip()):
                    return nxt.strip(), "running"
    for line in lines:
        for p in DKMS_KERNEL:
            m = p.search(line)
            if m:
                return m.group(1), "dkms"
    listed = list(dict.fromkeys(m.group(1) for m in map(DKMS_STATUS.search, lines) if m))
    if len(listed) == 1:
        return listed[0], "dkms status"
    return "", ""


def cause_names(cause):
    return [n for n in re.findall(NAME, cause) if is_relevant_env(n)]


def derive(rows, excerpts=threads_corpus.EXCERPTS):
    """url -> {"overrides": [...], "kernel": "..."} for every record; raises SystemExit when a
    record needs a decision by reading that the tables above do not hold."""
    missing, conflicts, out = [], [], {}
    for r in rows:
        url = r["url"]
        key = (url, r["excerpt"])
        text = (excerpts / r["excerpt"]).read_text(errors="replace")
        env = settings_in_excerpt(text)
        for name in EXCERPT_ENV_EXCLUDED.get(url, ([], ""))[0]:
            env.pop(name, None)
        if cause_names(r["cause"]):
            if url not in CAUSE_ENV:
                missing.append(f"{url}: cause names {cause_names(r['cause'])}; add a CAUSE_ENV decision")
            else:
                decided = {s.split("=", 1)[0] for s in CAUSE_ENV[url][0]}
                for name in env.keys() & set(cause_names(r["cause"])) - decided:
                    # the cause names it as a fix or leaves it ambiguous, and the excerpt sets it
                    conflicts.append(f"{url}: the excerpt sets {name}, which the CAUSE_ENV decision leaves out; "
                                     "set it aside in EXCERPT_ENV_EXCLUDED or record it in CAUSE_ENV")
                for setting in CAUSE_ENV[url][0]:
                    name, value = setting.split("=", 1)
                    if env.get(name, value) != value:
                        conflicts.append(f"{url}: excerpt {name}={env[name]}, cause {setting}")
                    env.setdefault(name, value)
        kernel, _ = excerpt_kernel(text)
        if CAUSE_KERNEL_MENTION.search(r["cause"]):
            if url not in CAUSE_KERNEL:
                missing.append(f"{url}: cause names a kernel version; add a CAUSE_KERNEL decision")
            else:
                stated = CAUSE_KERNEL[url][0]
                if stated and kernel and not kernel.startswith(stated):
                    conflicts.append(f"{url}: excerpt kernel {kernel}, cause {stated}")
                kernel = kernel or stated
        out[key] = {"overrides": [f"{n}={v}" for n, v in env.items()], "kernel": kernel}
    if missing or conflicts:
        raise SystemExit("threads_facts: decide by reading the cause:\n  " + "\n  ".join(missing + conflicts))
    return out


def toml_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rewrite(text, facts):
    """threads.toml with `overrides` and `kernel` right after each record's `torch` line
    (replacing earlier ones); the rest of the file is left as it is."""
    records = text.split("\n[[thread]]\n")
    head, body = records[0], records[1:]
    out = [head]
    for rec in body:
        lines = [l for l in rec.split("\n") if not l.startswith(("overrides = ", "kernel = "))]
        url = re.search(r'^url = "(.*)"$', "\n".join(lines), re.M).group(1)
        excerpt = re.search(r'^excerpt = "(.*)"$', "\n".join(lines), re.M).group(1)
        f = facts[(url, excerpt)]
        at = next(i for i, l in enumerate(lines) if l.startswith("torch = ")) + 1
        lines[at:at] = ["overrides = [" + ", ".join(toml_string(s) for s in f["overrides"]) + "]",
                        "kernel = " + toml_string(f["kernel"])]
        out.append("\n".join(lines))
    return "\n[[thread]]\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="exit 1 when threads.toml is not what this derives")
    ap.add_argument("--list", action="store_true", help="print each record's facts")
    args = ap.parse_args()
    rows = threads_corpus.rows()
    facts = derive(rows)
    if args.list:
        for (url, excerpt), f in facts.items():
            if f["overrides"] or f["kernel"]:
                print(f"{excerpt}: kernel={f['kernel']!r} overrides={f['overrides']}")
    text = threads_corpus.RECORDS.read_text()
    new = rewrite(text, facts)
    with_env = sum(1 for f in facts.values() if f["overrides"])
    with_kernel = sum(1 for f in facts.values() if f["kernel"])
    if args.check:
        if new != text:
            print("threads.toml's overrides/kernel differ from bench/threads_facts.py's; run it", file=sys.stderr)
            return 1
        return 0
    if not args.list:
        threads_corpus.RECORDS.write_text(new)
    print(f"{len(facts)} records: {with_env} with overrides, {with_kernel} with a kernel release")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
