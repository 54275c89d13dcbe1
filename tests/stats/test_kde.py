import numpy as np
import pytest
from scipy import stats

from simstudy import datasets
from simstudy import distributions as D
from simstudy.stats import kde


def _bimodal_with_atom():
    """600 scores: 10% failed runs at exactly 0, 30% near chance (0.35), 60% good runs (0.85); 4 decimals."""
    rng = np.random.default_rng(601)
    x = np.concatenate([np.zeros(60), rng.normal(0.35, 0.01, 180), rng.normal(0.85, 0.02, 360)])
    return np.round(np.clip(x, 0, 1), 4)


def test_constructed_bimodal_scores_with_an_atom_are_fitted_and_silverman_is_not():
    x = _bimodal_with_atom()
    fit = D.KDEWithAtoms.fit(x)
    assert fit.atoms.tolist() == [0.0] and fit.shares.tolist() == [0.1]  # no spurious atoms from rounding
    assert fit.bw_method == "isj"
    new, old = kde.ks_distance(x, fit), kde.ks_distance(x, D.ReflectedKDE.fit(x))
    assert new.critical == pytest.approx(stats.kstwo.ppf(0.95, 600))
    assert not new.rejected and new.distance < 0.03
    assert old.rejected and old.distance > 0.15


def test_shipped_scores_atoms():
    assert kde.find_atoms(datasets.reuters_hedwig()["lstm"]).values.size == 0
    assert kde.find_atoms(datasets.reuters_hedwig()["mlp"]).values.size == 0  # rounded to 4 decimals: ties
    for model, count in (("deberta", 163), ("debertav3", 70)):  # chance-level runs: always the majority class
        found = kde.find_atoms(datasets.deberta_mnli(model))
        assert found.values == pytest.approx([0.3544574630667346]) and found.counts.tolist() == [count]


@pytest.mark.parametrize("seed", [1701, 1702, 1703])
def test_rounded_continuous_scores_have_no_atoms(seed):
    # Rounded to 3 decimals, about 16 copies of each value near the mode: repeats, but not atoms.
    x = np.round(np.random.default_rng(seed).normal(0.5, 0.05, 2000), 3)
    assert kde.find_atoms(x).values.size == 0


def test_isj_is_near_the_normal_reference_bandwidth_on_normal_data():
    # For normal data the optimal (AMISE) bandwidth is (4/3)^(1/5) sd n^(-1/5); ISJ estimates it.
    x = np.random.default_rng(1704).normal(0.5, 0.05, 2000)
    h = kde.isj_bandwidth(x, low=0.0, high=1.0)
    assert h == pytest.approx((4 / 3) ** 0.2 * 0.05 * 2000 ** -0.2, rel=0.2)


def test_isj_ignores_roots_below_the_rounding():
    # The MLP scores are recorded to 4 decimals (smallest gap 4e-4); the fixed-point equation also has roots
    # near 1e-4 that only resolve the rounding.
    x = datasets.reuters_hedwig()["mlp"]
    assert kde.isj_bandwidth(x, low=0.0, high=1.0) > np.diff(np.unique(x)).min()


def test_ks_distance_takes_both_sides_of_every_jump():
    bag = D.Bag([0.2, 0.2, 0.6, 0.8])  # F jumps by 1/2 at 0.2
    fit = kde.ks_distance([0.2, 0.6, 0.6, 0.8], bag)
    assert fit.distance == pytest.approx(0.25) and fit.n == 4  # F_n(0.2) = 1/4 vs F(0.2) = 1/2
    # A continuous uniform against scores tied at 0.5: the jump of F_n from 0 to 1 leaves 1/2 on each side.
    uniform = D.TruncatedNormal(0.5, 1e6, 0.0, 1.0)
    assert kde.ks_distance([0.5, 0.5], uniform).distance == pytest.approx(0.5, abs=1e-9)
    # An atom of the model between scores: F(0.8-) = 0.5 (atom at 0.1) + 0.5 * 1/4 (half of one kernel).
    model = D.KDEWithAtoms(D.ReflectedKDE([0.8, 0.9], 0.01), [0.1], [0.5])
    fit = kde.ks_distance([0.8, 0.9], model)
    assert fit.distance == pytest.approx(0.625, abs=1e-9) and fit.at == 0.8


def test_bad_inputs():
    with pytest.raises(ValueError, match="at least two finite"):
        kde.find_atoms([0.5])
    with pytest.raises(ValueError, match="two distinct values"):
        kde.isj_bandwidth([0.5, 0.5], low=0.0, high=1.0)
    with pytest.raises(D.InvalidParameter, match="bw_method must be one of isj, silverman"):
        D.KDEWithAtoms.fit([0.1, 0.2], bw_method="scott")
    with pytest.raises(D.InvalidParameter, match="at least two distinct scores beside its atoms"):
        D.KDEWithAtoms.fit([0.0] * 20 + [0.5])
