"""A run directory's results are keyed by what they were computed from, by content (issue 25): the bytes of
every data file (a renamed file with the same bytes is the same input, an edited one is not), the source of
every plug-in and of the user's modules it imports, the kernels' versions and the settings; one command and
one input identity per directory. A different one is refused in one line naming what changed and the two
fixes; ``overwrite=true`` moves the old results to ``previous/<time>/`` and computes afresh."""

import hashlib
import json
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import one_line_error, simstudy

from simstudy import plugins
from simstudy.engine import identity as _identity

pytestmark = pytest.mark.usefixtures("forget_plugins")  # tests/conftest.py: my_* modules forgotten after

# A tiny study: a bag of the file's scores, B = 5, two chunks of 20 replicates (about a second).
STUDY = ["budget.B=5", "study.reps=40", "study.chunk_reps=20", "runner.progress=false", "runner.n_jobs=1",
         "study.save_replicates=false"]
FILE_STUDY = ["distribution=file", *STUDY]
# A tiny audit: a few rounds of each of its studies.
AUDIT = ["rounds=8", "bootstrap_rounds=4", "resamples=20", "evp_reps=20", "target_k=3", "n_jobs=1"]
SCORES = "score\n" + "\n".join(f"{x:.3f}" for x in (0.61, 0.72, 0.55, 0.69, 0.80, 0.58, 0.66, 0.74, 0.63, 0.70,
                                                      0.52, 0.77, 0.68, 0.59, 0.71, 0.65)) + "\n"


def files_of(run_dir: Path) -> dict[str, bytes]:
    """Every file under a run directory, by relative path, with its bytes (to show nothing changed)."""
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in sorted(run_dir.rglob("*")) if p.is_file()}


def numbers(run_dir: Path) -> pd.DataFrame:
    """A study's summary without its labels (a file's default label is its name)."""
    s = pd.read_parquet(run_dir / "summary.parquet")
    return s.drop(columns=["distribution"]).reset_index(drop=True)


def edit(path: Path) -> None:
    """One byte changed: a score's last digit."""
    text = path.read_text()
    path.write_text(text.replace("0.610", "0.611", 1))


# --- data files behind a study's distribution -----------------------------------------------------------------

