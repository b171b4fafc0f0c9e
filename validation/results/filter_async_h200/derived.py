"""Tables of this folder's calls (297-303, two H200s) into derived.md.

    python3 validation/results/filter_async_h200/derived.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from convdispatch.validation.bench_layers import layer_pair_lines, suite_layers
from convdispatch.validation.derived_tables import (
    DTYPES,
    bench_rows,
    dims_of,
    heading,
    line,
    summary,
    table_head,
)
from convdispatch.validation.row_compare import geomean

HERE = Path(__file__).parent
GEOMS = {p.id: p.geom for dt, _ in DTYPES for p in suite_layers("issue6", dt, "grouped")}
BEFORE = HERE.parent / "grouped_stages_h200" / "call289" / "issue6_fp16" / "bench.csv"
# Each layer's fastest config among the probe's rows, by what it may use: the columns of
# the per-layer tables (``fastest``).
STAGES = (("before", "plane loads"), ("async", "W_ASYNC"), ("tma", "+ TMA"),
          ("one", "+ ITEMS=1"))


def w_async_applies(pid: str, cid: str) -> bool:
    """Whether ``filter_async`` held for the probe's launch of config ``cid`` on layer
    ``pid`` (its filter as stored, channels_last, contiguous: 16-byte vectors wherever a
    group has a multiple of 8 channels, and an aligned address)."""
    from convdispatch.dispatcher.registry import parse_candidate
    from convdispatch.kernels.dead_taps import trim_dead_taps
    from convdispatch.kernels.grouped_flat import filter_regs

    g = trim_dead_taps(GEOMS[pid])
    return g.cg % 8 == 0 and not filter_regs(g, parse_candidate(cid).config, False)


def probe(call: str, name: str) -> pd.DataFrame:
    d = pd.read_csv(HERE / call / f"{name}.csv")
    d = d[d.off_us.notna() & d.on_us.notna()].copy()
    d["x"] = d.off_us / d.on_us
    d["applies"] = [w_async_applies(p, c) for p, c in zip(d.problem_id, d.config)]
    d["dims"] = dims_of(d.problem_id)
    d["tma"] = d.config.str.contains("TMA=1")
    # (By the config, not the probe's 'how': in call 301 the model ranked the unseen ITEMS=1
    # and TMA configs last, and where it had fewer than 8 others they filled its top 8.)
    d["one"] = d.config.str.contains(r"ITEMS=1;")
    return d


def async_lines(runs: list[tuple[str, str, pd.DataFrame]]) -> list[str]:
    """W_ASYNC against the plane-at-a-time loads, config by config, where it applies."""
    out = heading("The filter tiles as cp.async copies, config by config",
                  "Each config of the probe launched both ways, paired (plane loads / "
                  "W_ASYNC: above 1, W_ASYNC faster); rows of one item a program included. "
                  "Only the configs W_ASYNC applies to (`filter_async`); the others (the "
                  "same kernel twice: 4-channel groups, 2D 16-wide tiles holding the filter "
                  "in registers) in the last column.",
                  ["call", "dtype", "layers", "plane loads / W_ASYNC (geomean)", "configs",
                   "min", "max", "left out"])
    for call, dtype, d in runs:
        for dims, g in [*d.groupby("dims"), ("all", d)]:
            out.append(line([call, dtype, dims, *summary(g[g.applies].x),
                             int((~g.applies).sum())]))
    return out + [""]


def fastest(d: pd.DataFrame) -> pd.DataFrame:
    """Each layer's fastest time (us) by STAGES: the configs the family offered before
    this change (the model's top 8 and call 288's fastest, no TMA, two items or more)
    with plane loads; the same with W_ASYNC; TMA configs too; one item a program too."""
    rows = {}
    for pid, g in d.groupby("problem_id", sort=False):
        old = g[~g.one & ~g.tma]
        rows[pid] = {"before": old.off_us.min(), "async": old.on_us.min(),
                     "tma": g[~g.one].on_us.min(), "one": g.on_us.min(),
                     "best": g.loc[g.on_us.idxmin(), "config"]}
    return pd.DataFrame.from_dict(rows, orient="index")


def layer_lines(call: str, dtype: str, d: pd.DataFrame, suite: dict[str, dict]) -> list[str]:
    """A layer a row: call 299's cuDNN and shipped choice (any family), then ``fastest``'s
    columns; the last row, each column's geomean of cuDNN's time over it, and over the
    faster of the shipped choice and the last column."""
    f = fastest(d)
    cudnn = {p: r["cudnn_us"] for p, r in suite.items()}
    shipped = {p: r["call_us"] for p, r in suite.items()}
    cols = [label for _, label in STAGES]
    out = [f"### {dtype} (call {call}; cuDNN and the shipped choice: call 299's suite)", "",
           *table_head(["layer", "cuDNN", "shipped choice", *cols, "fastest config"])]
    for pid, r in f.iterrows():
        cfg = r.best.replace("grouped_flat:", "").replace(";num_stages=1", "")
        out.append(line([pid, f"{cudnn[pid]:.2f}", f"{shipped[pid]:.2f}",
                         *(f"{r[k]:.2f}" for k, _ in STAGES), cfg]))
    ratios = [f"{geomean([cudnn[p] / t for p, t in times.items()]):.3f}"
              for times in (shipped, *(f[k] for k, _ in STAGES))]
    either = geomean([cudnn[p] / min(shipped[p], t) for p, t in f["one"].items()])
    out += [line(["x cuDNN (geomean)", "", *ratios, ""]), "",
            f"The faster of the shipped choice and the last column, a layer: {either:.3f}x "
            "cuDNN (geomean).", ""]
    return out


def space_lines() -> list[str]:
    """Call 302: each layer's fastest of every grouped_flat config offered (W_ASYNC, TMA
    and ITEMS=1 included), against call 299's cuDNN and shipped choice (float16)."""
    d = pd.concat([pd.read_csv(HERE / "call302" / f"space_{i}.csv") for i in (0, 1)])
    d = d[d.on_us.notna()]
    suite = {r["problem_id"]: r for r in bench_rows(HERE / "call299" / "grouped_fp16" /
                                                    "bench.csv")}
    out = heading("Call 302: the fastest of every grouped_flat config a layer (float16)",
                  f"{len(d)} configs checked and timed once each (W_ASYNC; TMA and ITEMS=1 "
                  "included), against call 299's cuDNN and shipped choice.",
                  ["layer", "configs", "cuDNN", "shipped choice", "fastest config (us)",
                   "x cuDNN", "fastest config"])
    best = {}
    for pid in (p for p in suite if p in set(d.problem_id)):
        g = d[d.problem_id == pid]
        r = g.loc[g.on_us.idxmin()]
        best[pid] = min(r.on_us, suite[pid]["call_us"])
        cfg = r.config.replace("grouped_flat:", "").replace(";num_stages=1", "")
        out.append(line([pid, len(g), f"{suite[pid]['cudnn_us']:.2f}",
                         f"{suite[pid]['call_us']:.2f}", f"{r.on_us:.2f}",
                         f"{suite[pid]['cudnn_us'] / r.on_us:.2f}", cfg]))
    x = geomean([suite[p]["cudnn_us"] / t for p, t in best.items()])
    return out + ["", f"The faster of the shipped choice and the fastest config, a layer: "
                  f"{x:.3f}x cuDNN (geomean over {len(best)} layers).", ""]


