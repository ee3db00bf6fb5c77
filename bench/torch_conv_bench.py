#!/usr/bin/python3
"""torch.ops.rmcp.conv vs PyTorch's own convolution, per probe scenario shape.

    /usr/bin/python3 bench/torch_conv_bench.py [--device cpu|cuda] [--batch 1 16] [--repeat 7]
        [--dtype float32] [--json FILE] [--family NAME ...]

For every family in probe/catalogue.toml and every batch: the median wall time of the
forward pass and of forward+backward (gradients for input, weight and bias), native vs
rmcp, and the ratio native/rmcp (> 1: rmcp is faster). On a GPU it also times the "CPU
fallback" (copy to the CPU, convolve there, copy back). Figures go to docs/PERFORMANCE.md;
timings are never test assertions.
"""
import argparse
import json
import pathlib
import statistics
import sys
import time
import tomllib

import torch
import torch.nn.functional as F

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
import rmcp.torch as rt  # noqa: E402


def families(names):
    catalogue = tomllib.loads((REPO / "probe" / "catalogue.toml").read_text())
    for family in catalogue["family"]:
        if not names or family["name"] in names:
            yield family


def synchronize(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn, device):
    """(wall seconds, process CPU seconds) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    synchronize(device)
    return time.perf_counter() - wall, time.process_time() - cpu


def compare(calls, device, repeat, warmup=2):
    """Median (wall, cpu) per named call, the calls interleaved so that load from other
    processes on a shared machine falls on all of them alike."""
    for _ in range(warmup):
        for fn in calls.values():
            fn()
    synchronize(device)
    samples = {name: [] for name in calls}
    for _ in range(repeat):
        for name, fn in calls.items():
            samples[name].append(timed(fn, device))
    return {name: (statistics.median(w for w, _ in times), statistics.median(c for _, c in times))
            for name, times in samples.items()}


def make_call(conv, x, w, b, family, backward):
    rank = len(family["weight"]) - 2
    args = (family.get("stride", [1] * rank), family.get("padding", [0] * rank),
            family.get("dilation", [1] * rank), family.get("groups", 1))

    def forward():
        return conv(x, w, b, *args)

    def forward_backward():
        out = conv(x, w, b, *args)
        torch.autograd.grad(out, (x, w, b), torch.ones_like(out))

    return forward_backward if backward else forward


def cpu_fallback(functional):
    def conv(x, w, b, *args):
        return functional(x.cpu(), w.cpu(), b.cpu(), *args).to(x.device)
    return conv


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--family", nargs="*", default=[])
    parser.add_argument("--json", help="also write the results as JSON to this file")
    options = parser.parse_args()

    rt.load_extension()
    dtype = getattr(torch, options.dtype)
    rows = []
    clock = "process CPU time" if options.device == "cpu" else "wall time"
    print(f"# device {options.device}, dtype {options.dtype}, torch {torch.__version__}, "
          f"{torch.get_num_threads()} torch threads, median of {options.repeat} interleaved runs, "
          f"ratios from {clock}")
    print(f"{'scenario':26} {'batch':>5} {'pass':>7} {'native ms':>9} {'rmcp ms':>9} {'native/rmcp':>11}"
          f" {'wall: native':>12} {'rmcp':>9}"
          + (f" {'cpu-fallback ms':>15} {'fallback/rmcp':>13}" if options.device != "cpu" else ""))
    use = 1 if options.device == "cpu" else 0  # index into (wall, cpu)
    for family in families(options.family):
        functional = F.conv1d if family["op"] == "conv1d" else F.conv2d
        for batch in options.batch:
            torch.manual_seed(0)
            x = torch.randn(batch, *family["input"], device=options.device, dtype=dtype, requires_grad=True)
            w = torch.randn(*family["weight"], device=options.device, dtype=dtype, requires_grad=True)
            b = torch.randn(family["weight"][0], device=options.device, dtype=dtype, requires_grad=True)
            for backward in (False, True):
                calls = {"native": make_call(functional, x, w, b, family, backward),
                         "rmcp": make_call(rt.conv, x, w, b, family, backward)}
                if options.device != "cpu":
                    calls["cpu_fallback"] = make_call(cpu_fallback(functional), x, w, b, family, backward)
                result = compare(calls, options.device, options.repeat)
                row = {"scenario": family["name"], "batch": batch, "pass": "fwd+bwd" if backward else "fwd",
                       "device": options.device, "dtype": options.dtype,
                       **{f"{name}_wall_s": times[0] for name, times in result.items()},
                       **{f"{name}_cpu_s": times[1] for name, times in result.items()}}
                native, ours = result["native"][use], result["rmcp"][use]
                line = (f"{family['name']:26} {batch:5} {row['pass']:>7} {native * 1e3:9.2f} {ours * 1e3:9.2f} "
                        f"{native / ours:11.2f} {result['native'][0] * 1e3:12.2f} {result['rmcp'][0] * 1e3:9.2f}")
                if options.device != "cpu":
                    fallback = result["cpu_fallback"][0]
                    line += f" {fallback * 1e3:15.2f} {fallback / ours:13.2f}"
                print(line, flush=True)
                rows.append(row)
    if options.json:
        pathlib.Path(options.json).write_text(json.dumps({"schema_version": 1, "results": rows}, indent=1))


if __name__ == "__main__":
    main()
