"""The rule chooser's config order per family, built from sweep CSVs (no model needed).

For each family, configs are ranked by their geometric-mean efficiency inside the
family (the family's best latency on a problem over the config's latency) across
the sweep's problems; a config measured on fewer than 30% of the family's
problems is left out. The rule chooser takes a family by its shape rules, then
the first config of this order that is feasible; configs not in the order come
after, by the analytic estimate. ``rule_order.json`` beside this file was built
from the H100 *train* plan (forward families: holdout comparisons stay honest) and
the gradient sweeps of the ResNet-50 / ResNeXt-50 / MobileNetV2 layers (gradient
families: the issue-2 backward suite is inside that data):

    python -m convdispatch.dispatcher.rule_order data/sweeps/h100/train.csv \
        data/sweeps/h100/bwd_dgrad.csv data/sweeps/h100/bwd_wgrad.csv

``--only F1,F2`` rebuilds just those families and keeps the others' orders (the file's
``rebuilt`` records which CSVs each rebuilt family came from). ``depthwise_rows`` was
added that way: rebuilding every family from the larger train plan of 2026-11-23
moved the stem's first config to one 2.5x slower on ResNet-50's stem at batch 32
(236 us against 95 us in train.csv), so the other orders stay those measured with the
committed issue-2 benchmark. ``implicit_gemm``, ``grouped_gemm``, ``splitk`` and
``grouped_packed`` were rebuilt the same way after their re-sweep (eighth session).
"""

from __future__ import annotations

import json
import math
import sys
from functools import cache
from pathlib import Path

ORDER_FILE = Path(__file__).with_name("rule_order.json")
TOP = 12  # configs kept per family
MIN_SHARE = 0.3


def build_order(csvs: list[str]) -> dict:
    """{"source": ..., "families": {family: [config text, ...]}} from sweep CSVs."""
    import pandas as pd

    from ..validation.sweep_csv import read_sweep

    df = pd.concat([read_sweep(c) for c in csvs])
    df = df[df["ok"] == 1]
    best = df.groupby(["problem_id", "family"])["latency_us"].transform("min")
    df = df.assign(log_eff=(best / df["latency_us"]).map(math.log))
    families = {}
    for fam, rows in df.groupby("family"):
        problems = rows["problem_id"].nunique()
        stats = rows.groupby("config")["log_eff"].agg(["mean", "size"])
        stats = stats[stats["size"] >= MIN_SHARE * problems]
        ranked = stats.sort_values(["mean"], ascending=False, kind="stable").index[:TOP]
        families[str(fam)] = [str(c) for c in ranked]
    return {"source": [str(Path(c).as_posix()) for c in csvs], "min_share": MIN_SHARE,
            "families": dict(sorted(families.items()))}


@cache
def config_order() -> dict[str, dict[str, int]]:
    """{family: {config text: rank}} from rule_order.json (empty if the file is missing)."""
    try:
        data = json.loads(ORDER_FILE.read_text())
        return {fam: {cfg: i for i, cfg in enumerate(cfgs)}
                for fam, cfgs in data["families"].items()}
    except FileNotFoundError:
        return {}
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise RuntimeError(f"{ORDER_FILE} is malformed: {e}") from None


def update_order(current: dict, new: dict, only: list[str]) -> dict:
    """``current`` with the orders of the ``only`` families taken from ``new``."""
    missing = [f for f in only if f not in new["families"]]
    if missing:
        raise ValueError(f"the sweeps hold no rows of famil{'ies' if len(missing) > 1 else 'y'} "
                         f"{missing}")
    out = dict(current, families=dict(current["families"]))
    out["families"].update({f: new["families"][f] for f in only})
    out["families"] = dict(sorted(out["families"].items()))
    out["rebuilt"] = {**current.get("rebuilt", {}), **{f: new["source"] for f in only}}
    return out


def main(argv: list[str]) -> int:
    only = None
    if argv[:1] == ["--only"] and len(argv) > 1:
        only, argv = [f for f in argv[1].split(",") if f], argv[2:]
    if not argv:
        print(__doc__)
        return 2
    order = build_order(argv)
    if only is not None:
        order = update_order(json.loads(ORDER_FILE.read_text()), order, only)
    ORDER_FILE.write_text(json.dumps(order, indent=1) + "\n")
    print(f"wrote {ORDER_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
