"""The sweep harness on the CPU with the fake backend: resume, interruption, shards, merge,
failure paths, CSV validation and the CLI. Worker processes are real (spawned)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from convdispatch import cli
from convdispatch.dispatcher import registry
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.device import lookup
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.validation import sweep as sweep_mod
from convdispatch.validation.backends import FakeBackend
from convdispatch.validation.merge import merge
from convdispatch.validation.sweep import parse_shard, run_sweep, shard_problems, spread
from convdispatch.validation.sweep_csv import FIELDNAMES, append_rows, read_sweep
from convdispatch.validation.sweep_meta import read_sidecar, sidecar_path, write_sidecar
from convdispatch.validation.sweep_schema import KEY_COLUMNS, STATUSES
from helpers import SweepProblem as P

LIMIT = 3  # candidates per problem from the real registry




def make_problems(count: int) -> list[P]:
    out = []
    for i in range(count):
        g = ConvGeometry(n=1 + i, c=16 * (1 + i % 2), k=32, h=8, w=8, r=3, s=3, pad=(0, 1, 1))
        out.append(P(f"unit/l{i}/n{g.n}/float16", "unit", f"l{i}", g))
    return out


PROBLEMS = make_problems(4)


def sweep(problems, out, **kw):
    kw.setdefault("backend", FakeBackend())
    kw.setdefault("jobs", 1)
    kw.setdefault("limit_candidates", LIMIT)
    return run_sweep(problems, out, quiet=True, command=["test"], **kw)


def rows_by_key(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(list(KEY_COLUMNS)).reset_index(drop=True)


@pytest.fixture(scope="module")
def full_run(tmp_path_factory) -> Path:
    """One complete, uninterrupted sweep of PROBLEMS through the real registry."""
    out = tmp_path_factory.mktemp("full") / "full.csv"
    summary = sweep(PROBLEMS, out, jobs=2)
    assert summary["problems_done"] == len(PROBLEMS)
    assert not summary["interrupted"]
    return out


def copy_run(src: Path, dst: Path) -> Path:
    shutil.copy(src, dst)
    shutil.copy(sidecar_path(src), sidecar_path(dst))
    return dst


# -- a complete run ------------------------------------------------------------------

def test_rows_follow_registry_and_fake_backend(full_run):
    df = read_sweep(full_run)
    spec = lookup("h100")
    fake = FakeBackend()
    assert list(df.columns) == FIELDNAMES
    for p in PROBLEMS:
        want = spread(registry.candidates(p.geom, spec), LIMIT)
        got = df[df.problem_id == p.id]
        assert sorted(got.family + ":" + got.config) == sorted(c.id for c in want)
        assert (got["set"] == p.set).all() and (got["layer"] == p.layer).all()
        for col, val in p.geom.as_row().items():
            assert (got[col] == val).all(), col
        cudnn = fake.time(p.id, p.geom, None).latency[0]
        assert got["cudnn_us"].tolist() == pytest.approx([cudnn] * len(got), rel=1e-6)
        for _, r in got.iterrows():
            lat = fake.time(p.id, p.geom, f"{r.family}:{r.config}").latency
            assert r.latency_us == pytest.approx(lat[0], rel=1e-6)
            assert r.latency_p20_us <= r.latency_us <= r.latency_p80_us
            assert r.tflops == pytest.approx(p.geom.flops / r.latency_us / 1e6, rel=1e-5)
            assert r.gbps == pytest.approx(p.geom.min_bytes / r.latency_us / 1e3, rel=1e-5)
    assert set(df.status) == {"ok"} and (df.ok == 1).all() and (df.cuda_graph == 1).all()
    assert (df.gpu == fake.environment()["gpu"]["name"]).all()


def test_sidecar_records_environment_and_summary(full_run):
    meta = read_sidecar(sidecar_path(full_run))
    assert meta["gpu"]["sm_count"] == lookup("h100").sm_count
    assert meta["software"]["triton"] and meta["software"]["torch"]
    assert meta["harness"]["backend"] == "fake"
    assert meta["harness"]["limit_candidates"] == LIMIT
    assert meta["shard"] == [0, 1]
    run = meta["runs"][-1]
    assert run["command"] == ["test"] and run["start"] and run["end"] and run["host"]
    s = meta["summary"]
    assert s["rows_written"] == len(read_sweep(full_run))
    assert s["candidates_timed"] == s["rows_written"]
    assert s["candidates_timed_per_s"] > 0 and s["compile_s_mean"] > 0


def test_resume_skips_done_rows(full_run, tmp_path):
    out = copy_run(full_run, tmp_path / "resume.csv")
    before = out.read_bytes()
    summary = sweep(PROBLEMS, out)
    assert summary["problems_skipped"] == len(PROBLEMS)
    assert summary["rows_written"] == 0 and summary["problems_done"] == 0
    assert out.read_bytes() == before
    assert len(read_sidecar(sidecar_path(out))["runs"]) == 2


def test_families_limit_a_sweep_and_unknown_ones_are_refused(tmp_path):
    out = tmp_path / "fam.csv"
    sweep(PROBLEMS[:2], out, families=["implicit_gemm"], limit_candidates=None)
    df = read_sweep(out)
    spec = lookup("h100")
    for p in PROBLEMS[:2]:
        want = [c for c in registry.candidates(p.geom, spec) if c.family == "implicit_gemm"]
        got = df[df.problem_id == p.id]
        assert want and sorted(got.family + ":" + got.config) == sorted(c.id for c in want)
    assert read_sidecar(sidecar_path(out))["runs"][-1]["families"] == ["implicit_gemm"]
    with pytest.raises(ValueError, match="'no_such_family'"):
        sweep(PROBLEMS[:1], tmp_path / "bad.csv", families=["no_such_family"])
    with pytest.raises(ValueError, match="'dgrad_gemm'"):
        sweep(PROBLEMS[:1], tmp_path / "bad.csv", families=["dgrad_gemm"])


def test_retire_sets_rows_aside_and_the_sweep_measures_them_again(full_run, tmp_path,
                                                                capsys):
    """`convdispatch retire`: a changed family's rows move to <name>.retired.csv, the
    others stay byte for byte, and the next sweep of the same problems measures only the
    retired family again."""
    out = copy_run(full_run, tmp_path / "retire.csv")
    before = read_sweep(out)
    fam = before.family.iloc[0]
    keep_lines = [ln for ln in out.read_text().splitlines()[1:] if f",{fam}," not in ln]
    assert cli.main(["retire", "--families", fam, str(out)]) == 0
    assert f"{(before.family == fam).sum()} rows of {fam} moved" in capsys.readouterr().out
    assert out.read_text().splitlines()[1:] == keep_lines
    retired = read_sweep(tmp_path / "retire.retired.csv")
    assert len(retired) == (before.family == fam).sum() and set(retired.family) == {fam}
    summary = sweep(PROBLEMS, out)
    assert summary["rows_written"] == len(retired)
    assert rows_by_key(read_sweep(out))[list(KEY_COLUMNS)].equals(
        rows_by_key(before)[list(KEY_COLUMNS)])
    # A second retire appends to the side file (an archive: keys repeat); unknown
    # families are refused.
    assert cli.main(["retire", "--families", fam, str(out)]) == 0
    assert len(pd.read_csv(tmp_path / "retire.retired.csv")) == 2 * len(retired)
    capsys.readouterr()
    assert cli.main(["retire", "--families", "no_such_family", str(out)]) == 2
    assert "unknown kernel family ['no_such_family']" in capsys.readouterr().err
    # A malformed CSV is refused before anything moves.
    bad = tmp_path / "bad.csv"
    bad.write_text("problem_id,family\nx,implicit_gemm\n")
    assert cli.main(["retire", "--families", fam, str(bad)]) == 2
    assert "missing column" in capsys.readouterr().err
    assert bad.read_text() == "problem_id,family\nx,implicit_gemm\n"
    assert cli.main(["retire", str(out)]) == 2
    assert "nothing to retire" in capsys.readouterr().err


def test_retire_noisy_rows_by_their_latency_spread(full_run, tmp_path, capsys):
    """--max-spread sets aside rows whose P80/P20 latency shows a disturbed timing; the
    next sweep times just those again."""
    out = copy_run(full_run, tmp_path / "noisy.csv")
    lines = out.read_text().splitlines(keepends=True)
    df = read_sweep(out)
    cols = lines[0].rstrip("\n").split(",")
    p80 = cols.index("latency_p80_us")
    noisy = [3, 7]  # data rows whose P80 becomes 3x their P20
    for i in noisy:
        cells = lines[i + 1].rstrip("\n").split(",")
        cells[p80] = str(3 * df["latency_p20_us"].iloc[i])
        lines[i + 1] = ",".join(cells) + "\n"
    out.write_text("".join(lines))
    assert cli.main(["retire", "--max-spread", "1.5", str(out)]) == 0
    assert "2 rows with P80/P20 > 1.5 moved" in capsys.readouterr().out
    assert len(read_sweep(out)) == len(df) - 2
    assert sweep(PROBLEMS, out)["rows_written"] == 2
    again = read_sweep(out)
    assert len(again) == len(df)
    assert (again["latency_p80_us"] / again["latency_p20_us"]).max() < 1.5
    with pytest.raises(SystemExit):  # a spread must exceed 1
        cli.main(["retire", "--max-spread", "1", str(out)])
    assert "expected a number > 1" in capsys.readouterr().err


def test_retire_strided_only_keeps_the_familys_unstrided_rows(full_run, tmp_path, capsys):
    """--strided-only narrows --families to their rows of strided convolutions (a kernel
    that changed at a stride only); the family's other rows stay byte for byte."""
    out = copy_run(full_run, tmp_path / "strided.csv")
    lines = out.read_text().splitlines(keepends=True)
    cols = lines[0].rstrip("\n").split(",")
    df = read_sweep(out)
    fam = df.family.value_counts().index[0]
    rows = [i for i in range(len(df)) if df.family.iloc[i] == fam
            and df.stride_h.iloc[i] == 1 and df.stride_d.iloc[i] == 1 and df.stride_w.iloc[i] == 1]
    assert len(rows) >= 3
    for i in rows[:2]:  # two of its rows now read as stride 2 along H
        cells = lines[i + 1].rstrip("\n").split(",")
        cells[cols.index("stride_h")] = "2"
        lines[i + 1] = ",".join(cells) + "\n"
    out.write_text("".join(lines))
    strided = [lines[i + 1] for i in range(len(df)) if df.family.iloc[i] == fam and (
        i in rows[:2] or max(df.stride_d.iloc[i], df.stride_h.iloc[i], df.stride_w.iloc[i]) > 1)]
    assert cli.main(["retire", "--families", fam, "--strided-only", str(out)]) == 0
    assert f"{len(strided)} rows of {fam} (strided convolutions) moved" in \
        capsys.readouterr().out
    assert out.read_text().splitlines(keepends=True)[1:] == [
        ln for ln in lines[1:] if ln not in strided]
    assert (tmp_path / "strided.retired.csv").read_text().splitlines(keepends=True)[1:] == \
        strided
    assert cli.main(["retire", "--strided-only", "--max-spread", "2", str(out)]) == 2
    assert "narrow --families" in capsys.readouterr().err


