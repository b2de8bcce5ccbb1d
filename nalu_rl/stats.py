"""Small statistics for evaluation: Wilson intervals for a success rate, t-intervals across seeds, and
Welch's t-test (with Holm's correction) for whether two sets of seeds differ."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist


def normal_quantile(probability: float) -> float:
    """The standard normal quantile: the z with P(Z <= z) = probability."""
    return NormalDist().inv_cdf(probability)


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion `successes / trials`.

    Unlike the normal (Wald) interval it stays inside [0, 1] and does not collapse to a point
    at 0 or `trials` successes. Zero trials give the uninformative interval (0, 1).
    """
    if trials < 0 or not 0 <= successes <= max(trials, 0):
        raise ValueError(f"need 0 <= successes <= trials, got successes={successes}, trials={trials}")
    if trials == 0:
        return 0.0, 1.0
    z = normal_quantile(0.5 + confidence / 2)
    proportion = successes / trials
    denominator = 1 + z * z / trials
    centre = (proportion + z * z / (2 * trials)) / denominator
    half_width = z / denominator * math.sqrt(proportion * (1 - proportion) / trials + z * z / (4 * trials**2))
    # Clamp rounding noise so that 0 and all successes give exactly 0 and 1 at the ends.
    low = 0.0 if successes == 0 else max(0.0, centre - half_width)
    high = 1.0 if successes == trials else min(1.0, centre + half_width)
    return low, high


def _regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), evaluated with the continued fraction of the incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    # The continued fraction converges fast only for x < (a + 1) / (a + b + 2); use the symmetry
    # I_x(a, b) = 1 - I_{1-x}(b, a) on the other side.
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _regularized_incomplete_beta(b, a, 1.0 - x)
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * fraction / a


def student_t_cdf(value: float, degrees_of_freedom: float) -> float:
    """P(X <= value) for Student's t distribution with the given degrees of freedom."""
    if degrees_of_freedom <= 0:
        raise ValueError(f"degrees_of_freedom must be positive, got {degrees_of_freedom}")
    tail = 0.5 * _regularized_incomplete_beta(
        degrees_of_freedom / 2, 0.5, degrees_of_freedom / (degrees_of_freedom + value * value)
    )
    return 1.0 - tail if value >= 0 else tail


def student_t_quantile(probability: float, degrees_of_freedom: float) -> float:
    """The t with P(X <= t) = probability under Student's t distribution (0 < probability < 1)."""
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {probability}")
    if probability < 0.5:
        return -student_t_quantile(1.0 - probability, degrees_of_freedom)
    low, high = 0.0, 1.0
    while student_t_cdf(high, degrees_of_freedom) < probability:
        high *= 2.0
    for _ in range(200):
        middle = 0.5 * (low + high)
        if student_t_cdf(middle, degrees_of_freedom) < probability:
            low = middle
        else:
            high = middle
        if high - low < 1e-12 * max(1.0, high):
            break
    return 0.5 * (low + high)


def t_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean of `values` and the t confidence interval of that mean: (mean, low, high).

    Used across seeds. Needs at least two values; identical values give a zero-width interval.
    """
    count = len(values)
    if count < 2:
        raise ValueError(f"a t-interval needs at least 2 values, got {count}")
    mean, variance = _mean_and_variance(values)
    half_width = student_t_quantile(0.5 + confidence / 2, count - 1) * math.sqrt(variance / count)
    return mean, mean - half_width, mean + half_width


def welch_t_test(first: Sequence[float], second: Sequence[float]) -> tuple[float, float, float]:
    """Welch's t-test of whether two samples (e.g. the seeds of two runs of one experiment) have the
    same mean, without assuming the same variance: (t, degrees of freedom, two-sided p-value).

    Needs at least two values in each sample. Where neither sample varies, p is 1 if the means are
    equal and 0 otherwise."""
    if len(first) < 2 or len(second) < 2:
        raise ValueError(f"Welch's t-test needs 2 values in each sample, got {len(first)} and {len(second)}")
    samples = (first, second)
    means, variances = zip(*(_mean_and_variance(sample) for sample in samples), strict=True)
    # The squared standard error of each mean: its sample variance over its size.
    squared_errors = [variance / len(sample) for variance, sample in zip(variances, samples, strict=True)]
    difference, squared_error = means[0] - means[1], sum(squared_errors)
    if squared_error == 0:
        statistic = 0.0 if difference == 0 else math.copysign(math.inf, difference)
        return statistic, math.inf, float(difference == 0)
    statistic = difference / math.sqrt(squared_error)
    degrees_of_freedom = squared_error**2 / sum(
        error**2 / (len(sample) - 1) for error, sample in zip(squared_errors, samples, strict=True)
    )
    return statistic, degrees_of_freedom, 2.0 * student_t_cdf(-abs(statistic), degrees_of_freedom)


def holm_rejections(p_values: Sequence[float], level: float = 0.05) -> list[bool]:
    """Which of several tests reject at family-wise error `level` by Holm's step-down method: the
    k-th smallest p-value (k from 0) is compared with level / (m - k), stopping at the first that is not
    below it."""
    order = sorted(range(len(p_values)), key=lambda index: p_values[index])
    rejected = [False] * len(p_values)
    for rank, index in enumerate(order):
        if p_values[index] >= level / (len(p_values) - rank):
            break
        rejected[index] = True
    return rejected


def _mean_and_variance(values: Sequence[float]) -> tuple[float, float]:
    """The mean of `values` and their sample variance (divided by n - 1; at least two values)."""
    mean = sum(values) / len(values)
    return mean, sum((value - mean) ** 2 for value in values) / (len(values) - 1)
