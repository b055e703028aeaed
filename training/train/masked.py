"""MaskablePPO without sb3-contrib's throw-away normalisation of the unmasked logits (issue 16).

sb3-contrib builds every masked action distribution in three torch ``Categorical`` initialisations: its
``MaskableCategorical(logits=l)`` normalises ``l`` to ``x1 = l - logsumexp(l)`` (and validates ``x1``), then runs
``apply_masking(None)``, which normalises ``x1`` once more (and validates that); the policy then calls
``apply_masking(masks)``, which starts again from ``x1`` (``_original_logits``): ``where(masks, x1, -1e8)``,
normalised and validated. With masks, the middle initialisation is computed and discarded: nothing reads it.

:class:`OnceMaskedCategoricalDistribution` defers that middle step until something other than
``apply_masking(masks)`` reads the distribution, so a masked rollout or training step skips it, and a distribution
used without masks gets it before its first use. Every tensor the learner reads is computed by sb3-contrib's and
torch's own code on the same inputs, so training gives bit-identical parameters (tests/training/test_masked.py
compares a seeded ``learn`` against plain sb3-contrib). Validation keeps its outcome: the skipped step validated
``x1 - logsumexp(x1)``, which has a NaN only where ``x1`` has one (torch's ``logsumexp`` subtracts the row's maximum,
so a row of ``x1`` has an entry ~0 and its ``logsumexp`` is finite), and ``x1`` is validated by the first step.

On the blackbird session (23 actions) the middle step is ~20% of the masked distribution's cost in a rollout
(batch 4) and ~35% in a training minibatch (batch 256).

:class:`MaskablePPO` is sb3-contrib's with that distribution installed on its policy; ``rulebreaker train`` and
the training benchmark use it. Its model zips are sb3-contrib's (the policy class is unchanged and the
distribution holds no parameters), so plain ``sb3_contrib.MaskablePPO.load`` reads them.
"""

from __future__ import annotations

from typing import Any

import sb3_contrib
from sb3_contrib.common.maskable.distributions import MaskableCategorical, MaskableCategoricalDistribution
from torch import Tensor
from torch.distributions import Categorical


class OnceMaskedCategoricalDistribution(MaskableCategoricalDistribution):
    """sb3-contrib's ``MaskableCategoricalDistribution`` with the discarded normalisation deferred (module doc)."""

    def __init__(self, action_dim: int) -> None:
        super().__init__(action_dim)
        self._dist: MaskableCategorical | None = None
        self._owed = False  # sb3-contrib's apply_masking(None) of construction, not yet run on self._dist

    @property
    def distribution(self) -> MaskableCategorical:
        """The ``MaskableCategorical``, with the deferred step run first (anything but masking reads it)."""
        dist = self._dist
        if dist is None:
            raise AttributeError("no distribution yet: call proba_distribution first")
        if self._owed:
            self._owed = False
            dist.apply_masking(None)
        return dist

    @distribution.setter
    def distribution(self, value: MaskableCategorical) -> None:
        self._dist, self._owed = value, False

    def proba_distribution(self, action_logits: Tensor) -> OnceMaskedCategoricalDistribution:
        # sb3-contrib's MaskableCategorical.__init__ up to its apply_masking(None), written out so that the
        # apply_masking(None) can wait: the object is a plain MaskableCategorical in the same state
        dist = MaskableCategorical.__new__(MaskableCategorical)
        dist.masks = None
        Categorical.__init__(dist, logits=action_logits.view(-1, self.action_dim))
        dist._original_logits = dist.logits
        self._dist, self._owed = dist, True
        return self

    def apply_masking(self, masks: Any) -> None:
        if masks is not None:
            # masking recomputes everything from _original_logits, which the owed step leaves as it is
            self._owed = False
        self.distribution.apply_masking(masks)


class MaskablePPO(sb3_contrib.MaskablePPO):
    """sb3-contrib's MaskablePPO whose policy builds its masked distributions without the discarded step."""

    def _setup_model(self) -> None:
        super()._setup_model()
        dist = self.policy.action_dist
        if type(dist) is MaskableCategoricalDistribution:  # a Discrete action space (the rulebreaker envs')
            self.policy.action_dist = OnceMaskedCategoricalDistribution(dist.action_dim)
