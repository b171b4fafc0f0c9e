"""Validation reports on the CPU: offline metrics on a hand-checkable toy CSV and on a fake
sweep, bad inputs, live mode with the fake backend, and the autotune comparison's config
space and table (its measurements need a GPU)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from convdispatch import cli
from convdispatch.dispatcher import registry
from convdispatch.dispatcher.choosers import RuleChooser
from convdispatch.heuristics.dataset import load_dataset
from convdispatch.heuristics.features import FEATURE_NAMES, SCHEMA_VERSION
from convdispatch.heuristics.metrics import single_best_order
from convdispatch.heuristics.model_store import ModelLoadError, load_model
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.device import KNOWN
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.validation import autotune_compare as atc
from convdispatch.validation.backends import FakeBackend
from convdispatch.validation.live import FakeDispatcherTimer, run_live
from convdispatch.validation.report import (
    build_report,
    load_oracle,
    lopo_single_best_scores,
    scatter_kind,
)
from convdispatch.validation.sweep import run_sweep
from convdispatch.validation.sweep_csv import append_rows, read_sweep
from convdispatch.validation.sweep_meta import sidecar_path
from helpers import SweepProblem as P

H100 = KNOWN["h100"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"




# -- a model whose preference is known: one tree on BLOCK_M --------------------------------

def write_tree_model(out: Path, feature: str, threshold: float, left: float, right: float,
                     transform: str = "exp", method: str = "lgbm_regression",
                     meta: dict | None = None) -> Path:
    """A LightGBM text model with one split: raw score ``left`` if feature <= threshold."""
    out.mkdir(parents=True, exist_ok=True)
    names = list(FEATURE_NAMES)
    text = "\n".join([
        "tree", "version=v4", "num_class=1", "num_tree_per_iteration=1", "label_index=0",
        f"max_feature_idx={len(names) - 1}", "objective=regression",
        "feature_names=" + " ".join(names), "", "Tree=0", "num_leaves=2", "num_cat=0",
        f"split_feature={names.index(feature)}", "split_gain=1", f"threshold={threshold}",
        "decision_type=2", "left_child=-1", "right_child=-2", f"leaf_value={left} {right}",
        "leaf_weight=1 1", "leaf_count=1 1", "internal_value=0", "internal_weight=0",
        "internal_count=2", "is_linear=0", "shrinkage=1", "", "end of trees", ""])
    (out / "model.txt").write_text(text)
    unit = {"exp": "estimated us", "negate": "negated ranker score"}[transform]
    schema = {"schema_version": SCHEMA_VERSION, "feature_names": names, "method": method,
              "score": {"transform": transform, "unit": unit}, "model_file": "model.txt",
              "model_sha256": hashlib.sha256(text.encode()).hexdigest(),
              "gpu": {"name": H100.name, "key": "h100", "capability": [9, 0],
                      "sm_count": H100.sm_count}}
    (out / "schema.json").write_text(json.dumps(schema))
    (out / "meta.json").write_text(json.dumps(meta or {"data": {"sets": ["netA"],
                                                                 "holdout_sets": []}}))
    return out


def prefers_small_m(tmp: Path) -> Path:
    return write_tree_model(tmp / "small_m", "BLOCK_M", 48, 0.0, 1.0)


def cfg(bm: int) -> Config:
    return Config(BLOCK_M=bm, BLOCK_N=32, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=3)


# -- the toy oracle: 2 problems x 3 candidates, latencies chosen by hand -------------------

GEOM_A = ConvGeometry(n=1, c=32, k=32, h=8, w=8, r=3, s=3, pad=(0, 1, 1))
GEOM_B = ConvGeometry(n=2, c=32, k=64, h=8, w=8, r=3, s=3, pad=(0, 1, 1))
# problem -> (set, geometry, cuDNN us, {BLOCK_M: latency us or None for a failure})
TOY = {
    "netA/l0/n1/float16": ("netA", GEOM_A, 20.0, {32: 10.0, 64: 5.0, 128: 8.0}),
    "netB/l0/n2/float16": ("netB", GEOM_B, 2.0, {32: 4.0, 64: 6.0, 128: None}),
}


def toy_rows() -> list[dict]:
    rows = []
    for pid, (set_name, geom, cudnn, lats) in TOY.items():
        for bm, lat in lats.items():
            row = {"problem_id": pid, "set": set_name, "layer": "l0", **geom.as_row(),
                   "family": "implicit_gemm", "config": str(cfg(bm)), "cudnn_us": cudnn,
                   "gpu": H100.name, "cuda_graph": 1}
            if lat is None:
                row.update(status="compile_error", ok=0, error="injected")
            else:
                row.update(status="ok", ok=1, latency_us=lat, rel_err=1e-4)
            rows.append(row)
    return rows


@pytest.fixture
def toy_csv(tmp_path) -> Path:
    path = tmp_path / "toy.csv"
    append_rows(path, toy_rows())
    return path


def lat(pid: str, bm: int) -> float:
    return TOY[pid][3][bm]


A, B = list(TOY)


def test_toy_metrics_by_hand(toy_csv, tmp_path):
    out = tmp_path / "rep"
    m = build_report([toy_csv], prefers_small_m(tmp_path), out)
    model, single, oracle = m["overall"]["model"], m["overall"]["single_best"], \
        m["overall"]["oracle"]
    # The model ranks BLOCK_M=32 first everywhere: A gets 10 us (best 5), B gets its best.
    eff_a, eff_b = lat(A, 64) / lat(A, 32), lat(B, 32) / lat(B, 32)
    assert model["efficiency_geomean"] == pytest.approx(math.sqrt(eff_a * eff_b))
    assert model["top1"] == pytest.approx(0.5)
    assert model["top3"] == pytest.approx(1.0)  # A's winner is among its 3 candidates
    assert model["picked_failed_rate"] == 0.0
    assert model["vs_cudnn_geomean"] == pytest.approx(
        math.sqrt(TOY[A][2] / lat(A, 32) * TOY[B][2] / lat(B, 32)))
    assert oracle["vs_cudnn_geomean"] == pytest.approx(
        math.sqrt(TOY[A][2] / lat(A, 64) * TOY[B][2] / lat(B, 32)))
    # Leave-one-problem-out single best: A is ordered by B's rows alone (BLOCK_M=32 is B's
    # best, 128 unknown there) -> 32; B by A's rows (64 best) -> 64.
    assert single["efficiency_geomean"] == pytest.approx(
        math.sqrt(lat(A, 64) / lat(A, 32) * lat(B, 32) / lat(B, 64)))
    per = pd.read_csv(out / "per_problem.csv").set_index("problem_id")
    assert per.loc[A, "single_best_choice"].endswith(str(cfg(32)))
    assert per.loc[B, "single_best_choice"].endswith(str(cfg(64)))
    assert per.loc[A, "winner"] == f"implicit_gemm:{cfg(64)}"
    assert per.loc[B, "model_us"] == lat(B, 32)
    worst = m["worst"]
    assert [w["problem_id"] for w in worst] == [A, B]
    assert worst[0]["winner_us"] == lat(A, 64) and worst[0]["model_us"] == lat(A, 32)
    splits = {g["group"]: g["problems"] for g in m["groups"]["split"]}
    assert splits == {"train": 1, "not in model data": 1}


def test_toy_rule_choice_matches_rule_chooser(toy_csv, tmp_path):
    m = build_report([toy_csv], prefers_small_m(tmp_path), tmp_path / "rep")
    per = pd.read_csv(tmp_path / "rep" / "per_problem.csv").set_index("problem_id")
    effs = []
    for pid, (_, geom, _, lats) in TOY.items():
        ok = [Candidate("implicit_gemm", cfg(bm)) for bm, v in lats.items() if v is not None]
        pick = RuleChooser().choose(geom, ok, H100).candidate
        assert per.loc[pid, "rule_choice"] == pick.id
        effs.append(min(v for v in lats.values() if v) / lats[pick.config["BLOCK_M"]])
    assert m["overall"]["rule"]["efficiency_geomean"] == pytest.approx(
        math.exp(np.mean(np.log(effs))))


def test_toy_failed_first_choice_is_counted(toy_csv, tmp_path):
    # Prefers BLOCK_M=128, which failed on B: B falls back to its best-ranked ok row.
    model = write_tree_model(tmp_path / "big_m", "BLOCK_M", 96, 1.0, 0.0)
    m = build_report([toy_csv], model, tmp_path / "rep")
    s = m["overall"]["model"]
    assert s["picked_failed_rate"] == pytest.approx(0.5)
    # B: 32 and 64 tie on score -> the smaller candidate id (BLOCK_M=32) -> its best.
    assert s["efficiency_geomean"] == pytest.approx(math.sqrt(lat(A, 64) / lat(A, 128) * 1.0))


def test_report_files_and_header(toy_csv, tmp_path):
    out = tmp_path / "rep"
    build_report([toy_csv], prefers_small_m(tmp_path), out)
    for name in ("efficiency_hist.png", "efficiency_cdf.png", "model_scatter.png"):
        assert (out / name).read_bytes()[:8] == PNG_MAGIC, name
    metrics = json.loads((out / "metrics.json").read_text())
    md = (out / "report.md").read_text()
    assert H100.name in md
    assert metrics["header"]["model"]["identity"] in md
    assert "no sidecar" in md  # the toy CSV has none: said, not invented
    for title in ("By network / set", "By family of the oracle winner", "By dtype",
                  "By 2D / 3D", "worst problems"):
        assert title in md


def test_scatter_kind_follows_the_model(tmp_path):
    reg = load_model(write_tree_model(tmp_path / "a", "BLOCK_M", 48, 0, 1))
    rank = load_model(write_tree_model(tmp_path / "b", "BLOCK_M", 48, 0, 1, "negate",
                                       "lgbm_lambdarank"))
    assert scatter_kind(reg) == "latency"
    assert scatter_kind(rank) == "rank"


def test_problems_filter(toy_csv, tmp_path):
    m = build_report([toy_csv], prefers_small_m(tmp_path), tmp_path / "r", "netB")
    assert m["header"]["problems"] == 1
    with pytest.raises(ValueError, match="matches no problem"):
        build_report([toy_csv], prefers_small_m(tmp_path), tmp_path / "r2", "nothing*")


# -- bad inputs ----------------------------------------------------------------------------

def test_missing_csv(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        build_report([tmp_path / "nope.csv"], prefers_small_m(tmp_path), tmp_path / "r")


def test_malformed_csv(toy_csv, tmp_path):
    text = toy_csv.read_text().splitlines()
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([text[0], text[1].replace(",10,", ",ten,", 1), *text[2:]]) + "\n")
    with pytest.raises(ValueError, match=r"bad.csv: line 2.*latency_us"):
        build_report([bad], prefers_small_m(tmp_path), tmp_path / "r")
    cut = tmp_path / "cut.csv"
    cut.write_text("problem_id,set\nx,y\n")
    with pytest.raises(ValueError, match="missing column"):
        build_report([cut], prefers_small_m(tmp_path), tmp_path / "r")


def test_model_dir_missing(toy_csv, tmp_path):
    with pytest.raises(ModelLoadError, match="model directory not found"):
        build_report([toy_csv], tmp_path / "no_model", tmp_path / "r")


def test_single_best_train_needs_its_files(toy_csv, tmp_path):
    model = write_tree_model(tmp_path / "m", "BLOCK_M", 48, 0, 1,
                             meta={"data": {"files": ["gone.csv"], "sets": ["netA"]}})
    with pytest.raises(FileNotFoundError, match="gone.csv"):
        build_report([toy_csv], model, tmp_path / "r", single_best="train")


def test_single_best_train_uses_training_rows(toy_csv, tmp_path):
    # Trained on A only: the order is A's (64 first), so B takes 64.
    train_csv = tmp_path / "train.csv"
    append_rows(train_csv, [r for r in toy_rows() if r["problem_id"] == A])
    model = write_tree_model(tmp_path / "m", "BLOCK_M", 48, 0, 1,
                             meta={"data": {"files": [str(train_csv)], "sets": ["netA"]}})
    build_report([toy_csv], model, tmp_path / "r", problems_filter="netB", single_best="train")
    per = pd.read_csv(tmp_path / "r" / "per_problem.csv")
    assert per["single_best_choice"].tolist() == [f"implicit_gemm:{cfg(64)}"]


def test_cli_errors(toy_csv, tmp_path, capsys):
    model = prefers_small_m(tmp_path)
    assert cli.main(["validate", "--oracle-csv", str(tmp_path / "x.csv"), "--model", str(model),
                     "--out", str(tmp_path / "r")]) == 2
    assert "x.csv not found" in capsys.readouterr().err
    assert cli.main(["validate", "--model", str(model), "--out", str(tmp_path / "r")]) == 2
    assert "--oracle-csv" in capsys.readouterr().err
    assert cli.main(["validate", "--live", "--model", str(model), "--out",
                     str(tmp_path / "r")]) == 2
    assert "--problems" in capsys.readouterr().err
    assert cli.main(["validate", "--oracle-csv", str(toy_csv), "--model", str(model),
                     "--out", str(tmp_path / "ok")]) == 0
    assert (tmp_path / "ok" / "report.md").exists()


# -- a fake sweep through the real registry --------------------------------------------------

def fake_problems() -> list[P]:
    out = []
    for i in range(4):
        g = ConvGeometry(n=1 + i, c=16 * (1 + i % 2), k=32, h=8, w=8, r=3, s=3, pad=(0, 1, 1))
        out.append(P(f"fake{i % 2}/l{i}/n{g.n}/float16", f"fake{i % 2}", f"l{i}", g))
    pw = ConvGeometry(n=2, c=32, k=32, h=8, w=8, r=1, s=1)
    out.append(P("fake0/pw/n2/float16", "fake0", "pw", pw))
    return out


@pytest.fixture(scope="module")
def fake_sweep(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "oracle.csv"
    run_sweep(fake_problems(), out, backend=FakeBackend(), jobs=1, quiet=True, command=["t"])
    return out


def test_lopo_matches_leaving_each_problem_out(fake_sweep):
    ds = load_dataset([fake_sweep])
    scores = lopo_single_best_scores(ds)
    for p in range(ds.n_problems):
        rest = ds.problem != p
        order = single_best_order(ds.problem[rest], ds.latency[rest], ds.ok[rest],
                                  ds.cand_id[rest])
        mine = ds.problem == p
        pos = {c: i for i, c in enumerate(order)}
        known = [c for c in ds.cand_id[mine] if c in pos]
        expect = min(known, key=pos.get) if known else min(ds.cand_id[mine])
        got = ds.cand_id[mine][np.argmin(scores[mine])]
        assert got == expect, ds.problem_keys[p]


def test_model_choice_is_model_rank_top(fake_sweep, tmp_path):
    lgb = pytest.importorskip("lightgbm")
    del lgb
    from convdispatch.heuristics.train import HyperParams, train

    model_dir = tmp_path / "model"
    train([fake_sweep], model_dir, methods=["lgbm_regression"], folds=2, log=lambda _m: None,
          hp=HyperParams(n_estimators=5, num_leaves=4, min_data_in_leaf=2))
    m = build_report([fake_sweep], model_dir, tmp_path / "rep")
    model = load_model(model_dir)
    per = pd.read_csv(tmp_path / "rep" / "per_problem.csv").set_index("problem_id")
    df = read_sweep(fake_sweep)
    for pid, rows in df[df["ok"] == 1].groupby("problem_id"):
        cands = [Candidate.parse(f"{f}:{c}") for f, c in zip(rows["family"], rows["config"])]
        geom = ConvGeometry.from_row(rows.iloc[0])
        assert per.loc[pid, "model_choice"] == model.rank(geom, cands, H100)[0][0].id
    assert m["header"]["problems"] == len(fake_problems())
    assert (tmp_path / "rep" / "model_scatter.png").read_bytes()[:8] == PNG_MAGIC


def test_dropped_problem_without_ok_rows(fake_sweep, tmp_path):
    df = read_sweep(fake_sweep)
    pid = df["problem_id"].iloc[0]
    rows = df[df["problem_id"] != pid].to_dict("records")
    rows += [dict(r, status="wrong", ok=0, latency_us=None)
             for r in df[df["problem_id"] == pid].to_dict("records")]
    path = tmp_path / "some_failed.csv"
    append_rows(path, [{k: v for k, v in r.items()} for r in rows])
    oracle = load_oracle([path])
    assert oracle.dropped_problems == [pid]
    assert oracle.ds.n_problems == len(fake_problems()) - 1


# -- live mode with the fake backend ---------------------------------------------------------

def test_live_fake_end_to_end(fake_sweep, tmp_path):
    out = tmp_path / "live"
    out.mkdir()
    # Start from the module's sweep: run_sweep resumes it (same harness), so no re-sweep.
    shutil.copy(fake_sweep, out / "oracle.csv")
    shutil.copy(sidecar_path(fake_sweep), sidecar_path(out / "oracle.csv"))
    problems = fake_problems()
    slow = problems[1].id
    model_dir = prefers_small_m(tmp_path)
    res = run_live(problems, model_dir, out, sweep_backend=FakeBackend(),
                   timer=FakeDispatcherTimer(slowdown={slow: 1.5}), quiet=True,
                   command=["test"])
    assert res["sweep"]["problems_skipped"] == len(problems)
    assert res["summary"]["drifted"] == [slow]
    assert res["summary"]["unverified"] == []
    live = pd.read_csv(out / "live.csv").set_index("problem_id")
    df = read_sweep(out / "oracle.csv")
    df["cand"] = df["family"] + ":" + df["config"]
    model = load_model(model_dir)
    for p in problems:
        pick = model.rank(p.geom, registry.candidates(p.geom, H100), H100)[0][0].id
        r = live.loc[p.id]
        assert r["dispatcher_choice"] == pick
        mine = df[df["problem_id"] == p.id]
        same = mine.loc[mine["cand"] == pick, "latency_us"].item()
        factor = 1.5 if p.id == slow else 1.0
        assert r["dispatcher_us"] == pytest.approx(same * factor)
        assert r["efficiency"] == pytest.approx(mine["latency_us"].min() / (same * factor))
        assert r["vs_cudnn"] == pytest.approx(mine["cudnn_us"].iloc[0] / (same * factor))
    md = (out / "live.md").read_text()
    assert slow in md and "drifted" in md
    assert (out / "offline" / "report.md").exists()


class Exploding(FakeDispatcherTimer):
    def time_dispatcher(self, problem):
        if problem.layer == "l0":
            raise RuntimeError("boom")
        return super().time_dispatcher(problem)


def test_live_records_a_failing_call_and_goes_on(fake_sweep, tmp_path):
    out = tmp_path / "live"
    out.mkdir()
    shutil.copy(fake_sweep, out / "oracle.csv")
    shutil.copy(sidecar_path(fake_sweep), sidecar_path(out / "oracle.csv"))
    res = run_live(fake_problems(), prefers_small_m(tmp_path), out,
                   sweep_backend=FakeBackend(), timer=Exploding(), offline=False, quiet=True)
    bad = [p.id for p in fake_problems() if p.layer == "l0"]
    assert res["summary"]["errors"] == bad
    assert res["summary"]["problems"] == len(fake_problems())
    assert "RuntimeError: boom" in (out / "live.md").read_text()


def test_fresh_triton_cache_is_temporary(monkeypatch):
    from convdispatch.validation.live import fresh_triton_cache

    monkeypatch.setenv("TRITON_CACHE_DIR", "/somewhere")
    with fresh_triton_cache() as tmp:
        assert os.environ["TRITON_CACHE_DIR"] == tmp and Path(tmp).is_dir()
    assert os.environ["TRITON_CACHE_DIR"] == "/somewhere" and not Path(tmp).exists()


def test_live_cli_fake_with_autotune_skips(tmp_path, capsys):
    model = prefers_small_m(tmp_path)
    out = tmp_path / "live"
    rc = cli.main(["validate", "--live", "--problems", "random_train:0:2", "--backend", "fake",
                   "--jobs", "1", "--limit-candidates", "3", "--model", str(model), "--out",
                   str(out), "--autotune", "--no-offline", "--quiet"])
    assert rc == 0
    assert "autotune comparison skipped" in capsys.readouterr().err
    res = json.loads((out / "live.json").read_text())
    assert res["summary"]["problems"] == 2
    assert "skipped" in (out / "live.md").read_text()


# -- the autotune comparison: what a CPU can check ------------------------------------------

def test_autotune_configs_are_the_registry_space():
    geom = ConvGeometry(n=8, c=48, k=64, h=14, w=14, r=3, s=3, pad=(0, 1, 1))
    cands = atc.registry_candidates(geom, H100)
    configs = atc.triton_configs(geom, cands)
    assert len(configs) == len(cands) > 1
    assert [atc.candidate_of(tc).id for tc in configs] == [c.id for c in cands]
    for tc in configs:
        bk = tc.kwargs["BLOCK_K"]
        assert tc.kwargs["EVEN_C"] == (48 % bk == 0)
        assert tc.kwargs["K_ITERS"] == 9 * math.ceil(48 / bk) == tc.kwargs["ITERS_PER_SPLIT"]
    grouped = ConvGeometry(n=1, c=64, k=64, g=4, h=8, w=8, r=3, s=3, pad=(0, 1, 1))
    assert atc.registry_candidates(grouped, H100) == []


def test_autotune_kernel_args_match_the_family_launch():
    """The tuned call passes what implicit_gemm's own launch passes (recorded)."""
    import torch
    from convdispatch.kernels.launcher import Recorder
    from convdispatch.validation.inputs import make_inputs

    geom = ConvGeometry(n=1, c=16, k=16, h=4, w=4, r=3, s=3, pad=(0, 1, 1))
    x, w, b = make_inputs(geom, "cpu", 0)
    out = torch.empty(1, 16, 4, 4, dtype=x.dtype).to(memory_format=torch.channels_last)
    call = atc.conv_call(geom, x, w, b, out)
    cand = atc.registry_candidates(geom, H100)[0]
    with Recorder() as rec:
        registry.family("implicit_gemm").launch(call, cand.config)
    step = rec.steps[0]
    args, fixed = atc.kernel_args(call)
    tuned = atc.tuned_values(geom, cand.config)
    expect = args + [tuned["K_ITERS"], tuned["ITERS_PER_SPLIT"]]
    assert len(step.args) == len(expect)
    for got, want in zip(step.args, expect):
        assert got is want if isinstance(want, torch.Tensor) else got == want
    cfg_kw = {k: v for k, v in tuned.items() if k not in ("K_ITERS", "ITERS_PER_SPLIT")}
    assert step.kwargs == {**fixed, **cfg_kw, "num_warps": cand.config["num_warps"],
                           "num_stages": cand.config["num_stages"]}