# slow lane: runs commands end to end (seconds); the README's suite stays under 3 minutes
@pytest.mark.slow
def test_an_edited_file_behind_a_study_is_refused_naming_the_file_and_the_fixes(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    args = [*FILE_STUDY, "distribution.path=s.csv", "hydra.run.dir=run"]
    simstudy(*args, cwd=tmp_path)
    before = files_of(tmp_path / "run")
    edit(tmp_path / "s.csv")
    line = one_line_error(simstudy(*args, cwd=tmp_path, check=False), "distribution file s.csv changed since this run")
    old = hashlib.sha256(SCORES.encode()).hexdigest()[:8]
    assert f"sha256 {old}… -> " in line
    assert "hydra.run.dir=NEW" in line and "overwrite=true" in line and "previous/<time>/" in line
    assert files_of(tmp_path / "run") == before  # nothing written, nothing lost


@pytest.mark.system  # three whole runs into two directories
def test_a_renamed_file_with_the_same_bytes_gives_the_same_numbers_and_resumes(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "renamed.csv").write_text(SCORES)
    simstudy(*FILE_STUDY, "distribution.path=s.csv", "hydra.run.dir=a", cwd=tmp_path)
    simstudy(*FILE_STUDY, "distribution.path=sub/renamed.csv", "hydra.run.dir=b", cwd=tmp_path)
    pd.testing.assert_frame_equal(numbers(tmp_path / "a"), numbers(tmp_path / "b"))
    # moved into the same run directory: the same input, resumed, not refused
    proc = simstudy(*FILE_STUDY, "distribution.path=sub/renamed.csv", "hydra.run.dir=a", cwd=tmp_path)
    assert "2 chunks (2 resumed)" in proc.stdout + proc.stderr
    pd.testing.assert_frame_equal(numbers(tmp_path / "a"), numbers(tmp_path / "b"))


@pytest.mark.system  # three whole runs, one moved aside
def test_overwrite_moves_the_old_results_to_previous_and_computes_afresh(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    (tmp_path / "run").mkdir()
    args = [*FILE_STUDY, "distribution.path=s.csv", "hydra.run.dir=run"]
    simstudy(*args, cwd=tmp_path)
    (tmp_path / "run" / "notes.txt").write_text("mine")  # not simstudy's: stays where it is
    old = files_of(tmp_path / "run")
    edit(tmp_path / "s.csv")
    proc = simstudy(*args, "overwrite=true", cwd=tmp_path)
    assert "2 chunks (0 resumed)" in proc.stdout + proc.stderr
    (moved,) = (tmp_path / "run" / "previous").iterdir()
    for name in ("summary.parquet", "config.yaml", "run.json", _identity.RECORD):
        assert (moved / name).read_bytes() == old[name]  # the old results, whole
    assert (tmp_path / "run" / "notes.txt").read_text() == "mine" and not (moved / "notes.txt").exists()
    assert not (tmp_path / "run" / "summary.parquet").read_bytes() == old["summary.parquet"]
    fresh = tmp_path / "fresh"
    simstudy(*[*FILE_STUDY, "distribution.path=s.csv", f"hydra.run.dir={fresh}"], cwd=tmp_path)
    pd.testing.assert_frame_equal(numbers(tmp_path / "run"), numbers(fresh))  # as a fresh run, not a mix
    one_line_error(simstudy(*args, "overwrite=maybe", cwd=tmp_path, check=False), "overwrite must be true or false")


# --- the audit's data ------------------------------------------------------------------------------------------

@pytest.mark.slow  # a whole command run in-process, seconds: CI's slow lane
def test_an_edited_file_behind_an_audit_is_refused(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    args = ["audit", "data=s.csv", *AUDIT, "hydra.run.dir=run"]
    simstudy(*args, cwd=tmp_path)
    before = files_of(tmp_path / "run")
    edit(tmp_path / "s.csv")
    one_line_error(simstudy(*args, cwd=tmp_path, check=False), "data file s.csv changed since this run")
    assert files_of(tmp_path / "run") == before


@pytest.mark.system  # two whole audits (three studies each)
def test_a_renamed_file_gives_an_audit_the_same_numbers(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    (tmp_path / "t.csv").write_text(SCORES)
    simstudy("audit", "data=s.csv", *AUDIT, "hydra.run.dir=a", cwd=tmp_path)
    simstudy("audit", "data=t.csv", *AUDIT, "hydra.run.dir=b", cwd=tmp_path)
    for study in ("coverage", "bootstrap", "accuracy"):
        a = numbers(tmp_path / "a" / study)
        b = numbers(tmp_path / "b" / study)
        pd.testing.assert_frame_equal(a.drop(columns="cell"), b.drop(columns="cell"))
        assert a["cell"].tolist() == b["cell"].tolist()  # the same cells: the same random streams


# --- plug-ins and the user's modules they import ---------------------------------------------------------------

def write(tmp_path: Path, module: str, code: str) -> None:
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(code))


# slow lane: runs commands end to end (seconds); the README's suite stays under 3 minutes
@pytest.mark.slow
def test_an_edited_helper_of_a_plugin_estimator_is_refused(tmp_path):
    write(tmp_path, "my_est_helper", "def which():\n    return -1\n")
    write(tmp_path, "my_est_main", """
        import numpy as np
        from my_est_helper import which

        def f(sorted_scores, n):
            return np.repeat(sorted_scores[:, which():][:, :1], len(n), axis=1)
        """)
    args = [*STUDY, "+estimators.top._target_=my_est_main.f", "hydra.run.dir=run"]
    simstudy(*args, cwd=tmp_path)
    before = files_of(tmp_path / "run")
    write(tmp_path, "my_est_helper", "def which():\n    return -2\n")
    one_line_error(simstudy(*args, cwd=tmp_path, check=False), "plug-in my_est_main.f changed")
    assert files_of(tmp_path / "run") == before


def test_an_edited_helper_of_a_distribution_class_is_refused(tmp_path):
    write(tmp_path, "my_dist_helper", "A = 2.0\n")
    write(tmp_path, "my_dist_main", """
        import numpy as np
        import my_dist_helper

        class Kumaraswamy:
            is_discrete = False
            support = (0.0, 1.0)

            def cdf(self, x):
                x = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
                return 1 - (1 - x ** my_dist_helper.A) ** 5

            def ppf(self, q):
                return (1 - (1 - np.asarray(q, dtype=float)) ** (1 / 5)) ** (1 / my_dist_helper.A)

            def sample(self, size, *, rng):
                return self.ppf(rng.random(size))
        """)
    args = [*STUDY, "distribution=custom", "distribution._target_=my_dist_main.Kumaraswamy", "hydra.run.dir=run"]
    simstudy(*args, cwd=tmp_path)
    before = files_of(tmp_path / "run")
    write(tmp_path, "my_dist_helper", "A = 3.0\n")
    one_line_error(simstudy(*args, cwd=tmp_path, check=False), "plug-in my_dist_main.Kumaraswamy changed")
    assert files_of(tmp_path / "run") == before


def test_source_hash_follows_the_users_imports_only(tmp_path):
    write(tmp_path, "my_lone", "import numpy as np\nimport json\n\ndef f(s, n):\n    return s\n")
    write(tmp_path, "my_top", "from my_mid import g\n\ndef f(s, n):\n    return g(s)\n")
    write(tmp_path, "my_mid", "from my_low import h\nimport my_top\n\ndef g(s):\n    return h(s)\n")  # a cycle
    write(tmp_path, "my_low", "def h(s):\n    return s\n")
    d = str(tmp_path)
    # a plug-in importing none of the user's modules keeps the digest of its own file (old runs resume)
    own = hashlib.sha256((tmp_path / "my_lone.py").read_bytes()).hexdigest()[:16]
    assert plugins.source_hash("my_lone.f", directory=d) == own
    before = plugins.source_hash("my_top.f", directory=d)
    write(tmp_path, "my_low", "def h(s):\n    return 2 * s\n")  # two imports down
    assert plugins.source_hash("my_top.f", directory=d) != before
    # a package's relative imports
    (tmp_path / "my_pkg").mkdir()
    (tmp_path / "my_pkg" / "__init__.py").write_text("")
    write(tmp_path / "my_pkg", "est", "from .util import k\n\ndef f(s, n):\n    return k * s\n")
    write(tmp_path / "my_pkg", "util", "k = 1\n")
    before = plugins.source_hash("my_pkg.est.f", directory=d)
    write(tmp_path / "my_pkg", "util", "k = 2\n")
    assert plugins.source_hash("my_pkg.est.f", directory=d) != before


# slow lane: runs commands end to end (seconds); the README's suite stays under 3 minutes
@pytest.mark.slow
def test_a_bumped_kernel_version_refuses_the_old_results(tmp_path, monkeypatch):
    args = [*STUDY, "hydra.run.dir=run"]
    simstudy(*args, cwd=tmp_path)
    monkeypatch.setitem(_identity.KERNEL_VERSIONS, "estimators.v", 2)
    one_line_error(simstudy(*args, cwd=tmp_path, check=False), "kernel estimators.v: version 1 -> 2")


# --- the data commands share no run directory -----------------------------------------------------------------

# slow lane: runs commands end to end (seconds); the README's suite stays under 3 minutes
@pytest.mark.slow
def test_curve_then_bands_in_one_directory_is_refused(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    simstudy("curve", "data=s.csv", "hydra.run.dir=run", cwd=tmp_path)
    before = files_of(tmp_path / "run")
    line = one_line_error(simstudy("bands", "data=s.csv", "hydra.run.dir=run", cwd=tmp_path, check=False),
                          "it holds the results of simstudy curve, not of simstudy bands")
    assert "hydra.run.dir=NEW" in line
    assert files_of(tmp_path / "run") == before
    simstudy("curve", "data=s.csv", "hydra.run.dir=run", cwd=tmp_path)  # the same command and input: rewrites
    assert json.loads((tmp_path / "run" / _identity.RECORD).read_text())["command"] == "curve"


# slow lane: runs commands end to end (seconds); the README's suite stays under 3 minutes
@pytest.mark.slow
def test_curve_with_another_data_file_is_refused(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    (tmp_path / "t.csv").write_text("model,score\n" + "".join(f"b,{x}\n" for x in np.linspace(0.5, 0.8, 9)))
    simstudy("curve", "data=s.csv", "target=0.7", "hydra.run.dir=run", cwd=tmp_path)
    before = files_of(tmp_path / "run")
    one_line_error(simstudy("curve", "data=t.csv", "target=0.7", "hydra.run.dir=run", cwd=tmp_path, check=False),
                   "data file t.csv (was s.csv) changed since this run")
    assert files_of(tmp_path / "run") == before
    simstudy("curve", "data=t.csv", "hydra.run.dir=run", "overwrite=true", cwd=tmp_path)  # no target= now
    (moved,) = (tmp_path / "run" / "previous").iterdir()
    assert (moved / "targets.csv").read_bytes() == before["targets.csv"]
    assert not (tmp_path / "run" / "targets.csv").exists()  # the first file's targets are not left beside
    assert set(pd.read_csv(tmp_path / "run" / "curves.csv").model) == {"b"}


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_curve_into_a_study_s_directory_is_refused_and_nothing_changes_there(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    simstudy(*STUDY, "hydra.run.dir=run", cwd=tmp_path)
    before = files_of(tmp_path / "run")
    one_line_error(simstudy("curve", "data=s.csv", "hydra.run.dir=run", cwd=tmp_path, check=False),
                   "it holds the results of a study, not of simstudy curve")
    assert files_of(tmp_path / "run") == before
    # and a study into a curve's directory
    simstudy("curve", "data=s.csv", "hydra.run.dir=curve", cwd=tmp_path)
    one_line_error(simstudy(*STUDY, "hydra.run.dir=curve", cwd=tmp_path, check=False),
                   "it holds the results of simstudy curve, not of a study")


# slow lane: runs commands end to end (seconds); the README's suite stays under 3 minutes
@pytest.mark.slow
def test_a_study_directory_of_before_identity_records_is_still_known_as_a_study(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    simstudy(*STUDY, "hydra.run.dir=run", cwd=tmp_path)
    (tmp_path / "run" / _identity.RECORD).unlink()  # as written by an earlier simstudy
    before = files_of(tmp_path / "run")
    one_line_error(simstudy("bands", "data=s.csv", "hydra.run.dir=run", cwd=tmp_path, check=False),
                   "it holds the results of a study, not of simstudy bands")
    assert files_of(tmp_path / "run") == before


# slow lane: runs commands end to end (seconds); the README's suite stays under 3 minutes
@pytest.mark.slow
def test_overwrite_with_a_shard_is_refused_before_anything_moves(tmp_path):
    simstudy(*STUDY, "hydra.run.dir=run", cwd=tmp_path)
    before = files_of(tmp_path / "run")
    one_line_error(simstudy(*STUDY, "runner.shard=1/2", "overwrite=true", "hydra.run.dir=run", cwd=tmp_path,
                            check=False), "overwrite=true cannot be combined with runner.shard")
    assert files_of(tmp_path / "run") == before


def test_a_data_commands_plugin_estimator_joins_its_identity(tmp_path, monkeypatch, forget_plugins):
    # curve estimator=module.function: an edited plug-in is another run (as a study's), a built-in is none
    from simstudy.launch import _data_plugins

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_ident_est.py").write_text("def best(x, n):\n    return x[:, -1:].repeat(len(n), axis=1)\n")
    before = _data_plugins("my_ident_est.best")
    (tmp_path / "my_ident_est.py").write_text("def best(x, n):\n    return x[:, :1].repeat(len(n), axis=1)\n")
    after = _data_plugins("my_ident_est.best")
    assert list(before) == list(after) == ["my_ident_est.best"] and before != after
    assert _data_plugins("v") == _data_plugins(None) == {}


# --- a tuning source as data= (issue 36): identified by content, whatever its form ---


def test_a_source_directory_and_a_sqlite_url_are_identified_by_content(tmp_path):
    db = tmp_path / "study.db"
    db.write_bytes(b"SQLite format 3\x00 and rows")
    assert _identity.data_input(f"sqlite:///{db}") == _identity.file_input(db)  # the URL is its file
    exp = tmp_path / "exp"
    (exp / "trial_0").mkdir(parents=True)
    (exp / "trial_0" / "result.json").write_text('{"acc": 0.5}\n')
    first = _identity.data_input(str(exp))
    assert first["file"] == "exp" and first == _identity.data_input(str(exp))  # the same bytes, the same digest
    (exp / "trial_0" / "result.json").write_text('{"acc": 0.6}\n')
    assert _identity.data_input(str(exp))["sha256"] != first["sha256"]  # an edited trial is another input
    (tmp_path / "moved").mkdir()
    (exp / "trial_0").rename(tmp_path / "moved" / "trial_0")
    (exp / "trial_0").mkdir()
    (exp / "trial_0" / "result.json").write_text('{"acc": 0.6}\n')
    assert _identity.data_input(str(tmp_path / "moved"))["sha256"] == _identity.data_input(str(exp))["sha256"]


def test_the_source_keys_unset_leave_a_data_commands_identity_as_before(tmp_path):
    from simstudy import launch, registry, schema

    spec = registry.command("curve")
    resolved = {**schema.defaults(spec.options), "data": "reuters_hedwig"}
    settings = launch._data_record(spec, resolved, spec.parse(resolved).data)["settings"]
    assert "objective" not in settings and "metric" not in settings  # a run directory made before still resumes
    (tmp_path / "study.db").write_bytes(b"SQLite format 3\x00")
    resolved.update(data=str(tmp_path / "study.db"), objective=1)  # given: part of the identity (another objective, other numbers)
    assert launch._data_record(spec, resolved, spec.parse(resolved).data)["settings"]["objective"] == 1
