"""``grouped_packed`` with a bulk L2 prefetch of every input row its tile reads
(``prefetch_rows``, ``PREFETCH_ROWS`` rows a prefetch) against without, on the issue-6
layers where the model chose ``grouped_packed`` (a suite run's ``bench.csv``).

    python3 validation/gpu/probe_prefetch.py BENCH.csv OUT.csv [ROWS]

(Call 280 ran it so, with ``l2_prefetch.patch`` applied. Kept here; its paired timing now
lies in ``switch_probe.switch_pairs``, the same steps.)

The profile of ResNeXt-50 layer3.0 (validation/results/tap_steps_h100/, call 261) found our
kernel as fast as cuDNN's with the L2 warm and 15% slower with it flushed: the question is
whether asking for a tile's input rows at once, before the first tap's loads, closes that.
CUDA-graph replays, L2 flushed; both outputs checked against torch in float32.
"""

from __future__ import annotations

import sys

import pandas as pd
from convdispatch.data.problems import problem_by_id
from convdispatch.kernels import grouped_packed
from convdispatch.kernels.base import Candidate, Config
from convdispatch.validation.probe_io import stream_rows
from convdispatch.validation.switch_probe import switch_pairs

REP_MS = 5


def layer_rows(pid: str, chosen: str, i: int, rows: int) -> list[dict]:
    family, cfg = chosen.split(":", 1)
    return switch_pairs(problem_by_id(pid), i, [(Candidate(family, Config.parse(cfg)),
                                                 {"rows": rows})],
                        lambda on: setattr(grouped_packed, "PREFETCH_ROWS", rows if on else 0),
                        ("plain", "prefetch"), REP_MS)


def main() -> None:
    bench, out = sys.argv[1], sys.argv[2]
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    d = pd.read_csv(bench)
    d = d[(d.category == "grouped") & d.chosen.str.startswith("grouped_packed:")]
    stream_rows(out, (layer_rows(r.problem_id, r.chosen, i, rows)
                      for i, (_, r) in enumerate(d.iterrows())))


if __name__ == "__main__":
    main()
