"""Trained RL agents as fast :class:`~envs.core.policy.Policy` objects (``rl:<run dir or model.zip>``).

Playing a saved stable-baselines3 model through ``model.predict`` one observation at a time costs a
torch call per decision. Here the policy network is exported once to numpy (a small MLP: the weight
matrices and the activation) and an action is ``argmax`` of the masked logits (or Q-values), which is
what ``predict(obs, deterministic=True, action_masks=mask)`` returns — tested on many observations.

Safety: :func:`load_rl_policy` never unpickles anything. It reads the weights with
``torch.load(..., weights_only=True)`` and the architecture from the ``rulebreaker.json`` entry that
:func:`model_zip_bytes` adds to every model zip (``training.train.checkpoints.save_model`` writes them). A
zip without that entry is refused. Resuming training
(``training.train``) does load the full SB3 pickle, which can run code: only resume from run
directories you created.
"""

from __future__ import annotations

import io
import json
import re
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from envs.core.config import validate_config
from envs.core.errors import UserError
from envs.core.registry import get_ruleset

if TYPE_CHECKING:
    from envs.core.dice import Rng
    from envs.core.game import State

META_NAME = "rulebreaker.json"
"""The metadata entry added to every model zip: ruleset, scenario, sizes, algorithm, architecture."""
MODEL_NAME = "model.zip"
META_VERSION = 1
MAX_ZIP_BYTES = 2**30
"""A model zip that unpacks to more than this is refused before it is read (a zip bomb, not a small MLP)."""

META_KEYS = {"ruleset": str, "scenario": str, "observation_size": int, "num_actions": int, "architecture": dict}
"""The entries of ``rulebreaker.json`` a model cannot be played without, and their JSON types."""

ALGOS = ("maskable-ppo", "ppo", "a2c", "dqn")
_ACTIVATIONS = {"Tanh": "tanh", "ReLU": "relu", "ELU": "elu", "LeakyReLU": "leaky_relu", "Identity": "identity"}


def algo_class(algo: str) -> Any:
    """The SB3 class of an algorithm name."""
    # lazy: SB3 and torch take seconds to import; rl: agents play through numpy and never need them
    if algo == "maskable-ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    if algo == "ppo":
        from stable_baselines3 import PPO

        return PPO
    if algo == "a2c":
        from stable_baselines3 import A2C

        return A2C
    if algo == "dqn":
        from stable_baselines3 import DQN

        return DQN
    raise UserError(f"unknown algorithm '{algo}'; valid: {', '.join(ALGOS)}")


# -- the numpy network ----------------------------------------------------------------------------
def _activate(x: np.ndarray, name: str) -> np.ndarray:
    if name == "tanh":
        return np.tanh(x)
    if name == "relu":
        return np.maximum(x, 0.0)
    if name == "elu":
        return np.where(x > 0, x, np.expm1(np.minimum(x, 0.0)))
    if name == "leaky_relu":
        return np.where(x > 0, x, np.float32(0.01) * x)
    return x


