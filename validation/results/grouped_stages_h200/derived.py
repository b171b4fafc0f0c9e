"""Tables of this folder's calls (288-296, an H200) into derived.md.

    python3 validation/results/grouped_stages_h200/derived.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from convdispatch.validation.derived_tables import line, summary, table_head
from convdispatch.validation.row_compare import geomean

HERE = Path(__file__).parent


def read(path: Path) -> pd.DataFrame:
    d = pd.read_csv(path, dtype={"error": str, "errors": str}, keep_default_na=False)
    for col in d.columns:
        if col.endswith("_us") or col in ("rel_err", "us", "cudnn_us", "call_us"):
            d[col] = pd.to_numeric(d[col], errors="coerce")
    return d


def short(pid: str) -> str:
    return (pid.replace("/float16", "").replace("/bfloat16", "").replace("resnext3d_50.", "")
            .replace(".conv2", ""))


def table(rows: list[list], head: list[str]) -> list[str]:
    return table_head(head) + [line(r) for r in rows] + [""]


def best_pairs(d: pd.DataFrame, a: str, b: str) -> list[list]:
    """Each layer's fastest row of columns a and b, and their ratio."""
    rows = []
    for pid, s in d.groupby("problem_id", sort=False):
        ta, tb = s[a].min(), s[b].min()
        rows.append([short(pid), f"{ta:.2f}", f"{tb:.2f}", f"{ta / tb:.3f}"])
    return rows


def main() -> None:
    md = ["# grouped_flat on an H200: where the time goes, and TMA copies",
          "", "Made by `derived.py` from this folder's files. Device: NVIDIA H200, "
          "torch 2.11.0+cu130, triton 3.6.0 (each call's `env.txt`). float16, channels_last; "
          "the issue-6 suite's 21 grouped layers.", ""]

    e = read(HERE / "call288" / "exact_phases.csv")
    e["r"] = e.pow2_us / e.exact_us
    e["wgmma"] = e.config.str.contains("WGMMA=1")
    e["strided"] = e.problem_id.str.contains(r"layer[234]\.0")
    md += ["## Call 288: phase images at their copied length",
           "", "Every WGMMA or 16-channel config, both allocations, paired; power of two / "
           "exact (above 1: exact faster).", ""]
    rows = [[("WGMMA" if w else "mma.sync 16"), ("stride 2" if st else "stride 1"),
             *summary(s.r)] for (w, st), s in e.groupby(["wgmma", "strided"])]
    md += table(rows, ["tiles", "layers", "geomean", "configs", "min", "max"])
    md += ["The fastest config a layer, each way (us):", ""]
    md += table(best_pairs(e, "pow2_us", "exact_us"), ["layer", "power of two", "exact",
                                                        "ratio"])

    st = read(HERE / "call289" / "stages.csv")
    md += ["## Call 289: the kernel with a stage left out (us)", "",
           "no_copies: no input copied (the taps read stale buffers); no_taps: no mma "
           "(zeros stored); neither: filter tiles, loop and epilogue only.", ""]
    rows = [[short(r.problem_id), r.config.replace("grouped_flat:", "").replace(
        ";num_stages=1", ""), r.full_us, r.no_copies_us, r.no_taps_us, r.neither_us]
        for r in st.itertuples()]
    md += table(rows, ["layer", "config", "full", "no_copies", "no_taps", "neither"])

    b = read(HERE / "call289" / "issue6_fp16" / "bench.csv")
    md += ["## Call 289: the issue-6 suite on the H200, shipped (H100) model", ""]
    rows = [[cat, len(s), f"{geomean(s.speedup_vs_cudnn):.3f}",
             f"{s.speedup_vs_cudnn.min():.2f}"] for cat, s in b.groupby("category")]
    md += table(rows, ["category", "layers", "x cuDNN (geomean)", "min"])

    cp = pd.concat([read(HERE / c / "tma_phases.csv") for c in ("call290", "call291")])
    cp = cp[cp.store == 1]
    grouped = b[b.category == "grouped"].set_index("problem_id")
    bound = pd.concat([st.groupby("problem_id").no_taps_us.min(),
                       cp.groupby("problem_id").us.min()], axis=1).min(axis=1)
    md += ["## A ceiling for these kernels' data movement", "",
           "Each layer's time if its mmas were hidden completely under its copies: the "
           "lowest of call 289's no_taps rows and calls 290-291's copy-only kernels (where "
           "the suite's choice was another family and that was faster, its time). Against "
           "call 289's cuDNN times.", ""]
    lower = np.minimum(bound.reindex(grouped.index), grouped.call_us)
    md += [f"Geomean x cuDNN: {geomean(grouped.speedup_vs_cudnn):.3f} as shipped (call 289), "
           f"{geomean(grouped.cudnn_us / lower):.3f} at that ceiling, over "
           f"{len(grouped)} layers.", ""]
    md += ["## Calls 290-291: copy-only kernels (us, output stores included)", "",
           "The fastest ITEMS of each; columns: how, channels a copied row x positions "
           "an item.", ""]
    piv = cp.groupby(["problem_id", "how", "block_n", "positions"]).us.min().unstack(
        ["how", "block_n", "positions"])
    cols = list(piv.columns)
    rows = [[short(pid)] + [("" if np.isnan(v) else f"{v:.2f}") for v in piv.loc[pid]]
            for pid in piv.index]
    md += table(rows, ["layer"] + [f"{h} {c}x{p}" for h, c, p in cols])

    md += ["## Calls 292-296: the TMA prototype against the shipped kernel", "",
           "Same config both ways, paired; each layer's fastest row each way (us). "
           "Call 293: every WGMMA config of the 2D layers; call 294: the 3D layers' too, "
           "and call 288's fastest configs of all 21 layers; call 295: call 293 again; "
           "call 296: call 293 in bfloat16.", ""]
    for name, path in (("call 292, two buffers", HERE / "call292" / "flat_tma.csv"),
                       ("call 293", HERE / "call293" / "flat_tma_all.csv"),
                       ("call 294, fastest configs", HERE / "call294" / "flat_tma.csv"),
                       ("call 294, 3D", HERE / "call294" / "flat_tma_3d_all.csv"),
                       ("call 295 (call 293 again)", HERE / "call295" / "flat_tma_2d_all.csv"),
                       ("call 296 (call 293 in bfloat16)",
                        HERE / "call296" / "flat_tma_2d_all_bf16.csv")):
        d = read(path)
        if "stages" in d:
            d = d[d.stages != 3]
        w = d.dropna(subset=["tma_us", "shipped_us"])
        md += [f"{name}: {len(w)} configs checked and timed (largest relative error "
               f"{w.rel_err.max():.1e}), shipped / TMA {geomean(w.shipped_us / w.tma_us):.3f} "
               "a config.", ""]
        md += table(best_pairs(d, "shipped_us", "tma_us"), ["layer", "shipped", "TMA",
                                                             "shipped / TMA"])
    md += widening_lines()
    (HERE / "derived.md").write_text("\n".join(md))


