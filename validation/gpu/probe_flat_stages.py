"""Where ``grouped_flat``'s time goes: its kernel timed whole and with a stage left out, on
the issue-6 suite's grouped layers.

    python3 validation/gpu/probe_flat_stages.py CONFIGS.csv OUT.csv [DTYPE]

CONFIGS.csv: rows of (problem_id, config) to probe (``probe_exact_phases``' output: each
layer's fastest config, and its fastest WGMMA one where that is another).

Variants of the kernel, each a copy of ``kernels/grouped_flat.py`` with Gluon functions
stubbed, loaded as its own module (so Triton compiles each apart):

- full: as shipped (its output checked against torch in float32);
- no_copies: ``_issue`` only commits an empty cp.async group: the taps read whatever the
  buffers hold, no input crosses memory;
- no_taps: the tap functions return the accumulator as given: the copies, the filter
  tiles and the epilogue (storing zeros) run, no mma;
- neither: both left out: the filter tiles, the loop and the epilogue.

Timed with ``bench_layers.bench_graph`` (CUDA-graph replay, L2 flushed before each, median).
Each variant's time beside the full one says what that stage costs where it is not hidden.
"""

from __future__ import annotations

import csv
import importlib.util
import sys
import tempfile
from pathlib import Path

import torch
from convdispatch.dispatcher.launch import run_candidate
from convdispatch.dispatcher.registry import parse_candidate
from convdispatch.kernels import grouped_flat
from convdispatch.validation.bench_layers import (
    bench_graph,
    layer_tensors,
    rel_err,
    suite_layers,
)
from convdispatch.validation.probe_io import stream_rows

REP_MS = 5
TAPS = ("_taps", "_taps_wgmma", "_taps_regs", "_taps_reuse")


def _stub(src: str, name: str, body: str) -> str:
    """``src`` with the body of Gluon function ``name`` replaced by ``body``."""
    start = src.index(f"    def {name}(")
    body_at = src.index("):\n", start) + 3
    end = src.index("    @gluon.jit", body_at)
    return src[:body_at] + body + "\n" + src[end:]


def variants() -> dict:
    """Kernel of each variant, by name."""
    src = Path(grouped_flat.__file__).read_text()
    no_copies = _stub(src, "_issue", "        cp.commit_group()\n")
    stubs = {}
    for base, name in ((src, "no_taps"), (no_copies, "neither")):
        for f in TAPS:
            ret = "accs" if f == "_taps_reuse" else "acc"
            base = _stub(base, f, f"        return {ret}\n")
        stubs[name] = base
    stubs["no_copies"] = no_copies
    out = {"full": grouped_flat.grouped_flat_kernel}
    tmp = Path(tempfile.mkdtemp())
    for name, text in stubs.items():
        mod_name = f"convdispatch.kernels.grouped_flat_{name}"
        path = tmp / f"grouped_flat_{name}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(mod_name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = mod
        spec.loader.exec_module(mod)
        out[name] = mod.grouped_flat_kernel
    return out


def main() -> None:
    configs_csv, out = sys.argv[1], sys.argv[2]
    dtype = sys.argv[3] if len(sys.argv) > 3 else "float16"
    with open(configs_csv) as f:
        wanted = [(r["problem_id"], r["config"]) for r in csv.DictReader(f)]
    kernels = variants()
    shipped = grouped_flat.grouped_flat_kernel
    problems = {p.id: (i, p) for i, p in enumerate(
        suite_layers("issue6", dtype, "grouped"))}

    def layer(pid: str, cid: str) -> list[dict]:
        i, p = problems[pid]
        g = p.geom
        x, w, b, ref = layer_tensors(g, i)
        cand = parse_candidate(cid)
        buf = torch.full_like(ref, float("nan"), dtype=x.dtype)
        row = dict(problem_id=pid, config=cid, min_bytes=g.min_bytes, flops=g.flops,
                   rel_err=None, errors="")
        row.update({f"{name}_us": None for name in kernels})
        for name, kernel in kernels.items():
            grouped_flat.grouped_flat_kernel = kernel
            try:
                run_candidate(cand, x, w, b, g, out=buf)
                torch.cuda.synchronize()
                if name == "full":
                    row["rel_err"] = rel_err(buf, ref)
                row[f"{name}_us"] = round(bench_graph(
                    lambda: run_candidate(cand, x, w, b, g, out=buf), REP_MS) * 1e3, 3)
            except Exception as e:  # noqa: BLE001 - recorded in the row
                row["errors"] += f"{name}: {type(e).__name__}: {str(e)[:200]}; "
            finally:
                grouped_flat.grouped_flat_kernel = shipped
        print({k: v for k, v in row.items() if k.endswith("_us") or k in ("problem_id",
                                                                         "config")},
              flush=True)
        return [row]

    stream_rows(out, (layer(pid, cid) for pid, cid in wanted if pid in problems))


if __name__ == "__main__":
    main()
