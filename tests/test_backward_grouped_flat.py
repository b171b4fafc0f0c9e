"""Both gradients in one kernel (``backward_grouped_flat``) and the dispatcher's use of it,
on the CPU: the interpreter cannot run Gluon, so these tests compile the kernel for sm_90,
replay its index arithmetic in torch (float64) against torch's gradients, check its rules,
its config rule and launch arguments, and that a backward pass takes it where the two
directions' choices are the flat-grid kernels. tests/test_gpu_fused_backward.py runs it."""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path

import pytest
import torch
from convdispatch.dispatcher import autograd, fused_pair
from convdispatch.dispatcher.decision import Decision
from convdispatch.kernels import backward_grouped_flat as fused
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.device import KNOWN
from convdispatch.kernels.flat_grid import flat_consts
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.kernels.grad_packed import square_pack_gpt
from helpers import flat_image, gluon_ptx_sm90, run_without_interpreter
from helpers import gluon_geom as G

pytestmark = pytest.mark.skipif(not fused.HAVE_GLUON, reason="this Triton has no Gluon")

H100 = KNOWN["h100"]
# ResNeXt-50 32x4d's stride-1 grouped layers at batch 32 (groups of 4, 8, 16 channels).
LAYER1 = G(n=32, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1))
LAYER2 = G(n=32, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1))
LAYER3 = G(n=32, c=512, k=512, g=32, h=14, w=14, r=3, s=3, pad=(0, 1, 1))


def cfg_of(positions: int, split: int) -> Config:
    return Config(BLOCK_M=positions, BLOCK_N=fused.BLOCK, SPLIT_K=split,
                  num_warps=fused.WARPS, num_stages=2)


