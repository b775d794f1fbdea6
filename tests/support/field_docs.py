"""The docstrings of a dataclass's fields: the string right below each field, as written."""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any


def field_docs(cls: type[Any]) -> dict[str, str]:
    """Each field of ``cls`` (a class defined in a module) → its docstring ("" for none);
    the fields it inherits are documented where they are declared, in its bases."""
    docs: dict[str, str] = {}
    for declaring in reversed(cls.__mro__):
        if declaring is not object:
            docs.update(_own_field_docs(declaring))
    return docs


def _own_field_docs(cls: type[Any]) -> dict[str, str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    (node,) = (n for n in tree.body if isinstance(n, ast.ClassDef))
    docs: dict[str, str] = {}
    body = node.body
    for at, statement in enumerate(body):
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            after = body[at + 1] if at + 1 < len(body) else None
            text = ""
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                text = str(after.value.value).strip()
            docs[statement.target.id] = text
    return docs
