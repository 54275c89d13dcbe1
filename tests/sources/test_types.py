"""The records the readers return: :class:`Trials` checks its own shape, and keeps its arrays read-only."""

import numpy as np
import pytest

from simstudy.sources.types import FORMATS, STATES, Source, Trials, state_note


def _trials(**change):
    fields = dict(
        name="s",
        metric="value",
        direction="minimize",
        values=[1.0, np.nan, 3.0],
        states=("complete", "failed", "pruned"),
        order=[0, 1, 2],
        order_by="trial number",
        provenance=("not recorded",),
    )
    fields.update(change)
    return Trials(**fields)


def test_trials_hold_read_only_float64_and_int64_arrays():
    trials = _trials()
    assert trials.values.dtype == np.float64 and trials.order.dtype == np.int64
    with pytest.raises(ValueError):
        trials.values[0] = 2.0
    with pytest.raises(ValueError):
        trials.order[0] = 5
    assert trials.counts == {"complete": 1, "failed": 1, "pruned": 1}
    np.testing.assert_array_equal(trials.complete, [1.0])


@pytest.mark.parametrize(
    "change, words",
    [
        (dict(values=[1.0, 2.0]), "one length"),
        (dict(order=[0, 1]), "one length"),
        (dict(states=("complete", "failed", "crashed")), "unknown trial state 'crashed'"),
        (dict(direction="max"), "got 'max'"),
        (dict(values=[[1.0, 2.0, 3.0]]), "1-D"),
    ],
)
def test_trials_refuse_a_bad_record_in_one_line(change, words):
    with pytest.raises(ValueError, match=words) as caught:
        _trials(**change)
    assert "\n" not in str(caught.value)


def test_source_refuses_an_unknown_format():
    with pytest.raises(ValueError, match="'csv'"):
        Source("x", "csv", None, ())
    assert set(FORMATS) == {
        "optuna-rdb",
        "optuna-journal",
        "mlflow-sqlite",
        "ray-tune",
        "wandb-csv",
        "smac3",
        "hpbandster",
        "syne-tune",
    }


def test_state_note_counts_in_the_order_of_states():
    assert state_note(["pruned", "complete", "failed", "complete"]) == "4 trials: 2 complete, 1 failed, 1 pruned"
    assert state_note([], "runs") == "no runs"
    assert STATES[0] == "complete"
