"""The engine's own exceptions. Messages say what is wrong, what was expected, what was received, and how to fix it."""

__all__ = ["BertScoreVizError", "InputError", "ModelError", "BaselineError", "shorten"]


class BertScoreVizError(ValueError):
    """Base class of every error the engine raises on purpose."""


class InputError(BertScoreVizError):
    """Candidates, references or files that cannot be scored as given."""


class ModelError(BertScoreVizError):
    """A model that cannot be found, loaded or used."""


class BaselineError(BertScoreVizError):
    """A baseline file that is missing, malformed, or has no row for the requested layer."""


def shorten(text: object, limit: int = 60) -> str:
    """A printable, shortened copy of bad input for error messages."""
    s = repr(text)
    return s if len(s) <= limit else s[: limit - 5] + "...'"
