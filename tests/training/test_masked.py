"""training.train.masked: the masked distribution without sb3-contrib's discarded step gives the same numbers."""

from __future__ import annotations

import numpy as np
import pytest
import torch as th
from sb3_contrib import MaskablePPO as PlainMaskablePPO
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution

from envs.core.registry import get_ruleset
from training.train import make_vec_env
from training.train.masked import MaskablePPO, OnceMaskedCategoricalDistribution

N_ACTIONS = 7


def _logits_and_masks(seed: int, batch: int) -> tuple[th.Tensor, np.ndarray]:
    g = th.Generator().manual_seed(seed)
    logits = th.randn(batch, N_ACTIONS, generator=g) * 3
    masks = np.random.default_rng(seed).random((batch, N_ACTIONS)) < 0.5
    masks[:, seed % N_ACTIONS] = True  # a legal action in every row
    return logits, masks


def _everything(dist, logits: th.Tensor, masking: str, masks: np.ndarray) -> list[th.Tensor]:
    """What a learner reads of a distribution (probs, log-probs, entropy, a seeded sample, the mode, gradients)."""
    leaf = logits.clone().requires_grad_(True)
    dist.proba_distribution(leaf)
    if masking == "masks":
        dist.apply_masking(masks)
    elif masking == "float tensor masks":  # as the rollout buffer hands them to evaluate_actions
        dist.apply_masking(th.as_tensor(masks, dtype=th.float32))
    elif masking == "none":
        dist.apply_masking(None)
    elif masking == "masks, none, masks":
        dist.apply_masking(masks)
        dist.apply_masking(None)
        dist.apply_masking(masks)
    else:  # "not applied": the policy without action_masks reads the distribution as built
        assert masking == "not applied"
    th.manual_seed(5)
    sample = dist.sample()
    log_prob = dist.log_prob(sample)
    entropy = dist.entropy()
    (log_prob.sum() + entropy.sum()).backward()
    d = dist.distribution
    return [d.logits, d.probs, log_prob, entropy, sample, dist.mode(), leaf.grad]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("batch", [1, 4, 256])
@pytest.mark.parametrize("masking", ["masks", "float tensor masks", "none", "not applied", "masks, none, masks"])
def test_once_masked_distribution_reads_like_sb3_contrib(seed, batch, masking):
    logits, masks = _logits_and_masks(seed, batch)
    plain = _everything(MaskableCategoricalDistribution(N_ACTIONS), logits, masking, masks)
    fast = _everything(OnceMaskedCategoricalDistribution(N_ACTIONS), logits, masking, masks)
    for a, b in zip(plain, fast, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert th.equal(a, b), (a, b)


def test_once_masked_distribution_skips_the_discarded_step_only_when_masked(monkeypatch):
    """The saving is real: with masks, one Categorical initialisation fewer; without, the same number."""
    from torch.distributions import Categorical

    inits = []
    plain_init = Categorical.__init__

    def counting(self, *a, **k):
        inits.append(1)
        plain_init(self, *a, **k)

    monkeypatch.setattr(Categorical, "__init__", counting)
    logits, masks = _logits_and_masks(0, 4)
    counts = {}
    for name, cls in (("plain", MaskableCategoricalDistribution), ("fast", OnceMaskedCategoricalDistribution)):
        for m in (masks, None):
            inits.clear()
            d = cls(N_ACTIONS).proba_distribution(logits)
            d.apply_masking(m)
            d.log_prob(d.sample())
            counts[name, m is None] = len(inits)
    assert counts == {("plain", False): 3, ("fast", False): 2, ("plain", True): 3, ("fast", True): 3}


def _trained_params(
    cls, ruleset: str, scenario: str, seed: int, steps: int = 256
) -> tuple[dict[str, th.Tensor], object]:
    rs = get_ruleset(ruleset)
    env = make_vec_env(ruleset, scenario, rs.default_config(), [None, None], "dummy")
    model = cls(
        "MlpPolicy",
        env,
        seed=seed,
        device="cpu",
        n_steps=64,
        batch_size=64,
        n_epochs=3,
        policy_kwargs={"net_arch": [32]},
    )
    if steps:
        model.learn(steps)
    env.close()
    return {k: v.clone() for k, v in model.policy.state_dict().items()}, model


@pytest.mark.training
@pytest.mark.parametrize(("ruleset", "scenario"), [("blackbird", "session"), ("toy_pig", "race")])
def test_learn_gives_the_same_parameters_as_plain_sb3_contrib(ruleset, scenario, toy):
    """A seeded short run (rollouts with masks, masked minibatches, Adam) ends on bit-identical parameters."""
    threads = th.get_num_threads()
    th.set_num_threads(1)
    try:
        plain, plain_model = _trained_params(PlainMaskablePPO, ruleset, scenario, seed=3)
        fast, fast_model = _trained_params(MaskablePPO, ruleset, scenario, seed=3)
        untrained, _ = _trained_params(MaskablePPO, ruleset, scenario, seed=3, steps=0)
    finally:
        th.set_num_threads(threads)
    assert type(plain_model.policy.action_dist) is MaskableCategoricalDistribution
    assert type(fast_model.policy.action_dist) is OnceMaskedCategoricalDistribution
    assert plain.keys() == fast.keys()
    for k in plain:
        assert th.equal(plain[k], fast[k]), k
    # and training moved them: equal untrained networks would prove nothing
    assert all(not th.equal(untrained[k], fast[k]) for k in fast)


def test_saved_model_loads_as_plain_sb3_contrib(tmp_path):
    rs = get_ruleset("blackbird")
    env = make_vec_env("blackbird", "session", rs.default_config(), [None], "dummy")
    model = MaskablePPO(
        "MlpPolicy", env, seed=0, device="cpu", n_steps=32, batch_size=32, policy_kwargs={"net_arch": [8]}
    )
    model.save(tmp_path / "m.zip")
    for cls, dist in (
        (PlainMaskablePPO, MaskableCategoricalDistribution),
        (MaskablePPO, OnceMaskedCategoricalDistribution),
    ):
        loaded = cls.load(tmp_path / "m.zip", env=env, device="cpu")
        assert type(loaded.policy.action_dist) is dist
        for k, v in model.policy.state_dict().items():
            assert th.equal(v, loaded.policy.state_dict()[k])
    env.close()
