"""Policies: random, heuristic personas per ruleset, RL (stable-baselines3), exact solvers."""

from agents.registry import agent_names, make_agent
from envs.core.policy import Policy, UniformRandom

__all__ = ["Policy", "UniformRandom", "agent_names", "make_agent"]