def widening_lines() -> list[str]:
    """Calls 293-295's configs split by how much wider the prototype's power-of-two grid
    is than the flat grid (the rule of the TMA port: at most 1.2x)."""
    from convdispatch.dispatcher.registry import parse_candidate
    from convdispatch.kernels.flat_grid import flat_consts
    from convdispatch.validation.bench_layers import suite_layers

    geoms = {p.id: p.geom for p in suite_layers("issue6", "float16", "grouped")}
    d = pd.concat([read(HERE / f) for f in ("call293/flat_tma_all.csv",
                                             "call295/flat_tma_2d_all.csv",
                                             "call294/flat_tma_3d_all.csv")])
    d = d.dropna(subset=["tma_us", "shipped_us"])
    widening = []
    for pid, cid in zip(d.problem_id, d.config):
        g, cfg = geoms[pid], parse_candidate(cid).config
        # (the grid of the family's TMA configs, the prototype's: flat_consts(tma=True))
        widening.append(flat_consts(g, cfg["BLOCK_M"], tma=True)["WP"]
                        / flat_consts(g, cfg["BLOCK_M"])["WP"])
    d = d.assign(x=d.shipped_us / d.tma_us, within=np.array(widening) <= 1.2)
    rows = [["at most 1.2x" if w else "over 1.2x", s.problem_id.nunique(), *summary(s.x)]
            for w, s in d.groupby("within", sort=False)]
    return (["## The rule of the TMA port: its grid at most 1.2x the flat one", "",
             "Calls 293-295's configs (call 293 and its rerun 295 both counted), shipped / "
             "TMA, by the prototype's power-of-two grid width over the flat grid's.", ""]
            + table(rows, ["grid", "layers", "shipped / TMA", "configs", "min", "max"]))


if __name__ == "__main__":
    main()