def main() -> None:
    md = ["# grouped_flat's filter tiles as cp.async copies, and one item a program (H200)",
          "", "Made by `derived.py` from this folder's files. Device: NVIDIA H200, torch "
          "2.11.0+cu130, triton 3.6.0, cuDNN 91900 (each call's `env.txt`); channels_last; "
          "the issue-6 suite's 21 grouped layers.", ""]
    p298 = probe("call298", "filter_async")
    p301 = {dt: probe("call301", f"filter_async_{short}") for dt, short in DTYPES}
    md += async_lines([("298", "float16", p298), *(("301", dt, p301[dt]) for dt, _ in DTYPES)])

    md += ["## Each layer's fastest config (us)", "",
           "From the configs each probe ran (the shipped model's 8 best-ranked grouped_flat "
           "configs a layer, call 288's fastest, the TMA twins of the WGMMA ones, and each "
           "of those with ITEMS=1 where two items a program leave SMs idle). Columns: "
           + "; ".join(f"{label}: {text}" for label, text in (
               ("plane loads", "the configs offered before (no TMA, two items or more) "
                "as they ran before (a filter plane a round trip)"),
               ("W_ASYNC", "the same with the filter as cp.async copies"),
               ("+ TMA", "TMA configs too"), ("+ ITEMS=1", "one item a program too")))
           + ". grouped_flat configs only; the shipped choice (call 299's suite, with "
           "W_ASYNC) is grouped_packed's on some layers. cuDNN: call 299's suite's times (the "
           "probe timed cuDNN without `cudnn.benchmark`, so its own cuDNN column is not the "
           "suite's baseline).", ""]
    for dt, short in DTYPES:
        suite = {r["problem_id"]: r
                 for r in bench_rows(HERE / "call299" / f"grouped_{short}" / "bench.csv")}
        md += layer_lines("301", dt, p301[dt], suite)

    md += space_lines()
    md += ["## The suite's grouped layers under the shipped (H100) model", "",
           "Call 299, with W_ASYNC, against call 289 (before it; float16 only: "
           "validation/results/grouped_stages_h200/).", ""]
    old = {r["problem_id"]: r for r in bench_rows(BEFORE)}
    for dt, short in DTYPES:
        new = bench_rows(HERE / "call299" / f"grouped_{short}" / "bench.csv")
        x = [r["speedup_vs_cudnn"] for r in new]
        line_ = (f"{dt}: {len(new)} layers, {geomean(x):.3f}x cuDNN (geomean), min "
                 f"{min(x):.2f}")
        if dt == "float16":
            was = [old[r["problem_id"]]["speedup_vs_cudnn"] for r in new]
            same = sum(old[r["problem_id"]]["chosen"] == r["chosen"] for r in new)
            line_ += (f"; call 289: {geomean(was):.3f}x, min {min(was):.2f}; the same choice "
                      f"on {same} of {len(new)} layers.")
        md += [line_, ""]
    md += layer_pair_lines(old, bench_rows(HERE / "call299" / "grouped_fp16" / "bench.csv"),
                           "grouped", "call 289", "call 299") + [""]
    md += whole_suite_lines(old)
    (HERE / "derived.md").write_text("\n".join(md))


