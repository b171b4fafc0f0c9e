"""dgrad_depthwise_span at a stride: one launch of ``strided_span_dgrad_kernel`` for every
stride phase of dX (interpreter), and its loads-first order (sm_90 compile)."""

from __future__ import annotations

import pytest
import torch
from convdispatch.dispatcher import registry
from convdispatch.dispatcher.launch import run_grad_candidate
from convdispatch.kernels import dgrad_depthwise_span as mod
from convdispatch.kernels import launcher
from convdispatch.kernels.base import Candidate
from convdispatch.kernels.device import INTERPRETER
from convdispatch.kernels.geometry import ConvGeometry
from helpers import rel_err, sm90_compile
from test_grad import grad_ref, grad_tensors

FAMILY = "dgrad_depthwise_span"


def dw(c=8, h=9, w=7, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1), **kw) -> ConvGeometry:
    kw.setdefault("dtype", "float32")
    return ConvGeometry(n=2, c=c, k=c, g=c, h=h, w=w, r=r, s=s, stride=stride, pad=pad,
                        layout="channels_last", **kw)


def launches(geom, cfg, monkeypatch) -> tuple[torch.Tensor, list[str]]:
    """dX of ``cfg`` and the kernels its launch ran."""
    names = []
    real = launcher.launch_kernel

    def counting(kernel, *args, **kwargs):
        names.append(kernel.fn.__name__ if hasattr(kernel, "fn") else kernel.__name__)
        return real(kernel, *args, **kwargs)

    monkeypatch.setattr(mod, "launch_kernel", counting)
    monkeypatch.setattr("convdispatch.kernels.depthwise_span.launch_kernel", counting)
    x, w, dy = grad_tensors(geom, seed=3)
    out = torch.full_like(x, float("nan"))
    run_grad_candidate(Candidate(FAMILY, cfg), "dgrad", dy, x, w, geom, out=out)
    assert rel_err(out, grad_ref(geom, "dgrad", x, w, dy)) < 1e-5, cfg
    return out, names


def test_every_config_at_stride_two_is_one_launch(monkeypatch):
    """Each config the family offers a small stride-2 layer (odd map) computes dX in one
    launch; nan-filled dX shows that every pixel, of every phase, is written."""
    geom = dw()
    fam = registry.family(FAMILY)
    cfgs = [c for c in fam.configs if fam.runnable(geom, c, INTERPRETER) is None]
    assert len(cfgs) == len(fam.configs)  # rows 2..16 are all multiples of 2
    for cfg in cfgs:
        _, names = launches(geom, cfg, monkeypatch)
        assert names == ["strided_span_dgrad_kernel"], (cfg, names)


@pytest.mark.parametrize("geom", [
    dw(c=16, h=11, w=13, r=5, s=5, stride=(1, 2, 3), pad=(0, 2, 2), dilation=(1, 1, 2)),
    dw(h=9, w=9, r=2, s=2, stride=(1, 4, 3), pad=(0, 0, 0)),  # rows no tap reaches: zero
    dw(h=10, w=10, pad_hi=(0, 0, 0)),  # SD-VAE's asymmetric downsampling pad
    dw(c=24, h=8, w=8, r=1, s=1, stride=(1, 1, 2), pad=(0, 0, 0)),  # stride along W only
    dw(c=24, dtype="float16"),
], ids=["5x5_s2x3_dilated", "2x2_s4x3", "pad_hi", "1x1_sw2", "fp16"])
def test_strided_geometries_match_torch(geom, monkeypatch):
    fam = registry.family(FAMILY)
    cands = [c for c in registry.candidates(geom, INTERPRETER, "dgrad") if c.family == FAMILY]
    assert cands and mod.strided(geom)
    x, w, dy = grad_tensors(geom, seed=4)
    ref = grad_ref(geom, "dgrad", x, w, dy)
    for cand in (cands[0], cands[-1]):
        out = torch.full_like(x, float("nan"))
        run_grad_candidate(cand, "dgrad", dy, x, w, geom, out=out)
        assert rel_err(out, ref) < (5e-3 if geom.dtype == "float16" else 1e-5), cand.id
    assert fam.grid(geom, cands[0].config).m == geom.n * geom.h * geom.w


def test_stride_three_keeps_the_phase_launches(monkeypatch):
    """No BLOCK_M (2 to 16 rows) is a multiple of 3: such layers run depthwise_span a
    stride phase, as before."""
    geom = dw(h=9, w=9, stride=(1, 3, 3), pad=(0, 0, 0))
    assert not mod.strided(geom)
    cand = next(c for c in registry.candidates(geom, INTERPRETER, "dgrad")
                if c.family == FAMILY)
    _, names = launches(geom, cand.config, monkeypatch)
    assert names.count("depthwise_span_kernel") >= 4, names


def test_rows_a_band_reads_and_what_is_refused():
    """A band of 4 dX rows at stride 2, pad 1, reads dY rows 0..2 of its own (the first
    one's rows i = 0..3 are reached by (i + 1 - r) / 2 for even i + 1 - r); rows that are
    not a multiple of the stride, and windows past the register budget, are refused."""
    assert mod.dy_rows(dw(), 4) == (0, 3)
    assert mod.dy_rows(dw(), 16) == (0, 9)
    assert mod.dy_rows(dw(r=5, s=5, pad=(0, 2, 2)), 2) == (-1, 3)
    assert mod.dy_rows(dw(r=1, s=1, stride=(1, 4, 4), pad=(0, 0, 0)), 4) == (0, 1)
    fam = registry.family(FAMILY)
    geom = dw(c=96, h=112, w=112, stride=(1, 4, 4), dtype="float16")
    two = next(c for c in fam.configs if c["BLOCK_M"] == 2)
    assert "not a multiple of the stride 4" in fam.hard_ok(geom, two, INTERPRETER)
    tall = next(c for c in fam.configs if c["BLOCK_M"] == 16)  # 9 dY rows x 3 columns
    assert fam.config_ok(dw(c=96, h=112, w=112, dtype="float16"), tall, INTERPRETER) is None
    assert "registers" in fam.config_ok(dw(c=96, h=112, w=112), tall, INTERPRETER)  # fp32


def test_strided_kernel_loads_before_it_stores():
    """sm_90 compile: every dY load is issued before the first dX store, as the window
    rule promises (a store keeps later loads from being hoisted above it)."""
    got = sm90_compile("convdispatch.kernels.dgrad_depthwise_span", "strided_span_dgrad_kernel",
                       dict(syc=1, sxc=1, C=144, KR=3, KS=3, SH=2, SW=2, PH=1, PW=1, DH=1,
                            DW=1, REL_LO=0, REL_ROWS=5, ROWS=8, BLOCK=512, INT64=False), {},
                       num_warps=4, num_stages=1,
                       divisible=("syn", "syh", "syw", "sxn", "sxh", "sxw"))
    order = got["global_memory_order"]
    first_store = order.index("st.global")
    assert order.count("st.global") >= 8, order
    assert order[:first_store].count("ld.global") >= 5 * 3, order
    assert "ld.global" not in order[first_store:], order
