"""Statistics of a report: proportions with intervals, paired differences, pass@k and pass^k.

Every interval is a 95% interval and names its method, so a reader can tell a Wilson score
interval (one attempt per task) from a cluster bootstrap over tasks (several epochs, where attempts
on one task are not independent). Resampling uses a fixed seed, so a report is reproducible.

Sources:
    - Wilson score interval: E. B. Wilson (1927), "Probable inference, the law of succession, and
      statistical inference", JASA 22:209-212; computed by ``scipy.stats.binomtest(...).proportion_ci
      (method="wilson")``.
    - Cluster (task-level) bootstrap: B. Efron and R. Tibshirani (1993), "An Introduction to the
      Bootstrap", resampling whole clusters; as recommended for evaluations with repeated samples per
      question by E. Miller (2024), "Adding Error Bars to Evals", arXiv:2411.00640.
    - Exact McNemar test: Q. McNemar (1947), Psychometrika 12:153-157; the exact form is a two-sided
      binomial test of the discordant pairs at p = 1/2 (``scipy.stats.binomtest``).
    - Interval of a paired difference of proportions: R. G. Newcombe (1998), "Improved confidence
      intervals for the difference between binomial proportions based on paired data", Statistics
      in Medicine 17:2635-2650, method 10 (Wilson limits of both margins, phi corrected); worked
      example in D. G. Altman et al. (2000), "Statistics with Confidence", table 6.2.
    - pass@k: M. Chen et al. (2021), "Evaluating Large Language Models Trained on Code",
      arXiv:2107.03374, section 2.1, the unbiased estimator 1 - C(n-c, k) / C(n, k).
    - pass^k: S. Yao et al. (2024), "tau-bench", arXiv:2406.12045, section 5: C(c, k) / C(n, k), the
      same unbiased construction for "all k samples succeed".
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb, sqrt

import numpy as np
from scipy.stats import binomtest, fisher_exact

from repogate._model import FrozenModel

CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 20260105
WILSON = "Wilson score interval"
WILSON_TASKS = "Wilson score interval over tasks (every attempt agrees)"
CLUSTER_BOOTSTRAP = f"cluster bootstrap over tasks ({RESAMPLES} resamples, percentile)"
PAIRED_BOOTSTRAP = f"paired bootstrap over tasks ({RESAMPLES} resamples, percentile)"
MCNEMAR = "exact McNemar test (two-sided binomial test of discordant tasks)"
NEWCOMBE = "Newcombe (1998) interval for paired proportions (method 10)"
PAIRED_AGREED = "bound for tasks that all differ alike (Wilson over tasks, the rest in [-1, 1])"


class Interval(FrozenModel):
    """An estimate with its 95% interval.

    Attributes:
        estimate: the point estimate (a proportion in [0, 1], or a difference in [-1, 1]).
        low: lower bound of the 95% interval.
        high: upper bound of the 95% interval.
        n: the number of observations it rests on (attempts, or tasks for a paired difference).
        method: how the interval was computed, e.g. ``Wilson score interval``; ``none`` when n is 0.
    """

    estimate: float
    low: float
    high: float
    n: int
    method: str


def wilson(successes: int, n: int) -> Interval:
    """Return the proportion ``successes / n`` with its 95% Wilson score interval.

    Args:
        successes: count of successes, 0 <= successes <= n.
        n: count of trials; 0 gives an estimate of 0 with the whole [0, 1] as interval.

    Raises:
        ValueError: ``successes`` outside [0, n].
    """
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} outside [0, {n}]")
    if n == 0:
        return Interval(estimate=0.0, low=0.0, high=1.0, n=0, method="none (no observations)")
    ci = binomtest(successes, n).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    return Interval(
        estimate=successes / n, low=float(ci.low), high=float(ci.high), n=n, method=WILSON
    )


def _percentile(draws: np.ndarray) -> tuple[float, float]:
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return float(low), float(high)


def cluster_bootstrap(successes: Sequence[int], trials: Sequence[int]) -> Interval:
    """Return the pooled proportion over tasks with a cluster bootstrap interval.

    Whole tasks are resampled with replacement and the ratio sum(successes) / sum(trials) is
    recomputed on each resample (2,000 resamples, fixed seed, percentile interval), so the repeated
    attempts (epochs) of one task count as one correlated cluster, not as independent trials.

    Args:
        successes: per task, its accepted attempts.
        trials: per task, its scored attempts (each >= 1), in the same order.

    Raises:
        ValueError: the sequences differ in length, or a task has no trials.
    """
    s = np.asarray(successes, dtype=float)
    t = np.asarray(trials, dtype=float)
    if s.shape != t.shape or (t < 1).any():
        raise ValueError("successes and trials must pair up, each task with >= 1 trial")
    n = int(t.sum())
    if len(t) == 0:
        return wilson(0, 0)
    estimate = float(s.sum() / t.sum())
    picks = np.random.default_rng(SEED).integers(0, len(t), size=(RESAMPLES, len(t)))
    low, high = _percentile(s[picks].sum(axis=1) / t[picks].sum(axis=1))
    return Interval(estimate=estimate, low=low, high=high, n=n, method=CLUSTER_BOOTSTRAP)


def acceptance(per_task: Sequence[tuple[int, int]]) -> Interval:
    """Return acceptance over tasks, choosing the interval the data call for.

    Wilson when every task has one scored attempt (independent trials); a cluster bootstrap over
    tasks when any task has several (epochs). When every attempt agrees (all accepted or none) a
    percentile bootstrap collapses to a point, so the interval is then Wilson's over the tasks
    (each task one observation: the conservative count for correlated epochs).

    Args:
        per_task: per task, (accepted attempts, scored attempts).
    """
    successes = [s for s, _ in per_task]
    trials = [t for _, t in per_task]
    if all(t == 1 for t in trials):
        return wilson(sum(successes), len(trials))
    if sum(successes) in (0, sum(trials)):
        tasks = wilson(len(trials) if sum(successes) else 0, len(trials))
        return tasks.model_copy(update={"n": sum(trials), "method": WILSON_TASKS})
    return cluster_bootstrap(successes, trials)


class PairedDifference(FrozenModel):
    """Agent A's acceptance minus agent B's on the tasks both attempted.

    Attributes:
        difference: the mean over tasks of A's acceptance rate minus B's, with a paired bootstrap
            interval over tasks.
        only_a: tasks A solved (in every epoch compared) and B did not: discordant pairs.
        only_b: tasks B solved and A did not.
        p_value: the exact McNemar p-value (one epoch per task), else None.
        method: the test or interval used.
    """

    difference: Interval
    only_a: int
    only_b: int
    p_value: float | None
    method: str


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Return the two-sided exact McNemar p-value for ``only_a`` and ``only_b`` discordant pairs.

    Under the null hypothesis each discordant pair falls either way with probability 1/2; the test
    is a two-sided binomial test (McNemar 1947, exact form). No discordant pair gives 1.0.
    """
    total = only_a + only_b
    if total == 0:
        return 1.0
    return float(binomtest(only_a, total, 0.5).pvalue)