@dataclass
class NumpyNet:
    """A feed-forward net: ``activation`` after every layer but the last; outputs logits or Q-values."""

    weights: list[np.ndarray]  # each (in, out), float32, already transposed
    biases: list[np.ndarray]
    activation: str
    kind: str  # "logits" (actor-critic) or "q" (DQN)
    # Per-layer output buffers of the one-observation path (made on first use; see greedy_one).
    _buffers: list[np.ndarray] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def obs_size(self) -> int:
        return int(self.weights[0].shape[0])

    @property
    def num_actions(self) -> int:
        return int(self.weights[-1].shape[1])

    def forward(self, obs: np.ndarray) -> np.ndarray:
        """Logits / Q-values of a batch ``(n, obs_size)`` (or a single vector)."""
        x = np.asarray(obs, dtype=np.float32)
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            x = x @ w + b
            if i < last:
                x = _activate(x, self.activation)
        return x

    def forward_one(self, obs: np.ndarray) -> np.ndarray:
        """:meth:`forward` of one float32 observation vector, written into preallocated buffers.

        The same float32 operations in the same order as :meth:`forward` (so the same values), without a
        fresh array per layer: the per-decision path of evaluation. The result is overwritten by the next call.
        """
        bufs = self._buffers
        if bufs is None:
            bufs = self._buffers = [np.empty(w.shape[1], np.float32) for w in self.weights]
        last = len(self.weights) - 1
        x = obs
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            y = bufs[i]
            np.matmul(x, w, out=y)
            np.add(y, b, out=y)
            if i < last:
                if self.activation == "tanh":
                    np.tanh(y, out=y)
                elif self.activation == "relu":
                    np.maximum(y, 0.0, out=y)
                else:
                    y[:] = _activate(y, self.activation)
            x = y
        return x

    def greedy_one(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The greedy legal action of one observation: ``argmax`` of the logits with illegal ones at ``-inf``."""
        out = self.forward_one(obs)
        out[np.logical_not(mask)] = -np.inf
        return int(out.argmax())

    def act_batch(self, obs: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        """Greedy actions of a batch, restricted to each row's legal actions when masks are given."""
        out = self.forward(np.atleast_2d(obs))
        if masks is not None:
            out = np.where(np.atleast_2d(masks), out, -np.inf)
        return np.argmax(out, axis=1)

    def sample(self, obs: np.ndarray, mask: np.ndarray, rng: Rng) -> int:
        """Sample an action from the masked softmax (Boltzmann over Q-values for DQN): self-play opponents."""
        out = self.forward(obs).astype(np.float64)
        out = np.where(mask, out, -np.inf)
        p = np.exp(out - out.max())
        c = np.cumsum(p / p.sum())
        return min(int(np.searchsorted(c, rng.random(), side="right")), len(c) - 1)

    def to_arrays(self) -> dict[str, np.ndarray]:
        arrays: dict[str, np.ndarray] = {}
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            arrays[f"w{i}"], arrays[f"b{i}"] = w, b
        return arrays

    @classmethod
    def from_arrays(cls, arrays: Any, activation: str, kind: str) -> NumpyNet:
        n = sum(1 for k in arrays if str(k).startswith("w"))
        return cls(
            [np.asarray(arrays[f"w{i}"], np.float32) for i in range(n)],
            [np.asarray(arrays[f"b{i}"], np.float32) for i in range(n)],
            activation,
            kind,
        )


def _layers(state_dict: dict[str, Any], prefixes: list[str], activation: str, kind: str) -> NumpyNet:
    ws: list[np.ndarray] = []
    bs: list[np.ndarray] = []
    for prefix in prefixes:
        pat = re.compile(re.escape(prefix) + r"(\d+)\.weight$") if prefix.endswith(".") else None
        if pat is None:  # a single named layer
            ws.append(np.asarray(state_dict[f"{prefix}.weight"], np.float32).T.copy())
            bs.append(np.asarray(state_dict[f"{prefix}.bias"], np.float32).copy())
            continue
        idx = sorted(int(m.group(1)) for k in state_dict if (m := pat.match(k)))
        for i in idx:
            ws.append(np.asarray(state_dict[f"{prefix}{i}.weight"], np.float32).T.copy())
            bs.append(np.asarray(state_dict[f"{prefix}{i}.bias"], np.float32).copy())
    return NumpyNet(ws, bs, activation, kind)


def architecture_of(model: Any) -> dict[str, Any]:
    """What the numpy export needs to know about an SB3 model's policy network."""
    from stable_baselines3.common.torch_layers import FlattenExtractor  # lazy: only with an SB3 model in hand

    policy = model.policy
    if hasattr(policy, "q_net"):
        fe, act, kind = policy.q_net.features_extractor, policy.q_net.activation_fn, "q"
    else:
        fe = policy.features_extractor if policy.share_features_extractor else policy.pi_features_extractor
        act, kind = policy.activation_fn, "logits"
    act_name = _ACTIVATIONS.get(act.__name__)
    if not isinstance(fe, FlattenExtractor) or act_name is None:
        raise UserError(
            f"rl agents support an MLP on flat observations with {', '.join(_ACTIVATIONS)} activations; "
            f"got {type(fe).__name__} / {act.__name__}"
        )
    return {"kind": kind, "activation": act_name}


def export_numpy(model: Any) -> NumpyNet:
    """The numpy copy of an in-memory SB3 model's greedy policy."""
    arch = architecture_of(model)
    sd = {k: v.detach().cpu().numpy() for k, v in model.policy.state_dict().items()}
    return _net_from_state_dict(sd, arch)


def _net_from_state_dict(sd: dict[str, Any], arch: dict[str, Any]) -> NumpyNet:
    if arch["kind"] == "q":
        return _layers(sd, ["q_net.q_net."], arch["activation"], "q")
    return _layers(sd, ["mlp_extractor.policy_net.", "action_net"], arch["activation"], "logits")


# -- saving and reading model zips ----------------------------------------------------------------
def model_zip_bytes(model: Any, meta: dict[str, Any]) -> bytes:
    """An SB3 model's zip with a ``rulebreaker.json`` entry (``meta``, timesteps, architecture) inside it."""
    buf = io.BytesIO()
    model.save(buf)
    full = {
        "meta_version": META_VERSION,
        **meta,
        "num_timesteps": int(model.num_timesteps),
        "architecture": architecture_of(model),
    }
    with zipfile.ZipFile(buf, "a") as z:
        z.writestr(META_NAME, json.dumps(full, indent=2, default=str))
    return buf.getvalue()


def model_path(path: Path | str) -> Path:
    """The model zip of a run directory, or the zip itself."""
    p = Path(path)
    if p.is_dir():
        p = p / MODEL_NAME
    if not p.exists():
        raise UserError(f"no trained model at {p} (expected a run directory from `rulebreaker train` or its .zip)")
    return p


def read_meta(path: Path | str) -> dict[str, Any]:
    """The ``rulebreaker.json`` entry of a model zip, refusing truncated, corrupt or foreign files."""
    p = model_path(path)
    if not zipfile.is_zipfile(p):
        raise UserError(f"{p} is not a valid model zip (truncated or corrupt)")
    try:
        with zipfile.ZipFile(p) as z:
            size = sum(info.file_size for info in z.infolist())
            if size > MAX_ZIP_BYTES:
                raise UserError(f"{p} unpacks to {size:,} bytes, more than a model ({MAX_ZIP_BYTES:,}); refusing it")
            bad = z.testzip()
            if bad is not None:
                raise UserError(f"{p} is corrupt (bad CRC in {bad})")
            names = set(z.namelist())
            if not {"data", "policy.pth"} <= names:
                raise UserError(f"{p} is not a valid model zip (truncated or corrupt: no SB3 data/policy.pth entries)")
            if META_NAME not in names:
                raise UserError(f"{p} is not a rulebreaker model (no {META_NAME}); refusing to load a foreign file")
            meta = json.loads(z.read(META_NAME))
    except UserError:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise UserError(f"{p} is not a valid model zip: {e}") from None
    if not isinstance(meta, dict):
        raise UserError(f"{p} has a malformed {META_NAME} (not an object)")
    missing = [k for k in META_KEYS if k not in meta]
    if missing:
        raise UserError(f"{p} has a malformed {META_NAME}: it lacks {', '.join(missing)}")
    for key, kind in META_KEYS.items():
        if not isinstance(meta[key], kind) or isinstance(meta[key], bool):
            raise UserError(f"{p} has a malformed {META_NAME}: '{key}' is {meta[key]!r:.40}")
    arch = meta["architecture"]
    if arch.get("activation") not in _ACTIVATIONS.values():
        raise UserError(
            f"{p}: unknown activation {arch.get('activation')!r:.40} in {META_NAME}; "
            f"valid: {', '.join(_ACTIVATIONS.values())}"
        )
    if arch.get("kind") not in ("logits", "q"):
        raise UserError(f"{p}: unknown network kind {arch.get('kind')!r:.40} in {META_NAME}; valid: logits, q")
    return meta


def check_meta(meta: dict[str, Any], path: Path | str, ruleset: str | None, scenario: str | None) -> None:
    """Refuse a model trained for another ruleset/scenario or whose sizes no longer match the engine.

    The sizes are the scenario's under the rules config the model was trained with (``meta["config"]``;
    a model saved without one is compared under the ruleset's default config).
    """
    if ruleset is not None and meta["ruleset"] != ruleset:
        raise UserError(f"{path} was trained on ruleset '{meta['ruleset']}', not '{ruleset}'")
    if scenario is not None and meta["scenario"] != scenario:
        raise UserError(f"{path} was trained on scenario '{meta['scenario']}', not '{scenario}'")
    rs = get_ruleset(meta["ruleset"])
    sc = rs.scenario(meta["scenario"])
    cfg = (
        validate_config(rs.config_model, meta["config"], f"{path} config")
        if meta.get("config") is not None
        else rs.default_config()
    )
    obs, actions = sc.observation_length(cfg), sc.action_count(cfg)
    if (meta.get("observation_size"), meta.get("num_actions")) != (obs, actions):
        raise UserError(
            f"{path} expects observation size {meta.get('observation_size')} and "
            f"{meta.get('num_actions')} actions; {meta['ruleset']} {meta['scenario']} now has "
            f"{obs} and {actions}"
        )


def _check_shapes(net: NumpyNet) -> None:
    """Refuse a network whose layers do not chain (crafted or damaged weights) or that has no layer."""
    if not net.weights:
        raise ValueError("no layer")
    for i, (w, b) in enumerate(zip(net.weights, net.biases, strict=True)):
        if w.ndim != 2 or b.shape != (w.shape[1],) or min(w.shape) < 1:
            raise ValueError(f"layer {i} has shape {w.shape} with bias {b.shape}")
        if i > 0 and net.weights[i - 1].shape[1] != w.shape[0]:
            raise ValueError(f"layer {i} takes {w.shape[0]} inputs after a layer of {net.weights[i - 1].shape[1]}")
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise ValueError(f"layer {i} holds non-finite weights")


def load_numpy_net(path: Path | str, ruleset: str | None = None, scenario: str | None = None) -> tuple[NumpyNet, dict]:
    """The numpy policy of a saved model, read without unpickling (``torch.load(weights_only=True)``)."""
    import torch  # lazy: torch takes seconds to import and is needed only to read the weights once

    p = model_path(path)
    meta = read_meta(p)
    check_meta(meta, p, ruleset, scenario)
    try:
        with zipfile.ZipFile(p) as z:
            raw = z.read("policy.pth")
        with warnings.catch_warnings():  # torch warns about odd pickle protocols: the error below says it all
            warnings.simplefilter("ignore")
            sd = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
        if not isinstance(sd, dict):
            raise TypeError(f"a {type(sd).__name__}, not a state dict")
        net = _net_from_state_dict({k: v.numpy() for k, v in sd.items()}, meta["architecture"])
        _check_shapes(net)
    except UserError:
        raise
    except Exception as e:  # noqa: BLE001 - any failure to read weights is a bad file
        # One line, without torch's advice to retry with weights_only=False (that would run a pickle).
        first = str(e).strip().splitlines()[0][:120] if str(e).strip() else ""
        raise UserError(
            f"cannot read the policy weights of {p}: policy.pth is not a valid weights file "
            f"({type(e).__name__}{': ' + first if first and 'weights_only' not in first else ''})"
        ) from None
    if (net.obs_size, net.num_actions) != (meta["observation_size"], meta["num_actions"]):
        raise UserError(f"{p}: weights do not match its metadata (obs {net.obs_size}, actions {net.num_actions})")
    return net, meta


# -- the Policy ------------------------------------------------------------------------------------
class RLPolicy:
    """A trained network playing greedily (argmax over the legal actions) through the numpy path."""

    def __init__(
        self, net: NumpyNet, name: str, bounds: tuple[float, float] = (-np.inf, np.inf), stochastic: bool = False
    ) -> None:
        self.net = net
        self.name = name
        self.low, self.high = bounds
        self.stochastic = stochastic
        self._obs = np.empty(net.obs_size, np.float32)
        self._width = net.num_actions

    def observe(self, state: State, seat: int) -> np.ndarray:
        """The observation the training env gave this seat (clipped to the scenario's bounds)."""
        return np.clip(np.asarray(state.observation(seat), dtype=np.float32), self.low, self.high)

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        n = self._width
        if len(mask) != n:  # a caller's mask sized by the legal list (the exact solver's): the net's width
            full = np.zeros(n, dtype=bool)
            m = min(n, len(mask))
            full[:m] = mask[:m]
            mask = full
        if self.stochastic:
            return self.net.sample(self.observe(state, state.current_player()), mask, rng)
        # The fast path: the observation cast and clipped into a preallocated buffer, then greedy_one.
        obs = self._obs
        np.copyto(obs, state.observation(state.current_player()), casting="unsafe")
        np.clip(obs, self.low, self.high, out=obs)
        return self.net.greedy_one(obs, mask)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Greedy actions for many observations at once (lock-step evaluation)."""
        return self.net.act_batch(obs, masks)


_CACHE: dict[tuple[str, float], tuple[NumpyNet, dict]] = {}


def load_rl_policy(path: str, ruleset: str | None = None, scenario: str | None = None) -> RLPolicy:
    """``rl:<path>``: a run directory of ``rulebreaker train`` or a model zip it wrote."""
    p = model_path(path.strip())
    key = (str(p.resolve()), p.stat().st_mtime)
    if key not in _CACHE:
        _CACHE[key] = load_numpy_net(p, ruleset, scenario)
    net, meta = _CACHE[key]
    check_meta(meta, p, ruleset, scenario)
    sc = get_ruleset(meta["ruleset"]).scenario(meta["scenario"])
    return RLPolicy(net, f"rl:{path}", sc.observation_bounds)
