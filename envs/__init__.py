"""Rules engines and their Gymnasium environments. Importing this package registers every env id."""

from envs.core.registry import all_rulesets, get_ruleset, load_builtin_rulesets, register_ruleset

load_builtin_rulesets()

__all__ = ["all_rulesets", "get_ruleset", "register_ruleset"]
