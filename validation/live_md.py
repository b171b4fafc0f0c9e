"""Markdown of the live validation report (live.md)."""

from __future__ import annotations

from .autotune_compare import markdown_lines as autotune_lines
from .report_md import fmt, model_lines, pct, table


def _header(result: dict) -> list[str]:
    h = result["header"]
    o = h["oracle"]
    env = (f"GPU {o.get('gpu')}, driver {o.get('driver') or '-'}, torch {o.get('torch')}, "
           f"triton {o.get('triton')}, CUDA {o.get('cuda') or '-'}"
           if not o.get("note") else o["note"])
    timing = h.get("timing")
    return ["# Live validation: the dispatcher vs a fresh oracle sweep", "",
            f"- {env} (from the fresh sweep's sidecar)", *model_lines(h["model"]),
            f"- dispatcher timer: {h['timer']}; run {h['date']}; command "
            f"`{' '.join(h['command'])}`",
            f"- timing: {timing if timing else 'see the sweep sidecar (harness)'}",
            f"- candidates per problem in the sweep: "
            f"{h['limit_candidates'] or 'all the registry offers'}", ""]


def _summary(s: dict) -> list[str]:
    rows = [["problems", s["problems"]],
            ["efficiency geomean (fresh oracle best / dispatcher)", fmt(s["efficiency_geomean"])],
            ["efficiency P10", fmt(s["efficiency_p10"])],
            ["dispatcher picked the fresh oracle's winner", pct(s["top1"])],
            ["x cuDNN geomean (cuDNN us / dispatcher us)", fmt(s["vs_cudnn_geomean"])],
            ["oracle best x cuDNN geomean", fmt(s["oracle_vs_cudnn_geomean"])],
            ["drift ratio geomean (dispatcher / sweep, same candidate)",
             fmt(s["drift_ratio_geomean"])],
            [f"drifted (> {s['drift_threshold']}x)", len(s["drifted"])],
            ["choice not timed ok in the sweep", len(s["unverified"])],
            ["fell back to torch", len(s["fallbacks"])],
            ["dispatcher call raised", len(s["errors"])],
            ["median first call s", fmt(s["first_call_s_median"], 3)]]
    return ["## Summary", "", *table(["measure", "value"], rows), ""]


def _problems(rows: list[dict]) -> list[str]:
    heads = ["problem", "dispatcher choice", "dispatcher us", "sweep us (same)", "drift",
             "oracle best us", "eff", "cuDNN us", "x cuDNN", "first call s", "rel err"]
    body = [[r["problem_id"], f"`{r['dispatcher_choice']}`", fmt(r["dispatcher_us"], 1),
             fmt(r["sweep_same_us"], 1) if r["sweep_status"] == "ok" else r["sweep_status"],
             f"**{fmt(r['drift_ratio'], 2)}**" if r["drift"] else fmt(r["drift_ratio"], 2),
             fmt(r["oracle_best_us"], 1), fmt(r["efficiency"]), fmt(r["cudnn_us"], 1),
             fmt(r["vs_cudnn"], 2), fmt(r["first_call_s"], 3),
             "-" if r["rel_err"] is None else f"{r['rel_err']:.1e}"] for r in rows]
    errors = [f"- {r['problem_id']}: {r['error']}" for r in rows if r.get("error")]
    return ["## Per problem", "", *table(heads, body), "",
            *(["Dispatcher calls that raised:", "", *errors, ""] if errors else [])]


def live_markdown(result: dict) -> str:
    lines = _header(result) + _summary(result["summary"]) + _problems(result["problems"])
    if result.get("autotune") or result.get("autotune_note"):
        lines += autotune_lines(result.get("autotune") or [], result.get("autotune_note"))
    if result.get("offline_report"):
        lines += [f"Offline report of the fresh sweep: {result['offline_report']}", ""]
    return "\n".join(lines) + "\n"
