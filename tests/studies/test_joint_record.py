"""The invariants' comparison: recorded columns first, in order, bit for bit; only named added columns after them."""

import pandas as pd
from invariants import record


def test_only_named_added_columns_may_follow_the_recorded_ones():
    old = pd.DataFrame({"measure": ["bias"], "estimate": [0.5], "mcse": [0.1]})
    recorded = record.fingerprint(old)
    assert record.first_difference(recorded, record.fingerprint(old.assign(lower_joint=0.3, upper_joint=0.7))) is None
    assert "may follow" in record.first_difference(recorded, record.fingerprint(old.assign(other=1.0)))
    assert "may follow" in record.first_difference(recorded, record.fingerprint(old[["estimate", "measure", "mcse"]]))
    assert "may follow" in record.first_difference(recorded, record.fingerprint(old[["measure", "estimate"]]))
    changed = record.first_difference(recorded, record.fingerprint(old.assign(mcse=0.2, lower_joint=0.0)))
    assert changed.startswith("column 'mcse'")