def test_autotuned_kernel_computes_the_convolution():
    """The tuned call (config-carried K_ITERS / EVEN_C) runs in the interpreter and is right;
    the benchmark is stubbed, so the choice is the config the stub times fastest."""
    import torch
    import torch.nn.functional as F
    from convdispatch.validation.inputs import conv_args, make_inputs

    geom = ConvGeometry(n=1, c=24, k=16, h=4, w=4, r=3, s=3, pad=(0, 1, 1))
    x, w, b = make_inputs(geom, "cpu", 1)
    out = torch.zeros(1, 16, 4, 4, dtype=x.dtype).to(memory_format=torch.channels_last)
    cands = [c for c in atc.registry_candidates(geom, H100) if c.config["BLOCK_K"] == 32][:2]
    assert len(cands) == 2 and 24 % 32 != 0  # EVEN_C is False: the masked path runs
    times = iter([2.0, 1.0])

    def bench(fn, quantiles):
        fn()
        t = next(times)
        return [t, t, t]

    run, launch = atc.tune_once(geom, atc.conv_call(geom, x, w, b, out),
                                atc.triton_configs(geom, cands), do_bench=bench)
    assert run.candidate == cands[1].id
    out.zero_()
    launch()
    ref = F.conv2d(x.double(), w.double(), None, **conv_args(geom))
    assert float((out.double() - ref).norm() / ref.norm()) < 5e-3