def test_retire_dims_takes_only_that_many_spatial_dimensions(tmp_path, capsys):
    """--dims narrows --families to their rows of 2D or of 3D convolutions (a kernel that
    changed for one of them); every other row stays byte for byte."""
    root = Path(__file__).resolve().parents[1] / "data" / "sweeps" / "h100"
    rows = pd.read_csv(root / "train.csv")
    pids = ["video3d/resnext3d_50.layer2.0.conv2/n8/float16",
            "resnext101/resnext101_32x8d.layer2.1.conv2/n64/float16"]
    rows = rows[rows.problem_id.isin(pids) & rows.family.isin(["grouped_flat",
                                                                "grouped_packed"])]
    assert set(rows.dims) == {2, 3}
    out = tmp_path / "dims.csv"
    rows.to_csv(out, index=False)
    lines = out.read_text().splitlines(keepends=True)
    takes = list((rows.family == "grouped_flat") & (rows.dims == 3))
    assert 0 < sum(takes) < (rows.family == "grouped_flat").sum()
    assert cli.main(["retire", "--families", "grouped_flat", "--dims", "3", str(out)]) == 0
    assert f"{sum(takes)} rows of grouped_flat (3D convolutions) moved" in \
        capsys.readouterr().out
    assert out.read_text().splitlines(keepends=True)[1:] == [
        ln for ln, t in zip(lines[1:], takes) if not t]
    assert (tmp_path / "dims.retired.csv").read_text().splitlines(keepends=True)[1:] == [
        ln for ln, t in zip(lines[1:], takes) if t]
    assert cli.main(["retire", "--dims", "2", "--max-spread", "2", str(out)]) == 2
    assert "narrow --families" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["retire", "--families", "grouped_flat", "--dims", "1", str(out)])


