"""The report's statistics against reference values and brute force."""

from __future__ import annotations

from itertools import combinations

import pytest

from repogate.report import differences, stats


def test_wilson_matches_the_reference_for_8_of_10() -> None:
    # R: prop.test(8, 10, correct = FALSE)$conf.int -> 0.4901625 0.9433178
    interval = stats.wilson(8, 10)
    assert interval.estimate == 0.8
    assert interval.low == pytest.approx(0.4901625, abs=1e-7)
    assert interval.high == pytest.approx(0.9433178, abs=1e-7)
    assert interval.method == stats.WILSON and interval.n == 10


def test_wilson_at_the_edges_and_bad_counts() -> None:
    # Wilson never collapses at 0 or n: 0/10 -> [0, 0.2775328] (R prop.test, no correction)
    assert stats.wilson(0, 10).high == pytest.approx(0.2775328, abs=1e-7)
    assert stats.wilson(10, 10).low == pytest.approx(1 - 0.2775328, abs=1e-7)
    assert stats.wilson(0, 0).n == 0
    with pytest.raises(ValueError, match="outside"):
        stats.wilson(11, 10)


def _brute(n: int, c: int, k: int) -> tuple[float, float]:
    """pass@k and pass^k by enumerating every k-subset of n attempts, c of them accepted."""
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(combinations(outcomes, k))
    return (
        sum(any(s) for s in subsets) / len(subsets),
        sum(all(s) for s in subsets) / len(subsets),
    )


@pytest.mark.parametrize("n", range(1, 8))
def test_pass_at_k_and_pass_hat_k_equal_brute_force_enumeration(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            at, hat = _brute(n, c, k)
            assert stats.pass_at_k(n, c, k) == pytest.approx(at, abs=1e-12), (n, c, k)
            assert stats.pass_hat_k(n, c, k) == pytest.approx(hat, abs=1e-12), (n, c, k)


def test_pass_at_k_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError):
        stats.pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        stats.pass_hat_k(3, 1, 4)


def test_exact_mcnemar_is_the_sign_test_of_discordant_tasks() -> None:
    # 1 vs 9 discordant pairs: p = 2 * P(X <= 1 | n=10, 1/2) = 2 * 11 / 1024
    assert differences.sign_test(1, 9) == pytest.approx(22 / 1024)
    assert differences.sign_test(5, 5) == pytest.approx(1.0)
    assert differences.sign_test(0, 0) == 1.0


def test_one_sided_fisher_reference_and_the_permutation_test_agreeing_on_0_1_values() -> None:
    # R: fisher.test(matrix(c(3, 1, 1, 3), 2), alternative = "greater")$p.value -> 0.2428571
    p, test = differences.greater([1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0])
    assert p == pytest.approx(17 / 70) and test == differences.FISHER
    # the other direction is not evidence: P(X >= 1) for a gate whose failures go with fewer
    assert differences.greater([1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0])[0] == pytest.approx(
        69 / 70
    )
    # a fractional value (an epoch mean) takes the permutation test; 4 and 4 clusters give only
    # 70 distinct splits, enumerated exactly by scipy: the same p as Fisher's for 0/1-like data
    p, test = differences.greater([1.0, 1.0, 0.5, 0.0], [1.0, 0.0, 0.0, 0.0])
    assert test == differences.PERMUTATION and p == pytest.approx(17 / 70)


def test_holm_matches_r_p_adjust() -> None:
    # R: p.adjust(c(0.01, 0.04, 0.03, 0.02, 0.05), "holm") -> 0.05 0.09 0.09 0.08 0.09
    assert differences.holm([0.01, 0.04, 0.03, 0.02, 0.05]) == pytest.approx(
        [0.05, 0.09, 0.09, 0.08, 0.09]
    )
    assert differences.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert differences.holm([]) == []


def test_risk_difference_is_newcombes_hybrid_score_interval() -> None:
    # Newcombe (1998b), Statistics in Medicine 17:873, example (a): 56/70 vs 48/80, method 10
    # gives the 95% interval 0.0524 to 0.3339; the two-sided lower limit is the one-sided 97.5% one
    rd = differences.risk_difference([1.0] * 56 + [0.0] * 14, [1.0] * 48 + [0.0] * 32, 0.975)
    assert rd.estimate == pytest.approx(0.2)
    assert rd.low == pytest.approx(0.0524, abs=5e-5) and rd.high == 1.0
    one_sided = differences.risk_difference([1.0] * 56 + [0.0] * 14, [1.0] * 48 + [0.0] * 32)
    assert rd.low < one_sided.low < rd.estimate  # one-sided 95% is tighter than 97.5%


def test_cluster_bootstrap_is_wider_than_treating_epochs_as_independent() -> None:
    """Epochs of one task are correlated: 10 tasks, each solved in all 5 epochs or none, carry
    the information of 10 observations, not 50; the interval must say so."""
    per_task = [(5, 5)] * 5 + [(0, 5)] * 5
    cluster = stats.cluster_bootstrap(per_task)
    naive = stats.wilson(25, 50)
    assert cluster.estimate == 0.5 and (cluster.n, cluster.tasks) == (50, 10)
    assert cluster.method == stats.CLUSTER_BOOTSTRAP
    assert cluster.high - cluster.low > (naive.high - naive.low) * 1.4
    assert 0.0 <= cluster.low < 0.5 < cluster.high <= 1.0
    assert stats.cluster_bootstrap(per_task) == cluster  # fixed seed: reproducible
    default = stats.over_tasks(per_task)
    assert default.high - default.low > (naive.high - naive.low) * 1.4


