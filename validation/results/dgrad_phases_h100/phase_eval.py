"""dgrad by stride phases against the other dgrad families on the H100 gradient sweep.

    python validation/results/dgrad_phases_h100/phase_eval.py > \
        validation/results/dgrad_phases_h100/phase_eval.md

On every strided problem of ``data/sweeps/h100/bwd_dgrad.csv`` whose filter is not a
1x1 without padding (those run on the stride lattice since call 20), each problem's best
config of the ``dgrad_<forward family>`` twins (one stride-1 forward conv of dY a stride
phase of dX, ``kernels/dgrad_forward.py``) against the best of the other families
(``dgrad_gemm``, ``dgrad_packed``, ``dgrad_direct``, ``dgrad_stem``: the strided dgrad
kernels that walk every tap and skip the ones off the stride), and both against cuDNN's
dgrad in the same rows. Geometric means of latency ratios.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from convdispatch.validation.sweep_csv import read_sweep, sweep_provenance

SWEEPS = "data/sweeps/h100"
NATIVE = ("dgrad_gemm", "dgrad_packed", "dgrad_direct", "dgrad_stem")


def gm(s) -> float:
    return float(np.exp(np.log(np.asarray(s, dtype=float)).mean()))


def category(row) -> str:
    if int(row["g"]) == 1:
        return "dense"
    return "depthwise" if int(row["c"]) == int(row["g"]) else "grouped"


def _out(g, axis: str) -> int:
    """Output size of one axis of a sweep row's geometry (symmetric padding)."""
    size, tap = {"d": ("d", "t"), "h": ("h", "r"), "w": ("w", "s")}[axis]
    return ((int(g[size]) + 2 * int(g[f"pad_{axis}"]) - int(g[f"dil_{axis}"]) * (int(g[tap]) - 1)
             - 1) // int(g[f"stride_{axis}"]) + 1)


def main() -> None:
    df = read_sweep(f"{SWEEPS}/bwd_dgrad.csv")
    df = df[df["status"] == "ok"].copy()
    for col in ("latency_us", "cudnn_us"):
        df[col] = df[col].astype(float)
    strided = (df[["stride_d", "stride_h", "stride_w"]].astype(int) > 1).any(axis=1)
    lattice = (df[["t", "r", "s"]].astype(int) == 1).all(axis=1) & (
        df[["pad_d", "pad_h", "pad_w"]].astype(int) == 0).all(axis=1)
    df = df[strided & ~lattice]
    twin = ~df["family"].isin(NATIVE)
    best_twin = df[twin].groupby("problem_id")["latency_us"].min()
    best_native = df[~twin].groupby("problem_id")["latency_us"].min()
    fam_twin = df[twin].loc[df[twin].groupby("problem_id")["latency_us"].idxmin()].set_index(
        "problem_id")["family"]
    cudnn = df.groupby("problem_id")["cudnn_us"].median()
    first = df.groupby("problem_id").first()
    both = best_twin.index.intersection(best_native.index)
    r = best_native[both] / best_twin[both]
    allb = np.minimum(best_native[both], best_twin[both])
    print("# dgrad by stride phases (H100, float16)\n")
    print(f"Sweep: {sweep_provenance(SWEEPS, ['bwd_dgrad'])}. Strided problems whose filter "
          f"is not a 1x1 without padding: {len(both)} with rows of both kinds. Ratios: "
          "geometric means (> 1: phases faster).\n")
    print(f"- best phase config against the best strided kernel: {gm(r):.3f}x (faster on "
          f"{(r > 1).mean():.0%}, {r.min():.2f}-{r.max():.2f})")
    print(f"- best of all against cuDNN: {gm(cudnn[both] / best_native[both]):.3f} -> "
          f"{gm(cudnn[both] / allb):.3f}\n")
    rows = []
    keys = pd.DataFrame({"net": [p.split("/")[0] for p in both],
                         "cat": first.loc[both].apply(category, axis=1).to_numpy()},
                        index=both)
    for (net, cat), part in keys.groupby(["net", "cat"]):
        idx = list(part.index)
        rows.append(f"| {net} | {cat} | {len(idx)} | {gm(r[idx]):.3f} | "
                    f"{gm(cudnn[idx] / best_native[idx]):.3f} | {gm(cudnn[idx] / allb[idx]):.3f} |")
    print("| network | kind | problems | phases / strided kernel | best x cuDNN before | "
          "after |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows) + "\n")
    print("By dY pixels (N x output pixels), the rule chooser's `phases_pay` threshold: "
          "phases' best / strided kernels' best at and above it, and below it:\n")
    pixels = first.loc[both].apply(
        lambda g: int(g["n"]) * _out(g, "d") * _out(g, "h") * _out(g, "w"), axis=1)
    print("| kind | pixels | problems at or above | ratio | faster | below | ratio |")
    print("|---|---|---|---|---|---|---|")
    for cat in ("dense", "grouped", "depthwise"):
        for thr in (1024, 2048, 4096, 8192):
            sel = keys["cat"] == cat
            hi = r[sel & (pixels >= thr)]
            lo = r[sel & (pixels < thr)]
            print(f"| {cat} | {thr} | {len(hi)} | {gm(hi) if len(hi) else float('nan'):.3f} | "
                  f"{(hi > 1).mean() if len(hi) else float('nan'):.0%} | {len(lo)} | "
                  f"{gm(lo) if len(lo) else float('nan'):.3f} |")
    print()
    print("Largest problems (by cuDNN time):\n")
    print("| problem | strided kernel us | phases us | phase family | cuDNN us | after x cuDNN |")
    print("|---|---|---|---|---|---|")
    for p in cudnn[both].sort_values(ascending=False).index[:20]:
        print(f"| {p} | {best_native[p]:.1f} | {best_twin[p]:.1f} | {fam_twin[p]} | "
              f"{cudnn[p]:.1f} | {cudnn[p] / allb[p]:.2f} |")


if __name__ == "__main__":
    main()