def _fused_emulation(geom: ConvGeometry, positions: int, x, w, dy):
    """The kernel's arithmetic in torch (float64; 5D tensors), from ``item_consts``: an
    item (image, input depth slice, tile of rows) holds X's phase images of its slice and,
    for each depth tap that meets the slice, dY's image of the output depth it meets it at
    (from AMAX - A0 rows above, BMAX columns left); each phase of dX on the item's owned
    grid rows, from dY's run D0 - (shift) positions in for each tap of the phase and of
    those depth taps; dW from dY's positions at Y0 (those past ROWS rows masked, 16-position
    chunks past them not read) against each tap's phase at its shift. Every pixel of dX
    is written by exactly one (item, phase, position)."""
    c = fused.item_consts(geom, positions)
    wp, rows, p = c["WP"], c["ROWS"], c["P"]
    std, sth, stw = geom.stride
    dld, dlh, dlw = geom.dilation
    od_count = geom.out_spatial[0]
    live = rows * wp
    chunked = -(-live // 16) * 16
    d0 = c["AMAX"] * wp + c["BMAX"]
    y0 = d0 - c["A0"] * wp
    cg, kg = geom.cg, geom.kg
    dx = torch.full(x.shape, float("nan"), dtype=torch.float64)
    writes = torch.zeros(geom.n, geom.d, geom.h, geom.w, dtype=torch.int64)
    dw = torch.zeros(w.shape, dtype=torch.float64)
    m = torch.arange(p)
    for n, di, tile in itertools.product(range(geom.n), range(geom.d), range(c["TILES_H"])):
        oh0 = tile * rows
        xph = {(rho, sig): flat_image(x[:, :, di], n, oh0, geom.pad[1], geom.pad[2], sth,
                                      stw, rho, sig, c["XNEED"], c)
               for rho in range(sth) for sig in range(stw)}
        accs = {ph: torch.zeros(p, geom.c, dtype=torch.float64) for ph in xph}
        for td in range(geom.t):
            num = di + geom.pad[0] - td * dld
            if num < 0 or num % std or num // std >= od_count:
                continue  # no output depth meets this slice at depth tap td
            yimg = flat_image(dy[:, :, num // std], n, oh0, c["AMAX"] - c["A0"], c["BMAX"],
                              1, 1, 0, 0, c["YNEED"], c)
            ydw = yimg[y0:y0 + chunked].clone()
            ydw[live:] = 0.0
            for r, s_ in itertools.product(range(geom.r), range(geom.s)):
                ph = (r * dlh % sth, s_ * dlw % stw)
                shift = (r * dlh // sth) * wp + s_ * dlw // stw
                for grp in range(geom.g):
                    ks, cs = slice(grp * kg, grp * kg + kg), slice(grp * cg, grp * cg + cg)
                    accs[ph][:, cs] += yimg[d0 - shift:d0 - shift + p, ks] @ w[ks, :, td, r, s_]
                    dw[ks, :, td, r, s_] += ydw[:, ks].T @ xph[ph][shift:shift + chunked, cs]
        for (rho, sig), acc in accs.items():
            h = (oh0 + c["A0"] + m // wp) * sth + rho - geom.pad[1]
            col = (m % wp) * stw + sig - geom.pad[2]
            keep = (m // wp < rows) & (h >= 0) & (h < geom.h) & (col >= 0) & (col < geom.w)
            dx[n, :, di, h[keep], col[keep]] = acc[keep].T
            writes[n, di, h[keep], col[keep]] += 1
    assert bool((writes == 1).all()), "a pixel of dX written twice or never"
    return dx, dw


G3 = dict(dims=3, t=3, r=3, s=3)


@pytest.mark.parametrize("geom", [
    G(n=2, c=16, k=16, g=4, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
    G(n=1, c=16, k=32, g=4, h=11, w=13, r=3, s=3, pad=(0, 1, 1)),
    G(n=1, c=16, k=16, g=2, h=15, w=19, r=3, s=1, pad=(0, 2, 0), dilation=(1, 2, 1)),
    G(n=1, c=32, k=32, g=4, h=9, w=40, r=3, s=3, pad=(0, 2, 2), dilation=(1, 2, 2)),
    G(n=1, c=16, k=16, g=2, h=14, w=14, r=3, s=3, pad=(0, 1, 1)),
    G(n=2, c=16, k=16, g=4, h=14, w=14, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
    G(n=1, c=16, k=32, g=4, h=15, w=13, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
    G(n=1, c=16, k=16, g=4, h=12, w=11, r=1, s=1, stride=(1, 2, 2)),
    G(n=1, c=16, k=16, g=2, h=13, w=17, r=3, s=3, stride=(1, 2, 3), pad=(0, 2, 1),
      dilation=(1, 2, 1)),
    G(n=1, c=16, k=16, g=4, h=10, w=12, r=3, s=3),
    G(n=1, c=16, k=16, g=4, h=9, w=9, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1),
      pad_hi=(0, 0, 2)),
    G(n=1, c=16, k=16, g=4, h=17, w=15, r=3, s=3, stride=(1, 2, 2), pad=(0, 2, 2),
      dilation=(1, 2, 2)),
    G(n=2, c=16, k=16, g=4, d=4, h=7, w=7, pad=(1, 1, 1), **G3),
    G(n=1, c=16, k=32, g=4, d=5, h=9, w=8, stride=(2, 2, 2), pad=(1, 1, 1), **G3),
    G(n=1, c=16, k=16, g=2, d=6, h=7, w=9, pad=(2, 1, 1), dilation=(2, 1, 1), **G3),
    G(n=1, c=16, k=16, g=4, d=3, h=8, w=8, stride=(2, 1, 1), pad=(0, 1, 1), **G3),
    G(n=1, c=16, k=16, g=4, d=3, h=9, w=9, t=1, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1),
      dims=3),
], ids=["7x7", "c_ne_k", "3x1-dilated", "wide-dilated", "14x14-balanced", "s2-even",
        "s2-odd", "1x1-s2", "s2x3-dilated", "valid", "s2-asymmetric-pads",
        "s2-dilated-first-row-owned", "3d", "3d-s2", "3d-depth-dilated",
        "3d-depth-s2-valid", "3d-1x3x3-s2"])
@pytest.mark.parametrize("positions", [64, 128])
def test_flat_layout_reproduces_both_gradients(geom, positions):
    """Items, owned rows, depth slices, the phase images, dY's images and their runs, the
    masked rows give torch's dX and dW, every pixel of dX written once."""
    if fused.supports(geom) is not None or flat_consts(geom, positions)["WP"] > positions:
        pytest.skip(fused.supports(geom) or "no row fits")
    torch.manual_seed(0)
    x = torch.randn(geom.n, geom.c, geom.d, geom.h, geom.w, dtype=torch.float64)
    w = torch.randn(geom.k, geom.cg, geom.t, geom.r, geom.s, dtype=torch.float64)
    dy = torch.randn(geom.n, geom.k, *geom.out_spatial, dtype=torch.float64)
    # torch's gradients through an explicit (possibly asymmetric) pad
    xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
    pads = (geom.pad[2], geom.pads_hi[2], geom.pad[1], geom.pads_hi[1], geom.pad[0],
            geom.pads_hi[0])
    y = torch.nn.functional.conv3d(torch.nn.functional.pad(xg, pads), wg, stride=geom.stride,
                                   dilation=geom.dilation, groups=geom.g)
    assert y.shape == dy.shape
    ref_dx, ref_dw = torch.autograd.grad(y, (xg, wg), dy)
    dx, dw = _fused_emulation(geom, positions, x, w, dy)
    assert float((dx - ref_dx).norm() / ref_dx.norm()) < 1e-12
    assert float((dw - ref_dw).norm() / ref_dw.norm()) < 1e-12


COMPILE_CASES = [
    (LAYER1, cfg_of(128, 32)), (LAYER3, cfg_of(64, 8)),
    (G(n=2, c=96, k=96, g=16, h=20, w=20, r=3, s=1, pad=(0, 1, 0), dtype="bfloat16"),
     cfg_of(256, 1)),
    (G(n=2, c=256, k=256, g=32, h=56, w=56, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
     cfg_of(128, 16)),
    # ResNeXt3D-50's layer1.0 and (strided) layer2.0 at batch 8
    (G(n=8, c=128, k=128, g=32, d=8, h=28, w=28, pad=(1, 1, 1), **G3), cfg_of(128, 32)),
    (G(n=8, c=256, k=256, g=32, d=8, h=28, w=28, stride=(2, 2, 2), pad=(1, 1, 1), **G3),
     cfg_of(64, 1)),
]


def ptx_sm90(case: int) -> tuple[str, int]:
    """PTX and shared memory of COMPILE_CASES[case] (in a process without the interpreter:
    ``_CHILD``)."""
    geom, cfg = COMPILE_CASES[case]
    cons = dict(fused.constexprs(geom, cfg), SPLIT=cfg["SPLIT_K"] > 1, NEXT=True)
    el = {"float16": "*fp16", "bfloat16": "*bf16"}[geom.dtype]
    pointers = {"dy_ptr": el, "x_ptr": el, "w_ptr": el, "dx_ptr": el, "dw_ptr": el,
                "ws_ptr": "*fp32"}
    aligned = (*pointers, "syn", "syd", "syh", "syw", "sxn", "sxd", "sxh", "sxw", "CTOT",
               "KTOT", "WS_STRIDE")
    return gluon_ptx_sm90(fused.backward_grouped_flat_kernel, pointers, cons, aligned,
                          cfg["num_warps"])


_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
import test_backward_grouped_flat as T
ptx, shared = T.ptx_sm90(int(sys.argv[2]))
open(sys.argv[3], "w").write(ptx)
print(shared)
"""


@pytest.mark.parametrize("case", range(len(COMPILE_CASES)),
                         ids=["cg4", "cg16-7rows", "cg6-3x1-bf16-unsplit", "cg8-s2", "3d-cg4",
                              "3d-cg8-s2-unsplit"])
def test_kernel_compiles_for_sm90(case, tmp_path):
    """The kernel compiles for sm_90 with the shared memory ``smem_bytes`` counts, cp.async
    copies of 16 bytes (8 where packs start on 8), and one mma for each of dX's tiles a
    tap and each of dW's 16-position chunks up to the item's rows a tap (none past them),
    every depth tap's in 3D."""
    geom, cfg = COMPILE_CASES[case]
    out = tmp_path / "kernel.ptx"
    smem = int(run_without_interpreter(_CHILD, str(Path(__file__).parent), str(case), str(out),
                                       timeout=240).split()[-1])
    ptx = out.read_text()
    c = fused.item_consts(geom, cfg["BLOCK_M"])
    bn, nw = cfg["BLOCK_N"], cfg["num_warps"]
    assert smem == fused.smem_bytes(geom, cfg)
    taps = geom.t * geom.r * geom.s  # in 3D each depth tap's behind a branch
    dgrad = taps * (c["P"] // (16 * nw)) * (bn // 8) * (bn // 16)
    wgrad = -(-c["ROWS"] * c["WP"] // 16) * taps * (bn // 16) * (bn // 8 // nw)
    assert len(re.findall(r"mma\.sync\.aligned\.m16n8k16", ptx)) == 2 * (dgrad + wgrad)
    sizes = set(re.findall(r"cp\.async\.c[ag]\.shared\.global \[[^]]*\], \[[^]]*\], (\w+)", ptx))
    # A pack of 12 channels (two groups of 6) starts every other pack on 8 bytes.
    pack = square_pack_gpt(geom, bn) * geom.cg
    assert sizes == ({"0x10"} if pack % 8 == 0 else {"0x8"}), sizes
    assert ("griddepcontrol.launch_dependents" in ptx) == (cfg["SPLIT_K"] > 1)


@pytest.mark.parametrize("geom,why", [
    (G(n=1, c=64, k=64, g=16, h=8, w=8, r=1, s=1, pad=(0, 1, 1)), "past the filter's reach"),
    (G(n=1, c=64, k=64, g=16, h=8, w=8, r=5, s=5, pad=(0, 2, 2)), "taps"),
    (G(n=1, c=256, k=256, g=8, h=7, w=7, r=3, s=3, pad=(0, 1, 1)), "groups of 32"),
    (G(n=1, c=64, k=64, g=16, d=8, h=8, w=8, t=5, r=3, s=3, pad=(2, 1, 1), dims=3),
     "more than the 27 taps"),
    (dataclasses.replace(LAYER2, layout="contiguous"), "channels_last"),
    (dataclasses.replace(LAYER2, dtype="float32"), ""),
])
def test_rules(geom, why):
    reason = fused.supports(geom)
    assert reason is not None and why in reason


def test_configs_fit_every_supported_layer():
    """Every config the kernel offers on the issue-2 layers fits the H100's shared memory,
    and a split is never more than the items."""
    for geom in (LAYER1, LAYER2, LAYER3):
        ok = [cfg for cfg in fused.CONFIGS if fused.config_rejects(geom, cfg, H100) is None]
        assert ok
        for cfg in ok:
            assert fused.smem_bytes(geom, cfg) <= H100.smem_bytes
            assert cfg["SPLIT_K"] <= fused.items(geom, cfg)
    too_many = cfg_of(128, 128)
    small = G(n=2, c=64, k=64, g=16, h=8, w=8, r=3, s=3, pad=(0, 1, 1))
    assert "exceeds the" in fused.config_rejects(small, too_many, H100)


def test_pair_config_rule():
    """The measured best of call 199 (items of 128 positions, 256 programs for 132 SMs);
    splits follow the SM count; items of 64 where 128 positions are twice the image."""
    assert [fused.pair_config(g, H100)["SPLIT_K"] for g in (LAYER1, LAYER2, LAYER3)] == [
        32, 16, 8]
    assert {fused.pair_config(g, H100)["BLOCK_M"] for g in (LAYER1, LAYER2, LAYER3)} == {128}
    half = dataclasses.replace(H100, sm_count=66)
    assert fused.pair_config(LAYER1, half)["SPLIT_K"] == 16
    small = G(n=64, c=512, k=512, g=32, h=6, w=6, r=3, s=3, pad=(0, 1, 1))
    assert fused.pair_config(small, H100)["BLOCK_M"] == 64
    many_packs = G(n=8, c=4096, k=4096, g=1024, h=14, w=14, r=3, s=3, pad=(0, 1, 1))
    assert fused.pair_config(many_packs, H100)["SPLIT_K"] == 1  # 256 packs
    # stride 2: 28 rows of dY, 29 grid rows of X's phases (X's row 55 in the last); items
    # of 64 positions first
    strided = G(n=32, c=256, k=256, g=32, h=56, w=56, r=3, s=3, stride=(1, 2, 2),
                pad=(0, 1, 1))
    cfg = fused.pair_config(strided, H100)
    c = fused.item_consts(strided, cfg["BLOCK_M"])
    assert (cfg["BLOCK_M"], cfg["SPLIT_K"], c["ROWS"], c["TILES_H"]) == (64, 16, 2, 15)
    c128 = fused.item_consts(strided, 128)
    assert (c128["ROWS"], c128["TILES_H"]) == (4, 8)
    # 48 items (4 an image of 23 rows), 8 packs; too few programs at a batch of 3
    few = G(n=12, c=64, k=128, g=8, h=23, w=17, r=3, s=3, pad=(0, 1, 1))
    cfg = fused.pair_config(few, H100)
    assert cfg["SPLIT_K"] == 32 and fused.items(few, cfg) == 48
    few = dataclasses.replace(few, n=3)  # 12 items, 8 packs: 96 programs at most
    assert fused.pair_config(few, H100) is None
    assert fused.pair_config(dataclasses.replace(LAYER3, n=1), H100) is None


def test_items_share_an_image_evenly():
    """14 rows in items of 7 (not 8 and 6), 56 in items of 2, 28 in items of 4."""
    assert [fused.item_consts(g, 128)["ROWS"] for g in (LAYER3, LAYER1, LAYER2)] == [7, 2, 4]
    c = fused.item_consts(LAYER3, 128)
    assert c["XNEED"] == (7 + 2) * c["WP"] and fused.items(LAYER3, cfg_of(128, 8)) == 64


def test_launch_binds_every_argument(monkeypatch):
    """The launch (not run) passes every kernel argument once: the strides of dY, X, dX, the
    filter and dW by the kernel's names, a grid of packs x splits, and a split launch
    adds its slices into dW after it."""
    from convdispatch.dispatcher.launch import empty_grad
    from convdispatch.kernels import wgrad_gemm

    calls = []
    record = lambda k, grid, *a, **kw: calls.append((k, grid, a, kw))  # noqa: E731
    monkeypatch.setattr(fused, "launch_kernel", record)
    monkeypatch.setattr(wgrad_gemm, "launch_kernel", record)
    geom = G(n=2, c=64, k=128, g=8, h=9, w=11, r=3, s=3, pad=(0, 1, 1))
    fmt = torch.channels_last
    x = torch.randn(2, 64, 9, 11, dtype=torch.float16).to(memory_format=fmt)
    w = torch.randn(128, 8, 3, 3, dtype=torch.float16).to(memory_format=fmt)
    dy = torch.randn(2, 128, 9, 11, dtype=torch.float16).to(memory_format=fmt)
    dx, dw = empty_grad("dgrad", x, w), empty_grad("wgrad", x, w)
    cfg = cfg_of(64, 4)
    fused.launch(dy, x, w, dx, dw, geom, cfg)
    (kernel, grid, args, kwargs), (reduce, *_) = calls
    assert kernel is fused.backward_grouped_flat_kernel
    assert reduce is wgrad_gemm.wgrad_reduce_kernel
    names = kernel.arg_names
    bound = dict(zip(names, args))
    assert not set(bound) & set(kwargs)
    assert set(names) <= set(bound) | set(kwargs)
    # 6 items (3 an image) split 4 ways: 3 slices of 2
    assert grid == (geom.g // square_pack_gpt(geom, 16), 3) and bound["ITEMS_PER_SPLIT"] == 2
    assert (bound["syn"], bound["syh"], bound["syw"]) == (dy.stride(0), *dy.stride()[2:])
    assert (bound["sxn"], bound["sxh"], bound["sxw"]) == (x.stride(0), *x.stride()[2:])
    assert (bound["sdn"], bound["sdc"], bound["sdh"], bound["sdw"]) == dx.stride()
    assert (bound["sfk"], bound["sfc"], bound["sfr"], bound["sfs"]) == w.stride()
    assert (bound["swk"], bound["swc"], bound["swr"], bound["sws"]) == dw.stride()
    assert bound["ITEMS"] == fused.items(geom, cfg) and kwargs["SPLIT"] is True


# The "backward" direction's choice in the stand-in below: not the rule's config.
PICKED = cfg_of(256, 8)


def _decided(families: dict, backward: Candidate | None = None):
    """A ``decide`` stand-in choosing ``families[direction]`` (the "backward" direction:
    ``backward``, by default PICKED)."""
    def decide(geom, dev, chooser=None, direction="forward"):
        if direction == "backward":
            return Decision(backward or Candidate("backward_grouped_flat", PICKED), "picked",
                            "stand-in")
        return Decision(Candidate(families[direction], Config()), "picked", "stand-in")
    return decide


def test_pair_config_is_the_backward_directions_choice(monkeypatch):
    """A pass fuses where the "backward" direction chooses a fused config (whatever the
    other directions choose), with that config; not where it chooses the pair; the rule's
    answer (``rule_fuses``) is where wgrad chooses the flat kernel and the rule's config
    fills the SMs."""
    from convdispatch.dispatcher import api, settings

    monkeypatch.setattr(fused_pair, "CONFIGS", {})
    flat = {"dgrad": "dgrad_grouped_packed", "wgrad": fused_pair.WGRAD}
    monkeypatch.setattr(api, "decide", _decided(dict(flat, wgrad="wgrad_grouped_halo")))
    assert fused_pair.pair_config(LAYER1, H100) == PICKED
    assert f"backward_grouped_flat:{PICKED}" in fused_pair.describe(LAYER1, H100)
    assert not fused_pair.rule_fuses(LAYER1, H100)
    monkeypatch.setattr(api, "decide", _decided(flat))
    assert fused_pair.rule_fuses(LAYER1, H100)
    # too few programs for the SMs (batch 1)
    assert not fused_pair.rule_fuses(dataclasses.replace(LAYER1, n=1), H100)
    # the pair: the two kernels; cached per geometry and device until the choices are
    # forgotten
    monkeypatch.setattr(api, "decide", _decided(flat, Candidate(fused_pair.PAIR, Config())))
    assert fused_pair.pair_config(LAYER1, H100) == PICKED
    api.clear_cache()
    assert fused_pair.pair_config(LAYER1, H100) is None
    assert fused_pair.describe(LAYER1, H100) is None
    # a geometry the fused kernel does not take never asks
    layer4 = G(n=32, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1))
    assert fused_pair.pair_config(layer4, H100) is None
    monkeypatch.setattr(api, "decide", _decided(flat))
    api.clear_cache()
    assert fused_pair.pair_config(LAYER1, H100) == PICKED
    monkeypatch.setattr(fused_pair, "FUSE", False)
    assert fused_pair.pair_config(LAYER1, H100) is None
    monkeypatch.setattr(fused_pair, "FUSE", True)
    with settings.force("dgrad_grouped_flat:BLOCK_M=128;BLOCK_N=16;ITEMS=8;num_stages=1;"
                        "num_warps=2"):
        assert fused_pair.pair_config(LAYER1, H100) is None
    assert fused_pair.pair_config(LAYER1, H100) is not None


def test_gradients_take_the_fused_kernel(monkeypatch):
    """A backward pass needing dX and dW runs the fused kernel where ``pair_config`` gives
    a config (and only then), and neither direction's own kernel."""
    ran = []
    monkeypatch.setattr(fused_pair, "pair_config", lambda g, d: cfg_of(128, 32))
    monkeypatch.setattr(fused_pair, "run", lambda g, cfg, dy, x, w: ran.append(cfg) or (1, 2))
    monkeypatch.setattr(autograd, "gradient", lambda *a, **kw: pytest.fail("one direction"))
    dy = x = w = torch.zeros(1)
    assert autograd.gradients(LAYER1, dy, x, w) == (1, 2) and ran == [cfg_of(128, 32)]
    monkeypatch.setattr(autograd, "gradient", lambda g, d, *a, **kw: d)
    assert autograd.gradients(LAYER1, dy, x, w, need_w=False) == ("dgrad", None)
    monkeypatch.setattr(fused_pair, "pair_config", lambda g, d: None)
    assert autograd.gradients(LAYER1, dy, x, w) == ("dgrad", "wgrad")
    assert len(ran) == 1


def test_explain_names_the_fused_pair():
    """With the shipped H100 models, ResNeXt-50 layer1.0's wgrad chooses the flat kernel,
    so explain() names the fused kernel for dgrad and wgrad (not forward); layer4.1's
    groups of 32 run their two choices."""
    from convdispatch.dispatcher.explain import explain

    for direction in ("dgrad", "wgrad"):
        e = explain(LAYER1, gpu="h100", direction=direction)
        assert e.pair is not None and "backward_grouped_flat:" in str(e)
        assert e.to_dict()["pair"] == e.pair
    assert explain(LAYER1, gpu="h100").pair is None
    layer4 = G(n=32, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1))
    assert explain(layer4, gpu="h100", direction="wgrad").pair is None