def test_retire_row_reuse_only_takes_the_configs_that_run_it(tmp_path, capsys):
    """--row-reuse-only narrows --families to the rows of grouped_flat and its dgrad twin
    whose config runs the row-reuse schedule on the row's problem (kernels/grouped_flat.py
    row_reuse; the twin on the forward problem it launches); the other rows stay."""
    from convdispatch.kernels.dgrad_forward import ForwardDgradFamily
    from convdispatch.kernels.grouped_flat import row_reuse

    root = Path(__file__).resolve().parents[1] / "data" / "sweeps" / "h100"
    pid = "resnext50_32x4d/layer2.1.conv2/n32/float16"
    fwd = pd.read_csv(root / "holdout.csv")
    fwd = fwd[(fwd.problem_id == pid) & fwd.family.isin(["grouped_flat", "grouped_packed"])]
    out = tmp_path / "flat.csv"
    fwd.to_csv(out, index=False)
    geom = ConvGeometry.from_row(fwd.iloc[0])
    takes = [f == "grouped_flat" and row_reuse(geom, Config.parse(c))
             for f, c in zip(fwd.family, fwd.config)]
    assert 0 < sum(takes) < (fwd.family == "grouped_flat").sum()
    assert cli.main(["retire", "--families", "grouped_flat,grouped_packed",
                     "--row-reuse-only", str(out)]) == 0
    assert f"{sum(takes)} rows of grouped_flat,grouped_packed (row-reuse configs) moved" in \
        capsys.readouterr().out
    assert len(read_sweep(out)) == len(fwd) - sum(takes)
    retired = read_sweep(tmp_path / "flat.retired.csv")
    assert sorted(retired.config) == sorted(fwd.config[takes])
    # The dgrad twin's rows: the same rule on the forward problems its launch runs (at
    # stride 2, one a phase of dX: layer3.0's 2x1 and 2x2 phases take it, its first, 1x1,
    # never does).
    strided = "resnext50_32x4d/layer3.0.conv2/n32/float16"
    dgrad = pd.read_csv(root / "bwd_dgrad.csv")
    dgrad = dgrad[dgrad.problem_id.isin([pid, strided])
                  & (dgrad.family == "dgrad_grouped_flat")]
    out = tmp_path / "twin.csv"
    dgrad.to_csv(out, index=False)
    takes, later = [], 0
    for row in dgrad.to_dict("records"):
        phases = [row_reuse(p, Config.parse(row["config"]))
                  for p in ForwardDgradFamily.problems(ConvGeometry.from_row(row))]
        takes.append(any(phases))
        later += row["problem_id"] == strided and any(phases) and not phases[0]
    assert 0 < sum(takes) < len(dgrad) and later > 0
    assert cli.main(["retire", "--families", "dgrad_grouped_flat", "--row-reuse-only",
                     str(out)]) == 0
    assert sorted(read_sweep(tmp_path / "twin.retired.csv").config) == sorted(
        dgrad.config[takes])


