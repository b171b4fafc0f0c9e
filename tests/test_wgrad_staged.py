"""wgrad_staged_tma: the staged copies' layout, the family's rules and its sm_90 code
(its results against torch are in test_grad.py's CASES, real sizes in test_gpu_grad.py)."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
import torch
from convdispatch.dispatcher import registry
from convdispatch.kernels import wgrad_staged_tma as staged
from convdispatch.kernels.base import GradCall
from convdispatch.kernels.geometry import ConvGeometry
from helpers import compile_for_sm90

G = ConvGeometry


@pytest.mark.parametrize("geom", [
    G(n=2, c=8, k=8, h=6, w=7, r=3, s=3, pad=(0, 1, 1)),
    G(n=2, c=8, k=8, h=9, w=8, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
    G(n=1, c=8, k=8, h=11, w=10, r=5, s=3, stride=(1, 3, 2), dilation=(1, 2, 3), pad=(0, 2, 1)),
    G(n=1, c=8, k=8, d=4, h=5, w=5, t=3, r=3, s=3, stride=(2, 1, 1), pad=(1, 1, 1), dims=3),
    G(n=2, c=8, k=8, h=9, w=7, r=1, s=1, stride=(1, 2, 2)),
    G(n=1, c=8, k=8, h=9, w=9, r=3, s=3, stride=(1, 2, 2), dilation=(1, 2, 2), pad=(0, 2, 2)),
], ids=lambda g: g.describe())
def test_every_tap_reads_its_input_pixel_at_a_constant_shift(geom):
    """Staged X row q + tap_rows(tap) holds the input pixel that output pixel q's tap reads
    (zero in the padding), for every output pixel and tap; the staged rows past the
    output are dY's zeros."""
    x = torch.randn(geom.n, geom.c, geom.d, geom.h, geom.w)
    od, oh, ow = geom.out_spatial
    dy = torch.randn(geom.n, geom.k, od, oh, ow)
    layout = staged.StagedLayout.of(geom)
    xs, dys = staged.stage(x, dy, geom, layout)
    assert xs.shape[0] == layout.image_rows * layout.phases
    dims = [(dim.q) for dim in layout.dims]
    for n, o0, o1, o2 in itertools.product(range(geom.n), range(od), range(oh), range(ow)):
        q = ((n * dims[0] + o0) * dims[1] + o1) * dims[2] + o2
        for kt, kr, ks in itertools.product(range(geom.t), range(geom.r), range(geom.s)):
            i = [o * st + k * dl - p for o, k, st, dl, p in
                 zip((o0, o1, o2), (kt, kr, ks), geom.stride, geom.dilation, geom.pad)]
            inside = all(0 <= v < size for v, size in zip(i, (geom.d, geom.h, geom.w)))
            want = x[n, :, i[0], i[1], i[2]] if inside else torch.zeros(geom.c)
            assert torch.equal(xs[q + layout.tap_rows(kt, kr, ks), :geom.c], want)
    assert dys.shape[0] == layout.image_rows
    if layout.dy_staged():  # dY at the top-left corner of each image, zeros elsewhere
        want = torch.zeros(geom.n, dims[0], dims[1], dims[2], geom.k)
        want[:, :od, :oh, :ow] = dy.permute(0, 2, 3, 4, 1)
        assert torch.equal(dys[:, :geom.k], want.reshape(-1, geom.k))


def test_layout_waste_and_phases_on_resnet_shapes():
    """The staged rows a 14x14 map reduces over are 16 x 16 (1.31x), a 7x7 map's 9 x 9;
    a strided 3x3 reads 4 phase images, a strided 1x1 one, without padding dY."""
    l14 = staged.StagedLayout.of(G(n=32, c=256, k=256, h=14, w=14, r=3, s=3, pad=(0, 1, 1)))
    assert (l14.image_rows, l14.phases, l14.dy_staged()) == (32 * 16 * 16, 1, True)
    l7 = staged.StagedLayout.of(G(n=32, c=512, k=512, h=7, w=7, r=3, s=3, pad=(0, 1, 1)))
    assert l7.image_rows == 32 * 9 * 9
    s2 = G(n=32, c=256, k=256, h=28, w=28, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1))
    ls2 = staged.StagedLayout.of(s2)
    assert (ls2.image_rows, ls2.phases) == (32 * 15 * 15, 4)
    assert ls2.waste(s2) == pytest.approx(225 / 196)
    ds = staged.StagedLayout.of(G(n=32, c=512, k=1024, h=28, w=28, r=1, s=1, stride=(1, 2, 2)))
    assert (ds.image_rows, ds.phases, ds.dy_staged()) == (32 * 14 * 14, 1, False)


