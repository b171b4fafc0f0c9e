"""Backward layer benchmark: convdispatch's dgrad/wgrad choices vs cuDNN's backward.

    python -m convdispatch.validation.bench_backward --suite issue2 --out DIR [--topk K]

For every layer and gradient direction (dgrad: of the input, wgrad: of the
weight) the chooser's kernel is checked against torch's gradient of the same
tensors in float32 (relative error by norm), then it and cuDNN's
``convolution_backward`` for that direction alone are timed as CUDA-graph
replays with ``triton.testing.do_bench`` (median, L2 flushed). ``--topk K``
also times the next K-1 ranked candidates. Direction ``full`` is one backward pass of
the layer: dX and dW by ``autograd.gradients`` (as in a CUDA graph: the two at once on
side streams unless both kernels fill the GPU alone; and in order on one stream; both
timed) against one ``convolution_backward`` computing both. Writes bench.csv, bench.md, env.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from ..dispatcher import CACHE, autograd, decide, fused_pair, set_chooser
from ..dispatcher.launch import empty_grad, launch_grad
from ..kernels.device import spec_of
from .bench_layers import (
    bench_graph,
    category,
    environment,
    geomean,
    make_tensors,
    paired_graph_times,
    paired_order,
    ratio_cells,
    rel_err,
    write_results,
)
from .bench_layers import suite_problems as layer_suite
from .inputs import make_grad_output, torch_grad

DIRECTIONS = ("dgrad", "wgrad")
FULL = "full"  # both gradients of one backward pass


def measure(i: int, p, spec, topk: int, rep_ms: int, log,
            directions: tuple[str, ...] = DIRECTIONS) -> list[dict]:
    g = p.geom
    x, w, _ = make_tensors(g, "cuda", seed=i)
    dy = make_grad_output(g, "cuda", seed=i)
    rows = []
    for direction in directions:
        if direction == FULL:
            rows.append(measure_full(i, p, spec, x, w, dy, rep_ms, log))
            continue
        with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
            ref = torch_grad(g, direction, dy.float(), x.float(), w.float())
        out = empty_grad(direction, x, w)
        dec = decide(g, spec, direction=direction)

        def run(c, o=out):
            launch_grad(c, g, dy, x=x, w=w, out=o)

        run(dec.candidate)
        torch.cuda.synchronize()
        err = rel_err(out, ref)
        cudnn_ms, ours_ms = paired_graph_times(
            lambda d=direction: torch_grad(g, d, dy, x, w),
            lambda c=dec.candidate: run(c), rep_ms)
        best_ms, best_id, tried = ours_ms, dec.candidate.id, 1
        for cand, _ in list(dec.ranked)[1:topk]:
            try:
                o = torch.empty_like(out)
                run(cand, o)
                if rel_err(o, ref) > 5e-2:
                    log(f"  wrong output: {cand.id}")
                    continue
                ms = bench_graph(lambda c=cand, o=o: run(c, o), rep_ms)
            except Exception as e:  # a failing candidate is data, not a reason to stop
                log(f"  failed: {cand.id}: {type(e).__name__}: {str(e)[:200]}")
                continue
            tried += 1
            if ms < best_ms:
                best_ms, best_id = ms, cand.id
        row = timed_row(p, direction, g.flops, g.min_bytes, dec.chooser, dec.candidate.id, err,
                        ours_ms, cudnn_ms, best_ms, best_id, tried)
        log(f"[{i + 1}] {p.id} {direction}: {dec.candidate.family} {row['ours_us']:.1f}us vs "
            f"cudnn {row['cudnn_us']:.1f}us x{row['speedup_vs_cudnn']:.2f} (top{tried} best "
            f"x{row['topk_speedup_vs_cudnn']:.2f}) err={err:.1e}")
        rows.append(row)
    return rows


def timed_row(p, direction: str, flops: float, nbytes: float, chooser: str, chosen: str,
              err: float, ours_ms: float, cudnn_ms: float, best_ms: float, best_id: str,
              tried: int) -> dict:
    """A bench.csv row: what was run, its error, its time and cuDNN's, and the rates."""
    return dict(problem_id=p.id, set=p.set, layer=p.layer, category=category(p),
                direction=direction, geometry=p.geom.describe(), flops=flops, chooser=chooser,
                chosen=chosen, rel_err=err, ours_us=ours_ms * 1e3, cudnn_us=cudnn_ms * 1e3,
                best_of_topk_us=best_ms * 1e3, best_of_topk=best_id, topk_tried=tried,
                tflops=flops / (ours_ms * 1e-3) / 1e12,
                cudnn_tflops=flops / (cudnn_ms * 1e-3) / 1e12,
                gbps=nbytes / (ours_ms * 1e-3) / 1e9,
                speedup_vs_cudnn=cudnn_ms / ours_ms, topk_speedup_vs_cudnn=cudnn_ms / best_ms)


