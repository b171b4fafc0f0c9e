"""Markdown of the validation reports (offline and live): plain tables, numbers as measured."""

from __future__ import annotations

import math
from collections.abc import Sequence

CHOOSER_NAMES = {"model": "model", "rule": "rule chooser", "single_best": "single best config",
                 "oracle": "oracle (best measured)"}

SINGLE_BEST_TEXT = {
    "lopo": "leave-one-problem-out: each problem's order is computed from the other problems "
            "of these CSVs, never from its own rows",
    "train": "from the model's training sweeps only (meta.json data.files, holdout sets "
             "removed)",
}


def fmt(value, digits: int = 3) -> str:
    """A number for a table; '-' for missing, NaN or inf."""
    if value is None or isinstance(value, str):
        return "-" if value is None else value
    v = float(value)
    if not math.isfinite(v):
        return "-"
    return f"{v:.{digits}f}"


def pct(value) -> str:
    return "-" if value is None or not math.isfinite(float(value)) else f"{100 * value:.1f}%"


def table(headers: Sequence[str], rows: Sequence[Sequence]) -> list[str]:
    """Markdown table lines; cells are str()-ed and '|' escaped."""
    def cell(v) -> str:
        return str(v).replace("|", "\\|")

    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return out


def _sidecar_lines(sidecars: list[dict]) -> list[str]:
    out = []
    for s in sidecars:
        if s.get("note"):
            out.append(f"- `{s['csv']}`: {s['note']}")
            continue
        out.append(f"- `{s['csv']}`: GPU {s.get('gpu')}, driver {s.get('driver') or '-'}, "
                   f"torch {s.get('torch')}, triton {s.get('triton')}, CUDA "
                   f"{s.get('cuda') or '-'}, python {s.get('python')}; last run ended "
                   f"{s.get('last_run_end') or '-'}")
    return out


def model_lines(m: dict) -> list[str]:
    g = m.get("guard")
    hashed = ("hash of model.txt, guard.txt and the guard's settings" if g
              else "sha256 of model.txt")
    lines = [f"- model `{m['path']}`: identity **{m['identity']}** ({hashed}), "
             f"method {m['method']} ({m['score_unit']}), trained on {m['trained_on']}, "
             f"created {m.get('created') or '-'}",
             f"- model training sets: {', '.join(m['train_sets']) or '-'}; holdout sets: "
             f"{', '.join(m['holdout_sets']) or '-'}; training data sha256 "
             f"{(m.get('data_sha256') or '-')[:12]}"]
    if g:
        lines.append(f"- guard ({g['method']}, guard.txt): among the ranker's top {g['top_k']}, "
                     f"a candidate predicted over exp({g['max_log_slowdown']}) = "
                     f"{math.exp(g['max_log_slowdown']):.2f}x slower than the best of them "
                     "goes last (heuristics/guard.py)")
    return lines


def header_lines(h: dict) -> list[str]:
    lines = ["# Model vs oracle: offline validation", "",
             f"- GPU (CSV gpu column): {', '.join(h['gpus'])}",
             *_sidecar_lines(h["sidecars"]), *model_lines(h["model"]),
             f"- oracle data: {h['problems']} problems, {h['rows']} rows ({h['ok_rows']} ok), "
             f"sha256 {h['data_sha256'][:12]}"]
    if h["problems_without_ok_rows"]:
        lines.append(f"- left out (no ok row): {len(h['problems_without_ok_rows'])} problems")
    if h.get("problems_incomplete"):
        lines.append(f"- left out (rows of a swept family missing, so no oracle): "
                     f"{len(h['problems_incomplete'])} problems")
    return lines


METHOD_LINES = [
    "How to read this:",
    "",
    "- Every chooser ranks all the rows the oracle CSV holds for a problem; its choice is the "
    "best-ranked row with status ok, so choices are made among the candidates the sweep could "
    "run (as the oracle's). *picked failed* counts problems whose first-ranked candidate "
    "failed in the sweep.",
    "- efficiency = oracle best latency / chosen latency (1 = the fastest measured); geomean "
    "and P10 (10th percentile) over problems.",
    "- top-k = the oracle winner is among the chooser's k best-ranked ok candidates; top-k eff "
    "= efficiency of the best of those k (what timing the top k at run time would get).",
    "- x cuDNN = cudnn_us / chosen latency (> 1: faster than cuDNN), geomean over problems "
    "with a cuDNN time.",
]


