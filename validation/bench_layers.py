"""Layer-suite benchmark: convdispatch's choice vs cuDNN, same inputs, same harness.

    python -m convdispatch.validation.bench_layers --suite issue2 --out DIR [--topk K]

For every layer: output checked against F.conv2d/conv3d in float32 (relative
error by norm), then the chosen kernel, the whole ``conv2d`` call and cuDNN
(``torch.nn.functional`` on channels_last tensors) are timed with
``triton.testing.do_bench`` (median, L2 flushed between repeats). With
``--topk K`` the K best-ranked candidates are timed too, showing how far the
choice is from the best of them. Writes bench.csv, bench.md and env.json.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import platform
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from ..data.problems import Problem, load_set
from ..dispatcher import CACHE, conv2d, conv3d, decide, run_candidate, set_chooser
from ..kernels.device import spec_of

SUITES = {
    # name -> list of (set, batch sizes or None for all, filter)
    "issue2": [("resnet50", (1, 32), None), ("resnext50_32x4d", (32,), "grouped"),
               ("mobilenet_v2", (32,), "depthwise")],
    "issue6": [("resnet50", (1, 32, 128), None), ("resnext50_32x4d", (32,), None),
               ("mobilenet_v2", (32,), None), ("vgg16", (16,), None), ("sd_vae", None, None),
               ("video3d", None, None)],
}


def category(p: Problem) -> str:
    g = p.geom
    if g.g > 1:
        return "depthwise" if g.cg == 1 else "grouped"
    return "dense"


def suite_problems(name: str, dtype: str) -> list[Problem]:
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; known: {sorted(SUITES)}")
    out = []
    for set_name, batches, only in SUITES[name]:
        for p in load_set(set_name, dtype):
            if batches is not None and p.geom.n not in batches:
                continue
            if only is not None and category(p) != only:
                continue
            out.append(p)
    return out


def make_tensors(geom, device, seed: int):
    gen = torch.Generator(device="cpu").manual_seed(seed)
    dt = getattr(torch, geom.dtype)
    sp = (geom.d, geom.h, geom.w)[3 - geom.dims:]
    fl = (geom.t, geom.r, geom.s)[3 - geom.dims:]
    x = torch.randn(geom.n, geom.c, *sp, generator=gen).to(device=device, dtype=dt)
    w = (torch.randn(geom.k, geom.cg, *fl, generator=gen) / math.sqrt(geom.gemm_k)).to(
        device=device, dtype=dt)
    fmt = torch.channels_last if geom.dims == 2 else torch.channels_last_3d
    if geom.layout == "channels_last":
        x = x.to(memory_format=fmt)
        w = w.to(memory_format=fmt)
    b = torch.randn(geom.k, generator=gen).to(device=device, dtype=dt) if geom.bias else None
    return x, w, b


def suite_layers(name: str, dtype: str, kind: str) -> list[Problem]:
    """The layers of suite ``name`` in ``dtype`` of one category (``category``)."""
    return [p for p in suite_problems(name, dtype) if category(p) == kind]


def layer_tensors(geom, seed: int):
    """A layer's random inputs on the GPU (``make_tensors``) and torch's output of them in
    float32 (``reference``): x, w, b, ref."""
    x, w, b = make_tensors(geom, "cuda", seed=seed)
    return x, w, b, reference(geom, x, w, b)


def torch_conv(geom):
    """torch's conv function of ``geom``'s rank (F.conv2d or F.conv3d)."""
    return F.conv2d if geom.dims == 2 else F.conv3d


def reference(geom, x, w, b):
    """torch's conv of the tensors in float32: what outputs are checked against."""
    return torch_conv(geom)(x.float(), w.float(), None if b is None else b.float(),
                            **conv_args(geom))


def conv_args(geom):
    lead = 3 - geom.dims
    return dict(stride=geom.stride[lead:], padding=geom.pad[lead:],
                dilation=geom.dilation[lead:], groups=geom.g)


def rel_err(out, ref) -> float:
    out = out.float()
    ref = ref.float()
    if not torch.isfinite(out).all():
        return float("inf")
    return float((out - ref).norm() / ref.norm().clamp_min(1e-30))


