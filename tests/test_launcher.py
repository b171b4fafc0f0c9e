"""The launcher: side-stream groups and the direct replay of recorded launches (CPU)."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from convdispatch.kernels import launcher
from triton.compiler.compiler import CompiledKernel
from triton.runtime.jit import JITFunction


def test_concurrent_calls_record_no_groups():
    """Launches inside ``launcher.concurrently`` are recorded as outside any group (a
    call's plan is the same alone or beside another); ``branches`` inside it still
    number their groups."""
    launched = []
    with launcher.Recorder() as rec:
        with launcher.concurrently(torch.device("cpu"), 2) as (a, b):
            with a:
                with launcher.branches(torch.device("cpu"), 2) as (p0, p1):
                    with p1:
                        launched.append(launcher._branch.get())
            with b:
                launched.append(launcher._branch.get())
    assert launched == [1, None] and not rec.steps



def _toy_fn(a_ptr, b_ptr, n, scale: tl.constexpr, FLAG: tl.constexpr = 3):
    pass


_toy = JITFunction(_toy_fn)  # compiled, not interpreted, whatever TRITON_INTERPRET says


class _Compiled(CompiledKernel):
    """Stands in for what Triton compiled: notes what its launcher was given."""

    def __init__(self) -> None:
        self.calls, self.function, self.packed_metadata = [], "function", "metadata"

    @property
    def run(self):
        return lambda *a: self.calls.append(a)


def test_fast_replay_passes_every_argument_in_signature_order(monkeypatch):
    """A replayed step goes to the compiled kernel's launcher with the arguments in the
    kernel's order (keywords and defaults filled in, the new tensors swapped in), and
    back to Triton's path where the kernel would not be the one Triton picks: a pointer
    whose 16-byte alignment differs from the recording, or a launch hook set."""
    a, b = torch.zeros(8), torch.zeros(8)
    step = launcher.Step(_toy, (4,), [a, b, 7], {"scale": 2, "num_warps": 4})
    step.compiled = _Compiled()
    fast = launcher._FastLaunch.of(step, step.args)
    assert fast is not None and fast.full == [None, None, 7, 2, 3]
    monkeypatch.setattr(launcher, "_current_stream", lambda: 99)
    a2, b2 = torch.ones(8), torch.ones(8)
    assert fast.launch((4,), [a2, b2, None])
    (call,) = step.compiled.calls
    assert call[:9] == (4, 1, 1, 99, "function", "metadata", None, None, None)
    assert call[9] is a2 and call[10] is b2 and call[11:] == (7, 2, 3)
    assert fast.full[:2] == [None, None], "no reference to a call's tensors is kept"
    off = torch.zeros(9, dtype=torch.float16)[1:]  # 2 bytes past an aligned address
    assert not fast.launch((4,), [off, b2, None])
    monkeypatch.setattr(triton.knobs.runtime, "launch_enter_hook", lambda *a: None)
    assert not fast.launch((4,), [a2, b2, None])
    assert len(step.compiled.calls) == 1


@pytest.mark.parametrize("why", ["interpreted", "tensor_keyword", "missing_argument"])
def test_fast_replay_declines(why):
    """No direct launch without a compiled kernel (the interpreter), for a tensor passed by
    keyword (a plan rebinds positional tensors only), or where an argument is missing."""
    args, kwargs = [torch.zeros(8), torch.zeros(8), 7], {"scale": 2}
    if why == "tensor_keyword":
        args, kwargs = args[:1], {"b_ptr": torch.zeros(8), "n": 7, "scale": 2}
    if why == "missing_argument":
        kwargs = {}
    step = launcher.Step(_toy, (1,), args, kwargs)
    step.compiled = None if why == "interpreted" else _Compiled()
    assert launcher._FastLaunch.of(step, step.args) is None
