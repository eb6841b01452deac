"""`fake_outputs(Signature, **overrides)`: valid output values built from a signature's field types.

For DummyLM in dict mode (`DummyLM({"": fake_outputs(ExtractFacts)})`) and for tests that need a
well-typed reply without caring about its content. Pydantic outputs are built from their own
field types and returned as plain JSON-ready data, which is what the adapters format and parse.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union

from pydantic import BaseModel


def fake_value(annotation: Any, name: str = "value") -> Any:
    """A small valid value of `annotation` (plain data: dicts for models)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is Any or annotation is None or annotation is type(None):
        return None
    if origin is Literal:
        return args[0]
    if origin in (Union, types.UnionType):
        non_null = [a for a in args if a is not type(None)]
        return fake_value(non_null[0], name) if non_null else None
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple):
        return [fake_value(args[0] if args else str, name)]
    if origin is dict or annotation is dict:
        return {"key": fake_value(args[1] if len(args) == 2 else str, name)}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {fname: fake_value(info.annotation, fname) for fname, info in annotation.model_fields.items()}
    if annotation is bool:
        return True
    if annotation is int:
        return 1
    if annotation is float:
        return 1.0
    if annotation is str:
        return f"fake {name}"
    raise TypeError(
        f"fake_value cannot build a {annotation!r} for field {name!r}: add a rule for it in fakes/outputs.py"
    )


def fake_outputs(signature, **overrides) -> dict[str, Any]:
    """One valid value per output field of `signature`; `overrides` replace (and must name) fields."""
    fields = signature.output_fields
    unknown = set(overrides) - set(fields)
    if unknown:
        raise ValueError(
            f"{signature.__name__} has no output fields {sorted(unknown)}; it has {list(fields)}"
        )
    values = {name: fake_value(info.annotation, name) for name, info in fields.items()}
    values.update(overrides)
    return values