def test_pool_that_fails_to_close_keeps_the_runs_summary(tmp_path, monkeypatch, capsys):
    """Under `timeout -s INT` the workers are signalled too; closing them may fail, after
    the run's summary is in the sidecar."""
    close = sweep_mod.WorkerPool.close

    def broken_close(self):
        close(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_mod.WorkerPool, "close", broken_close)
    out = tmp_path / "close.csv"
    summary = sweep(PROBLEMS[:1], out)
    assert summary["problems_done"] == 1
    assert read_sidecar(sidecar_path(out))["runs"][-1]["summary"] == summary
    assert "closing a worker pool failed: KeyboardInterrupt" in capsys.readouterr().err


def test_resume_refuses_other_settings(full_run, tmp_path):
    out = copy_run(full_run, tmp_path / "other.csv")
    with pytest.raises(ValueError, match="limit_candidates"):
        sweep(PROBLEMS, out, limit_candidates=LIMIT + 1)
    with pytest.raises(ValueError, match="gpu.name"):
        sweep(PROBLEMS, out, backend=FakeBackend(gpu="a100"))
    with pytest.raises(ValueError, match="shard"):
        sweep(PROBLEMS, out, shard=(0, 2))
    sidecar_path(out).unlink()
    with pytest.raises(ValueError, match="sidecar"):
        sweep(PROBLEMS, out)


# -- interruption --------------------------------------------------------------------

def test_interrupted_run_keeps_finished_problems(full_run, tmp_path, monkeypatch):
    out = tmp_path / "cut.csv"
    real_append = sweep_mod.append_rows
    calls = []

    def append_then_die(path, rows):
        if len(calls) == 2:  # killed after two problems were written
            raise KeyboardInterrupt
        calls.append(1)
        return real_append(path, rows)

    monkeypatch.setattr(sweep_mod, "append_rows", append_then_die)
    with pytest.raises(KeyboardInterrupt):
        sweep(PROBLEMS, out)
    monkeypatch.undo()
    cut = read_sweep(out)
    assert cut.problem_id.nunique() == 2
    meta = read_sidecar(sidecar_path(out))
    assert meta["runs"][-1]["interrupted"] is True
    assert meta["summary"]["problems_done"] == 2

    finished = out.read_bytes()
    with open(out, "ab") as f:  # a row torn by a kill mid-write
        f.write(b"unit/l9/n1/float16,unit,l9,1,16")
    summary = sweep(PROBLEMS, out)
    assert summary["problems_done"] == len(PROBLEMS) - 2
    assert out.read_bytes().startswith(finished)
    pd.testing.assert_frame_equal(rows_by_key(read_sweep(out)), rows_by_key(read_sweep(full_run)))


