"""The contract kit: the checks every ruleset must pass (``rulebreaker check R`` and tests call them).

:func:`run_checks` returns one :class:`CheckResult` per check and scenario; nothing is printed and nothing
raises for a failed check (an unknown ruleset name is a :class:`~envs.core.errors.UserError`).
:func:`assert_checks` is the pytest helper: it fails with one line per failed check.

The checks, per scenario:

- ``env_checkers``: gymnasium's ``check_env`` and stable-baselines3's ``check_env`` on the single-seat
  adapter, with every warning turned into an error.
- ``determinism``: two random games from the same seed give the same actions, chance outcomes,
  observations and returns; two ``reset(seed=...)`` of the env give the same observation; where the scenario sets
  ``clone_start``, 2,000 random env steps play the same with the start cloned per reset as with new games.
- ``random_play``: ``steps`` random masked decisions (every seat random, chance drawn with
  ``sample_chance``); every episode ends within the scenario's ``max_episode_steps`` decisions; legal
  actions are distinct ids in range and non-empty at a decision, empty elsewhere, and ``legal_tuple()``
  holds them as a tuple (in increasing order where the state sets ``legal_sorted``); a state that sets
  ``player_kept`` holds ``current_player()`` in ``_player`` at every node, and one that sets ``legal_kept`` holds
  ``legal_actions()`` as a tuple in ``_legal`` (empty at chance and terminal nodes); observations have the
  declared length, are finite float32 inside ``observation_bounds`` (and fresh, writable arrays where the scenario
  declares ``observation_in_bounds``); returns are finite.
- ``masks``: the env's ``action_masks()`` equals the mask of ``state.legal_actions()`` at every step.
- ``clone``: a clone starts equal to its original, and playing on the clone leaves the original unchanged.
- ``chance``: at the chance nodes met (up to ``chance_nodes`` distinct ones), ``chance_outcomes()`` has
  non-negative probabilities summing to 1 (within 1e-9) over distinct outcomes, every ``sample_chance``
  draw is one of them, and the draws fit the probabilities by a chi-square goodness-of-fit test at
  significance ``alpha`` for the whole check (Bonferroni: ``alpha / nodes`` per node; bins with an
  expected count under 5 are pooled). A scenario that enumerates no chance node passes with a note.

And once per ruleset:

- ``config``: ``rules.toml`` and every variant in ``variants/`` load; an unknown key and a bad value of
  each scalar key (where the type refuses it) give a :class:`~envs.core.errors.ConfigError` naming the key.
- ``odds`` (when the ruleset's odds provider gives ``examples``): each example query's exact table has
  non-negative probabilities whose ``partition`` sums to exactly 1, and the provider's sampler (the engine's
  own roll) falls into exactly one partition outcome per roll and fits the table by the chi-square test.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from envs.core.config import load_config, read_toml, validate_config
from envs.core.dice import Rng
from envs.core.errors import ConfigError
from envs.core.game import CHANCE, TERMINAL, Ruleset, Scenario, State

DEFAULT_STEPS = 100_000
"""Random masked decisions per scenario in ``random_play``."""
DEFAULT_ALPHA = 1e-3
"""Significance of the chi-square check over all tested chance nodes of a scenario."""
CHI_SQUARE_DRAWS = 4000
"""``sample_chance`` draws per tested chance node."""
MIN_EXPECTED = 5.0
"""Chi-square bins with a smaller expected count are pooled into one."""
PROBABILITY_TOLERANCE = 1e-9
"""How far the probabilities of a chance node may sum from 1."""
BAD_VALUE = ["not", "a", "valid", "value"]
"""The value the config check puts in a scalar key (a list: refused by int, float, bool and str fields)."""


@dataclass(frozen=True)
class CheckResult:
    """The result of one check on one scenario (``scenario`` is ``None`` for ruleset-wide checks)."""

    check: str
    scenario: str | None
    passed: bool
    detail: str = ""

    def line(self) -> str:
        """One readable line: ``FAIL storyteller/heist clone: …``."""
        where = self.check if self.scenario is None else f"{self.scenario} {self.check}"
        return f"{'ok  ' if self.passed else 'FAIL'} {where}{': ' + self.detail if self.detail else ''}"


class CheckFailure(Exception):
    """A contract violation found by a check (its message is the result's detail)."""


class CloneFailure(CheckFailure):
    """A ``clone()`` that is not an independent equal copy (found during random play)."""


# -- chi-square ------------------------------------------------------------------------------------
def _lower_gamma_series(a: float, x: float) -> float:
    """The regularized lower incomplete gamma P(a, x) by its power series (good for x < a + 1)."""
    term = total = 1.0 / a
    n = a
    for _ in range(10_000):
        n += 1.0
        term *= x / n
        total += term
        if abs(term) < abs(total) * 1e-15:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _upper_gamma_fraction(a: float, x: float) -> float:
    """The regularized upper incomplete gamma Q(a, x) by its continued fraction (good for x >= a + 1)."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h * math.exp(-x + a * math.log(x) - math.lgamma(a))


def chi_square_sf(statistic: float, dof: int) -> float:
    """P(X >= statistic) for X chi-square distributed with ``dof`` degrees of freedom."""
    if dof <= 0:
        raise ValueError("dof must be positive")
    if statistic <= 0:
        return 1.0
    a, x = dof / 2.0, statistic / 2.0
    if x < a + 1.0:
        return max(0.0, 1.0 - _lower_gamma_series(a, x))
    return _upper_gamma_fraction(a, x)


def chi_square_test(counts: Mapping[Any, int], probabilities: Mapping[Any, float]) -> tuple[float, int, float]:
    """Pearson's goodness-of-fit test of draw counts against probabilities: (statistic, dof, p-value).

    Bins with an expected count under :data:`MIN_EXPECTED` are pooled into one; with fewer than two bins
    left the test is vacuous and returns ``(0.0, 0, 1.0)``.
    """
    n = sum(counts.values())
    bins: list[tuple[float, int]] = []
    pooled_e, pooled_o = 0.0, 0
    for outcome, p in probabilities.items():
        e, o = n * p, counts.get(outcome, 0)
        if e < MIN_EXPECTED:
            pooled_e += e
            pooled_o += o
        else:
            bins.append((e, o))
    if pooled_e > 0:
        bins.append((pooled_e, pooled_o))
    if len(bins) < 2:  # noqa: PLR2004 - a test needs two bins
        return 0.0, 0, 1.0
    statistic = sum((o - e) ** 2 / e for e, o in bins)
    dof = len(bins) - 1
    return statistic, dof, chi_square_sf(statistic, dof)


# -- helpers ---------------------------------------------------------------------------------------
def _advance_chance(state: State, rng: Rng) -> None:
    while state.current_player() == CHANCE:
        state.apply_chance(state.sample_chance(rng))


def _fingerprint(state: State) -> tuple[Any, ...]:
    """What a clone must reproduce and must not disturb: player, legal ids, observations, returns, log."""
    player = state.current_player()
    observations = tuple(np.asarray(state.observation(s), dtype=np.float32).tobytes() for s in range(state.num_players))
    return (
        player,
        tuple(state.legal_actions()),
        observations,
        tuple(state.returns()),
        len(state.log),
        tuple((e.kind, e.text) for e in state.log[-3:]),
    )


def _random_game(scenario: Scenario, config: Any, seed: int, limit: int) -> list[Any]:
    """The trace of one random game: every chance outcome, action, observation and the returns."""
    rng = Rng(seed)
    state = scenario.new_game(config)
    trace: list[Any] = []
    for _ in range(limit):
        player = state.current_player()
        if player == TERMINAL:
            break
        if player == CHANCE:
            outcome = state.sample_chance(rng)
            trace.append(("chance", repr(outcome)))
            state.apply_chance(outcome)
            continue
        trace.append(("obs", np.asarray(state.observation(player), dtype=np.float32).tobytes()))
        action = rng.choice(state.legal_actions())
        trace.append(("act", player, action))
        state.apply_action(action)
    trace.append(("returns", tuple(state.returns())))
    return trace


# -- the checks ------------------------------------------------------------------------------------
def check_env_checkers(ruleset: Ruleset, scenario: str, config: Any) -> str:
    """Gymnasium's and SB3's env checkers on the single-seat adapter, warnings as errors."""
    from gymnasium.utils.env_checker import check_env as gym_check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    from envs.core.gym_adapter import GameEnv

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(GameEnv(ruleset, scenario, config=config), skip_render_check=True)
        sb3_check_env(GameEnv(ruleset, scenario, config=config), warn=True)
    return ""


def check_determinism(ruleset: Ruleset, scenario: str, config: Any, seed: int = 0, games: int = 3) -> str:
    """The same seed gives the same game, at the engine and through ``env.reset(seed=...)``."""
    from envs.core.gym_adapter import GameEnv

    sc = ruleset.scenario(scenario)
    limit = 20 * sc.max_episode_steps
    for g in range(games):
        if _random_game(sc, config, seed + g, limit) != _random_game(sc, config, seed + g, limit):
            raise CheckFailure(f"two random games from seed {seed + g} differ")
    first = GameEnv(ruleset, scenario, config=config).reset(seed=seed)[0]
    second = GameEnv(ruleset, scenario, config=config).reset(seed=seed)[0]
    if not np.array_equal(first, second):
        raise CheckFailure(f"env.reset(seed={seed}) gives different observations")
    if sc.clone_start and _env_trace(ruleset, sc, config, seed, True) != _env_trace(ruleset, sc, config, seed, False):
        raise CheckFailure("with clone_start the env plays otherwise than with new games (clone() shares mutable data)")
    return ""


def _env_trace(ruleset: Ruleset, sc: Scenario, config: Any, seed: int, clone_start: bool, steps: int = 2000) -> list:
    """Observations, masks and rewards of ``steps`` random legal env steps, the start built or cloned per reset."""
    from envs.core.gym_adapter import GameEnv

    env = GameEnv(ruleset, sc.name, config=config)
    env.scenario = replace(sc, clone_start=clone_start)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out: list = [obs.tobytes()]
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        out += [obs.tobytes(), env.action_masks().tobytes(), reward]
        if terminated or truncated:
            out.append(env.reset()[0].tobytes())
    return out


def _check_observation(state: State, scenario: Scenario, n_obs: int, seat: int) -> None:
    obs = np.asarray(state.observation(seat))
    if obs.dtype != np.float32:
        raise CheckFailure(f"observation({seat}) has dtype {obs.dtype}, expected float32")
    if obs.shape != (n_obs,):
        raise CheckFailure(f"observation({seat}) has shape {obs.shape}, expected ({n_obs},)")
    if not np.isfinite(obs).all():
        raise CheckFailure(f"observation({seat}) has a non-finite value at index {int(np.argmin(np.isfinite(obs)))}")
    low, high = scenario.observation_bounds
    bad = np.flatnonzero((obs < low) | (obs > high))
    if bad.size:
        i = int(bad[0])
        raise CheckFailure(f"observation({seat})[{i}] = {obs[i]} is outside observation_bounds ({low}, {high})")
    if scenario.observation_in_bounds:  # the adapter hands these arrays to the user as they are
        if not obs.flags.writeable:
            raise CheckFailure(f"observation({seat}) is read-only; observation_in_bounds needs a fresh writable array")
        if np.shares_memory(obs, state.observation(seat)):
            raise CheckFailure(
                f"observation({seat}) shares memory with the next call's; observation_in_bounds needs fresh arrays"
            )


def check_random_play(
    ruleset: Ruleset, scenario: str, config: Any, steps: int, seed: int = 0, clone_every: int = 97
) -> tuple[str, str]:
    """Random masked play for ``steps`` decisions, and clone independence on the way.

    Returns the details of the ``random_play`` and ``clone`` checks (each raises :class:`CheckFailure`
    through its own wrapper; here a failure of either stops both).
    """
    sc = ruleset.scenario(scenario)
    n_actions = sc.action_count(config)
    n_obs = sc.observation_length(config)
    limit = sc.max_episode_steps
    rng = Rng(seed)
    episodes = decisions = clones = 0
    state = sc.new_game(config)
    episode_steps = 0
    while decisions < steps or episode_steps:
        player = state.current_player()
        if state.player_kept and getattr(state, "_player", None) != player:
            kept_player = getattr(state, "_player", None)
            raise CheckFailure(f"_player is {kept_player}, current_player() is {player} (the state sets player_kept)")
        if state.legal_kept and getattr(state, "_legal", None) != tuple(state.legal_actions()):
            kept_legal = getattr(state, "_legal", None)
            raise CheckFailure(
                f"_legal is {kept_legal!r}, legal_actions() is {state.legal_actions()} (the state sets legal_kept)"
            )
        if player == TERMINAL:
            if state.legal_actions():
                raise CheckFailure("legal_actions() is not empty at a terminal state")
            returns = state.returns()
            if len(returns) != state.num_players or not all(math.isfinite(r) for r in returns):
                raise CheckFailure(f"returns {returns} are not one finite float per seat")
            if state.outcome() is None:
                raise CheckFailure("terminal state without an outcome: end the game with finish()")
            episodes += 1
            episode_steps = 0
            state = sc.new_game(config)
            continue
        if player == CHANCE:
            if state.legal_actions():
                raise CheckFailure("legal_actions() is not empty at a chance node")
            state.apply_chance(state.sample_chance(rng))
            continue
        if not 0 <= player < state.num_players:
            raise CheckFailure(f"current_player() returned {player}: not a seat, CHANCE or TERMINAL")
        legal = state.legal_actions()
        if not legal:
            raise CheckFailure(f"no legal action for seat {player} at a decision ({state.decision_context()})")
        kept = state.legal_tuple()
        if type(kept) is not tuple or kept != tuple(legal):
            raise CheckFailure(f"legal_tuple() {kept!r} is not legal_actions() {legal} as a tuple")
        if state.legal_sorted and list(kept) != sorted(kept):
            raise CheckFailure(f"legal_tuple() {kept!r} is not in increasing order, but the state sets legal_sorted")
        if len(set(legal)) != len(legal):
            raise CheckFailure(f"legal_actions() repeats an id: {legal}")
        out = [a for a in legal if not 0 <= a < n_actions]
        if out:
            raise CheckFailure(f"legal action {out[0]} outside range({n_actions})")
        _check_observation(state, sc, n_obs, player)
        if decisions % clone_every == 0:
            _check_clone(state, rng)
            clones += 1
        state.apply_action(rng.choice(legal))
        decisions += 1
        episode_steps += 1
        if episode_steps > limit:
            raise CheckFailure(f"an episode did not end within max_episode_steps={limit} decisions")
    if episodes == 0:
        raise CheckFailure(f"no episode ended in {decisions} decisions")
    return f"{decisions} decisions, {episodes} episodes", f"{clones} clones"


def _check_clone(state: State, rng: Rng, moves: int = 5) -> None:
    before = _fingerprint(state)
    twin = state.clone()
    if twin is state or _fingerprint(twin) != before:
        raise CloneFailure("clone() is not an equal copy of the position")
    for _ in range(moves):
        _advance_chance(twin, rng)
        if twin.current_player() == TERMINAL:
            break
        twin.apply_action(rng.choice(twin.legal_actions()))
    if _fingerprint(state) != before:
        raise CloneFailure("playing on a clone changed the original state (clone() shares mutable data)")


def check_masks(ruleset: Ruleset, scenario: str, config: Any, steps: int, seed: int = 0) -> str:
    """Through the env, ``action_masks()`` equals the mask of ``state.legal_actions()`` at every step."""
    from envs.core.gym_adapter import GameEnv

    env = GameEnv(ruleset, scenario, config=config)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    n = env.num_actions
    for _ in range(steps):
        assert env.state is not None
        mask = env.action_masks()
        expected = np.zeros(n, dtype=bool)
        expected[env.state.legal_actions()] = True
        if not np.array_equal(mask, expected):
            diff = int(np.flatnonzero(mask != expected)[0])
            raise CheckFailure(f"action_masks()[{diff}] = {bool(mask[diff])} but legal_actions() says {expected[diff]}")
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        if info["illegal_action"]:
            raise CheckFailure("a masked-legal action was refused as illegal")
        if terminated or truncated:
            env.reset()
    return f"{steps} env steps"


def check_chance(
    ruleset: Ruleset,
    scenario: str,
    config: Any,
    seed: int = 0,
    alpha: float = DEFAULT_ALPHA,
    chance_nodes: int = 5,
    draws: int = CHI_SQUARE_DRAWS,
    scan: int = 3000,
) -> str:
    """Exact chance nodes are distributions and ``sample_chance`` follows them (chi-square).

    Random play visits up to ``scan`` nodes looking for ``chance_nodes`` distinct enumerated chance nodes.
    """
    sc = ruleset.scenario(scenario)
    rng = Rng(seed)
    nodes: list[tuple[State, list[tuple[Any, float]]]] = []
    seen: set[Any] = set()
    not_enumerated = 0
    state = sc.new_game(config)
    for _ in range(scan):
        if len(nodes) >= chance_nodes:
            break
        player = state.current_player()
        if player == TERMINAL:
            state = sc.new_game(config)
            continue
        if player == CHANCE:
            try:
                outcomes = state.chance_outcomes()
            except NotImplementedError:
                not_enumerated += 1
                outcomes = []
            if outcomes:
                signature = tuple(sorted((repr(o), round(p, 12)) for o, p in outcomes))
                if signature not in seen:
                    seen.add(signature)
                    nodes.append((state.clone(), outcomes))
            state.apply_chance(state.sample_chance(rng))
            continue
        state.apply_action(rng.choice(state.legal_actions()))
    if not nodes:
        return "no enumerated chance node met" + (f" ({not_enumerated} not enumerated)" if not_enumerated else "")
    per_node = alpha / len(nodes)
    worst = 1.0
    for node, outcomes in nodes:
        probabilities = [p for _, p in outcomes]
        if any(p < 0 for p in probabilities):
            raise CheckFailure(f"chance_outcomes() has a negative probability: {outcomes[:5]}")
        total = math.fsum(probabilities)
        if abs(total - 1.0) > PROBABILITY_TOLERANCE:
            raise CheckFailure(f"chance_outcomes() probabilities sum to {total!r}, not 1")
        table: dict[Hashable, float] = {}
        for outcome, p in outcomes:
            if outcome in table:
                raise CheckFailure(f"chance_outcomes() lists outcome {outcome!r} twice")
            table[outcome] = p
        counts: Counter[Hashable] = Counter()
        for _ in range(draws):
            drawn = node.sample_chance(rng)
            if drawn not in table:
                raise CheckFailure(f"sample_chance() drew {drawn!r}, which chance_outcomes() does not list")
            counts[drawn] += 1
        statistic, dof, p_value = chi_square_test(dict(counts), table)
        worst = min(worst, p_value)
        if p_value < per_node:
            raise CheckFailure(
                f"sample_chance() does not follow chance_outcomes(): chi-square {statistic:.1f} on {dof} dof, "
                f"p = {p_value:.2g} < {per_node:.2g} ({draws} draws)"
            )
    skipped = f"; {not_enumerated} visits to nodes that do not enumerate" if not_enumerated else ""
    return f"{len(nodes)} nodes, {draws} draws each, smallest p = {worst:.3g} (alpha {alpha:g}){skipped}"


def check_odds(ruleset: Ruleset, config: Any, seed: int = 0, alpha: float = DEFAULT_ALPHA,
               draws: int = CHI_SQUARE_DRAWS) -> str:  # fmt: skip
    """The odds provider's example queries: exact tables that are distributions, and samplers that follow them."""
    provider = ruleset.odds
    examples = list(getattr(provider, "examples", ()))
    rng = Rng(seed)
    worst = 1.0
    for args in examples:
        odds = provider.odds(config, dict(args))
        if any(p < 0 for p in odds.probabilities.values()):
            raise CheckFailure(f"odds {dict(args)}: a negative probability")
        missing = [o for o in odds.partition if o not in odds.probabilities]
        if missing:
            raise CheckFailure(f"odds {dict(args)}: partition outcomes {missing} have no probability")
        total = sum(odds.probabilities[o] for o in odds.partition)
        if total != 1:
            raise CheckFailure(f"odds {dict(args)}: the partition sums to {total}, not 1")
        counts: Counter[Hashable] = Counter()
        for _ in range(draws):
            labels = list(odds.sampler(rng))
            unknown = [lab for lab in labels if lab not in odds.probabilities]
            if unknown:
                raise CheckFailure(f"odds {dict(args)}: the sampler rolled {unknown}, which the table does not list")
            inside = [lab for lab in labels if lab in odds.partition]
            if len(inside) != 1:
                raise CheckFailure(f"odds {dict(args)}: a roll fell into {len(inside)} partition outcomes: {labels}")
            counts[inside[0]] += 1
        table = {o: float(odds.probabilities[o]) for o in odds.partition}
        statistic, dof, p_value = chi_square_test(dict(counts), table)
        worst = min(worst, p_value)
        if p_value < alpha / len(examples):
            raise CheckFailure(
                f"odds {dict(args)}: the sampler does not follow the exact table: chi-square {statistic:.1f} on "
                f"{dof} dof, p = {p_value:.2g} ({draws} rolls)"
            )
    return f"{len(examples)} example queries, {draws} rolls each, smallest p = {worst:.3g}"


def _scalar_keys(data: dict[str, Any], prefix: tuple[str, ...] = ()) -> Iterable[tuple[str, ...]]:
    for k, v in data.items():
        if isinstance(v, dict):
            yield from _scalar_keys(v, (*prefix, k))
        elif isinstance(v, bool | int | float | str):
            yield (*prefix, k)


def _with_value(data: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out = dict(data)
    if len(path) == 1:
        out[path[0]] = value
    else:
        out[path[0]] = _with_value(out[path[0]], path[1:], value)
    return out


def check_config(ruleset: Ruleset) -> str:
    """rules.toml and the variants load; bad keys and values give a ConfigError naming the key."""
    load_config(ruleset)
    variants = sorted(ruleset.variants_dir.glob("*.toml")) if ruleset.variants_dir else []
    for path in variants:
        try:
            load_config(ruleset, path)
        except ConfigError as e:
            raise CheckFailure(f"variant {path.name} does not load: {e}") from None
    data = read_toml(ruleset.rules_path)
    data.pop("variant", None)
    try:
        validate_config(ruleset.config_model, {**data, "no_such_key_xyz": 1}, "check")
    except ConfigError as e:
        if "no_such_key_xyz" not in str(e):
            raise CheckFailure(f"an unknown key's error does not name it: {e}") from None
    else:
        raise CheckFailure("an unknown top-level key 'no_such_key_xyz' is accepted")
    refused = 0
    for keys in _scalar_keys(data):
        key = ".".join(keys)
        try:
            validate_config(ruleset.config_model, _with_value(data, keys, BAD_VALUE), "check")
        except ConfigError as e:
            refused += 1
            if key not in str(e) and f"section '{'.'.join(keys[:-1])}'" not in str(e):
                raise CheckFailure(f"a bad value of '{key}' gives an error that does not name the key: {e}") from None
    return f"{len(variants)} variants load, {refused} keys refuse a bad value by name"


def _run(check: str, scenario: str | None, fn: Any, *args: Any, **kwargs: Any) -> CheckResult:
    try:
        detail = fn(*args, **kwargs)
    except CheckFailure as e:
        return CheckResult(check, scenario, False, str(e))
    except Exception as e:  # an engine crash is a failed check, reported in one line
        return CheckResult(check, scenario, False, f"{type(e).__name__}: {e}")
    return CheckResult(check, scenario, True, detail if isinstance(detail, str) else "")


def run_checks(
    ruleset: Ruleset | str,
    *,
    steps: int = DEFAULT_STEPS,
    seed: int = 0,
    alpha: float = DEFAULT_ALPHA,
    scenarios: Iterable[str] | None = None,
    env_checkers: bool = True,
) -> list[CheckResult]:
    """Every check of the module docstring on ``ruleset`` (a name or a :class:`Ruleset`), in order.

    ``steps`` sets the random masked decisions per scenario (the env mask check uses a tenth of them,
    at least 200); ``scenarios`` limits the scenarios; ``env_checkers=False`` skips the two env checkers.
    """
    if isinstance(ruleset, str):
        from envs.core.registry import get_ruleset

        ruleset = get_ruleset(ruleset)
    results = [_run("config", None, check_config, ruleset)]
    try:
        config = load_config(ruleset)
    except ConfigError:
        return results
    for name in list(scenarios) if scenarios is not None else list(ruleset.scenarios):
        ruleset.scenario(name)  # an unknown scenario is a UserError
        if env_checkers:
            results.append(_run("env_checkers", name, check_env_checkers, ruleset, name, config))
        results.append(_run("determinism", name, check_determinism, ruleset, name, config, seed))
        try:
            play, clones = check_random_play(ruleset, name, config, steps, seed)
        except CloneFailure as e:
            results.append(CheckResult("random_play", name, False, "stopped by the clone failure"))
            results.append(CheckResult("clone", name, False, str(e)))
        except CheckFailure as e:
            results.append(CheckResult("random_play", name, False, str(e)))
        except Exception as e:
            results.append(CheckResult("random_play", name, False, f"{type(e).__name__}: {e}"))
        else:
            results.append(CheckResult("random_play", name, True, play))
            results.append(CheckResult("clone", name, True, clones))
        results.append(_run("masks", name, check_masks, ruleset, name, config, max(200, steps // 10), seed))
        results.append(_run("chance", name, check_chance, ruleset, name, config, seed, alpha))
    if getattr(ruleset.odds, "examples", ()):
        results.append(_run("odds", None, check_odds, ruleset, config, seed, alpha))
    return results


def failures(results: Iterable[CheckResult]) -> list[CheckResult]:
    """The failed results."""
    return [r for r in results if not r.passed]


def assert_checks(ruleset: Ruleset | str, **kwargs: Any) -> list[CheckResult]:
    """Pytest helper: run the checks and fail with one line per failed check; returns all results."""
    results = run_checks(ruleset, **kwargs)
    failed = failures(results)
    if failed:
        name = ruleset if isinstance(ruleset, str) else ruleset.name
        raise AssertionError(f"{name}: {len(failed)} check(s) failed:\n" + "\n".join(r.line() for r in failed))
    return results
