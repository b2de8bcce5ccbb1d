import math

import pytest

from nalu_rl.stats import (
    holm_rejections,
    student_t_cdf,
    student_t_quantile,
    t_interval,
    welch_t_test,
    wilson_interval,
)


def test_wilson_interval_matches_hand_computed_case():
    # 8 of 10, z = 1.959964: centre (0.8 + z^2/20) / (1 + z^2/10) = 0.71687,
    # half width z / (1 + z^2/10) * sqrt(0.016 + z^2/400) = 0.22646.
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.49016, abs=1e-4)
    assert high == pytest.approx(0.94332, abs=1e-4)


def test_wilson_interval_reaches_the_bounds_at_zero_and_all_successes():
    low, high = wilson_interval(0, 20)
    assert low == 0.0 and 0.1 < high < 0.2
    low, high = wilson_interval(20, 20)
    assert high == 1.0 and 0.8 < low < 0.9


def test_wilson_interval_narrows_with_more_trials():
    narrow = wilson_interval(100, 200)
    wide = wilson_interval(10, 20)
    assert narrow[1] - narrow[0] < wide[1] - wide[0]


def test_wilson_interval_rejects_more_successes_than_trials():
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(5, 4)


@pytest.mark.parametrize(
    ("degrees_of_freedom", "quantile"),
    [(1, 12.706205), (2, 4.302653), (4, 2.776445), (9, 2.262157), (30, 2.042272)],
)
def test_student_t_quantile_matches_tables(degrees_of_freedom, quantile):
    assert student_t_quantile(0.975, degrees_of_freedom) == pytest.approx(quantile, rel=1e-5)
    assert student_t_cdf(quantile, degrees_of_freedom) == pytest.approx(0.975, abs=1e-7)


def test_student_t_quantile_is_symmetric_and_tends_to_normal():
    assert student_t_quantile(0.025, 5) == pytest.approx(-student_t_quantile(0.975, 5))
    assert student_t_quantile(0.975, 10_000) == pytest.approx(1.959964, abs=1e-3)


def test_t_interval_of_five_seeds_matches_hand_computed_case():
    values = [0.8, 0.9, 1.0, 0.7, 0.6]
    mean, low, high = t_interval(values)
    # sd = sqrt(0.025) = 0.158114, t(0.975, 4) = 2.776445, half width = 2.776445 * 0.158114 / sqrt(5)
    half_width = 2.776445 * math.sqrt(0.025) / math.sqrt(5)
    assert mean == pytest.approx(0.8)
    assert (low, high) == pytest.approx((0.8 - half_width, 0.8 + half_width), abs=1e-6)


def test_t_interval_needs_two_values():
    with pytest.raises(ValueError, match="at least 2"):
        t_interval([0.5])


def test_welch_t_test_matches_a_hand_computed_case():
    # t = (3 - 6) / sqrt(2.5 / 5 + 10 / 5); df = 2.5^2 / (0.5^2 / 4 + 2^2 / 4); p as R's t.test gives it.
    statistic, degrees_of_freedom, p_value = welch_t_test([1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
    assert statistic == pytest.approx(-3 / math.sqrt(2.5))
    assert degrees_of_freedom == pytest.approx(6.25 / 1.0625)
    assert p_value == pytest.approx(0.1075, abs=1e-4)
    # One degree of freedom: the Cauchy distribution, P(|X| > 3) = 1 - 2 atan(3) / pi.
    assert welch_t_test([1, 1], [0, 0.5])[2] == pytest.approx(1 - 2 * math.atan(3) / math.pi)


def test_welch_t_test_of_samples_that_do_not_vary_and_of_too_few_values():
    assert welch_t_test([0.5, 0.5], [0.5, 0.5])[2] == 1.0
    assert welch_t_test([1.0, 1.0], [0.0, 0.0])[2] == 0.0
    with pytest.raises(ValueError, match="2 values"):
        welch_t_test([1.0], [0.0, 1.0])


def test_holm_rejects_step_down_and_stops_at_the_first_p_value_above_its_level():
    # Sorted: 0.005 < 0.05 / 4, 0.01 < 0.05 / 3, then 0.03 >= 0.05 / 2 stops (0.04 is not tried).
    assert holm_rejections([0.01, 0.04, 0.03, 0.005]) == [True, False, False, True]
    assert holm_rejections([0.2, 0.3]) == [False, False]
    assert holm_rejections([]) == []