def test_supports_and_config_rules():
    fam = registry.family("wgrad_staged_tma")
    dense = G(n=8, c=256, k=256, h=14, w=14, r=3, s=3, pad=(0, 1, 1), dtype="float16")
    assert fam.supports(dense) is None
    assert "1x1" in fam.supports(dataclasses.replace(dense, r=1, s=1, pad=(0, 0, 0)))
    assert fam.supports(dataclasses.replace(dense, r=1, s=1, pad=(0, 0, 0),
                                            stride=(1, 2, 2))) is None
    assert "mostly zeros" in fam.supports(dataclasses.replace(dense, g=32))  # 8 a group
    assert fam.supports(dataclasses.replace(dense, g=16)) is None  # 16 a group
    assert "as many" in fam.supports(dataclasses.replace(dense, k=512, g=16))
    assert "MiB" in fam.supports(dataclasses.replace(dense, n=4096, h=56, w=56))
    grouped = dataclasses.replace(dense, c=512, k=512, g=16)  # 32 a group
    from convdispatch.kernels.device import lookup
    h100 = lookup("h100")
    for cfg in fam.configs:
        why = fam.config_ok(grouped, cfg, h100)
        if cfg["BLOCK_M"] != cfg["BLOCK_N"]:
            assert why and "whole groups" in why
    assert any(fam.config_ok(grouped, c, h100) is None for c in fam.configs)


@pytest.mark.parametrize("packed", [False, True])
def test_compiles_to_2d_boxes_and_smem_wgmma_for_sm90(packed):
    """Both operands are plain 2D TMA boxes and wgmma reads them from shared memory."""
    got = compile_for_sm90("convdispatch.kernels.wgrad_staged_tma", "wgrad_staged_kernel",
                           dict(PH_D=1, PH_H=2, PH_W=2, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
                                GROUP_M=4, PACKED=packed, SPLIT_K=4, PREC="ieee",
                                UPCAST=False),
                           {"dy_desc": (64, 128), "x_desc": (64, 128)})
    assert got == {"tma": ["2d.shared"], "wgmma": True, "smem_operands": True}


def test_unaligned_dy_of_a_strided_1x1_is_staged():
    """A strided 1x1's dY is read in place when its rows are dense 16-byte rows, staged
    otherwise (here a channel-sliced view): same result."""
    geom = G(n=2, c=32, k=32, h=9, w=7, r=1, s=1, stride=(1, 2, 2), layout="channels_last")
    x = torch.randn(2, 32, 1, 9, 7).to(memory_format=torch.channels_last_3d)
    big = torch.randn(2, 33, 1, 5, 4).to(memory_format=torch.channels_last_3d)
    dy_odd = big[:, 1:]
    dy = dy_odd.contiguous(memory_format=torch.channels_last_3d)
    ref = torch.nn.grad.conv2d_weight(x[:, :, 0], (32, 32, 1, 1), dy[:, :, 0], stride=2)
    cfg = registry.family("wgrad_staged_tma").configs[0]
    outs = []
    for d in (dy, dy_odd):
        out = torch.full((32, 32, 1, 1, 1), float("nan"))
        staged.launch_wgrad_staged(GradCall(dy=d, x=x, w=None, out=out, geom=geom), cfg)
        outs.append(out[:, :, 0])
    for out in outs:
        assert torch.allclose(out, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("phases", [(1, 1, 1), (1, 2, 2), (2, 1, 3)])
def test_staging_kernel_compiles_for_sm90(phases):
    """The staging copy for one or several phase images a dim (the interpreter runs
    Python, so only a real compile checks that both shapes of a row's columns agree)."""
    ph_d, ph_h, ph_w = phases
    got = compile_for_sm90("convdispatch.kernels.wgrad_staged_tma", "stage_kernel",
                           dict(PH_D=ph_d, PH_H=ph_h, PH_W=ph_w, X_PITCH=256, Y_PITCH=256,
                                STAGE_DY=True, BLOCK_R=4, BLOCK_W=16, BLOCK_C=128), {})
    assert got["tma"] == [] and not got["wgmma"]
