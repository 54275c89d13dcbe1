"""The run directory's config.yaml, written and read without OmegaConf (the engine takes plain dicts), byte for byte
as OmegaConf wrote and read it: an old run directory's stored config is left as it is and compared the same."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from simstudy.engine.rundir import Refused, _config_yaml, load_stored_yaml, note_files, read_stored_config

#: Strings YAML 1.1 or OmegaConf's loader would read as something else, values and keys: each must be quoted.
TRICKY = {
    "a": "1e3",
    "yes": "on",
    "n": ["N", "off", "0x10", "1_000", ".5", "nan", "-.inf", "+12", "1:30", "Infinity"],
    "d": {"day": "2024-01-01", "null": "null", "tilde": "~", "empty": "", "quote": "'q'", "colon": "a: b"},
    "u": "héllo ✓",
    "interp": "${oc.env:HOME}",
    "missing": "???",
    "f": [1e-7, 0.1, 3.0, 1e22, -0.0],
    "i": [0, -3, 12345678901234567890],
    "b": [True, False, None],
}


def _presets() -> list[str]:
    """Every experiment preset's name, Figure 1's first."""
    from simstudy.cli.compose import config_dir

    names = sorted(p.stem for p in (Path(config_dir()) / "experiment").glob("*.yaml"))
    return sorted(names, key=lambda name: name != "dodge2021_fig1")


@functools.cache
def _compose(name: str):
    """A preset's composed config (once each: ~0.5 s)."""
    from hydra import compose, initialize_config_dir

    import simstudy
    from simstudy.cli.compose import config_dir

    simstudy.compose("dodge2021_fig1", ["runner.progress=false"])  # the kinds' schemas in Hydra's store
    with initialize_config_dir(config_dir=config_dir(), version_base="1.3"):
        return compose("config", overrides=[f"experiment={name}"])


def _same_bytes(names) -> None:
    for cfg in map(_compose, names):
        resolved = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
        assert _config_yaml(resolved) == OmegaConf.to_yaml(cfg, resolve=True)


def test_config_yaml_is_omegaconf_s_bytes_for_tricky_strings_and_some_presets():
    assert _config_yaml(TRICKY) == OmegaConf.to_yaml(OmegaConf.create(TRICKY))
    _same_bytes(_presets()[:3])


@pytest.mark.slow
def test_config_yaml_is_omegaconf_s_bytes_for_every_preset():
    assert len(_presets()) >= 10
    _same_bytes(_presets())


def test_a_stored_config_reads_as_omegaconf_read_it(tmp_path):
    stored = tmp_path / "config.yaml"
    for text in [
        *(OmegaConf.to_yaml(_compose(name), resolve=True) for name in _presets()[:3]),
        OmegaConf.to_yaml(TRICKY),
    ]:
        stored.write_text(text)
        assert load_stored_yaml(stored) == OmegaConf.to_container(OmegaConf.create(text), resolve=False)
    for text in ["", "word", "- a\n- b\n", "a: 1e3\nb: 2024-01-01\nc: yes\n"]:
        stored.write_text(text)
        assert load_stored_yaml(stored) == OmegaConf.to_container(OmegaConf.create(text), resolve=False), text


@pytest.mark.parametrize(
    "text, message",
    [
        ("a: 1\na: 2\n", "unreadable (ConstructorError)"),  # a key given twice: OmegaConf's loader refuses it
        ("5\n", "not a mapping of settings"),
        ("- a\n", "not a mapping of settings"),
        ("seed: '${oc.env:HOME}'\n", "is an interpolation"),
    ],
)
def test_a_damaged_stored_config_is_one_line(tmp_path, text, message):
    stored = tmp_path / "config.yaml"
    stored.write_text(text)
    with pytest.raises(Refused, match=message.replace("(", r"\(").replace(")", r"\)")) as refused:
        read_stored_config(stored)
    assert refused.value.status == 2 and "\n" not in refused.value.message


def test_a_run_dir_lists_what_the_run_wrote_not_what_was_there(tmp_path):
    (tmp_path / "notes.txt").write_text("the user's")
    (tmp_path / "summary.csv").write_text("an earlier run's")
    (tmp_path / "cells").mkdir()
    run_dir = note_files(tmp_path, overwrite=True)
    (tmp_path / "summary.csv").write_text("rewritten")  # atomically in a run: a new inode; here a new size
    (tmp_path / "figure.png").write_bytes(b"png")
    (tmp_path / "chunks").mkdir()
    assert run_dir.listing() == "figure.png, summary.csv"
    assert run_dir.written() == {"figure.png", "summary.csv", "chunks"}
    assert run_dir.overwrite and note_files(tmp_path).overwrite is False
