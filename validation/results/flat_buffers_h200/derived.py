"""Tables of this folder's calls (304-309, two H200s) into derived.md.

    python3 validation/results/flat_buffers_h200/derived.py
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from convdispatch.validation.bench_layers import (
    category_pair_lines,
    layer_pair_lines,
    suite_layers,
)
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
BEFORE = HERE.parent / "filter_async_h200" / "call299"
NCU = (("grp_flat_tma", "ResNeXt-50 layer1.0, ours"), ("grp_cudnn", "ResNeXt-50 layer1.0, cuDNN"),
       ("grp2_flat_tma", "ResNeXt-50 layer2.0, ours"),
       ("grp2_cudnn", "ResNeXt-50 layer2.0, cuDNN"))
NCU_METRICS = ("Duration", "DRAM Throughput", "L2 Hit Rate", "Mem Busy", "Issue Slots Busy",
               "Registers Per Thread", "Achieved Occupancy")


def rows(call: str, pattern: str) -> pd.DataFrame:
    """A probe's rows, each against its config's two-buffer launch as shipped (x: that time
    / this one; TMA configs' boxes are at their copied length either way)."""
    d = pd.concat([pd.read_csv(p) for p in sorted((HERE / call).glob(pattern))])
    d = d[d.us.notna()].copy()
    d["dtype"] = d.problem_id.str.rsplit("/", n=1).str[-1]
    d["dims"] = dims_of(d.problem_id)
    d["tma"] = d.config.str.contains("TMA=1")
    d["one"] = d.config.str.contains(r"ITEMS=1;")
    base = d[(d.bufs == 2) & ~(d.exact.astype(bool) & ~d.tma)]
    d = d.merge(base[["problem_id", "config", "us"]].rename(columns={"us": "base"}),
                on=["problem_id", "config"])
    d["x"] = d.base / d.us
    return d[~((d.bufs == 2) & ~(d.exact.astype(bool) & ~d.tma))]


def variant_lines(d: pd.DataFrame, title: str, text: str, by: list[str]) -> list[str]:
    out = heading(title, text, [*by, "as shipped / this (geomean)", "configs", "min", "max"])
    for key, g in d.groupby(by):
        out.append(line([*(key if isinstance(key, tuple) else (key,)), *summary(g.x)]))
    return out + [""]


def rule_lines(d: pd.DataFrame) -> list[str]:
    """The rows the rule takes: one item a program, three buffers."""
    sel = d[d.one & (d.bufs == 3)].sort_values(["dtype", "problem_id", "config"])
    out = heading("The rule's rows: one item a program, a buffer a depth tap (call 304)",
                  f"Every ITEMS=1 config of the probe at three buffers (the phase images at "
                  f"their copied length where not TMA), against the same config at two: "
                  f"{summary(sel.x)[0]}x geomean over {len(sel)} configs, "
                  f"{sel.x.min():.2f}-{sel.x.max():.2f}.",
                  ["layer", "config", "two buffers (us)", "three (us)", "x"])
    for r in sel.itertuples():
        out.append(line([r.problem_id, r.config.split(":", 1)[1], f"{r.base:.2f}",
                         f"{r.us:.2f}", f"{r.x:.3f}"]))
    return out + [""]


def best_of_lines(probe: pd.DataFrame) -> list[str]:
    """Each layer's faster of call 299's shipped choice and call 304's fastest config (fp16),
    against call 299's cuDNN: what a model that chose them would give on this GPU."""
    suite = pd.read_csv(suite_path("call299", "fp16"))
    fast = (pd.concat([probe, probe.assign(us=probe.base)])
            .groupby("problem_id").us.min().rename("probe_us"))
    m = suite.set_index("problem_id").join(fast)
    best = m[["call_us", "probe_us"]].min(axis=1)
    shipped = geomean(m.cudnn_us / m.call_us)
    both = geomean(m.cudnn_us / best)
    return [f"Call 299's shipped choices, fp16: {shipped:.3f}x cuDNN (geomean over {len(m)} "
            f"layers); each layer's faster of that and call 304's fastest config: "
            f"{both:.3f}x ({both / shipped:.3f}x).", ""]


def ncu_value(text: str, name: str) -> str:
    m = re.search(rf"^\s+{re.escape(name)}\s+(\S+(?:/\S+)?)\s+([\d.,]+)\s*$", text, re.M)
    if m is None:
        m = re.search(rf"^\s+{re.escape(name)}\s+([\d.,]+)\s*$", text, re.M)
        return m.group(1) if m else ""
    return f"{m.group(2)} {m.group(1)}"


def ncu_lines() -> list[str]:
    out = heading("Nsight Compute, call 307 (full set, clocks as found, no L2 flush)",
                  "Each layer's fastest flat config on the H200 (call 302) and cuDNN's kernel.",
                  ["kernel", *NCU_METRICS])
    for name, label in NCU:
        text = (HERE / "call307" / f"ncu_{name}.txt").read_text()
        out.append(line([label, *(ncu_value(text, m) for m in NCU_METRICS)]))
    return out + [""]


def suite_path(call: str, short: str) -> Path:
    if call == "call299":
        return BEFORE / f"grouped_{short}" / "bench.csv"
    return HERE / call / f"suite_grouped_{short}" / "bench.csv"


def suite_lines(before: str, after: str, text: str, layers: bool) -> list[str]:
    """Suite run ``after`` of the grouped layers against run ``before``."""
    out = heading(f"The suite's grouped layers under the shipped (H100) model: "
                  f"{after.replace('call', 'call ')} against {before.replace('call', 'call ')}",
                  text, ["dtype", "category", "layers", "x cuDNN before", "after", "min after",
                         "our time before / after", "cuDNN's before / after",
                         "choices changed"])
    tables = []
    for dtype, short in DTYPES:
        old = {r["problem_id"]: r for r in bench_rows(suite_path(before, short))}
        new = bench_rows(suite_path(after, short))
        out += category_pair_lines(old, new, dtype)
        if layers:
            tables += ["", f"Grouped layers, {dtype}:", "",
                       *layer_pair_lines(old, new, "grouped", before.replace("call", "call "),
                                         after.replace("call", "call "))]
    return out + tables + [""]


def halves_lines() -> list[str]:
    """Call 308: each config with and without the halves' diagonal blocks; whether the rule
    (its copy guard) takes them."""
    from convdispatch.dispatcher.registry import parse_candidate
    from convdispatch.kernels.dead_taps import trim_dead_taps
    from convdispatch.kernels.grouped_flat import diag_blocks

    geoms = {p.id: p.geom for dt, _ in DTYPES for p in suite_layers("issue6", dt, "grouped")}
    d = pd.read_csv(HERE / "call308" / "halves_fp16.csv")
    d = d[d.us.notna()].pivot_table(index=["problem_id", "config"], columns="halves",
                                    values="us").reset_index()
    d["x"] = d[0] / d[1]
    d["dims"] = dims_of(d.problem_id)
    d["rule"] = [diag_blocks(trim_dead_taps(geoms[p]), parse_candidate(c).config, False) > 1
                 for p, c in zip(d.problem_id, d.config)]
    out = heading("Call 308: the halves' diagonal blocks, config by config (float16)",
                  "Each 32-wide WGMMA config of the probe whose groups stay within its "
                  "16-channel halves, without / with them (above 1: faster with), at the "
                  "buffers the rules give; rule: whether `half_blocks` (with its copy guard) "
                  "takes them.", ["dims", "rule", "without / with (geomean)", "configs", "min",
                                  "max"])
    for key, g in [*d.groupby(["dims", "rule"]), (("all", True), d[d.rule])]:
        out.append(line([*key, *summary(g.x)]))
    out += ["", *table_head(["layer", "config", "without (us)", "with (us)", "x", "rule"])]
    for r in d.itertuples():
        out.append(line([r.problem_id, r.config.split(":", 1)[1], f"{r._3:.2f}", f"{r._4:.2f}",
                         f"{r.x:.3f}", r.rule]))
    return out + [""]


def main() -> None:
    probe = rows("call304", "buffers_*.csv")
    ladder = rows("call306", "ladder_*.csv")
    md = ["# grouped_flat with deeper input pipelines (H200, calls 304-307)", "",
          "Made by `derived.py` from this folder's files. Device: NVIDIA H200, torch "
          "2.11.0+cu130, triton 3.6.0, cuDNN 91900 (each call's `env.txt`); channels_last.",
          "",
          *variant_lines(probe, "Call 304: each variant against its config as shipped",
                         "The probe's configs (call 302's fastest WGMMA ones a layer and the "
                         "shipped model's best-ranked), each launched with 2, 3 or 4 input "
                         "buffers (exact: phase images at their copied length).",
                         ["dtype", "dims", "tma", "bufs", "exact"]),
          *rule_lines(probe),
          "## Call 304's fastest configs with call 299's shipped choices", "",
          *best_of_lines(probe[probe.dtype == "float16"]),
          *variant_lines(probe[probe.dims == "3D"].assign(items=~probe.one),
                         "Call 304: 3D layers, one item a program or more",
                         "items True: two or more items a program.",
                         ["items", "tma", "bufs"]),
          *variant_lines(ladder, "Call 306: the larger layers' 8-warp tiles at ITEMS 6, 8, 12",
                         "Each buffer count where it divides the program's steps (no dead "
                         "ones); against the same config at two buffers (exact too where not "
                         "TMA).", ["problem_id", "tma", "bufs"]),
          *suite_lines("call299", "call307", "After the input-buffer change.", True),
          *halves_lines(),
          *suite_lines("call307", "call308", "With the halves' diagonal blocks, before their "
                       "copy guard (ResNeXt-50 layer2.0's shipped tile took them and spilled).",
                       False),
          *suite_lines("call307", "call309", "With the copy guard: as shipped now. Compare "
                       "our times: cuDNN's varied (in bf16 it took 1.3-1.4x call 307's time on "
                       "three small 3D layers).", True),
          *ncu_lines()]
    (HERE / "derived.md").write_text("\n".join(md))


if __name__ == "__main__":
    main()
