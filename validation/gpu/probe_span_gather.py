"""Is ``wgrad_depthwise_span``'s one-warp error Triton's gather? (GPU; also runs interpreted)

    python3 validation/gpu/probe_span_gather.py OUT.csv

Call 147's sweep found every one-warp config of the family wrong on the one 143-channel
problem (relative error 0.29) and right elsewhere; the family left one warp out, naming
the fold's ``tl.gather`` (lowered inside a warp with shuffles when the source fits one
warp) as the likely cause. This runs the fold alone: a [BLOCK] float32 source, the
family's ``fold_index``, one ``tl.gather`` and the sum over folds, for channel counts,
spans and warp counts, against the same fold computed by torch on the host. A wrong
one-warp row with right multi-warp rows on the same inputs puts the error in the gather's
lowering, not in the family's indexing.
"""

from __future__ import annotations

import sys

import torch
import triton
import triton.language as tl
from convdispatch.kernels.wgrad_depthwise_span import fold_index, folds
from convdispatch.validation.probe_io import write_rows


@triton.jit
def fold_kernel(src_ptr, out_ptr, span, KTOT: tl.constexpr, BLOCK: tl.constexpr,
                KB: tl.constexpr, FOLDS: tl.constexpr):
    src = tl.load(src_ptr + tl.arange(0, BLOCK))
    idx, ok = fold_index((span * BLOCK) % KTOT, KTOT, BLOCK, KB, FOLDS)
    got = tl.where(ok, tl.gather(src, idx, 0), 0.0)
    part = tl.sum(tl.reshape(got, (FOLDS, KB)), axis=0)
    c = tl.arange(0, KB)
    tl.store(out_ptr + c, part, mask=c < KTOT)


def reference(src: torch.Tensor, span: int, k: int) -> torch.Tensor:
    """Channel c's sum over the span's elements j with (span * BLOCK + j) % K == c."""
    block = src.numel()
    ch = (span * block + torch.arange(block, device=src.device)) % k
    return torch.zeros(k, dtype=torch.float64, device=src.device).index_add_(
        0, ch, src.double())


class _Geom:  # what ``folds`` reads
    def __init__(self, k: int):
        self.k = k


def main(out_path: str) -> int:
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    gen = torch.Generator(device=dev).manual_seed(0)
    rows = []
    for k in (143, 144, 96, 100, 192, 960):
        for block in (128, 256, 512, 1024):
            if block < k:
                continue
            n_folds, kb = folds(_Geom(k), block)
            for warps in (1, 2, 4):
                for span in (0, 1, 3):
                    src = torch.randn(block, generator=gen, device=dev)
                    out = torch.full((k,), float("nan"), device=dev)  # poisoned
                    fold_kernel[(1,)](src, out, span, KTOT=k, BLOCK=block, KB=kb,
                                      FOLDS=n_folds, num_warps=warps)
                    ref = reference(src, span, k)
                    err = float((out.double() - ref).norm() / ref.norm())
                    rows.append({"k": k, "block": block, "folds": n_folds, "kb": kb,
                                 "num_warps": warps, "span": span,
                                 "rel_err": f"{err:.3g}", "ok": int(err < 1e-5)})
    write_rows(out_path, rows)
    bad = [r for r in rows if not r["ok"]]
    print(f"{len(rows)} folds, {len(bad)} wrong", flush=True)
    for r in bad:
        print(r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
