"""Typed options models (pydantic v2): one model per run kind is at once its CLI flags, its API's
keyword arguments, its manifest section as written and as read, and what a resumed run or a child
process is rebuilt from. This module holds what every such model shares: the flags made from its
fields, its rules in words (for the one-line errors and docs/run-dirs.md), and its unknown fields.

Why pydantic: its field constraints (ge, le, finite numbers, enums) are the contract a damaged
manifest is held to, stated once beside the default and the help; msgspec would do the types but
not the constraint messages and JSON schema the docs are made from.

A field's CLI form is its `json_schema_extra`: `flag` (the option string, default --name-with-dashes),
`negate` (a true default turned off by the flag), `text` (a comma list given as one string), `append`
(repeatable), `metavar`, `help_default` (the default the CLI applies where it is not the model's),
`cli: False` (no flag). A nested model's fields are flags of their own (the ladder's launch shape).
"""

from __future__ import annotations

import argparse
import enum
import types
import typing
from pathlib import Path
from typing import Any, Iterator, Mapping

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from l2attr.errors import UserError


class RuleError(ValueError):
    """A rule no field type states (a bound between two fields, a list of known names): raised in a
    validator, it names its field and its rule, as a constraint error does."""

    def __init__(self, rule: str, value: Any, field: str = "") -> None:
        super().__init__(f"{field or 'it'} must be {rule}")
        self.rule, self.value, self.field = rule, value, field   # field: below the model that raised it


def _extra(info: FieldInfo) -> dict[str, Any]:
    return info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}


def _bare(annotation: Any) -> tuple[Any, bool]:
    """(the annotation without `| None` or Annotated, whether None is allowed)."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _bare(args[0])[0] if len(args) == 1 else annotation, True
    return annotation, False


def _nested(info: FieldInfo) -> type[BaseModel] | None:
    kind = _bare(info.annotation)[0]
    return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


def flat_fields(model: type[BaseModel], at: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], FieldInfo]]:
    """(path, field) of every leaf field, a nested model's fields under its own name."""
    for name, info in model.model_fields.items():
        sub = _nested(info)
        if sub is not None:
            yield from flat_fields(sub, (*at, name))
        else:
            yield (*at, name), info


def flag_of(path: tuple[str, ...], info: FieldInfo) -> str:
    return _extra(info).get("flag") or "--" + path[-1].replace("_", "-")


def _bound(meta: list[Any]) -> str:
    words = []
    for m in meta:
        for attr, sign in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<=")):
            value = getattr(m, attr, None)
            if value is not None:
                words.append(f"{sign} {value:g}" if isinstance(value, float) else f"{sign} {value}")
    return " and ".join(words)


def rule_text(info: FieldInfo) -> str:
    """A field's rule in words: 'a whole number >= 1', 'one of blocking, spin or null'."""
    if _extra(info).get("rule"):
        return str(_extra(info)["rule"])
    kind, null = _bare(info.annotation)
    bound = _bound(info.metadata)
    origin = typing.get_origin(kind)
    if kind is bool:
        text = "true or false"
    elif kind is int:
        text = "a whole number" + (f" {bound}" if bound else "")
    elif kind is float:
        text = "a finite number" + (f" {bound}" if bound else "")
    elif isinstance(kind, type) and issubclass(kind, enum.Enum):
        text = "one of " + ", ".join(str(m.value) for m in kind)
    elif kind is Path or kind is str:
        text = "a string"
    elif origin in (list, tuple):
        first = _bare(typing.get_args(kind)[0])[0] if typing.get_args(kind) else None
        items = {str: "strings", int: "whole numbers"}.get(first, "")
        n = len(typing.get_args(kind)) if origin is tuple and Ellipsis not in typing.get_args(kind) else 0
        text = (f"a list of {n} " if n else "a list of ") + items if items else "a list"
    else:
        text = "an object"
    return f"{text} or null" if null else text


def rules(model: type[BaseModel], prefix: str) -> dict[str, str]:
    """`prefix.path` -> rule of every field (docs/run-dirs.md's rows for this section)."""
    return {".".join((prefix, *path)): rule_text(info) for path, info in flat_fields(model)}


