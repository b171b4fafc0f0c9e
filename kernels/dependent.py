"""Programmatic dependent launch (sm_90 and newer) between the kernels of one call.

A kernel that reads what the kernel before it in the same call wrote (a split's
reduction pass) is launched as that kernel's programmatic dependent: its programs may be
scheduled before the previous kernel ends, and wait in ``griddepcontrol.wait`` until that
kernel has finished and its writes are visible. That hides part of the gap between the
two launches (0-2.3% of a split launch's time by family on the H100, geomean:
validation/results/split_reduction_h100/, call 183). The kernel before it may let it be
scheduled from its own start (``gluon_wgrad.release_reduction``). The first kernel of a
call is launched as usual, so a call never overlaps the work before it.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .device import interpreter_enabled, spec_of

# Whether a call's later kernels are launched as programmatic dependents (a switch for
# measuring what that brings).
DEPENDENT_LAUNCH = True


def dependent_ok(device) -> bool:
    """Whether kernels on ``device`` launch as programmatic dependents: CUDA, compute
    capability 9.0 and newer, not the interpreter, ``DEPENDENT_LAUNCH`` on."""
    import torch

    device = torch.device(device)
    return (DEPENDENT_LAUNCH and device.type == "cuda" and not interpreter_enabled()
            and spec_of(device).capability >= (9, 0))


def dependent_args(device) -> dict:
    """Launch keywords of a kernel with a ``PRIOR`` constexpr (``wait_for_prior``) that
    follows another kernel of its call: a programmatic dependent where ``dependent_ok``,
    else a plain launch."""
    return {"PRIOR": True, "launch_pdl": True} if dependent_ok(device) else {"PRIOR": False}


@triton.jit
def wait_for_prior(PRIOR: tl.constexpr):
    """With PRIOR, wait until the kernel this one depends on has finished and its writes
    are visible: before any global read or write of the kernel."""
    if PRIOR:
        tl.inline_asm_elementwise("griddepcontrol.wait; // $0", "=r", [], dtype=tl.int32,
                                  is_pure=False, pack=1)
