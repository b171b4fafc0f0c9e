"""A non-editable install finds what the code needs from models/ and data/."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_non_editable_install_has_data_and_models(tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(ROOT)],
                   check=True, capture_output=True, text=True, cwd=tmp_path)
    code = (
        "import convdispatch, pathlib\n"
        "from convdispatch.data.problems import load_set\n"
        "from convdispatch.dispatcher.model_chooser import locate\n"
        "from convdispatch.kernels.device import lookup\n"
        "assert 'site' in convdispatch.__file__, convdispatch.__file__\n"
        "print(len(load_set('resnet50')))\n"
        "path, note = locate(lookup('h100'))\n"
        "print(path is not None and pathlib.Path(path).is_dir())\n"
        "print(convdispatch.explain(load_set('resnet50')[0].geom, gpu='h100').candidate.id)\n"
        "from convdispatch.heuristics.model_store import load_model\n"
        "fwd = load_model(path)\n"
        "print(fwd.guard is not None, fwd.identity)\n"
        "print(*(load_model(pathlib.Path(path) / d).direction for d in ('dgrad', 'wgrad')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(target), "TRITON_INTERPRET": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert int(lines[0]) > 10
    assert lines[1] == "True", "the shipped H100 model is not found in a non-editable install"
    assert ":" in lines[2]
    from convdispatch.heuristics.model_store import MODELS_ROOT, load_model

    shipped = load_model(MODELS_ROOT / "h100")
    assert lines[3:5] == [str(shipped.guard is not None), shipped.identity], \
        "the installed forward model (and its guard) differ from the repository's"
    assert lines[5:7] == ["dgrad", "wgrad"], "the gradient models are missing from the install"