def test_autotune_table_formatting():
    rows = [{"problem_id": "p0", "configs": 5, "tune_first_call_s": 12.5,
             "tune_later_calls_s": [0.8, 0.7], "autotune_choice": "implicit_gemm:a",
             "choices": ["implicit_gemm:a", "implicit_gemm:b", "implicit_gemm:a"],
             "stable": False, "autotune_us": 20.0, "model_choice": "pointwise:c",
             "model_us": 10.0, "model_first_call_s": 0.4, "model_vs_autotune": 2.0},
            {"problem_id": "p1", "configs": 0, "note": "implicit_gemm: grouped",
             "model_choice": "grouped_gemm:d", "model_us": 3.0, "model_first_call_s": 0.1}]
    lines = atc.markdown_lines(rows)
    text = "\n".join(lines)
    assert "| p0 | 5 | 12.50 | 0.80, 0.70 | no (2 choices) |" in text
    assert "implicit_gemm: grouped" in text
    assert sum(1 for ln in lines if ln.startswith(("| p0 ", "| p1 "))) == 2
    row = atc.comparison_row({"problem_id": "p", "configs": 3, "autotune_us": 9.0},
                             FakeDispatch("x", 3.0, 0.2))
    assert row["model_vs_autotune"] == pytest.approx(3.0)
    assert "skipped" in "\n".join(atc.markdown_lines([], "comparison skipped: no GPU"))


