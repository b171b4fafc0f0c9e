"""Where wgrad_depthwise_span pays, by the size of dY (CPU, from the committed sweep).

    python validation/results/depthwise_wgrad_span_h100/span_threshold.py > span_threshold.md

Per depthwise problem of bwd_wgrad.csv: the family's best latency against the best of
every other wgrad family (``family_gain``), split at the rule chooser's
``SPAN_WGRAD_MIN_DY`` elements of dY.
"""

from __future__ import annotations

import numpy as np
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher.choosers import SPAN_WGRAD_MIN_DY
from convdispatch.validation.family_gain import gain_table

CSV = "data/sweeps/h100/bwd_wgrad.csv"


def main() -> int:
    t = gain_table([CSV], "wgrad_depthwise_span")
    t["dy"] = [problem_by_id(p).geom.gemm_m * problem_by_id(p).geom.k for p in t.problem_id]
    t["gain"] = t.others_us / t.family_us
    print(f"`wgrad_depthwise_span` against the other wgrad families' best ({CSV}), split at "
          f"{SPAN_WGRAD_MIN_DY} elements of dY. Command: `python "
          "validation/results/depthwise_wgrad_span_h100/span_threshold.py`.\n")
    print("| dY elements | problems | span faster | others / span: geomean | min | max |")
    print("|---|---|---|---|---|---|")
    for name, part in (("below", t[t.dy < SPAN_WGRAD_MIN_DY]),
                       ("from", t[t.dy >= SPAN_WGRAD_MIN_DY])):
        g = part.gain
        print(f"| {name} {SPAN_WGRAD_MIN_DY} | {len(part)} | {int((g > 1).sum())} | "
              f"{float(np.exp(np.log(g).mean())):.3f} | {g.min():.3f} | {g.max():.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
