"""The training check (``validation.train_check``) on the CPU: the interpreter runs
convdispatch's side; in bfloat16 its grouped 3x3s' backward passes ask the "backward"
direction (on the interpreter: the two directions' kernels) and the report names them."""

from __future__ import annotations

import csv

from convdispatch.validation import train_check


def test_bfloat16_training_check_runs_and_names_its_passes(tmp_path, clean_dispatcher):
    out = tmp_path / "tc"
    assert train_check.main(["--out", str(out), "--steps", "1", "--batch", "2", "--size", "16",
                             "--device", "cpu", "--dtype", "bfloat16"]) == 0
    rows = list(csv.DictReader(open(out / "loss.csv")))
    assert len(rows) == 1
    # the loss is float32 (a bfloat16 one would hide gaps below 2**-8)
    assert float(rows[0]["torch_loss"]) != round(float(rows[0]["torch_loss"]), 2)
    assert float(rows[0]["rel_gap"]) < 1e-2
    md = (out / "train.md").read_text()
    assert "bfloat16, channels_last" in md
    assert md.count("groups=") == 2 and "backward_pair" in md