# -- shards and merge ----------------------------------------------------------------

def test_shards_partition_problems():
    problems = make_problems(23)
    for n in (1, 2, 3, 5):
        parts = [shard_problems(problems, (i, n)) for i in range(n)]
        ids = [p.id for part in parts for p in part]
        assert sorted(ids) == sorted(p.id for p in problems)
        assert max(map(len, parts)) - min(map(len, parts)) <= 1
        assert parts == [shard_problems(problems[::-1], (i, n)) for i in range(n)]
    for bad in ("3/2", "2/2", "1", "a/b", "-1/2", "0/0"):
        with pytest.raises(ValueError, match="shard"):
            parse_shard(bad)
    assert parse_shard("1/4") == (1, 4)


def test_cli_shards_merge_to_the_full_run(full_run, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("convdispatch.data.problems.load_problems",
                        lambda spec, dtypes=None: list(PROBLEMS))
    shards = []
    for i in range(2):
        out = tmp_path / f"s{i}.csv"
        rc = cli.main(["sweep", "--problems", "unit", "--out", str(out), "--backend", "fake",
                       "--shard", f"{i}/2", "--jobs", "1", "--limit-candidates", str(LIMIT),
                       "--quiet"])
        assert rc == 0
        shards.append(out)
    merged = tmp_path / "merged.csv"
    assert cli.main(["merge", "--out", str(merged), *map(str, shards)]) == 0
    pd.testing.assert_frame_equal(rows_by_key(read_sweep(merged)),
                                  rows_by_key(read_sweep(full_run)))
    meta = read_sidecar(sidecar_path(merged))
    assert meta["merged"]["complete"] and meta["shard"] == [0, 1]
    assert [s["shard"] for s in meta["shards"]] == [[0, 2], [1, 2]]
    assert "--shard" in meta["shards"][0]["runs"][0]["command"]

    # refusals: existing output, duplicate keys, mismatched sidecars
    with pytest.raises(ValueError, match="already exists"):
        merge(shards, merged)
    dup = copy_run(shards[0], tmp_path / "dup.csv")
    with pytest.raises(ValueError, match="more than one shard"):
        merge([shards[0], dup], tmp_path / "m2.csv")
    odd = copy_run(shards[1], tmp_path / "odd.csv")
    meta = read_sidecar(sidecar_path(odd))
    meta["software"]["triton"] = "0.0"
    write_sidecar(sidecar_path(odd), meta)
    with pytest.raises(ValueError, match="triton"):
        merge([shards[0], odd], tmp_path / "m3.csv")
    assert not (tmp_path / "m3.csv").exists()
    capsys.readouterr()
    assert cli.main(["merge", "--out", str(tmp_path / "m4.csv"), str(shards[0]),
                     str(dup)]) == 2
    assert "more than one shard" in capsys.readouterr().err


# -- failure paths -------------------------------------------------------------------

def stub_candidates(names):
    cands = [Candidate(f"fam{i % 2}", Config(BLOCK_M=16 * (i + 1))) for i in range(len(names))]
    return cands, {name: c.id for name, c in zip(names, cands)}


def test_failures_are_recorded_and_later_candidates_timed(tmp_path, monkeypatch):
    names = ["ok0", "compile", "wrong", "runtime", "crash_check", "ok1", "crash_time", "ok2",
             "hang_time", "ok3"]
    cands, ids = stub_candidates(names)
    monkeypatch.setattr(registry, "candidates", lambda geom, spec, direction="forward": list(cands))
    failures = {ids["compile"]: "compile_error", ids["wrong"]: "wrong",
                ids["runtime"]: "runtime_error", ids["crash_check"]: "crash_check",
                ids["crash_time"]: "crash_time", ids["hang_time"]: "hang_time"}
    out = tmp_path / "fail.csv"
    summary = sweep(PROBLEMS[:1], out, backend=FakeBackend(failures=failures), jobs=1,
                    limit_candidates=None, time_timeout_s=3)
    df = read_sweep(out).set_index("config")
    status = {n: df.loc[str(c.config), "status"] for n, c in zip(names, cands)}
    assert status == {"ok0": "ok", "compile": "compile_error", "wrong": "wrong",
                      "runtime": "runtime_error", "crash_check": "crashed", "ok1": "ok",
                      "crash_time": "crashed", "ok2": "ok", "hang_time": "timeout", "ok3": "ok"}
    for n, c in zip(names, cands):
        row = df.loc[str(c.config)]
        assert (row.ok == 1) == (status[n] == "ok")
        assert pd.isna(row.latency_us) == (status[n] != "ok"), n
        assert row.cuda_graph == (status[n] == "ok"), n
        assert (row.error == "") == (status[n] == "ok"), n
    assert df.loc[str(cands[names.index("wrong")].config), "rel_err"] > 0.1
    assert df.cudnn_us.notna().all()
    assert summary["worker_restarts"] == 3
    assert summary["status_counts"] == {"compile_error": 1, "crashed": 2, "ok": 4,
                                        "runtime_error": 1, "timeout": 1, "wrong": 1}


def test_fake_backend_rejects_unknown_failure():
    with pytest.raises(ValueError, match="unknown fake failure"):
        FakeBackend(failures={"x": "explode"})


def test_run_sweep_validates_arguments(tmp_path):
    with pytest.raises(ValueError, match="jobs"):
        sweep(PROBLEMS, tmp_path / "a.csv", jobs=0)
    with pytest.raises(ValueError, match="dtype"):
        sweep(PROBLEMS, tmp_path / "a.csv", dtypes=["float8"])
    with pytest.raises(ValueError, match=".csv"):
        sweep(PROBLEMS, tmp_path / "a.txt")
    with pytest.raises(ValueError, match="twice"):
        sweep(PROBLEMS + PROBLEMS[:1], tmp_path / "a.csv")
    asym = ConvGeometry(n=1, c=8, k=8, h=8, w=8, r=2, s=2, pad_hi=(0, 1, 1))
    with pytest.raises(ValueError, match="cannot record"):
        sweep([P("x", "s", "l", asym)], tmp_path / "a.csv")
    with pytest.raises(TypeError, match="geom"):
        sweep([P("x", "s", "l", "not a geometry")], tmp_path / "a.csv")


# -- CSV validation ------------------------------------------------------------------

def good_rows(n: int = 3) -> list[dict]:
    g = PROBLEMS[0].geom
    return [{"problem_id": "unit/l0/n1/float16", "set": "unit", "layer": "l0", **g.as_row(),
             "family": "fam", "config": f"BLOCK_M={16 * (i + 1)}", "status": "ok", "ok": 1,
             "rel_err": 1e-4, "latency_us": 10.0 + i, "latency_p20_us": 9.5,
             "latency_p80_us": 11.0 + i, "tflops": 1.0, "gbps": 2.0, "cudnn_us": 12.0,
             "cuda_graph": 1, "compile_s": 0.5, "gpu": "fake", "error": ""} for i in range(n)]


def write_csv(path: Path, rows: list[dict]) -> Path:
    append_rows(path, rows)
    return path


def edit_cell(path: Path, data_row: int, column: str, value: str) -> None:
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df.loc[data_row, column] = value
    df.to_csv(path, index=False)


def test_append_rows_writes_header_once(tmp_path):
    path = write_csv(tmp_path / "a.csv", good_rows(2))
    append_rows(path, good_rows(3)[2:])
    text = path.read_text().splitlines()
    assert text[0] == ",".join(FIELDNAMES) and len(text) == 4
    assert sum(line.startswith("problem_id,") for line in text) == 1
    assert len(read_sweep(path)) == 3
    with pytest.raises(ValueError, match="unknown column"):
        append_rows(path, [{**good_rows(1)[0], "bogus": 1}])


@pytest.mark.parametrize("column,value,match", [
    ("c", "x12", r"line 3 \(data row 2\): column 'c' must be an integer, got 'x12'"),
    ("latency_us", "fast", r"line 4 \(data row 3\): column 'latency_us' must be a number"),
    ("status", "great", r"line 3 \(data row 2\): column 'status' has unknown value 'great'"),
    ("ok", "0", r"line 3 \(data row 2\): column 'ok' is 0 but status is 'ok'"),
    ("family", "", r"line 3 \(data row 2\): column 'family' is empty"),
])
def test_read_sweep_names_bad_cells(tmp_path, column, value, match):
    path = write_csv(tmp_path / "bad.csv", good_rows())
    row = 2 if column == "latency_us" else 1
    edit_cell(path, row, column, value)
    with pytest.raises(ValueError, match=match) as e:
        read_sweep(path)
    assert str(path) in str(e.value)


def test_read_sweep_rejects_missing_columns_and_duplicates(tmp_path):
    path = write_csv(tmp_path / "m.csv", good_rows())
    pd.read_csv(path, dtype=str).drop(columns=["gpu", "rel_err"]).to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"m\.csv: missing column\(s\) \['rel_err', 'gpu'\]"):
        read_sweep(path)
    rows = good_rows()
    rows[2]["config"] = rows[0]["config"]
    path = write_csv(tmp_path / "d.csv", rows)
    with pytest.raises(ValueError, match=r"duplicate key .*BLOCK_M=16.* on lines \[2, 4\]"):
        read_sweep(path)
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        read_sweep(tmp_path / "nope.csv")


