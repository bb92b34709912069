"""The humans' majority: one rule for every table that treats the participants of an instance as one observer
(`agreement_human`'s panel, `agreement_model`'s panel κ, `human_model_difference`'s McNemar test).

Why one rule, and why ties are dropped: with an even number of raters an instance can split exactly in half (with
two raters, every disagreement does). Such an instance has no majority answer; calling it wrong pulls the panel's
accuracy below the individuals' for no reason in the data, calling it right pushes it up, and a tie worth 0.5 is no 0/1 outcome for κ or McNemar's test. So a tied
instance is left out of every majority figure and counted in a `tied` n column beside it, and the figures set
beside the panel (the individuals' mean accuracy) are computed on the same, untied instances."""
from __future__ import annotations

import numpy as np
import pandas as pd

TIE_RULE = ("an instance whose participants split exactly in half has no majority: it is left out of every "
            "majority figure and counted as tied")


def majority(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Per vote, the majority of n binary votes of which k say yes: 1.0 (more than half), 0.0 (fewer than half)
    or NaN (exactly half: a tie, `TIE_RULE`)."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    return np.where(2 * k > n, 1.0, np.where(2 * k < n, 0.0, np.nan))


def majority_outcome(h: pd.DataFrame) -> tuple[pd.Series, pd.Index]:
    """The humans' right/wrong answer per instance as one observer (`h`: human rows with `instance_id` and 0/1
    `passed`): the 0/1 majority of the instances with one, in instance order, and the tied instances apart."""
    g = h.groupby("instance_id", sort=True)["passed"]
    vote = pd.Series(majority(g.sum().to_numpy(), g.size().to_numpy()), index=g.sum().index)
    return vote.dropna().astype(int), vote.index[vote.isna()]
