"""Test setup: kernels run under Triton's CPU interpreter unless a GPU test asks for CUDA."""

from __future__ import annotations

import os

import pytest

# Must be set before any triton.jit decorator runs (i.e. before convdispatch imports).
os.environ.setdefault("TRITON_INTERPRET", "0" if os.environ.get("CONVDISPATCH_GPU_TESTS") else "1")


def pytest_collection_modifyitems(config, items):
    import torch

    if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1":
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run with CONVDISPATCH_GPU_TESTS=1 there)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


# The slowest interpreter test takes about 20 s. One that runs this long is stuck: it fails
# with its traceback instead of holding CI until CI's own limit (a CPU run hung once in the
# twenty-fourth session, in a test no rerun has caught since).
CPU_TEST_LIMIT_S = 300


@pytest.fixture(autouse=True)
def _cpu_time_limit():
    import signal
    import threading

    if (os.environ.get("TRITON_INTERPRET") != "1" or not hasattr(signal, "SIGALRM")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return

    def expired(signum, frame):
        raise TimeoutError(f"the test ran past {CPU_TEST_LIMIT_S} s under the interpreter")

    old = signal.signal(signal.SIGALRM, expired)
    # Again every 10 s after the first: Triton's interpreter re-raises it as its own error,
    # which a test catching broad exceptions may take as an outcome and go on.
    signal.setitimer(signal.ITIMER_REAL, CPU_TEST_LIMIT_S, 10)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def clean_dispatcher(monkeypatch):
    """No chooser override, no loaded models or cached decisions, strict mode off; the
    same again afterwards."""
    from convdispatch.dispatcher import selection, set_chooser, settings

    monkeypatch.setattr(settings, "_strict", False)
    set_chooser(None)
    selection.reset()
    yield
    set_chooser(None)
    selection.reset()
