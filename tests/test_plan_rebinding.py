"""What a recorded plan rebinds at replay: each launch argument is one named tensor, or a
view in the memory of exactly one; a tensor two names share is not recorded, since a later
call of the same signature may pass two tensors there."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from convdispatch import conv2d, conv3d
from convdispatch.dispatcher import api, set_chooser
from helpers import PickFamily, rel_err


def test_one_object_under_two_names_is_not_recorded(clean_dispatcher):
    """conv3d passes its tensors as they are, so ``residual=x`` names one object twice."""
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(8, 8, 3, 3, 3, generator=gen) / 8
    x = torch.randn(2, 8, 3, 4, 4, generator=gen)
    out = conv3d(x, w, padding=1, residual=x)
    assert rel_err(out, F.conv3d(x.double(), w.double(), padding=1) + x.double()) < 1e-5
    assert not api.PLANS
    x2, r2 = (torch.randn(2, 8, 3, 4, 4, generator=gen) for _ in range(2))
    out = conv3d(x2, w, padding=1, residual=r2)
    assert rel_err(out, F.conv3d(x2.double(), w.double(), padding=1) + r2.double()) < 1e-5


def test_a_view_two_names_reach_is_not_recorded(clean_dispatcher):
    """pointwise_tma reads x and the residual through matrix views; with the residual the
    input itself both views lie in memory both names reach."""
    set_chooser(PickFamily("pointwise_tma"))
    gen = torch.Generator().manual_seed(1)
    w = (torch.randn(32, 32, 1, 1, generator=gen) / 6).to(memory_format=torch.channels_last)
    x = torch.randn(1, 32, 4, 4, generator=gen).to(memory_format=torch.channels_last)
    out = conv2d(x, w, residual=x)
    assert rel_err(out, F.conv2d(x.double(), w.double()) + x.double()) < 2e-3
    assert not api.PLANS
    x2, r2 = (torch.randn(1, 32, 4, 4, generator=gen).to(memory_format=torch.channels_last)
              for _ in range(2))
    out = conv2d(x2, w, residual=r2)
    assert rel_err(out, F.conv2d(x2.double(), w.double()) + r2.double()) < 2e-3
    assert len(api.PLANS) == 1, "a call with two tensors records its plan"


def test_views_of_a_filter_sharing_its_buffer_with_the_bias(clean_dispatcher, monkeypatch):
    """A filter and bias cut from one flat buffer: the filter's matrix view lies in the
    filter's memory alone, so the plan is recorded and replays with new tensors."""
    set_chooser(PickFamily("pointwise_tma"))
    gen = torch.Generator().manual_seed(2)
    buf = torch.randn(32 * 32 + 32, generator=gen) / 6
    w, b = buf[:32 * 32].view(32, 32, 1, 1), buf[32 * 32:]
    x = torch.randn(1, 32, 4, 4, generator=gen).to(memory_format=torch.channels_last)
    conv2d(x, w, b)
    assert len(api.PLANS) == 1
    monkeypatch.setattr(api, "decide", lambda *a, **k: pytest.fail("not replayed"))
    buf2 = torch.randn(32 * 32 + 32, generator=gen) / 6
    w2, b2 = buf2[:32 * 32].view(32, 32, 1, 1), buf2[32 * 32:]
    x2 = torch.randn(1, 32, 4, 4, generator=gen).to(memory_format=torch.channels_last)
    out = conv2d(x2, w2, b2)
    assert rel_err(out, F.conv2d(x2.double(), w2.double(), b2.double())) < 2e-3


def test_alignment_is_part_of_every_plan_key(clean_dispatcher):
    """A call whose tensors start off 16 bytes records a plan of its own (forward and
    gradient): the recorded kernels were compiled for their pointers' alignment, and the
    Gluon families copy an unaligned tensor before they launch."""
    from convdispatch.dispatcher import autograd
    from convdispatch.kernels.geometry import ConvGeometry

    gen = torch.Generator().manual_seed(2)
    w = torch.randn(8, 8, 3, 3, generator=gen) / 8
    buf = torch.randn(2 * 8 * 5 * 5 + 1, generator=gen)
    aligned = buf[:-1].view(2, 8, 5, 5)
    shifted = buf[1:].view(2, 8, 5, 5)  # 4 bytes on: same shape and strides
    assert aligned.stride() == shifted.stride() and shifted.data_ptr() % 16
    for x in (aligned, shifted, aligned):
        out = conv2d(x, w, padding=1)
        assert rel_err(out, F.conv2d(x.double(), w.double(), padding=1)) < 1e-5
    assert len(api.PLANS) == 2
    geom = ConvGeometry(n=2, c=8, k=8, h=5, w=5, r=3, s=3, pad=(0, 1, 1), dtype="float32",
                        layout="contiguous")
    dy = torch.randn(2, 8, 5, 5, generator=gen)
    for x in (aligned, shifted):
        autograd.gradient(geom, "wgrad", dy, x, w)
    assert len([k for k in api.GRAD_PLANS if k[0] == "wgrad"]) == 2