def pass_times(g, dy, x, w, rep_ms: int) -> tuple[float, float, float]:
    """CUDA-graph ms of one backward pass (dX and dW): cuDNN's and ours as
    ``autograd.gradients`` runs it (paired), and ours in order on one stream."""
    cudnn_ms, ours_ms = paired_graph_times(lambda: autograd.torch_grads(g, dy, x, w),
                                           lambda: autograd.gradients(g, dy, x, w), rep_ms)
    autograd.OVERLAP = "never"
    try:
        in_order_ms = bench_graph(lambda: autograd.gradients(g, dy, x, w), rep_ms)
    finally:
        autograd.OVERLAP = "graphs"
    return cudnn_ms, ours_ms, in_order_ms


def measure_full(i: int, p, spec, x, w, dy, rep_ms: int, log) -> dict:
    """One backward pass of the layer (dX and dW): ``autograd.gradients`` overlapped and in
    order, against cuDNN's ``convolution_backward`` asked for both."""
    g = p.geom
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        refs = autograd.torch_grads(g, dy.float(), x.float(), w.float())
    got = autograd.gradients(g, dy, x, w)
    torch.cuda.synchronize()
    err = max(rel_err(o, r) for o, r in zip(got, refs))
    cudnn_ms, ours_ms, in_order_ms = pass_times(g, dy, x, w, rep_ms)
    chosen = fused_pair.pass_choice(g, spec)
    row = timed_row(p, FULL, 2 * g.flops, g.pass_bytes,
                    decide(g, spec, direction="dgrad").chooser, chosen, err,
                    ours_ms, cudnn_ms, ours_ms, chosen, 1)
    row.update(in_order_us=in_order_ms * 1e3, in_order_speedup_vs_cudnn=cudnn_ms / in_order_ms)
    log(f"[{i + 1}] {p.id} full: {ours_ms * 1e3:.1f}us (in order {in_order_ms * 1e3:.1f}us) vs "
        f"cudnn {cudnn_ms * 1e3:.1f}us x{row['speedup_vs_cudnn']:.2f} (in order "
        f"x{row['in_order_speedup_vs_cudnn']:.2f}) err={err:.1e}")
    return row