@dataclass
class FakeDispatch:
    candidate: str
    latency_us: float
    first_call_s: float


def test_autotune_compare_skips_without_cuda(tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the comparison would run")
    assert atc.unavailable_reason() is not None
    rc = cli.main(["autotune-compare", "--problems", "smoke", "--model",
                   str(prefers_small_m(tmp_path)), "--out", str(tmp_path / "a")])
    assert rc == 0
    assert "skipped" in capsys.readouterr().err
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        atc.run_compare([], tmp_path, tmp_path / "a", None)


def test_paired_graph_times_alternate_and_take_each_sides_lowest_median(monkeypatch):
    """A stall lasting any two adjacent rounds does not reach either side's reported
    time, and neither side always runs first."""
    from convdispatch.validation import bench_layers

    order = bench_layers.PAIRED_ORDER
    assert sorted(order) == list("aaabbb") and order[0] != order[-1]
    for stalled in range(len(order) - 1):
        seen = []

        def fake_bench(fn, rep_ms, stalled=stalled, seen=seen):
            seen.append(fn())
            slow = len(seen) - 1 in (stalled, stalled + 1)
            return {"a": 1.0, "b": 2.0}[seen[-1]] * (7.0 if slow else 1.0)

        monkeypatch.setattr(bench_layers, "bench_graph", fake_bench)
        assert bench_layers.paired_graph_times(lambda: "a", lambda: "b", 10) == (1.0, 2.0)
        assert "".join(seen) == order


def test_row_compare_reports_old_against_new_rows(tmp_path, capsys):
    """row_compare: the rows measured again against those they replaced, per config and
    per family, and the families' best against cuDNN; bad CSVs are refused clearly."""
    import pandas as pd
    from convdispatch.validation.row_compare import compare, main

    def rows(us, fam="f", cfg=("a", "b")):
        return [dict(problem_id=f"p{i}", family=fam, config=c, ok=1, latency_us=t,
                     cudnn_us=20.0) for i in range(2) for c, t in zip(cfg, us)]

    old = pd.DataFrame(rows((10.0, 12.0)))
    sweep = pd.DataFrame(rows((5.0, 6.0)) + rows((8.0,), fam="other", cfg=("z",)))
    text = compare(sweep, old, show="p1")
    assert "rows measured again 4 of 4, both ok 4: per config old/new 2.000x" in text
    assert "f" in text and "2.000x (4 rows)" in text
    # best before: min(10, other 8) = 8 -> 2.5x cuDNN; now 5 -> 4x
    assert "before 2.500x, now 4.000x" in text
    assert "p1" in text.splitlines()[-1]
    with pytest.raises(ValueError, match="lacks the columns"):
        compare(sweep.drop(columns=["cudnn_us"]), old)
    with pytest.raises(ValueError, match="no row of the old CSV"):
        compare(sweep[sweep.family == "other"], old)
    sweep.to_csv(tmp_path / "s.csv", index=False)
    (tmp_path / "bad.csv").write_text("x\n1\n")
    assert main([str(tmp_path / "s.csv"), "--old", str(tmp_path / "bad.csv")]) == 2
    # several sweeps read as one; the shown problems summarised on their own
    sweep[sweep.family == "f"].to_csv(tmp_path / "s1.csv", index=False)
    sweep[sweep.family == "other"].to_csv(tmp_path / "s2.csv", index=False)
    old.to_csv(tmp_path / "old.csv", index=False)
    assert main([str(tmp_path / "s1.csv"), str(tmp_path / "s2.csv"), "--old",
                 str(tmp_path / "old.csv"), "--show", "p1"]) == 0
    out = capsys.readouterr().out
    assert "problems [p1] 1: the families' best old/new 2.000x" in out
    assert "before 2.500x, now 4.000x" in out


def test_probe_io_checks_times_and_writes(tmp_path, capsys):
    """probe_io: a probe's candidate is run, compared with the reference by norm and timed;
    one that raises is printed and skipped; rows become one CSV, no rows an error; rows
    streamed batch by batch."""
    import torch
    from convdispatch.validation.probe_io import checked_time, stream_rows, write_rows

    class Timer:  # timing.Timer: (median, p20, p80)
        def time(self, fn):
            fn()
            return 7.5, 7.0, 8.0

    ref = torch.ones(4)
    out = torch.zeros(4)
    got = checked_time("ok", lambda: out.copy_(ref * 1.01), out, ref, Timer(), lambda: out.sum)
    assert got is not None and got[0] == 7.5 and abs(got[1] - 0.01) < 1e-6

    def broken():
        raise RuntimeError("no kernel")

    assert checked_time("bad one", broken, out, ref, Timer(), lambda: out.sum) is None
    assert "bad one: RuntimeError: no kernel" in capsys.readouterr().out
    write_rows(tmp_path / "r.csv", [dict(a=1, b=2), dict(a=3, b=4)])
    assert (tmp_path / "r.csv").read_text().splitlines() == ["a,b", "1,2", "3,4"]
    with pytest.raises(ValueError, match="no rows"):
        write_rows(tmp_path / "e.csv", [])
    # Streamed: each batch is on disk before the next is made (a probe cut short keeps them).
    path = tmp_path / "s.csv"

    def batches():
        yield [dict(a=1, b=2)]
        yield []
        assert path.read_text().splitlines() == ["a,b", "1,2"]
        yield [dict(a=3, b=4)]

    stream_rows(path, batches())
    assert path.read_text().splitlines() == ["a,b", "1,2", "3,4"]


def test_probe_io_launch_errors_and_tile_groups():
    """launch_error: a row of the relative error of what the run wrote into a poisoned
    output (NaN where it wrote nothing), or of its error; tile_groups: candidate ids grouped
    by every config key but ITEMS (one compile a group)."""
    import torch
    from convdispatch.kernels.base import Candidate, Config
    from convdispatch.validation.probe_io import launch_error, tile_groups

    ref = torch.ones(4)
    row = launch_error(("p", "c"), lambda y: y.copy_(ref * 1.01), ref, torch.float16)
    assert row[:2] == ("p", "c") and abs(row[2] - 0.01) < 1e-3 and row[3] == ""
    assert launch_error(("p",), lambda y: None, ref, torch.float16)[1] == float("inf")

    def broken(_):
        raise RuntimeError("no kernel")

    assert launch_error(("p",), broken, ref, torch.float16) == ("p", None,
                                                                "RuntimeError: no kernel")
    cands = [Candidate("grouped_flat", Config(BLOCK_M=64, ITEMS=i, **extra))
             for i, extra in ((2, {}), (4, {}), (1, {"TMA": 1}), (2, {"TMA": 1}))]
    assert tile_groups(cands) == [(cands[0].id, cands[1].id), (cands[2].id, cands[3].id)]


def test_checked_in_workers_stops_on_a_task_that_never_returns(capsys):
    """probe_io.checked_in_workers: the rows of the tasks that return, keyed by their
    leading fields; a task whose worker hangs (or aborts) leaves its configs unchecked
    instead of blocking the probe, and so does one that raises (StopIteration too, which
    once passed for the end of the tasks), without stopping the others."""
    from convdispatch.validation.probe_io import checked_in_workers
    from probe_worker import check  # (a light module: the workers import it)

    tasks = [("stop", 0), ("a", 0), ("raise", 0), ("wrong", 0), ("hung", 600), ("b", 0)]
    checked = checked_in_workers(check, tasks, jobs=2, timeout_s=20)
    assert checked == {("a", 0): (1e-4, ""), ("wrong", 0): (0.5, ""), ("b", 0): (1e-4, "")}
    out = capsys.readouterr().out
    assert "no task finished in 20 s" in out
    assert "a task raised ValueError: no such config" in out
    assert "a task raised StopIteration" in out
    assert ("3 launches; 1 failed or wrong; 1 of 6 tasks never returned; 2 of 6 tasks "
            "raised") in out


def test_probe_io_fastest_tiles(tmp_path):
    """A problem's fastest tiles of one family across sweep CSVs, each at its fastest
    config; failed rows, other families and other problems ignored, a missing CSV skipped."""
    from convdispatch.validation.probe_io import fastest_tiles

    head = "problem_id,family,config,status,latency_us\n"
    tile = "BLOCK_M={};BLOCK_N=16;ITEMS={};num_stages=1;num_warps=2"
    (tmp_path / "a.csv").write_text(head + "\n".join([
        f"p,grouped_flat,{tile.format(64, 2)},ok,9.0",
        f"p,grouped_flat,{tile.format(64, 4)},ok,7.0",
        f"p,grouped_flat,{tile.format(128, 2)},error,1.0",
        f"p,grouped_packed,{tile.format(256, 2)},ok,2.0",
        f"q,grouped_flat,{tile.format(256, 2)},ok,1.0"]) + "\n")
    (tmp_path / "b.csv").write_text(head + f"p,grouped_flat,{tile.format(128, 8)},ok,8.0\n")
    paths = [str(tmp_path / n) for n in ("a.csv", "missing.csv", "b.csv")]
    got = fastest_tiles({"p"}, "grouped_flat", 2, paths)
    assert [(str(c), us) for c, us in got["p"]] == [(tile.format(64, 4), 7.0),
                                                    (tile.format(128, 8), 8.0)]
    assert set(got) == {"p"}
    assert len(fastest_tiles({"p"}, "grouped_flat", 1, paths)["p"]) == 1


def test_backward_bench_summary_keeps_full_passes_apart():
    """bench_backward's summary: per-direction rows in the direction table, one-backward
    rows (direction 'full') in their own, overlapped and in-order ratios side by side;
    an unknown direction is refused before any GPU work."""
    from convdispatch.validation import bench_backward as bb

    def row(cat, direction, ours, cudnn, in_order=None):
        r = dict(problem_id=f"p/{cat}/{direction}", category=cat, direction=direction,
                 geometry="g", chosen="c", ours_us=ours, cudnn_us=cudnn, rel_err=1e-4,
                 speedup_vs_cudnn=cudnn / ours, topk_speedup_vs_cudnn=cudnn / ours,
                 tflops=1.0)
        if in_order is not None:
            r.update(in_order_us=in_order, in_order_speedup_vs_cudnn=cudnn / in_order)
        return r

    rows = [row("grouped", "dgrad", 10.0, 15.0), row("grouped", "wgrad", 20.0, 10.0),
            row("grouped", "full", 20.0, 25.0, in_order=30.0)]
    env = dict(suite="s", dtype="float16", gpu="G", torch="t", triton="tr", cuda="c",
               date="d", chooser="model", layers="1 of 1", bf16_peak_tflops=1.0, command="x")
    md = bb.summary_md(rows, env)
    assert "| grouped | both | 2 | 0.87 | 0.50 | 0.87 |" in md  # 1.5 and 0.5 only
    assert "| grouped | 1 | 1.25 | 1.25 | 0.83 | 0.83 |" in md
    with pytest.raises(SystemExit, match="--directions"):
        bb.main(["--out", "/tmp/unused", "--directions", "dgrad,sideways"])


def test_same_choices_reports_rows_whose_choice_moved(tmp_path, capsys):
    from convdispatch.data.problems import problem_by_id
    from convdispatch.dispatcher import decide
    from convdispatch.validation import same_choices

    spec = KNOWN["h100"]
    pid = "mobilenet_v2/features.3.conv.1.0/n32/float16"
    now = {d: same_choices.choice(pid, d, spec) for d in ("forward", "wgrad", "full")}
    picks = {d: decide(problem_by_id(pid).geom, spec, direction=d).candidate.id
             for d in ("forward", "dgrad", "wgrad")}
    assert now == {"forward": picks["forward"], "wgrad": picks["wgrad"],
                   "full": f"{picks['dgrad']} & {picks['wgrad']}"}
    assert picks["forward"].startswith("depthwise") and picks["dgrad"].startswith("dgrad_")
    bench = tmp_path / "bench.csv"
    pd.DataFrame({"problem_id": [pid] * 3, "direction": ["forward", "wgrad", "full"],
                  "chosen": [now["forward"], "wgrad_gemm:SPLIT_K=1", now["full"]]}
                 ).to_csv(bench, index=False)
    n, diff = same_choices.differing(str(bench), spec)
    assert (n, diff) == (3, [(f"{pid} wgrad", "wgrad_gemm:SPLIT_K=1", now["wgrad"])])
    assert same_choices.main([str(bench)]) == 1
    assert "| 3 | 2 |" in capsys.readouterr().out
    pd.DataFrame({"problem_id": [pid], "chosen": [now["forward"]]}).to_csv(bench, index=False)
    assert same_choices.differing(str(bench), spec) == (1, [])
    assert same_choices.main([str(bench)]) == 0
    pd.DataFrame({"problem_id": [pid]}).to_csv(bench, index=False)
    with pytest.raises(ValueError, match="no column"):
        same_choices.differing(str(bench), spec)


def test_suite_pair_tables_by_hand():
    """``category_pair_lines`` and ``rerun_lines`` (the results' before / after tables) on
    two runs of two grouped layers and a dense one, worked out by hand."""
    from convdispatch.validation.bench_layers import category_pair_lines, rerun_lines

    def row(pid, cat, ratio, ours, cudnn, chosen):
        return {"problem_id": pid, "category": cat, "speedup_vs_cudnn": str(ratio),
                "call_us": str(ours), "cudnn_us": str(cudnn), "chosen": chosen}

    old = {r["problem_id"]: r for r in (row("a", "grouped", 1.0, 10, 10, "x"),
                                         row("b", "grouped", 4.0, 20, 80, "y"),
                                         row("c", "dense", 1.0, 5, 5, "z"))}
    new = [row("a", "grouped", 2.0, 5, 10, "x2"), row("b", "grouped", 2.0, 20, 40, "y"),
           row("c", "dense", 0.5, 10, 5, "z")]
    # grouped: x cuDNN 2.0 -> 2.0, min 2.00, ours sqrt(10/5 * 20/20), cuDNN's
    # sqrt(10/10 * 80/40), one choice changed; dense: 1.0 -> 0.5, ours 5/10.
    assert category_pair_lines(old, new, "float16") == [
        "| float16 | dense | 1 | 1.000 | 0.500 | 0.50 | 0.500 | 1.000 | 0 |",
        "| float16 | grouped | 2 | 2.000 | 2.000 | 2.00 | 1.414 | 1.414 | 1 |"]
    table = rerun_lines("1", "2", [("bfloat16", old, new[:2])])
    assert table[0].startswith("| dtype | x cuDNN (call 1) | call 2 | min | our time 1 / 2 |")
    assert table[2] == "| bfloat16 | 2.000 | 2.000 | 2.00 | 1.414 | 1.414 | 1 of 2 |"


def test_suite_layers_and_reference():
    """``suite_layers`` keeps one category of a suite (the issue-6 suite's 21 grouped
    layers, ResNeXt-50's and ResNeXt3D-50's); ``reference`` is torch's conv of the rank in
    float32, bias or none."""
    import torch
    import torch.nn.functional as F
    from convdispatch.kernels.geometry import ConvGeometry
    from convdispatch.validation.bench_layers import (
        category,
        conv_args,
        make_tensors,
        reference,
        suite_layers,
    )

    grouped = suite_layers("issue6", "float16", "grouped")
    assert len(grouped) == 21 and all(category(p) == "grouped" for p in grouped)
    assert {p.set for p in grouped} == {"resnext50_32x4d", "video3d"}
    for geom, conv in ((ConvGeometry(n=2, c=8, k=8, g=2, h=6, w=5, r=3, s=3, pad=(0, 1, 1),
                                     bias=True), F.conv2d),
                       (ConvGeometry(n=1, c=4, k=6, d=3, h=4, w=4, t=3, r=3, s=3,
                                     stride=(1, 2, 2), pad=(1, 1, 1), dims=3), F.conv3d)):
        x, w, b = make_tensors(geom, "cpu", seed=0)
        ref = reference(geom, x, w, b)
        assert ref.dtype == torch.float32
        want = conv(x.float(), w.float(), None if b is None else b.float(), **conv_args(geom))
        assert torch.equal(ref, want)
        if b is not None:
            assert not torch.equal(ref, reference(geom, x, w, None))