def whole_suite_lines(before: dict[str, dict]) -> list[str]:
    """Call 303: the whole issue-6 suite under the shipped model, both dtypes at once (one
    a GPU), float16 against call 289's run (the code before this session's)."""
    out = heading("Call 303: the whole issue-6 suite under the shipped (H100) model", "",
                  ["dtype", "category", "layers", "x cuDNN (geomean)", "min",
                   "call 289 (float16)", "choices changed"])
    for dt, short in DTYPES:
        new = bench_rows(HERE / "call303" / f"issue6_{short}" / "bench.csv")
        for cat in ("dense", "grouped", "depthwise"):
            sel = [r for r in new if r["category"] == cat]
            x = [r["speedup_vs_cudnn"] for r in sel]
            was, changed = "", ""
            if dt == "float16":
                was = f"{geomean([before[r['problem_id']]['speedup_vs_cudnn'] for r in sel]):.3f}"
                changed = sum(before[r["problem_id"]]["chosen"] != r["chosen"] for r in sel)
            out.append(line([dt, cat, len(sel), f"{geomean(x):.3f}", f"{min(x):.2f}", was,
                             changed]))
        top = max(new, key=lambda r: r["tflops"])
        env = json.loads((HERE / "call303" / f"issue6_{short}" / "env.json").read_text())
        peak = float(env["bf16_peak_tflops"])
        out.append(line([dt, "highest rate", "", f"{top['tflops']:.0f} TFLOP/s", "",
                         f"of {peak:.0f} measured", top["problem_id"]]))
    return out + [""]


if __name__ == "__main__":
    main()