def summary_md(rows: list[dict], env: dict) -> str:
    lines = [f"# Backward layer benchmark: {env['suite']} ({env['dtype']}, channels_last)", "",
             "Latencies are CUDA-graph replays (device time) of one gradient direction (cuDNN's "
             f"and ours each the lowest median of three rounds, order "
             f"{paired_order('cuDNN', 'ours')}); "
             "cuDNN is "
             "`torch.ops.aten.convolution_backward` with only that gradient requested, "
             "`torch.backends.cudnn.benchmark=True`.", "",
             f"Device: {env['gpu']}; torch {env['torch']}, triton {env['triton']}, CUDA "
             f"{env['cuda']}; {env['date']}; chooser: {env['chooser']}; layers: "
             f"{env['layers']}; measured bf16 matrix peak {env['bf16_peak_tflops']} TFLOP/s.",
             f"Command: `{env['command']}`", "",
             "| category | direction | layers | geomean vs cuDNN | min vs cuDNN | geomean "
             "best-of-top-k |", "|---|---|---|---|---|---|"]
    for cat in ("dense", "grouped", "depthwise"):
        for d in (*DIRECTIONS, "both"):
            sel = [r for r in rows if r["category"] == cat and r["direction"] != FULL
                   and (d == "both" or r["direction"] == d)]
            if sel:
                lines.append(f"| {cat} | {d} | {ratio_cells(sel)}")
    full = [r for r in rows if r["direction"] == FULL]
    if full:
        lines += ["", "One backward pass (dX and dW; cuDNN: one `convolution_backward` asked for "
                  "both; ours: `autograd.gradients` as in a CUDA graph, the two at once on "
                  "side streams unless both kernels fill the GPU alone, and in order on one "
                  "stream):", "",
                  "| category | layers | overlapped geomean vs cuDNN | min | in order geomean "
                  "vs cuDNN | min |", "|---|---|---|---|---|---|"]
        for cat in ("dense", "grouped", "depthwise"):
            sel = [r for r in full if r["category"] == cat]
            if sel:
                lines.append(
                    f"| {cat} | {len(sel)} | {geomean(r['speedup_vs_cudnn'] for r in sel):.2f} "
                    f"| {min(r['speedup_vs_cudnn'] for r in sel):.2f} | "
                    f"{geomean(r['in_order_speedup_vs_cudnn'] for r in sel):.2f} | "
                    f"{min(r['in_order_speedup_vs_cudnn'] for r in sel):.2f} |")
    lines += ["", "| layer | direction | geometry | chosen | ours us | cuDNN us | x cuDNN | "
              "best top-k x | TFLOP/s | rel err |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['problem_id']} | {r['direction']} | {r['geometry']} | {r['chosen']} "
                     f"| {r['ours_us']:.1f} | {r['cudnn_us']:.1f} | {r['speedup_vs_cudnn']:.2f} "
                     f"| {r['topk_speedup_vs_cudnn']:.2f} | {r['tflops']:.1f} | "
                     f"{r['rel_err']:.1e} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="issue2")
    ap.add_argument("--dtype", default="float16")
    ap.add_argument("--out", required=True)
    ap.add_argument("--topk", type=int, default=1)
    ap.add_argument("--rep-ms", type=int, default=40)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--chooser", choices=("model", "rule"), default="model")
    ap.add_argument("--categories", default="dense,grouped,depthwise",
                    help="comma list of the layer categories to time")
    ap.add_argument("--directions", default=",".join(DIRECTIONS),
                    help="comma list of the directions to time (dgrad, wgrad, full: both "
                         "gradients of one backward pass)")
    a = ap.parse_args(argv)
    directions = tuple(d.strip() for d in a.directions.split(",") if d.strip())
    bad = [d for d in directions if d not in (*DIRECTIONS, FULL)]
    if bad or not directions:
        raise SystemExit(f"--directions: expected a comma list of {(*DIRECTIONS, FULL)}, got "
                         f"{a.directions!r}")
    if not torch.cuda.is_available():
        raise SystemExit("bench_backward needs a CUDA GPU")
    cats = {c.strip() for c in a.categories.split(",") if c.strip()}
    if not cats or cats - {"dense", "grouped", "depthwise"}:
        raise SystemExit(f"--categories: expected a comma list of dense, grouped, depthwise, "
                         f"got {a.categories!r}")
    problems = [p for p in layer_suite(a.suite, a.dtype) if category(p) in cats]
    problems = problems[: a.limit or None]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    env = environment(a.suite, a.dtype, "python -m convdispatch.validation.bench_backward "
                      + " ".join(sys.argv[1:] if argv is None else argv), a.rep_ms)
    set_chooser(a.chooser)
    env["chooser"] = a.chooser
    CACHE.clear()
    torch.backends.cudnn.benchmark = True
    spec = spec_of(torch.device("cuda"))
    rows: list[dict] = []
    try:
        for i, p in enumerate(problems):
            rows += measure(i, p, spec, a.topk, a.rep_ms, lambda m: print(m, flush=True),
                            directions)
    except KeyboardInterrupt:
        print(f"interrupted after {len(rows)} rows; writing those", flush=True)
    env["layers"] = f"{len({r['problem_id'] for r in rows})} of {len(problems)}"
    write_results(out, rows, env, summary_md(rows, env))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