def test_read_sweep_types_and_empty_floats(tmp_path):
    rows = good_rows()
    rows[1].update(status="compile_error", ok=0, latency_us=None, rel_err=float("inf"),
                   error="CompilationError: x, y")
    df = read_sweep(write_csv(tmp_path / "t.csv", rows))
    assert df["c"].dtype == "int64" and df["latency_us"].dtype == "float64"
    assert pd.isna(df.latency_us[1]) and df.rel_err[1] == float("inf")
    assert df.error[1] == "CompilationError: x, y"
    assert set(df.status) <= set(STATUSES)


# -- CLI arguments -------------------------------------------------------------------

@pytest.mark.parametrize("args,match", [
    (["--shard", "3/2"], "shard 3/2 is invalid"),
    (["--shard", "x"], "i/n"),
    (["--jobs", "0"], "positive integer"),
    (["--dtype", "float8"], "unknown dtype"),
    (["--backend", "tpu"], "invalid choice"),
    (["--check-timeout", "-1"], "positive"),
])
def test_cli_rejects_bad_arguments(args, match, capsys, tmp_path):
    argv = ["sweep", "--problems", "unit", "--out", str(tmp_path / "o.csv"), *args]
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    assert match in capsys.readouterr().err


def test_cli_requires_csv_paths(capsys, tmp_path):
    with pytest.raises(SystemExit):
        cli.main(["sweep", "--problems", "unit", "--out", str(tmp_path / "o.txt")])
    assert "expected a .csv path" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["merge", "--out", str(tmp_path / "m.csv")])
    assert "inputs" in capsys.readouterr().err


