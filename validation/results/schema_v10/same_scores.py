"""The forward model retrained on feature schema v10 against the v9 model it replaced.

    python validation/results/schema_v10/same_scores.py

Schema v10 added gradient families only (their one-hot columns are zero on forward
rows). The v9 model (identity 70cac440a6b9, read from git at commit 66444bc) scores the
v10 features without the new columns; the shipped v10 model scores them all. Compared
on every problem of the issue-2 (fp16) and issue-6 (fp16, bf16) suites over the H100's
candidates: how many problems pick the same candidate, and the largest score gap. Where
they agree everywhere, the forward results measured with 70cac440a6b9 stand for the
shipped model. CPU only (no GPU involved).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from convdispatch.dispatcher import registry
from convdispatch.heuristics import features as F
from convdispatch.heuristics.tree_model import load_ensemble
from convdispatch.kernels.device import KNOWN
from convdispatch.validation.bench_layers import suite_problems

OLD_COMMIT = "66444bc"


def git_show(path: str) -> str:
    return subprocess.run(["git", "show", f"{OLD_COMMIT}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "model.txt").write_text(git_show("models/h100/model.txt"))
        old = load_ensemble(Path(tmp, "model.txt"))
    old_names = json.loads(git_show("models/h100/schema.json"))["feature_names"]
    cols = [F.FEATURE_NAMES.index(n) for n in old_names]
    new = load_ensemble("models/h100/model.txt")
    dev = KNOWN["h100"]
    same = total = 0
    gap = 0.0
    for suite, dtype in (("issue2", "float16"), ("issue6", "float16"), ("issue6", "bfloat16")):
        for p in suite_problems(suite, dtype):
            X = F.feature_matrix(p.geom, registry.candidates(p.geom, dev), dev)
            a, b = old.predict(X[:, cols]), new.predict(X)
            gap = max(gap, float(np.abs(a - b).max()))
            same += int(np.argmax(a) == np.argmax(b))
            total += 1
    print(f"v9 model ({OLD_COMMIT}) vs shipped v10 model: same pick on {same} of {total} suite "
          f"problems; largest score difference {gap:g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
