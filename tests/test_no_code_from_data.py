"""Opening a run directory someone sent does not run its code (issue 25): ``collect`` and ``replay`` import a
plug-in its stored config.yaml names only when the command line names it too (``plugins=...``) or it is a
registered plug-in; anything else is one line naming the ``_target_``, before the module is imported, and the
refused directory is left exactly as it was. Stored YAML, and score files given as ``data=``, are read in
bounded time and memory (alias bombs, FIFOs, nesting 10^5 deep)."""

import os
import shutil
import textwrap

import pytest
import yaml
from _cli import FIG1, one_line_error, simstudy

SHARD = [*FIG1, "budget.B=[6]", "study.reps=200", "study.chunk_reps=100", "runner.shard=1/1", "hydra.run.dir=run"]


def _plugin(tmp_path, module: str) -> None:
    """An estimator module that leaves a marker file when it is imported (its code ran)."""
    (tmp_path / f"{module}.py").write_text(
        textwrap.dedent(f"""
        import pathlib
        pathlib.Path({str(tmp_path / "IMPORTED")!r}).write_text("ran")

        def top(sorted_scores, n):
            return sorted_scores[:, n - 1]
        """)
    )


def _sent(tmp_path, module: str):
    """A sharded run with the plug-in estimator ``module.top``, copied as someone would send it (without the
    hidden marker of this machine's runs); returns the copy, with no trace of the import left."""
    _plugin(tmp_path, module)
    simstudy(*SHARD, f"+estimators.mine._target_={module}.top", cwd=tmp_path)
    sent = tmp_path / "sent"
    shutil.copytree(tmp_path / "run", sent, ignore=shutil.ignore_patterns(".simstudy*"))
    (tmp_path / "IMPORTED").unlink()
    return sent


def _listing(path):
    return sorted((str(p.relative_to(path)), p.stat().st_mtime_ns) for p in path.rglob("*"))


@pytest.mark.system
def test_collect_refuses_a_stored_target_not_named_on_the_command_line_and_never_imports_it(tmp_path):
    sent = _sent(tmp_path, "sent_plugin_a")
    before = _listing(sent)
    proc = simstudy("collect", "run_dir=sent", cwd=tmp_path, check=False, subprocess_=True)  # a fresh process
    line = one_line_error(proc, "estimators.mine._target_=sent_plugin_a.top")
    assert "plugins=sent_plugin_a.top" in line
    assert not (tmp_path / "IMPORTED").exists()
    assert _listing(sent) == before  # no .simstudy-run.json: later commands do not take it for ours

    simstudy("collect", "run_dir=sent", "plugins=sent_plugin_a.top", cwd=tmp_path, subprocess_=True)  # named: runs
    assert (tmp_path / "IMPORTED").exists() and (sent / "summary.parquet").is_file()


@pytest.mark.system
def test_replay_refuses_a_stored_target_not_named_on_the_command_line(tmp_path):
    sent = _sent(tmp_path, "sent_plugin_b")
    cell = next((sent / "chunks").glob("*/cell-*")).name.removeprefix("cell-")
    before = _listing(sent)
    proc = simstudy("replay", "run_dir=sent", f"chunk={cell}/0", cwd=tmp_path, check=False, subprocess_=True)
    one_line_error(proc, "estimators.mine._target_=sent_plugin_b.top")
    assert not (tmp_path / "IMPORTED").exists() and _listing(sent) == before

    proc = simstudy("replay", "run_dir=sent", f"chunk={cell}/0", "plugins=sent_plugin_b.top", cwd=tmp_path,
                    subprocess_=True)
    assert "did not reproduce" in proc.stdout and (tmp_path / "IMPORTED").exists()


def test_a_stored_popen_target_never_runs_its_command(tmp_path):
    simstudy(*SHARD, cwd=tmp_path)
    config = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    marker = tmp_path / "PWNED"
    config["distribution"] = {"_target_": "subprocess.Popen", "args": ["touch", str(marker)], "name": "x"}
    (tmp_path / "run" / "config.yaml").write_text(yaml.safe_dump(config))
    for command in (["collect", "run_dir=run"], ["replay", "run_dir=run", "chunk=c0/0"]):
        proc = simstudy(*command, cwd=tmp_path, check=False)
        one_line_error(proc, "distribution._target_=subprocess.Popen: a plug-in named by a stored config")
        assert not marker.exists()


def test_a_refused_collect_of_a_sent_directory_leaves_no_marker(tmp_path):
    """Its chunks are missing (exit 1 after the directory was claimed): the claim's marker goes with it."""
    sent = _sent(tmp_path, "sent_plugin_c")
    for chunk in (sent / "chunks").rglob("*.npz"):
        chunk.unlink()
    before = _listing(sent)
    proc = simstudy("collect", "run_dir=sent", "plugins=sent_plugin_c.top", cwd=tmp_path, check=False)
    one_line_error(proc, "chunks missing", status=1)
    assert _listing(sent) == before


def _run_dir_with(tmp_path, text: str):
    run = tmp_path / "run"
    simstudy(*SHARD, cwd=tmp_path)
    with open(run / "config.yaml", "a") as f:
        f.write(text)
    return run