def test_the_default_interval_is_wilson_with_continuity_correction_over_tasks() -> None:
    # R: prop.test(8, 10, correct = TRUE)$conf.int -> 0.4421814 0.9645731
    one_epoch = stats.over_tasks([(1, 1)] * 8 + [(0, 1)] * 2)
    assert one_epoch.method == stats.WILSON_CC_TASKS and one_epoch.estimate == 0.8
    assert (one_epoch.low, one_epoch.high) == pytest.approx((0.4421814, 0.9645731), abs=1e-7)
    assert one_epoch.se == pytest.approx((0.8 * 0.2 / 9) ** 0.5)  # sd (ddof 1) / sqrt(10)
    # the estimand is the mean of per-task rates: 2/2 and 0/4 is 50%, not 2/6
    mixed = stats.over_tasks([(2, 2), (0, 4)])
    assert mixed.estimate == 0.5 and (mixed.n, mixed.tasks) == (6, 2)


def test_an_interval_never_collapses_to_a_point() -> None:
    """The bootstrap gave 60% [60%, 60%] for one task at 3/5 and [50%, 50%] for ten tasks at 1/2."""
    one = stats.over_tasks([(3, 5)])
    assert one.estimate == 0.6 and one.high - one.low > 0.9 and one.se is None
    assert stats.cluster_bootstrap([(3, 5)]).high == stats.cluster_bootstrap([(3, 5)]).low
    ten = stats.over_tasks([(1, 2)] * 10)
    # Wilson with continuity correction for 5 of 10: R prop.test(5, 10)$conf.int
    assert (ten.low, ten.high) == pytest.approx((0.2014230, 0.7985770), abs=1e-6)
    assert ten.se == 0.0  # every task agrees: the spread is 0, the interval is not
    # every task agreeing: Newcombe (1998) table I, method 4, for 0 of 10 gives 0 to 0.3445
    none = stats.over_tasks([(0, 2)] * 10)
    assert (none.low, none.high) == pytest.approx((0.0, 0.3445), abs=1e-4)
    every = stats.over_tasks([(2, 2)] * 10)
    assert (every.low, every.high) == pytest.approx((1 - 0.3445, 1.0), abs=1e-4)


def test_paired_uses_newcombe_for_0_1_rates_and_its_construction_on_epoch_means() -> None:
    a = [1.0] * 9 + [0.0]
    b = [0.0] * 9 + [1.0]
    one = differences.paired(a, b)
    assert (one.only_a, one.only_b) == (9, 1)
    assert one.p_value == pytest.approx(22 / 1024)
    assert one.difference.estimate == pytest.approx(0.8)
    assert one.difference.method == differences.NEWCOMBE
    assert one.method == differences.SIGN_TEST
    several = differences.paired([0.5, 1.0, 1.0], [0.0, 0.5, 0.0])
    assert several.difference.method == differences.MOVER
    assert several.difference.estimate == pytest.approx(2 / 3)
    assert several.p_value == pytest.approx(0.25)  # 3 of 3 tasks better: 2 * (1/2)^3
    assert -1 < several.difference.low < 2 / 3 < several.difference.high < 1
    assert several.difference.se == pytest.approx(1 / 6)  # sd(0.5, 0.5, 1) / sqrt(3)


def test_paired_difference_with_one_epoch_is_newcombes_interval() -> None:
    # Newcombe (1998) method 10 on Altman et al. (2000) table 6.2, [[14, 5], [0, 22]]: the
    # difference 5/41; interval from its formula (Wilson limits of 19/41 and 14/41, phi corrected)
    a = [1.0] * 14 + [1.0] * 5 + [0.0] * 22
    b = [1.0] * 14 + [0.0] * 5 + [0.0] * 22
    one = differences.paired(a, b)
    assert one.difference.estimate == pytest.approx(5 / 41)
    assert one.difference.low == pytest.approx(0.0114832, abs=1e-6)
    assert one.difference.high == pytest.approx(0.2264927, abs=1e-6)
    assert one.difference.method == differences.NEWCOMBE


def test_a_difference_every_task_shares_is_not_reported_as_certain() -> None:
    """Gold beats null on all 20 tasks: a bootstrap collapses to [-1, -1]; the data do not say that."""
    # no concordant pair, phi = 0, so the upper limit is
    # -1 + sqrt(2) * (1 - Wilson lower limit of 20/20) = -1 + sqrt(2) * z^2 / (20 + z^2)
    z2 = 1.959963984540054**2
    one = differences.paired([0.0] * 20, [1.0] * 20)
    assert one.difference.low == -1.0
    assert one.difference.high == pytest.approx(-1 + 2**0.5 * z2 / (20 + z2), abs=1e-9)
    # every task at 1/2 for both: no spread, yet the Wilson limits of 5 of 10 on either side
    tied = differences.paired([0.5] * 10, [0.5] * 10)
    lo, hi = stats.wilson_bounds(5, 10)
    half = ((hi - 0.5) ** 2 + (0.5 - lo) ** 2) ** 0.5
    assert tied.difference.method == differences.MOVER
    assert (tied.difference.low, tied.difference.high) == pytest.approx((-half, half))
    assert tied.p_value == 1.0 and tied.difference.se == 0.0


def test_an_interval_over_no_attempt_reads_as_none_not_as_zero() -> None:
    """A cohort an agent has no scored attempt in is not '0.0% [0.0%, 100.0%]' (0 accepted)."""
    from repogate.report.text import interval_text

    assert interval_text(stats.over_tasks([])) == "n/a (no observations)"
    assert interval_text(stats.wilson(8, 10)) == "80.0% [49.0%, 94.3%]"
