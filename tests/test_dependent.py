"""Programmatic dependent launch (``kernels.dependent``): when launches ask for it, and
that the reduction passes wait for the kernel before them before touching memory (sm_90
compiles, no GPU needed; tests/test_gpu_dependent.py runs them)."""

from __future__ import annotations

import pytest
import torch
from convdispatch.kernels import dependent
from convdispatch.kernels.device import KNOWN
from helpers import sm90_compile


def test_plain_launches_off_hopper(monkeypatch):
    """The interpreter, a CPU tensor, an sm_80 GPU and the switch turned off all launch
    the usual way; an sm_90 GPU launches the reduction as a dependent."""
    assert dependent.dependent_args("cpu") == {"PRIOR": False}
    monkeypatch.setattr(dependent, "interpreter_enabled", lambda: False)
    monkeypatch.setattr(dependent, "spec_of", lambda d: KNOWN["h100"])
    assert dependent.dependent_args(torch.device("cuda", 0)) == {"PRIOR": True,
                                                                 "launch_pdl": True}
    monkeypatch.setattr(dependent, "DEPENDENT_LAUNCH", False)
    assert dependent.dependent_args("cuda") == {"PRIOR": False}
    monkeypatch.setattr(dependent, "DEPENDENT_LAUNCH", True)
    monkeypatch.setattr(dependent, "spec_of", lambda d: KNOWN["a100"])
    assert dependent.dependent_args("cuda") == {"PRIOR": False}
    monkeypatch.setattr(dependent, "interpreter_enabled", lambda: True)
    monkeypatch.setattr(dependent, "spec_of", lambda d: KNOWN["h100"])
    assert not dependent.dependent_ok("cuda")


REDUCE_KERNELS = {
    "wgrad_gemm.wgrad_reduce_kernel": dict(KC=512, CG=16, R=3, S=3, BLOCK=256, SLICES=8,
                                           ACC="tl.float32"),
    "splitk.splitk_reduce_kernel": dict(SPLIT_K=4, BLOCK_M=32, BLOCK_N=64, ACT=1,
                                        HAS_BIAS=True, HAS_RES=True, INT64=False),
}


@pytest.mark.parametrize("kernel", sorted(REDUCE_KERNELS))
@pytest.mark.parametrize("prior", [True, False])
def test_reduction_waits_before_any_global_access(kernel, prior):
    module, name = kernel.split(".")
    got = sm90_compile(f"convdispatch.kernels.{module}", name,
                       dict(REDUCE_KERNELS[kernel], PRIOR=prior), {}, num_warps=4,
                       num_stages=1)
    order = got["global_memory_order"]
    assert "ld.global" in order and "st.global" in order, order
    if prior:
        assert order[0] == "griddepcontrol.wait" and order.count("griddepcontrol.wait") == 1
    else:
        assert not any(op.startswith("griddepcontrol") for op in order), order


def test_wgrad_reduction_divides_by_constants():
    """The wgrad reduction's index arithmetic divides by compile-time constants (multiply
    and shift): run-time divisions took up to 2 us of a pass (call 189). The divisors are
    declared constexpr (the compile helper would make any named argument one)."""
    import inspect

    from convdispatch.kernels.wgrad_gemm import wgrad_reduce_kernel

    fn = getattr(wgrad_reduce_kernel, "fn", wgrad_reduce_kernel)  # interpreted or not
    declared = {name for name, p in inspect.signature(fn).parameters.items()
                if "constexpr" in str(p.annotation)}
    assert {"KC", "CG", "R", "S"} <= declared
    got = sm90_compile("convdispatch.kernels.wgrad_gemm", "wgrad_reduce_kernel",
                       dict(REDUCE_KERNELS["wgrad_gemm.wgrad_reduce_kernel"], PRIOR=True), {},
                       num_warps=4, num_stages=1)
    assert got["integer_divisions"] == 0
    split = sm90_compile("convdispatch.kernels.splitk", "splitk_reduce_kernel",
                         dict(REDUCE_KERNELS["splitk.splitk_reduce_kernel"], PRIOR=True), {},
                         num_warps=4, num_stages=1)
    assert split["integer_divisions"] > 0  # the check sees run-time divisions
