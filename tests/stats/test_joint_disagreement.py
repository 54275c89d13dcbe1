"""Joint bands of the sample_disagreement study: Šidák over its independent sample sizes, against exact p."""

import numpy as np
from studies.test_sample_disagreement import A_RUNS, B_RUNS, bag, exact_p, make_config

from simstudy.stats import joint
from simstudy.studies import sample_disagreement


def test_sidak_band_over_the_sample_sizes_contains_the_exact_curve(tmp_path):
    sizes = [2, 3, 4]
    s = sample_disagreement.run(
        make_config(bag(A_RUNS), bag(B_RUNS), sample_sizes=sizes, reps=2000, chunk_reps=1000), tmp_path
    ).summary
    assert list(s.columns)[-2:] == ["lower_joint", "upper_joint"]
    c = joint.sidak_critical(3)
    np.testing.assert_allclose(s.upper_joint - s.estimate, c * s.mcse, rtol=1e-12)
    np.testing.assert_allclose(s.estimate - s.lower_joint, c * s.mcse, rtol=1e-12)
    for method in ("u", "v"):
        r = s[(s.measure == "p_overtakes") & (s.estimator == method)].sort_values("sample_size")
        p = np.array([exact_p(A_RUNS, B_RUNS, n, method) for n in sizes])
        assert np.all((r.lower_joint <= p) & (p <= r.upper_joint)), (r, p)


def test_an_exact_point_keeps_itself_and_does_not_count():
    import pandas as pd

    summary = pd.DataFrame(
        {
            "estimator": "v",
            "measure": "p_overtakes",
            "sample_size": [2, 3, 4],
            "estimate": [0.0, 0.4, 0.6],
            "mcse": [0.0, 0.01, 0.02],
        }
    )
    out = sample_disagreement._joint_columns(summary)
    assert out.lower_joint[0] == out.upper_joint[0] == 0.0
    np.testing.assert_allclose(out.upper_joint[1:] - out.estimate[1:], joint.sidak_critical(2) * out.mcse[1:])


def test_the_band_of_a_probability_stays_in_0_1():
    # issue 34 §6: bands of a probability stay in [0, 1] (estimate ± Šidák x MCSE left it near 0 and 1)
    import pandas as pd

    summary = pd.DataFrame({"estimator": "v", "measure": "p_overtakes", "sample_size": [2, 3, 4],
                            "estimate": [0.01, 0.5, 0.995], "mcse": [0.01, 0.02, 0.007]})  # fmt: skip
    out = sample_disagreement._joint_columns(summary)
    assert out.lower_joint[0] == 0.0 and out.upper_joint[2] == 1.0
    c = joint.sidak_critical(3)
    np.testing.assert_allclose([out.upper_joint[0], out.lower_joint[2]], [0.01 + c * 0.01, 0.995 - c * 0.007])
    np.testing.assert_allclose(out.upper_joint[1] - 0.5, c * 0.02)
