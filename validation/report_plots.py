"""PNG plots of the offline validation report (matplotlib's Agg canvas, no pyplot state)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

COLORS = {"model": "tab:blue", "rule": "tab:orange", "single_best": "tab:green"}
LABELS = {"model": "model", "rule": "rule chooser", "single_best": "single best config"}


def _figure(width: float = 7.0, height: float = 4.5):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path.name


def efficiency_histogram(tables: dict[str, pd.DataFrame], path: Path) -> str:
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    bins = np.linspace(0.0, 1.0, 41)
    for name, per in tables.items():
        eff = np.clip(per["efficiency"].to_numpy(), 0.0, 1.0)
        ax.hist(eff, bins=bins, histtype="step", linewidth=1.8, color=COLORS.get(name),
                label=f"{LABELS.get(name, name)} (n={len(eff)})")
    ax.set_xlabel("efficiency = oracle best latency / chosen latency")
    ax.set_ylabel("problems")
    ax.set_title("Efficiency per problem")
    ax.legend(loc="upper left")
    return _save(fig, path)


def efficiency_cdf(tables: dict[str, pd.DataFrame], path: Path) -> str:
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    for name, per in tables.items():
        eff = np.sort(per["efficiency"].to_numpy())
        frac = np.arange(1, len(eff) + 1) / max(len(eff), 1)
        ax.step(eff, frac, where="post", color=COLORS.get(name), label=LABELS.get(name, name))
    ax.set_xlim(0.0, 1.02)
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("efficiency")
    ax.set_ylabel("fraction of problems with efficiency <= x")
    ax.set_title("Efficiency CDF (lower-right is better)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    return _save(fig, path)


SCATTER_AXES = {
    "latency": ("measured latency (us)", "predicted latency (us)", True),
    "slowdown": ("measured slowdown vs the problem's best (x)", "predicted slowdown (x)", True),
    "rank": ("measured rank in the problem (1 = fastest)", "model score (lower = preferred)",
             False),
}


def model_scatter(points: pd.DataFrame, kind: str, path: Path) -> str:
    """Predicted vs measured for regressors; score vs measured rank for a ranker."""
    xlabel, ylabel, loglog = SCATTER_AXES[kind]
    fig = _figure(6.0, 5.5)
    ax = fig.add_subplot(1, 1, 1)
    x, y = points["measured"].to_numpy(), points["predicted"].to_numpy()
    ax.scatter(x, y, s=6, alpha=0.35, color=COLORS["model"], linewidths=0)
    if loglog and len(x):
        ax.set_xscale("log")
        ax.set_yscale("log")
        lo = float(np.nanmin(np.r_[x, y][np.r_[x, y] > 0]))
        hi = float(np.nanmax(np.r_[x, y]))
        ax.plot([lo, hi], [lo, hi], color="black", linewidth=1, label="y = x")
        ax.legend(loc="upper left")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(f"Model scores vs measurements ({len(x)} ok rows)")
    ax.grid(alpha=0.3)
    return _save(fig, path)


def write_plots(out: Path, frames: dict, kind: str) -> dict[str, str]:
    """Write the three PNGs into ``out``; returns {plot: file name}."""
    tables = frames["tables"]
    return {"efficiency_histogram": efficiency_histogram(tables, out / "efficiency_hist.png"),
            "efficiency_cdf": efficiency_cdf(tables, out / "efficiency_cdf.png"),
            "model_scatter": model_scatter(frames["points"], kind, out / "model_scatter.png")}