def paired(rates_a: Sequence[float], rates_b: Sequence[float], one_epoch: bool) -> PairedDifference:
    """Compare two agents on the same tasks.

    Args:
        rates_a: per task, agent A's acceptance rate over its scored attempts (0 or 1 for one epoch).
        rates_b: the same for agent B, tasks in the same order.
        one_epoch: every task has one attempt per agent: the exact McNemar test with Newcombe's
            interval; otherwise a paired bootstrap over tasks of the mean difference (or, when
            every task differs alike and a bootstrap would collapse to a point, the bound of
            :data:`PAIRED_AGREED`).

    Raises:
        ValueError: the sequences differ in length.
    """
    a = np.asarray(rates_a, dtype=float)
    b = np.asarray(rates_b, dtype=float)
    if a.shape != b.shape:
        raise ValueError("paired rates must cover the same tasks")
    n = len(a)
    only_a = int(((a == 1) & (b == 0)).sum())
    only_b = int(((b == 1) & (a == 0)).sum())
    diff = a - b
    estimate = float(diff.mean()) if n else 0.0
    if n == 0:
        interval = Interval(estimate=0.0, low=-1.0, high=1.0, n=0, method="none (no shared task)")
        return PairedDifference(
            difference=interval, only_a=0, only_b=0, p_value=None, method="none"
        )
    if one_epoch:
        return PairedDifference(
            difference=newcombe_paired(a, b),
            only_a=only_a,
            only_b=only_b,
            p_value=mcnemar_exact(only_a, only_b),
            method=MCNEMAR,
        )
    if np.all(diff == diff[0]):
        interval = _agreed_difference(float(diff[0]), n)
    else:
        picks = np.random.default_rng(SEED).integers(0, n, size=(RESAMPLES, n))
        low, high = _percentile(diff[picks].mean(axis=1))
        interval = Interval(estimate=estimate, low=low, high=high, n=n, method=PAIRED_BOOTSTRAP)
    return PairedDifference(
        difference=interval, only_a=only_a, only_b=only_b, p_value=None, method=interval.method
    )


