"""What launching the split reduction pass as a programmatic dependent brings.

    python3 validation/gpu/probe_dependent_launch.py FWD_BENCH.csv BWD_BENCH.csv OUT.csv

For every split config a committed benchmark chose (forward ``splitk`` and
``grouped_packed``; gradients with SPLIT_K > 1), CUDA-graph times of the whole launch:
``plain`` (``dependent.DEPENDENT_LAUNCH`` off), ``dependent`` (the reduction pass waits
in ``griddepcontrol.wait``; the kernel before it lets it be scheduled as its programs
end) and, for ``wgrad_grouped_flat``, ``released`` (that kernel lets it be scheduled from
its start, ``RELEASE_EARLY``). Each variant's output must equal the plain one's bit for
bit. Timed in the order plain, dependent, released, released, dependent, plain; each
variant's lower median counts (as ``paired_graph_times``).
"""

from __future__ import annotations

import csv
import sys
from contextlib import contextmanager

import torch
from convdispatch.kernels import dependent, wgrad_grouped_flat
from convdispatch.kernels.base import Candidate
from convdispatch.validation.bench_layers import bench_graph
from probe_split_reduce import runner  # this folder: the scripts run from it

REP_MS = 5
VARIANTS = {"plain": (False, False), "dependent": (True, False), "released": (True, True)}


@contextmanager
def variant(name: str):
    """``dependent.DEPENDENT_LAUNCH`` and ``wgrad_grouped_flat.RELEASE_EARLY`` as ``name``
    sets them."""
    was = dependent.DEPENDENT_LAUNCH, wgrad_grouped_flat.RELEASE_EARLY
    dependent.DEPENDENT_LAUNCH, wgrad_grouped_flat.RELEASE_EARLY = VARIANTS[name]
    try:
        yield
    finally:
        dependent.DEPENDENT_LAUNCH, wgrad_grouped_flat.RELEASE_EARLY = was


def split_rows(path: str, direction: str | None) -> list[dict]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for r in rows:
        for part in r["chosen"].split(" & "):
            cand = Candidate.parse(part)
            if cand.config.get("SPLIT_K", 1) <= 1:
                continue
            d = direction or "forward"
            if direction is not None and not cand.family.startswith(("dgrad", "wgrad")):
                continue
            if cand.family.startswith("dgrad"):
                d = "dgrad"
            elif cand.family.startswith("wgrad"):
                d = "wgrad"
            out.append(dict(problem_id=r["problem_id"], direction=d, chosen=part,
                            cudnn_us=r["cudnn_us"]))
    return out


def measure(row: dict, seed: int) -> dict:
    run, out = runner(row, seed)
    names = ["plain", "dependent"]
    if Candidate.parse(row["chosen"]).family == "wgrad_grouped_flat":
        names.append("released")
    same = {}
    for name in names:
        with variant(name):
            out.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            got = out.clone()
        if name == "plain":
            want = got
        same[name] = bool(torch.equal(got, want))
    times: dict[str, list[float]] = {n: [] for n in names}
    for name in names + names[::-1]:
        with variant(name):
            times[name].append(bench_graph(run, REP_MS))
    rec = dict(problem_id=row["problem_id"], direction=row["direction"],
               chosen=row["chosen"], cudnn_us=row["cudnn_us"])
    for name in VARIANTS:
        rec[f"{name}_us"] = min(times[name]) * 1e3 if name in times else ""
        rec[f"{name}_equal"] = same.get(name, "")
    return rec


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    rows = split_rows(argv[0], None) + split_rows(argv[1], "grad")
    fields = ["problem_id", "direction", "chosen", "cudnn_us"] + [
        f"{n}_{k}" for n in VARIANTS for k in ("us", "equal")]
    with open(argv[2], "w", newline="") as f:
        out = csv.DictWriter(f, fields)
        out.writeheader()
        for i, row in enumerate(rows):
            rec = measure(row, seed=i)
            out.writerow(rec)
            f.flush()
            extra = (f", released {rec['released_us']:.1f}"
                     if rec["released_us"] != "" else "")
            print(f"[{i + 1}/{len(rows)}] {row['problem_id']} {row['direction']}: plain "
                  f"{rec['plain_us']:.1f} us, dependent {rec['dependent_us']:.1f}{extra}; "
                  f"equal {rec['dependent_equal']} {rec['released_equal']}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
