"""Merging the CSVs of sweep shards into one data set with one sidecar."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from . import sweep_meta
from .sweep_csv import FIELDNAMES, read_sweep
from .sweep_schema import KEY_COLUMNS


def merge(inputs: Sequence[str | os.PathLike], out: str | os.PathLike, *,
          command: Sequence[str] | None = None) -> dict:
    """Concatenate shard CSVs into ``out`` (+ ``out.meta.json``); returns the merged sidecar.

    Refuses duplicate (problem_id, family, config) keys and shards whose GPU,
    torch, triton or harness settings differ; never overwrites ``out``.
    """
    paths = [Path(p) for p in inputs]
    out = Path(out)
    if not paths:
        raise ValueError("merge needs at least one input CSV")
    if out.suffix != ".csv":
        raise ValueError(f"the merged output must be a .csv file, got {out}")
    resolved = [p.resolve() for p in paths]
    twice = sorted({str(p) for p in paths if resolved.count(p.resolve()) > 1})
    if twice:
        raise ValueError(f"input(s) given more than once: {twice}")
    if out.resolve() in resolved:
        raise ValueError(f"the output {out} is also an input")
    if out.exists():
        raise ValueError(f"{out} already exists; remove it or choose another --out")

    metas = [sweep_meta.read_sidecar(sweep_meta.sidecar_path(p)) for p in paths]
    for p, m in zip(paths[1:], metas[1:]):
        diffs = sweep_meta.mismatches(metas[0], m)
        if diffs:
            raise ValueError(f"cannot merge {p} with {paths[0]}: " + "; ".join(diffs))

    frames = [read_sweep(p).assign(_source=str(p)) for p in paths]
    df = pd.concat(frames, ignore_index=True)
    dup = df.duplicated(list(KEY_COLUMNS), keep=False)
    if dup.any():
        groups = df[dup].groupby(list(KEY_COLUMNS))["_source"].apply(list)
        shown = [f"{key} in {files}" for key, files in list(groups.items())[:5]]
        raise ValueError(f"{len(groups)} key(s) occur in more than one shard, e.g. "
                         + "; ".join(shown))
    cols = FIELDNAMES + [c for c in df.columns if c not in FIELDNAMES and c != "_source"]

    shards = [m.get("shard") for m in metas]
    ns = {s[1] for s in shards if s}
    complete = len(ns) == 1 and sorted(s[0] for s in shards if s) == list(range(ns.pop()))
    merged = {
        "format": sweep_meta.FORMAT, "csv": out.name,
        "gpu": metas[0].get("gpu"), "software": metas[0].get("software"),
        "harness": metas[0].get("harness"),
        # A complete set of shards is the whole problem list: resumable as shard 0/1.
        "shard": [0, 1] if complete else None,
        "runs": [], "summary": None,
        "merged": {"at": sweep_meta.now_iso(), "host": sweep_meta.host(),
                   "command": list(command if command is not None else sys.argv),
                   "complete": complete, "rows": len(df)},
        "shards": [{"csv": str(p), "rows": len(f), "shard": m.get("shard"),
                    "runs": m.get("runs"), "summary": m.get("summary")}
                   for p, f, m in zip(paths, frames, metas)],
    }

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    df[cols].to_csv(tmp, index=False, na_rep="", float_format="%.7g", lineterminator="\n")
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, out)
    sweep_meta.write_sidecar(sweep_meta.sidecar_path(out), merged)
    return merged