def test_sidecar_is_json_next_to_csv(tmp_path):
    assert sidecar_path(tmp_path / "x.csv") == tmp_path / "x.meta.json"
    with pytest.raises(ValueError, match="not a"):
        (tmp_path / "y.meta.json").write_text(json.dumps({"format": "other"}))
        read_sidecar(tmp_path / "y.meta.json")


@pytest.mark.parametrize("direction", ["dgrad", "wgrad"])
def test_gradient_sweep_measures_that_direction(tmp_path, direction):
    out = tmp_path / f"{direction}.csv"
    backend = FakeBackend(direction=direction)
    summary = sweep(PROBLEMS[:2], out, backend=backend, limit_candidates=None)
    assert summary["problems_done"] == 2
    df = read_sweep(out)
    spec = lookup("h100")
    for p in PROBLEMS[:2]:
        want = registry.candidates(p.geom, spec, direction)
        got = df[df.problem_id == p.id]
        assert sorted(got.family + ":" + got.config) == sorted(c.id for c in want)
    assert {registry.family(f).direction for f in df.family} == {direction}
    assert read_sidecar(sidecar_path(out))["harness"]["direction"] == direction
    # Resuming with another direction is refused: the harness settings differ.
    with pytest.raises(ValueError, match="direction"):
        sweep(PROBLEMS[:2], out, backend=FakeBackend(direction="wgrad" if direction == "dgrad"
                                                     else "dgrad"))


def test_sweep_cli_direction_flag(tmp_path):
    out = tmp_path / "d.csv"
    rc = cli.main(["sweep", "--problems", "resnet50", "--backend", "fake", "--jobs", "1",
                   "--limit-candidates", "2", "--direction", "wgrad", "--out", str(out),
                   "--quiet", "--dtype", "float16"])
    assert rc == 0
    df = read_sweep(out)
    assert set(df.family) <= {f.name for f in registry.families("wgrad")}