def test_a_yaml_alias_bomb_in_a_stored_config_is_refused_at_once(tmp_path):
    bomb = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    bomb += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]  # 9^10 strings expanded
    _run_dir_with(tmp_path, "\n".join(bomb) + "\n")
    proc = simstudy("collect", "run_dir=run", cwd=tmp_path, check=False, timeout=60)
    one_line_error(proc, "run/config.yaml: holds a YAML alias")


@pytest.mark.system
@pytest.mark.parametrize("where", ["run", "sweep"])
def test_a_yaml_alias_bomb_met_on_a_rerun_is_refused_at_once(tmp_path, where):
    # the resume path (config.yaml, read for the replicates it kept) and a sweep's multirun.yaml were read with
    # plain OmegaConf.load, which expands the aliases: 100% CPU for as long as one waits
    bomb = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    bomb += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]  # 9^10 strings expanded
    if where == "run":
        args = [*FIG1, "budget.B=[6]", "study.reps=100", "hydra.run.dir=run"]
        simstudy(*args, cwd=tmp_path)
        stored, message = tmp_path / "run" / "config.yaml", "run/config.yaml: holds a YAML alias"
    else:
        args = ["-m", *FIG1, "budget.B=6,8", "study.reps=100", "hydra.sweep.dir=sweep"]
        (tmp_path / "sweep").mkdir()
        stored, message = tmp_path / "sweep" / "multirun.yaml", "sweep/multirun.yaml: holds a YAML alias"
    stored.write_text("\n".join(bomb) + "\n")
    proc = simstudy(*args, cwd=tmp_path, check=False, timeout=60, subprocess_=True)
    one_line_error(proc, message)


@pytest.mark.parametrize("depth", [100, 100_000])
def test_a_stored_config_nested_deep_is_refused_at_once(tmp_path, depth):
    """Past 64 levels: refused by simstudy's check, or past 1,000 by libyaml's own (a RecursionError in pure
    Python's composer, and 10^5 levels of nodes, before)."""
    _run_dir_with(tmp_path, "deep: " + "[" * depth + "]" * depth + "\n")
    proc = simstudy("replay", "run_dir=run", "chunk=c0/0", cwd=tmp_path, check=False, timeout=60)
    line = one_line_error(proc, "run/config.yaml: ")
    assert "nested deeper than 64 levels" in line or "exceeded maximum nesting depth" in line


def test_a_fifo_as_data_is_refused_without_opening_it(tmp_path):
    os.mkfifo(tmp_path / "scores.csv")  # opening it would block until a writer comes
    proc = simstudy("curve", "data=scores.csv", cwd=tmp_path, check=False, timeout=60, subprocess_=True)
    one_line_error(proc, "scores.csv: a FIFO; give a score file (a regular file) instead")


@pytest.mark.system
def test_score_files_nested_1e5_deep_are_one_line(tmp_path):
    (tmp_path / "lists.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "objects.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    (tmp_path / "rows.jsonl").write_text('{"score": 0.5}\n' + '{"a":' * 100_000 + "1" + "}" * 100_000 + "\n")
    for name, where in (("lists.json", ""), ("objects.json", ""), ("rows.jsonl", "row 2: ")):
        proc = simstudy("curve", f"data={name}", cwd=tmp_path, check=False, timeout=60)
        one_line_error(proc, f"{name}: {where}JSON nested deeper than")


def test_a_study_refused_in_a_sent_directory_leaves_it_as_it_was(tmp_path):
    """Another configuration's results: refused after the directory was claimed; the claim's marker went
    only when nothing but it was left, so the sent directory kept it and later passed for one of ours."""
    sent = _sent(tmp_path, "sent_plugin_d")
    before = _listing(sent)
    proc = simstudy(*FIG1, "budget.B=[7]", "study.reps=200", "study.chunk_reps=100", "hydra.run.dir=sent",
                    cwd=tmp_path, check=False)
    one_line_error(proc, "holds results of a different configuration")
    assert _listing(sent) == before


_OWN = {
    "seed": 0,
    "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    "budget": {"B": 10},
    "estimators": {"v": {"method": "v"}},
    "study": {"name": "demo", "kind": "evp_accuracy", "reps": 100, "chunk_reps": 50},
    "runner": {"n_jobs": 1, "backend": "loky"},
}


@pytest.mark.parametrize(
    "where, key",
    [
        ({"distribution": {"_target_": "sent_point.top", "name": "x"}}, "distribution._target_"),
        ({"estimators": {"mine": {"_target_": "sent_point.top"}}}, "estimators.mine._target_"),
        ({"study": {"name": "demo", "kind": "band_coverage", "methods": ["sent_point.top"]}}, "study.methods"),
        ({"study": {"name": "demo", "kind": "model_selection", "algorithms": ["sent_point.top"]}}, "study.algorithms"),
    ],
)
def test_parse_refuses_an_untrusted_path_at_every_plugin_point_before_importing_it(tmp_path, monkeypatch, where, key):
    # the trust is an argument of config.parse, handed down to each point's check (no ambient state)
    from simstudy import config
    from simstudy.schema import ConfigError

    _plugin(tmp_path, "sent_point")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(__import__("sys").modules, "sent_point", raising=False)
    refused = f"^{key}=sent_point.top: a plug-in named by a stored config .* add plugins=sent_point.top to the command"
    with pytest.raises(ConfigError, match=refused):
        config.parse({**_OWN, **where}, trusted=frozenset({"other.f"}))
    assert not (tmp_path / "IMPORTED").exists()
