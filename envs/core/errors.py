"""Errors a user can cause (bad rules file, unknown name…). The CLI turns them into exit code 2."""


class UserError(Exception):
    """Bad input from the user: printed as one readable line, exit code 2, never a stack trace."""


class ConfigError(UserError):
    """A rules file that does not validate."""