def test_summary_counts_same_problem_ids_of_two_files_apart(tmp_path):
    """A dgrad and a wgrad sweep share problem ids; the summary lists both files."""
    from convdispatch.validation.sweep_summary import summary_markdown

    paths = []
    for direction in ("dgrad", "wgrad"):
        out = tmp_path / f"bwd_{direction}.csv"
        sweep(PROBLEMS[:2], out, backend=FakeBackend(direction=direction), limit_candidates=3)
        paths.append(str(out))
    text = summary_markdown(paths)
    for p in paths:
        rows = len(read_sweep(p))
        assert f"| {Path(p).name} | 2 | {rows} |" in text
    assert "All: 4 problems" in text


def test_family_gain_compares_a_family_with_the_others_best(monkeypatch):
    import convdispatch.validation.family_gain as fg

    rows = []
    for pid, lat in (("a/p1/n1/float16", {"depthwise": 20.0, "depthwise_rows": 10.0}),
                     ("a/p2/n1/float16", {"depthwise": 9.0, "depthwise_rows": 12.0}),
                     ("a/p3/n1/float16", {"depthwise_rows": 5.0})):
        rows += [{"problem_id": pid, "key": pid, "family": fam, "latency_us": us,
                  "cudnn_us": 18.0, "status": "ok"} for fam, us in lat.items()]
    monkeypatch.setattr(fg, "_load", lambda csvs: pd.DataFrame(rows))
    t = fg.gain_table(["x.csv"], "depthwise_rows")
    assert list(t["problem_id"]) == ["a/p1/n1/float16", "a/p2/n1/float16"]  # p3: alone
    assert t["family_us"].tolist() == [10.0, 12.0]
    assert t["others_us"].tolist() == [20.0, 9.0]
    md = fg.gain_markdown(t, "depthwise_rows")
    assert "on 2 problems" in md and "geomean 1.225" in md and "faster on 1" in md
    with pytest.raises(ValueError, match="'stem'"):
        fg.gain_table(["x.csv"], "stem")


def test_family_gain_selects_part_of_a_familys_configs(monkeypatch):
    """--family and --config are fnmatch patterns: the selected configs against every
    other row, the same families' other configs included."""
    import convdispatch.validation.family_gain as fg

    rows = [{"problem_id": "a/p1/n8/float16", "key": "p1", "family": fam, "config": cfg,
             "latency_us": us, "cudnn_us": 30.0, "status": "ok"}
            for fam, cfg, us in (("implicit_gemm_tma", "TILE_W=1", 20.0),
                                 ("implicit_gemm_tma_persistent", "TILE_W=16", 25.0),
                                 ("implicit_gemm_tma_persistent", "TILE_W=2", 22.0),
                                 ("implicit_gemm", "BLOCK_M=64", 40.0))]
    monkeypatch.setattr(fg, "_load", lambda csvs: pd.DataFrame(rows))
    t = fg.gain_table(["x.csv"], "implicit_gemm_tma*", config="TILE_W=[124]")
    assert t["family_us"].tolist() == [20.0] and t["others_us"].tolist() == [25.0]
    with pytest.raises(ValueError, match="with config 'TILE_W=4'"):
        fg.gain_table(["x.csv"], "implicit_gemm_tma*", config="TILE_W=4")


def test_out_of_memory_checks_run_again_one_at_a_time():
    """A check that ran out of GPU memory beside its neighbours is run again alone; its
    second outcome is the one recorded, and other failures are not retried."""
    from convdispatch.validation.backends import Outcome
    from convdispatch.validation.sweep import retry_out_of_memory

    class Pool:
        calls = []

        def run(self, tasks, parallel):
            self.calls.append(([t[3] for t in tasks], parallel))
            return [Outcome("ok", rel_err=0.0) for _ in tasks]

    geom = ConvGeometry(n=1, c=8, k=8, h=4, w=4, r=3, s=3)
    problem = type("P", (), {"id": "a/p/n1/float16", "geom": geom})()
    todo = [Candidate.parse(f"depthwise_span:BLOCK_M={m};BLOCK_N=128;num_warps=1;num_stages=1")
            for m in (2, 4, 8)]
    oom = Outcome("runtime_error", error="OutOfMemoryError: CUDA out of memory. Tried ...")
    bad = Outcome("runtime_error", error="RuntimeError: something else")
    pool = Pool()
    out = retry_out_of_memory(pool, problem, todo, [oom, bad, Outcome("ok", rel_err=0.0)])
    assert pool.calls == [([todo[0].id], 1)]
    assert [o.status for o in out] == ["ok", "runtime_error", "ok"]
    assert retry_out_of_memory(pool, problem, todo[1:], [bad, bad]) == [bad, bad]
    assert len(pool.calls) == 1