def bench(fn, rep_ms: int) -> float:
    """Median ms of eager calls: host overhead included when it exceeds the kernel."""
    from triton.testing import do_bench

    return float(do_bench(fn, warmup=max(rep_ms // 4, 5), rep=rep_ms, return_mode="median"))


def bench_graph(fn, rep_ms: int) -> float:
    """Median ms of a CUDA graph replaying ``fn``: device time, host overhead removed."""
    from triton.testing import do_bench

    from .timing import graph_of

    replay = graph_of(fn)
    if replay is None:
        raise RuntimeError("the call could not be captured in a CUDA graph")
    return float(do_bench(replay, warmup=max(rep_ms // 4, 5), rep=rep_ms,
                          return_mode="median"))


# The order of paired_graph_times' rounds: each side three times, so that a stall over
# any two adjacent rounds leaves each side a round it did not reach.
PAIRED_ORDER = "abbaab"


def paired_order(a: str, b: str) -> str:
    """PAIRED_ORDER in words, side a named ``a`` and side b ``b``."""
    return ", ".join(a if side == "a" else b for side in PAIRED_ORDER)


def paired_graph_times(fn_a, fn_b, rep_ms: int) -> tuple[float, float]:
    """Graph medians (ms) of two calls, each the lowest of three rounds taken in the order
    a, b, b, a, a, b: a stall of the machine that lasts two rounds reaches neither side's
    result (on the H100, cuDNN timed 7x slow on one of 63 layers:
    validation/results/issue2_h100/rule_call32_one_round/; with two rounds, a, b, b, a,
    ours took 2-10x its time on 4 layers of the issue-6 suite runs of calls 236-249, in
    both of its adjacent rounds: validation/results/flat_fill_h100/), and neither side
    always runs first."""
    times: dict[str, list[float]] = {"a": [], "b": []}
    for side in PAIRED_ORDER:
        times[side].append(bench_graph(fn_a if side == "a" else fn_b, rep_ms))
    return min(times["a"]), min(times["b"])


def run(problems: list[Problem], topk: int, rep_ms: int, log) -> list[dict]:
    """Rows of the layers measured; an interrupt (Ctrl-C, ``timeout -s INT``) keeps
    the rows finished so far."""
    spec = spec_of(torch.device("cuda"))
    rows: list[dict] = []
    try:
        for i, p in enumerate(problems):
            rows.append(measure(i, p, spec, topk, rep_ms, log))
    except KeyboardInterrupt:
        log(f"interrupted after {len(rows)} of {len(problems)} layers; writing those")
    return rows


def measure(i: int, p: Problem, spec, topk: int, rep_ms: int, log) -> dict:
    """Check and time one layer: the dispatcher's call, its chosen kernel, top-k, cuDNN."""
    g = p.geom
    x, w, b, ref = layer_tensors(g, i)
    kw = conv_args(g)
    tconv = torch_conv(g)
    ours = conv2d if g.dims == 2 else conv3d
    t0 = time.perf_counter()
    dec = decide(g, spec)
    decide_ms = (time.perf_counter() - t0) * 1e3
    out = ours(x, w, b, **kw)
    torch.cuda.synchronize()
    err = rel_err(out, ref)
    cudnn_eager_ms = bench(lambda: tconv(x, w, b, **kw), rep_ms)
    call_eager_ms = bench(lambda: ours(x, w, b, **kw), rep_ms)
    cudnn_ms, call_ms = paired_graph_times(lambda: tconv(x, w, b, **kw),
                                           lambda: ours(x, w, b, **kw), rep_ms)
    buf = torch.empty_like(out)
    chosen_ms = bench_graph(lambda: run_candidate(dec.candidate, x, w, b, g, out=buf), rep_ms)
    best_ms, best_id, tried = chosen_ms, dec.candidate.id, 1
    for cand, _ in list(dec.ranked)[1:topk]:
        try:
            o = run_candidate(cand, x, w, b, g)
            if rel_err(o, ref) > 5e-2:
                log(f"  wrong output: {cand.id}")
                continue
            ms = bench_graph(lambda c=cand: run_candidate(c, x, w, b, g, out=buf), rep_ms)
        except Exception as e:  # a failing candidate is data, not a reason to stop
            log(f"  failed: {cand.id}: {type(e).__name__}: {str(e)[:200]}")
            continue
        tried += 1
        if ms < best_ms:
            best_ms, best_id = ms, cand.id
    row = dict(problem_id=p.id, set=p.set, layer=p.layer, category=category(p),
               geometry=g.describe(), flops=g.flops, min_bytes=g.min_bytes,
               chooser=dec.chooser, chosen=dec.candidate.id, rel_err=err,
               cudnn_us=cudnn_ms * 1e3, call_us=call_ms * 1e3, chosen_us=chosen_ms * 1e3,
               cudnn_eager_us=cudnn_eager_ms * 1e3, call_eager_us=call_eager_ms * 1e3,
               best_of_topk_us=best_ms * 1e3, best_of_topk=best_id, topk_tried=tried,
               decide_ms=decide_ms)
    row["tflops"] = g.flops / (call_ms * 1e-3) / 1e12
    row["gbps"] = g.min_bytes / (call_ms * 1e-3) / 1e9
    row["cudnn_tflops"] = g.flops / (cudnn_ms * 1e-3) / 1e12
    row["speedup_vs_cudnn"] = cudnn_ms / call_ms
    row["topk_speedup_vs_cudnn"] = cudnn_ms / best_ms
    log(f"[{i + 1}] {p.id}: {dec.candidate.family} {row['call_us']:.1f}us vs cudnn "
        f"{row['cudnn_us']:.1f}us (eager {row['call_eager_us']:.0f} vs "
        f"{row['cudnn_eager_us']:.0f}) x{row['speedup_vs_cudnn']:.2f} "
        f"(top{tried} best x{row['topk_speedup_vs_cudnn']:.2f}) err={err:.1e}")
    return row


def geomean(vals) -> float:
    vals = [v for v in vals if v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else float("nan")


def ratio_cells(sel: list[dict]) -> str:
    """Table cells 'layers | geomean | min | geomean best-of-top-k |' of ratios to cuDNN."""
    return (f"{len(sel)} | {geomean(r['speedup_vs_cudnn'] for r in sel):.2f} | "
            f"{min(r['speedup_vs_cudnn'] for r in sel):.2f} | "
            f"{geomean(r['topk_speedup_vs_cudnn'] for r in sel):.2f} |")


def summary_md(rows: list[dict], env: dict) -> str:
    lines = [f"# Layer benchmark: {env['suite']} ({env['dtype']}, channels_last)", "",
             "Latencies are CUDA-graph replays (device time; cuDNN's and the dispatcher's each "
             f"the lowest median of three rounds taken in the order "
             f"{paired_order('cuDNN', 'ours')}; the chosen kernel alone and the other top-k "
             "candidates: one round each); "
             "eager times, host overhead "
             "included, are in bench.csv. cuDNN runs with torch.backends.cudnn.benchmark=True.",
             "", f"Device: {env['gpu']}; torch {env['torch']}, triton {env['triton']}, "
             f"CUDA {env['cuda']}; {env['date']}; chooser: {env.get('chooser', 'model')}; "
             f"layers measured: {env.get('layers', len(rows))}; measured bf16 matrix peak "
             f"{env.get('bf16_peak_tflops', float('nan'))} TFLOP/s (8192^3 product).",
             f"Command: `{env['command']}`", "",
             "| category | layers | geomean vs cuDNN | min vs cuDNN | geomean best-of-top-k |",
             "|---|---|---|---|---|"]
    for cat in ("dense", "grouped", "depthwise"):
        sel = [r for r in rows if r["category"] == cat]
        if sel:
            lines.append(f"| {cat} | {ratio_cells(sel)}")
    peak = env.get("bf16_peak_tflops") or float("nan")
    if rows:
        top = max(rows, key=lambda r: r["tflops"])
        lines += ["", f"Highest rate: {top['tflops']:.0f} TFLOP/s ({top['tflops'] / peak:.0%} "
                  f"of the measured peak), {top['problem_id']}; cuDNN there: "
                  f"{top['cudnn_tflops']:.0f} TFLOP/s."]
    lines += ["", "| layer | geometry | chosen | ours us | cuDNN us | x cuDNN | TFLOP/s | % peak |"
              " GB/s | rel err |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['problem_id']} | {r['geometry']} | {r['chosen']} | "
                     f"{r['call_us']:.1f} | {r['cudnn_us']:.1f} | {r['speedup_vs_cudnn']:.2f} | "
                     f"{r['tflops']:.1f} | {r['tflops'] / peak:.0%} | {r['gbps']:.0f} | "
                     f"{r['rel_err']:.1e} |")
    return "\n".join(lines) + "\n"


def pair_cells(was: list[dict], now: list[dict]) -> tuple[str, int]:
    """Two runs of the same layers (``bench.csv`` rows, in the same order): the cells
    'x cuDNN before | after | the lowest after | our time before / after | cuDNN's before /
    after' (geomeans), and how many layers kept their choice."""
    def ratio(key: str) -> float:
        return geomean(float(o[key]) / float(r[key]) for o, r in zip(was, now))

    after = [float(r["speedup_vs_cudnn"]) for r in now]
    cells = (f"{geomean(float(o['speedup_vs_cudnn']) for o in was):.3f} | "
             f"{geomean(after):.3f} | {min(after):.2f} | {ratio('call_us'):.3f} | "
             f"{ratio('cudnn_us'):.3f}")
    return cells, sum(o["chosen"] == r["chosen"] for o, r in zip(was, now))


def category_pair_lines(old: dict[str, dict], new: list[dict], dtype: str) -> list[str]:
    """Markdown rows, one a category, of two runs of a suite (``bench.csv`` rows; ``old`` by
    problem id): ``pair_cells`` and how many choices changed."""
    out = []
    for cat in ("dense", "grouped", "depthwise"):
        sel = [r for r in new if r["category"] == cat]
        if sel:
            cells, same = pair_cells([old[r["problem_id"]] for r in sel], sel)
            out.append(f"| {dtype} | {cat} | {len(sel)} | {cells} | {len(sel) - same} |")
    return out


def rerun_lines(first_call: str, again_call: str,
                runs: list[tuple[str, dict[str, dict], list[dict]]]) -> list[str]:
    """A markdown table of a suite's layers run again: one row a (dtype, the first run's
    ``bench.csv`` rows by problem id, the rows run again): ``pair_cells`` and how many
    choices are the same."""
    out = [f"| dtype | x cuDNN (call {first_call}) | call {again_call} | min | our time "
           f"{first_call} / {again_call} | cuDNN's {first_call} / {again_call} | same "
           "choices |", "|---|---|---|---|---|---|---|"]
    for dtype, first, again in runs:
        cells, same = pair_cells([first[r["problem_id"]] for r in again], again)
        out.append(f"| {dtype} | {cells} | {same} of {len(again)} |")
    return out


def backward_run_lines(new: list[dict[str, dict]], old: list[dict[str, dict]], new_call: str,
                       old_call: str) -> str:
    """One sentence on runs of one backward pass of the same layers (``bench_backward``'s
    ``bench.csv`` rows of direction "full", by problem id) in two calls: each run's geomean
    x cuDNN, each layer's best of the runs old / new (ours, cuDNN's), the choices changed
    (against the first old run) and the lowest layer of the new runs."""
    pids = list(new[0])

    def best(runs: list[dict[str, dict]], key: str) -> list[float]:
        return [min(float(run[p][key]) for run in runs) for p in pids]

    def runs_x(runs: list[dict[str, dict]]) -> str:
        return ", ".join(f"{geomean([float(run[p]['speedup_vs_cudnn']) for p in pids]):.3f}"
                         for run in runs)

    ours = geomean([o / n for o, n in zip(best(old, "ours_us"), best(new, "ours_us"))])
    cudnn = geomean([o / n for o, n in zip(best(old, "cudnn_us"), best(new, "cudnn_us"))])
    changed = sum(new[0][p]["chosen"] != old[0][p]["chosen"] for p in pids)
    low = min(float(run[p]["speedup_vs_cudnn"]) for run in new for p in pids)
    return (f"x cuDNN, call {new_call}: {runs_x(new)}; call {old_call}: {runs_x(old)}. Each "
            f"layer's best of the runs, call {old_call} / call {new_call}: ours {ours:.3f}, "
            f"cuDNN's {cudnn:.3f}. Choices changed: {changed} of {len(pids)}. Lowest layer in "
            f"call {new_call}: {low:.2f}.")


def layer_pair_lines(old: dict[str, dict], new: list[dict], category_name: str,
                     before: str, after: str) -> list[str]:
    """Markdown rows of two runs' layers of one category (``bench.csv`` rows; ``old`` by
    problem id): each side's latency and cuDNN time, the new ratio and choice."""
    out = [f"| layer | {before} ours (us) | {before} cuDNN | {after} ours | {after} cuDNN | "
           f"{after} x cuDNN | chosen ({after}) |", "|---|---|---|---|---|---|---|"]
    for r in new:
        if r["category"] != category_name:
            continue
        o = old[r["problem_id"]]
        out.append(f"| {r['problem_id']} | {float(o['call_us']):.1f} | "
                   f"{float(o['cudnn_us']):.1f} | {float(r['call_us']):.1f} | "
                   f"{float(r['cudnn_us']):.1f} | {float(r['speedup_vs_cudnn']):.2f} | "
                   f"{r['chosen']} |")
    return out


def matmul_peak_tflops(rep_ms: int) -> float:
    """Measured dense bf16 matrix rate (8192^3 product on random data, graph replay)."""
    a, b = (torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    ms = bench_graph(lambda: a @ b, rep_ms)
    return 2 * 8192**3 / (ms * 1e-3) / 1e12


def environment(suite: str, dtype: str, command: str, rep_ms: int) -> dict:
    import triton

    return dict(suite=suite, dtype=dtype, gpu=torch.cuda.get_device_name(),
                torch=torch.__version__, triton=triton.__version__, cuda=torch.version.cuda,
                host=platform.node(), date=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                command=command, sm_count=torch.cuda.get_device_properties(0).multi_processor_count,
                bf16_peak_tflops=round(matmul_peak_tflops(rep_ms), 1))


def write_results(out: Path, rows: list[dict], env: dict, md: str) -> None:
    """bench.csv, env.json and bench.md into ``out``; prints the summary part of md."""
    import pandas as pd

    pd.DataFrame(rows).to_csv(out / "bench.csv", index=False)
    (out / "env.json").write_text(json.dumps(env, indent=1))
    (out / "bench.md").write_text(md)
    print(md.split("\n| layer")[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="issue2")
    ap.add_argument("--dtype", default="float16")
    ap.add_argument("--out", required=True)
    ap.add_argument("--topk", type=int, default=1)
    ap.add_argument("--rep-ms", type=int, default=40)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--only", default=None, metavar="GLOB",
                    help="measure only the layers whose problem id matches (fnmatch)")
    ap.add_argument("--chooser", choices=("model", "rule"), default="model",
                    help="who picks the kernel: the shipped model (default) or the rules")
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("bench_layers needs a CUDA GPU")
    problems = suite_problems(a.suite, a.dtype)
    if a.only:
        problems = [p for p in problems if fnmatch.fnmatch(p.id, a.only)]
        if not problems:
            raise SystemExit(f"--only {a.only!r} matches no layer of suite {a.suite!r}")
    if a.limit:
        problems = problems[: a.limit]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    import sys

    env = environment(a.suite, a.dtype, "python -m convdispatch.validation.bench_layers "
                      + " ".join(sys.argv[1:] if argv is None else argv), a.rep_ms)
    set_chooser(a.chooser)
    env["chooser"] = a.chooser
    CACHE.clear()
    torch.backends.cudnn.benchmark = True  # the baseline is cuDNN's best algorithm
    rows = run(problems, a.topk, a.rep_ms, lambda m: print(m, flush=True))
    env["layers"] = f"{len(rows)} of {len(problems)}"
    write_results(out, rows, env, summary_md(rows, env))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