def overall_lines(overall: dict) -> list[str]:
    heads = ["chooser", "problems", "eff geomean", "eff P10", "eff min", "top-1", "top-3",
             "top-5", "top-3 eff", "top-5 eff", "picked failed", "x cuDNN geomean",
             "faster than cuDNN"]
    rows = []
    for name, s in overall.items():
        rows.append([CHOOSER_NAMES.get(name, name), s.get("problems", 0),
                     fmt(s.get("efficiency_geomean")), fmt(s.get("efficiency_p10")),
                     fmt(s.get("efficiency_min")), pct(s.get("top1")), pct(s.get("top3")),
                     pct(s.get("top5")), fmt(s.get("top3_efficiency_geomean")),
                     fmt(s.get("top5_efficiency_geomean")), pct(s.get("picked_failed_rate")),
                     fmt(s.get("vs_cudnn_geomean")), pct(s.get("faster_than_cudnn_rate"))])
    return table(heads, rows)


def group_lines(title: str, groups: list[dict]) -> list[str]:
    heads = ["group", "problems", "model eff", "model P10", "model top-1", "rule eff",
             "single-best eff", "model x cuDNN", "oracle x cuDNN"]
    rows = []
    for g in groups:
        m, r, s, o = (g.get(k, {}) for k in ("model", "rule", "single_best", "oracle"))
        rows.append([g["group"], g["problems"], fmt(m.get("efficiency_geomean")),
                     fmt(m.get("efficiency_p10")), pct(m.get("top1")),
                     fmt(r.get("efficiency_geomean")), fmt(s.get("efficiency_geomean")),
                     fmt(m.get("vs_cudnn_geomean")), fmt(o.get("vs_cudnn_geomean"))])
    return [f"### By {title}", "", *table(heads, rows), ""]


def worst_lines(worst: list[dict]) -> list[str]:
    heads = ["problem", "geometry", "model choice", "model us", "oracle winner", "winner us",
             "eff", "rule eff", "single-best eff", "cuDNN us"]
    rows = [[w["problem_id"], w["geometry"], f"`{w['model_choice']}`", fmt(w["model_us"], 1),
             f"`{w['winner']}`", fmt(w["winner_us"], 1), fmt(w["efficiency"]),
             fmt(w["rule_efficiency"]), fmt(w["single_best_efficiency"]),
             fmt(w["cudnn_us"], 1)] for w in worst]
    return table(heads, rows)


SCATTER_TEXT = {
    "latency": "The model predicts latency: predicted vs measured latency, log-log, every ok "
               "row.",
    "slowdown": "The model predicts the slowdown vs the problem's best (relative regression): "
                "predicted vs measured slowdown, log-log, every ok row.",
    "rank": "The model is a ranker (its score is not a latency): score vs the measured rank "
            "of the candidate in its problem (1 = fastest), every ok row.",
}


def offline_markdown(metrics: dict) -> str:
    """The whole offline report."""
    h = metrics["header"]
    ms = metrics["model_scores"]
    plots = metrics.get("plots", {})
    rho = ms.get("spearman_mean")
    lines = [*header_lines(h), f"- single best config: {SINGLE_BEST_TEXT[h['single_best_mode']]}",
             "", *METHOD_LINES, "", "## Overall", "", *overall_lines(metrics["overall"]), ""]
    if plots:
        lines += [f"![efficiency histogram]({plots['efficiency_histogram']})",
                  f"![efficiency CDF]({plots['efficiency_cdf']})", ""]
    lines += ["## Model scores vs measurements", "", SCATTER_TEXT[ms["kind"]],
              f"Mean per-problem Spearman correlation of score and measurement: "
              f"{fmt(rho)} over {ms['problems']} problems with >= 3 ok candidates.", ""]
    if plots:
        lines += [f"![model scores]({plots['model_scatter']})", ""]
    lines += ["## Breakdowns", "", "*split*: `train` sets were in the model's training data "
              "(in-sample), `holdout` sets were not.", ""]
    from .report import GROUPS

    for col, title in GROUPS:
        lines += group_lines(title, metrics["groups"][col])
    lines += [f"## The {len(metrics['worst'])} worst problems (model efficiency)", "",
              *worst_lines(metrics["worst"]), ""]
    return "\n".join(lines) + "\n"