def _agreed_difference(d: float, n: int) -> Interval:
    """Bound a mean difference when all ``n`` tasks differ by the same ``d``.

    A percentile bootstrap collapses to the point ``d`` then. The share of tasks differing by
    ``d`` is at least Wilson's lower limit ``L`` for n of n; the other tasks could differ by
    anything in [-1, 1], so the mean lies in [d - (1 - L)(1 + d), d + (1 - L)(1 - d)].
    """
    rest = 1 - wilson(n, n).low
    return Interval(
        estimate=d, low=d - rest * (1 + d), high=d + rest * (1 - d), n=n, method=PAIRED_AGREED
    )


def newcombe_paired(a: np.ndarray, b: np.ndarray) -> Interval:
    """Return the difference of two paired proportions with Newcombe's (1998) method-10 interval.

    Args:
        a: per task, agent A's outcome, 0 or 1.
        b: per task, agent B's outcome, 0 or 1, tasks in the same order (at least one task).

    The interval combines the Wilson limits of both margins, corrected for their correlation
    (phi, with Newcombe's adjustment of the cross-product toward zero); it never collapses to a
    point, as a bootstrap does when every task agrees.
    """
    n = len(a)
    both = int(((a == 1) & (b == 1)).sum())
    only_a = int(((a == 1) & (b == 0)).sum())
    only_b = int(((a == 0) & (b == 1)).sum())
    neither = n - both - only_a - only_b
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    m1, m2 = wilson(both + only_a, n), wilson(both + only_b, n)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    cross = both * neither - only_a * only_b
    adjusted = cross - n / 2 if cross > n / 2 else min(cross, 0)
    phi = adjusted / sqrt(margins) if margins else 0.0
    d1, u2 = p1 - m1.low, m2.high - p2
    u1, d2 = m1.high - p1, p2 - m2.low
    low = p1 - p2 - sqrt(max(d1**2 - 2 * phi * d1 * u2 + u2**2, 0.0))
    high = p1 - p2 + sqrt(max(d2**2 - 2 * phi * d2 * u1 + u1**2, 0.0))
    return Interval(estimate=p1 - p2, low=low, high=high, n=n, method=NEWCOMBE)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Return the unbiased estimate of pass@k: the chance that at least one of k samples passes.

    From M. Chen et al. (2021), "Evaluating Large Language Models Trained on Code"
    (arXiv:2107.03374), equation 1: pass@k = 1 - C(n - c, k) / C(n, k), for n samples of which c
    passed. Exact integer arithmetic, so no rounding for large n.

    Args:
        n: attempts on the task.
        c: accepted attempts, 0 <= c <= n.
        k: 1 <= k <= n.

    Raises:
        ValueError: the arguments are outside those ranges.
    """
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Return the unbiased estimate of pass^k: the chance that all of k samples pass.

    pass^k = C(c, k) / C(n, k), the estimator of S. Yao et al. (2024), "tau-bench"
    (arXiv:2406.12045), built as Chen et al. (2021) build pass@k: drawing k of the n attempts without
    replacement, the chance that every one drawn was accepted.

    Args:
        n: attempts on the task.
        c: accepted attempts, 0 <= c <= n.
        k: 1 <= k <= n.

    Raises:
        ValueError: the arguments are outside those ranges.
    """
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def fisher_p(failed_a: int, n_a: int, failed_b: int, n_b: int) -> float:
    """Return the two-sided p-value of Fisher's exact test on a 2x2 table (``scipy.stats.fisher_exact``).

    Args:
        failed_a: failures among group A's ``n_a`` observations.
        n_a: size of group A.
        failed_b: failures among group B's ``n_b`` observations.
        n_b: size of group B.

    An empty group gives 1.0: no evidence of a difference.
    """
    if n_a == 0 or n_b == 0:
        return 1.0
    table = [[failed_a, n_a - failed_a], [failed_b, n_b - failed_b]]
    return float(fisher_exact(np.array(table)).pvalue)


def median(values: Sequence[float]) -> float:
    """Return the median of ``values`` (0.0 for none)."""
    return float(np.median(values)) if len(values) else 0.0