def _info(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[tuple[str, ...], FieldInfo | None]:
    """The field a pydantic error location names (list indices dropped)."""
    path: list[str] = []
    info: FieldInfo | None = None
    current: type[BaseModel] | None = model
    for part in loc:
        if not isinstance(part, str) or current is None or part not in current.model_fields:
            continue
        info = current.model_fields[part]
        path.append(part)
        current = _nested(info)
    return tuple(path), info


def problems(exc: ValidationError, model: type[BaseModel]) -> list[tuple[tuple[str, ...], str, Any]]:
    """(field path, rule, value found) of each error: the field's rule in words, or a RuleError's."""
    out = []
    for e in exc.errors():
        error = (e.get("ctx") or {}).get("error")
        path, info = _info(model, tuple(e["loc"]))
        if isinstance(error, RuleError):
            out.append(((*path, *error.field.split(".")) if error.field else path, error.rule, error.value))
            continue
        rule = rule_text(info) if info is not None else e["msg"].lower()
        out.append((path or tuple(map(str, e["loc"])), rule, e.get("input")))
    return out


def validated(model: type[BaseModel], values: Mapping[str, Any], flags: bool = True,
              context: dict[str, Any] | None = None) -> Any:
    """`model.model_validate(values, context=context)`; an error is one line: `--flag must be RULE
    (got V)` (flags) or `field must be RULE (found V)`."""
    try:
        return model.model_validate(dict(values), context=context)
    except ValidationError as exc:
        path, rule, value = problems(exc, model)[0]
        _, info = _info(model, path)
        name = flag_of(path, info) if flags and info is not None and _extra(info).get("cli", True) else ".".join(path)
        raise UserError(f"{name} must be {rule} ({'got' if flags else 'found'} {value!r})") from None


def extras(model: BaseModel, prefix: str) -> dict[str, Any]:
    """`prefix.name` -> value of every field the model does not know (kept, never used)."""
    out = {f"{prefix}.{k}": v for k, v in (model.model_extra or {}).items()}
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            out.update(extras(value, f"{prefix}.{name}"))
    return out


# -- the flags -------------------------------------------------------------------------------------

def _help(info: FieldInfo) -> str:
    text = (info.description or "").replace("%", "%%")
    extra = _extra(info)
    shown = extra["help_default"] if "help_default" in extra else info.get_default(call_default_factory=True)
    if "default" in text or shown in (None, False, [], ()) or extra.get("negate"):
        return text
    if isinstance(shown, (list, tuple)):
        shown = ",".join(map(str, shown))
    elif isinstance(shown, float):
        shown = f"{shown:g}"
    return f"{text} (default {shown.value if isinstance(shown, enum.Enum) else shown})"


def add_flags(group: Any, model: type[BaseModel]) -> None:
    """One argparse option per field of `model` (nested models' fields too). Their default is
    SUPPRESS: the parsed namespace holds the flags given, and the model supplies the rest."""
    for path, info in flat_fields(model):
        extra = _extra(info)
        if extra.get("cli", True) is False:
            continue
        kind = _bare(info.annotation)[0]
        kw: dict[str, Any] = {"dest": path[-1], "default": argparse.SUPPRESS, "help": _help(info)}
        if kind is bool:
            kw["action"] = "store_false" if extra.get("negate") else "store_true"
        else:
            if extra.get("append"):
                kw["action"] = "append"
            scalar = typing.get_args(kind)[0] if extra.get("append") else kind
            if extra.get("choices"):
                kw["choices"] = list(extra["choices"])
            elif isinstance(scalar, type) and issubclass(scalar, enum.Enum):
                kw["choices"] = [m.value for m in scalar]
            kw["type"] = (str if extra.get("text") or not isinstance(scalar, type)
                          or issubclass(scalar, enum.Enum) else scalar)
            if extra.get("metavar"):
                kw["metavar"] = extra["metavar"]
        group.add_argument(flag_of(path, info), **kw)


def nest(model: type[BaseModel], flat: Mapping[str, Any]) -> dict[str, Any]:
    """The flags given (by dest) as the model's input: a nested model's flags under its name."""
    out: dict[str, Any] = {}
    for path, _ in flat_fields(model):
        if path[-1] in flat:
            node = out
            for part in path[:-1]:
                node = node.setdefault(part, {})
            node[path[-1]] = flat[path[-1]]
    return out


def dests(model: type[BaseModel]) -> set[str]:
    return {path[-1] for path, _ in flat_fields(model)}


def check_list_flags(flags: Mapping[str, Any], names: tuple[str, ...] = ("family", "rungs", "profiles")) -> None:
    """`--profiles ''` is refused, never read as "the default" (the sweep's flags, by dest): a comma
    list given as one string names at least one word."""
    for name in names:
        value = flags.get(name)
        if value is not None and not [w for w in str(value).split(",") if w.strip()]:
            raise UserError(f"--{name} {value!r}: give at least one name (or leave the flag out for the default)")


def parser_defaults(add: Any) -> dict[str, Any]:
    """A command parser's defaults (what a flag left out is; a typed model's flag left out is absent,
    add_flags): `add` fills an empty parser, as a command's add_arguments does."""
    p = argparse.ArgumentParser(add_help=False)
    add(p)
    return vars(p.parse_args([]))
