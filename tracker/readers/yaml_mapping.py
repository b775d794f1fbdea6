"""A YAML mapping decoded with PyYAML's safe loader, malformed input refused with its line.

The parsers stay pure (standard library only); the readers decode the YAML
files they hand over (an Endpoints ``point.yaml`` or ``config.yaml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from tracker.errors import ParseError
from tracker.parsers.json_fields import check_nesting

__all__ = ["decode_yaml"]


def decode_yaml(data: bytes, *, path: str) -> Mapping[str, Any]:
    """A YAML mapping (safe loader); malformed YAML names its line.

    A value the loader cannot build (a date such as ``2024-13-01``, an integer
    of more than 4300 digits), nesting too deep for it, and aliases that nest
    or multiply the document beyond its size are malformed too.
    """
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or "malformed"
        line = mark.line + 1 if mark is not None else None
        raise ParseError(path, f"not valid YAML ({problem})", line=line) from None
    except ValueError as error:  # a date such as 2024-13-01; an integer too long for int()
        problem = "a number too long" if "integer string" in str(error) else str(error)
        raise ParseError(path, f"not valid YAML ({problem})") from None
    except RecursionError:
        raise ParseError(path, "not valid YAML (nested too deeply)") from None
    if not isinstance(doc, Mapping):
        raise ParseError(path, "not a YAML mapping of point settings")
    check_nesting(doc, path=path, max_values=2 * len(data) + 16)
    return doc
