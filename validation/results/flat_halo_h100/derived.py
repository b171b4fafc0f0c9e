"""derived.md: the halo carry's rows (call 264, not kept) against the rows they would
have replaced (16-byte stores, ``../flat_stores_h100/``, in the sweep CSVs).

    python3 validation/results/flat_halo_h100/derived.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from convdispatch.validation.row_compare import compare

HERE = Path(__file__).parent
SWEEPS = HERE.parents[2] / "data" / "sweeps" / "h100"
# (title, the halo rows, the sweep CSVs of the rows they were measured against, family)
PARTS = (("forward, both plans", ("halo_rows_train.csv.gz", "halo_rows_holdout.csv.gz"),
          ("train.csv", "holdout.csv"), "grouped_flat"),
         ("dgrad twin", ("halo_rows_bwd_dgrad_flat.csv.gz",), ("bwd_dgrad.csv",),
          "dgrad_grouped_flat"))


def main() -> None:
    out = ["# grouped_flat's halo carry, not kept (derived by derived.py)", ""]
    for title, new, old, family in PARTS:
        halo = pd.concat([pd.read_csv(HERE / n, low_memory=False) for n in new])
        rows = pd.concat([pd.read_csv(SWEEPS / n, low_memory=False) for n in old])
        before = rows[rows.family == family]
        # The sweep as it would have been: the other families' rows and the halo rows.
        sweep = pd.concat([rows[rows.family != family], halo])
        failed = int((halo.ok != 1).sum())
        out += [f"## {title}: {len(halo)} rows, {failed} failed to compile", "", "```",
                compare(sweep, before, show="resnext50_32x4d/layer"), "```", ""]
    (HERE / "derived.md").write_text("\n".join(out))


if __name__ == "__main__":
    main()
