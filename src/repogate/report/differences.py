"""Differences of rates and their tests: two agents on the same tasks, and a gate's two arms.

Both follow the estimand of :mod:`.stats` (per-task rates, epochs averaged within a task) and give
an interval that never collapses, its clustered standard error and a p-value.

Sources:
    - Paired difference, one epoch: R. G. Newcombe (1998), "Improved confidence intervals for the
      difference between binomial proportions based on paired data", Statistics in Medicine
      17:2635-2650, method 10 (Wilson limits of both margins, phi corrected); worked example in
      D. G. Altman et al. (2000), "Statistics with Confidence", table 6.2.
    - Paired difference, several epochs: the same construction on per-task rates, i.e. the method
      of variance estimates recovery (MOVER) of G. Y. Zou and A. Donner (2008), "Construction of
      confidence limits about effect measures: a general approach", Statistics in Medicine
      27:1693-1702, with Wilson limits over tasks and the Pearson correlation of the per-task rates.
    - Exact sign test over tasks (``scipy.stats.binomtest`` at 1/2); with one epoch per task it is
      the exact McNemar test (Q. McNemar (1947), Psychometrika 12:153-157).
    - Unpaired risk difference: Newcombe (1998), "Interval estimation for the difference between
      independent proportions: comparison of eleven methods", Statistics in Medicine 17:873-890,
      method 10 (hybrid score), with Wilson limits over clusters.
    - One-sided tests of a risk difference: Fisher's exact test (``scipy.stats.fisher_exact``,
      ``alternative="greater"``) when every cluster's value is 0 or 1, else a permutation test of
      the difference in means (``scipy.stats.permutation_test``, fixed seed); with 0/1 values the
      two agree.
    - Multiple comparisons: S. Holm (1979), "A simple sequentially rejective multiple test
      procedure", Scandinavian Journal of Statistics 6:65-70 (R's ``p.adjust(method="holm")``).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import sqrt

import numpy as np
from scipy.stats import binomtest, fisher_exact, norm, permutation_test

from repogate._model import FrozenModel
from repogate.report.stats import SEED, Interval, cluster_se, wilson_bounds

NEWCOMBE = "Newcombe (1998) paired interval, method 10"
MOVER = "Newcombe's method 10 on per-task rates (MOVER, Zou and Donner 2008)"
SIGN_TEST = "exact sign test over tasks (the exact McNemar test with one epoch)"
RISK_DIFFERENCE = "Newcombe (1998) hybrid score, one-sided 95% lower bound, over task-agent units"
FISHER = "one-sided Fisher's exact test over task-agent units"
PERMUTATION = "one-sided permutation test over task-agent units (2000 resamples)"


class PairedDifference(FrozenModel):
    """Agent A's rate minus agent B's, on the tasks both scored.

    Attributes:
        difference: the mean over tasks of A's rate minus B's, with its 95% interval.
        only_a: tasks where A's rate exceeds B's (with one epoch: A solved, B did not).
        only_b: tasks where B's rate exceeds A's.
        p_value: the two-sided exact sign test over those tasks.
        method: the test, :data:`SIGN_TEST`.
    """

    difference: Interval
    only_a: int
    only_b: int
    p_value: float
    method: str


def sign_test(only_a: int, only_b: int) -> float:
    """Two-sided exact sign test of ``only_a`` vs ``only_b`` discordant tasks (1.0 for none).

    Under the null hypothesis each discordant task falls either way with probability 1/2; with one
    epoch per task this is the exact McNemar test.
    """
    total = only_a + only_b
    if total == 0:
        return 1.0
    return float(binomtest(only_a, total, 0.5).pvalue)


def paired(rates_a: Sequence[float], rates_b: Sequence[float]) -> PairedDifference:
    """Compare two agents on the same tasks.

    Args:
        rates_a: per task, agent A's rate over its scored attempts (0 or 1 with one epoch).
        rates_b: the same for agent B, tasks in the same order.

    With every rate 0 or 1, Newcombe's paired interval (method 10); otherwise its construction on
    the per-task rates (:data:`MOVER`). Neither collapses when every task differs alike.

    Raises:
        ValueError: the sequences differ in length.
    """
    a = np.asarray(rates_a, dtype=float)
    b = np.asarray(rates_b, dtype=float)
    if a.shape != b.shape:
        raise ValueError("paired rates must cover the same tasks")
    only_a, only_b = int((a > b).sum()), int((b > a).sum())
    if len(a) == 0:
        interval = Interval(
            estimate=0.0, low=-1.0, high=1.0, n=0, tasks=0, method="none (no shared task)"
        )
    elif np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all():
        interval = newcombe_paired(a, b)
    else:
        interval = mover_paired(a, b)
    return PairedDifference(
        difference=interval,
        only_a=only_a,
        only_b=only_b,
        p_value=sign_test(only_a, only_b),
        method=SIGN_TEST,
    )


def _mover(diffs: np.ndarray, p1: float, p2: float, phi: float, method: str) -> Interval:
    """p1 - p2 with MOVER limits from Wilson limits over the tasks and the correlation ``phi``.

    ``diffs`` are the per-task differences (their count is the task count, their spread the SE).
    """
    n = len(diffs)
    l1, u1 = wilson_bounds(p1 * n, n)
    l2, u2 = wilson_bounds(p2 * n, n)
    d1, u2d = p1 - l1, u2 - p2
    u1d, d2 = u1 - p1, p2 - l2
    low = p1 - p2 - sqrt(max(d1**2 - 2 * phi * d1 * u2d + u2d**2, 0.0))
    high = p1 - p2 + sqrt(max(d2**2 - 2 * phi * d2 * u1d + u1d**2, 0.0))
    return Interval(
        estimate=p1 - p2,
        low=max(low, -1.0),
        high=min(high, 1.0),
        se=cluster_se(list(diffs)),
        n=n,
        tasks=n,
        method=method,
    )


def newcombe_paired(a: np.ndarray, b: np.ndarray) -> Interval:
    """Return the difference of two paired proportions with Newcombe's (1998) method-10 interval.

    Args:
        a: per task, agent A's outcome, 0 or 1.
        b: per task, agent B's outcome, 0 or 1, tasks in the same order (at least one task).

    The interval combines the Wilson limits of both margins, corrected for their correlation
    (phi, with Newcombe's adjustment of the cross-product toward zero).
    """
    n = len(a)
    both = int(((a == 1) & (b == 1)).sum())
    only_a = int(((a == 1) & (b == 0)).sum())
    only_b = int(((a == 0) & (b == 1)).sum())
    neither = n - both - only_a - only_b
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    cross = both * neither - only_a * only_b
    adjusted = cross - n / 2 if cross > n / 2 else min(cross, 0)
    phi = adjusted / sqrt(margins) if margins else 0.0
    return _mover(a - b, (both + only_a) / n, (both + only_b) / n, phi, NEWCOMBE)


def mover_paired(a: np.ndarray, b: np.ndarray) -> Interval:
    """Return the mean of per-task rate differences with :data:`MOVER`'s interval.

    The correlation is Pearson's over the tasks' rates (0 when either side's rates are all equal,
    so an agreed difference is bounded by the Wilson limits alone, never a point).
    """
    n = len(a)
    phi = 0.0
    if n > 1 and np.std(a) > 0 and np.std(b) > 0:
        phi = float(np.corrcoef(a, b)[0, 1])
    return _mover(a - b, float(a.mean()), float(b.mean()), phi, MOVER)


def risk_difference(
    failed: Sequence[float], passed: Sequence[float], confidence: float = 0.95
) -> Interval:
    """Mean of ``failed`` minus mean of ``passed`` with a one-sided lower bound (upper 1).

    Args:
        failed: per cluster (task and agent), its rate of the outcome in the first arm.
        passed: the same in the second arm (both arms non-empty).
        confidence: the one-sided level of the lower bound (0.975 gives the lower limit of the
            two-sided 95% interval).

    Newcombe's hybrid score interval (method 10 for independent proportions) from Wilson limits
    over clusters at the two-sided ``2 * confidence - 1`` level, whose lower limit is the bound.

    Raises:
        ValueError: an arm is empty.
    """
    if not failed or not passed:
        raise ValueError("both arms need at least one cluster")
    z = float(norm.ppf(confidence))
    n1, n2 = len(failed), len(passed)
    p1, p2 = sum(failed) / n1, sum(passed) / n2
    l1 = wilson_bounds(p1 * n1, n1, z)[0]
    u2 = wilson_bounds(p2 * n2, n2, z)[1]
    low = p1 - p2 - sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    se = sqrt((cluster_se(failed) or 0.0) ** 2 + (cluster_se(passed) or 0.0) ** 2)
    return Interval(
        estimate=p1 - p2,
        low=max(low, -1.0),
        high=1.0,
        se=se if n1 > 1 and n2 > 1 else None,
        n=n1 + n2,
        tasks=n1 + n2,
        method=RISK_DIFFERENCE,
    )


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    return np.asarray(np.mean(x, axis=axis) - np.mean(y, axis=axis))


def greater(failed: Sequence[float], passed: Sequence[float]) -> tuple[float, str]:
    """One-sided p-value that ``failed``'s mean exceeds ``passed``'s, and the test used.

    Fisher's exact test when every value is 0 or 1, else a permutation test of the difference in
    means (2,000 resamples, fixed seed). Both arms must be non-empty.
    """
    values = [*failed, *passed]
    if all(v in (0.0, 1.0) for v in values):
        bad_f, bad_p = int(sum(failed)), int(sum(passed))
        table = np.array([[bad_f, len(failed) - bad_f], [bad_p, len(passed) - bad_p]])
        return float(fisher_exact(table, alternative="greater").pvalue), FISHER
    result = permutation_test(
        (np.asarray(failed, dtype=float), np.asarray(passed, dtype=float)),
        _mean_difference,
        permutation_type="independent",
        alternative="greater",
        n_resamples=2000,
        vectorized=True,
        rng=np.random.default_rng(SEED),
    )
    return float(result.pvalue), PERMUTATION


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's (1979) step-down adjusted p-values, in the order given.

    Sorted ascending, the i-th of m is multiplied by (m - i + 1), kept monotone and capped at 1;
    e.g. (0.01, 0.02, 0.03, 0.04, 0.05) gives (0.05, 0.08, 0.09, 0.09, 0.09).
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
