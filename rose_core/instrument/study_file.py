"""A study as a TOML file: what a lab pre-registers, read into a `StudyConfig` and written back from one.

Keys map onto `StudyConfig` fields by the dataclass's annotations (a field added to it is a key of the file
without touching this module): top-level keys are fields, a nested dataclass field (`sample`) is a table. A few
keys have file names of their own (`TOML_NAMES`: `raters_per_item` is `target_per_instance`), `items_file` reads
an explicit list of instance ids, and fields creation fills (`DERIVED`) are refused. Inside a `texts` table (any
`dict[str, str]` field named `texts`) a string ending in `.md` is a file path relative to the study file, read as
UTF-8 now; other strings are inline Markdown. An `X | None` field whose default is not None takes "none" for None.

Every problem (unknown key, wrong type, a missing file, what `StudyConfig.problems` finds) goes into one
`StudyError` naming the file and the key; nothing is created from a file with one.
"""
from __future__ import annotations

import dataclasses
import difflib
import json
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, Literal

from .config import StudyConfig, StudyError

TOML_NAMES = {"raters_per_item": "target_per_instance"}          # file key -> field
FIELD_NAMES = {v: k for k, v in TOML_NAMES.items()}              # field -> file key
DERIVED = ("practice_rounds", "practice_scene_ids", "sample_ids")  # filled by create_study, never written in a file
ITEMS_FILE = "items_file"
TEXTS = "texts"
NONE = "none"


def load_study_file(path: str | Path, config_class: type = StudyConfig) -> StudyConfig:
    """The study file at `path`, checked (StudyError naming the file and every bad key)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StudyError(f"{path}: no such study file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise StudyError(f"{path}: cannot read the study file ({e})") from None
    return load_study_text(text, str(path), path.parent, config_class)


def load_study_text(text: str, where: str, base: Path | None, config_class: type = StudyConfig) -> StudyConfig:
    """A study file's text (`where` names it in messages; files it refers to are read relative to `base`, None:
    refused, as for an upload)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise StudyError(f"{where}: not valid TOML: {e}") from None
    errors: list[str] = []
    cfg = _build(data, config_class, "", base, errors)
    if cfg is not None:
        errors += [toml_message(p) for p in cfg.problems()]
    if errors:
        raise StudyError(f"{where}: " + "; ".join(errors))
    return cfg


def toml_message(problem: str) -> str:
    """A `StudyConfig.problems` message with the field named as the file names it."""
    head, sep, rest = problem.partition(":")
    return FIELD_NAMES.get(head, head) + sep + rest if sep else problem


def _build(data: dict, cls: type, prefix: str, base: Path | None, errors: list[str]) -> Any:
    """An instance of dataclass `cls` from a TOML table (errors appended, None when there were any)."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    n_errors = len(errors)
    for key, value in data.items():
        name = TOML_NAMES.get(key, key) if not prefix else key
        where = prefix + key
        if not prefix and key == ITEMS_FILE and "items" in fields:
            if "items" in data:
                errors.append(f"{ITEMS_FILE}: give either items or items_file, not both")
            else:
                kwargs["items"] = _read_items(value, where, base, errors)
            continue
        if not prefix and key in FIELD_NAMES:
            errors.append(f"{key}: this is {FIELD_NAMES[key]} in a study file")
            continue
        if name in DERIVED and not prefix:
            errors.append(f"{key}: is computed when the study is created; remove it from the file")
            continue
        if name not in fields:
            known = [FIELD_NAMES.get(f, f) for f in fields if f not in DERIVED] + ([ITEMS_FILE] if not prefix else [])
            close = difflib.get_close_matches(key, known, n=1)
            errors.append(f"{where}: unknown key" + (f" (did you mean {close[0]}?)" if close else ""))
            continue
        hint = hints[name]
        if name == TEXTS and _is_str_dict(hint):
            kwargs[name] = _read_texts(value, where, base, errors)
            continue
        f = fields[name]
        default_none = f.default is None
        kwargs[name] = _value(value, hint, where, base, errors, none_word=not default_none)
    missing = [FIELD_NAMES.get(n, n) for n, f in fields.items() if n not in kwargs and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    errors += [f"{prefix}{m}: required" for m in missing]
    if len(errors) > n_errors:
        return None
    return cls(**kwargs)


def _value(value: Any, hint: Any, where: str, base: Path | None, errors: list[str], none_word: bool = True) -> Any:
    """`value` checked against the annotation `hint` (an error appended and None when it does not fit)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if type(None) in args and none_word and value == NONE:
            return None
        if len(inner) == 1:
            return _value(value, inner[0], where, base, errors)
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            errors.append(f"{where}: expected a table, got {_show(value)}")
            return None
        return _build(value, hint, where + ".", base, errors)
    if origin is Literal:
        if value not in args:
            errors.append(f"{where}: expected one of {', '.join(map(str, args))}, got {_show(value)}")
        return value
    if origin is list:
        if not isinstance(value, list):
            errors.append(f"{where}: expected a list, got {_show(value)}")
            return None
        return [_value(v, args[0], f"{where}[{n}]", base, errors) for n, v in enumerate(value)] if args else value
    if origin is dict:
        if not isinstance(value, dict):
            errors.append(f"{where}: expected a table, got {_show(value)}")
            return None
        return {k: _value(v, args[1], f"{where}.{k}", base, errors) for k, v in value.items()}
    if hint is bool:
        ok = isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif hint is str:
        ok = isinstance(value, str)
    else:
        errors.append(f"{where}: a study file cannot set a field of type {hint}")
        return None
    if not ok:
        errors.append(f"{where}: expected {_type_word(hint)}, got {_show(value)}")
    return value


def _is_str_dict(hint: Any) -> bool:
    return typing.get_origin(hint) is dict and typing.get_args(hint) == (str, str)


def _read_texts(value: Any, where: str, base: Path | None, errors: list[str]) -> dict[str, str]:
    """A texts table: `*.md` strings are files next to the study file (read now), others inline Markdown."""
    if not isinstance(value, dict):
        errors.append(f"{where}: expected a table of texts, got {_show(value)}")
        return {}
    out = {}
    for k, v in value.items():
        if not isinstance(v, str):
            errors.append(f"{where}.{k}: expected Markdown or a .md file name, got {_show(v)}")
        elif v.strip().endswith(".md") and "\n" not in v.strip():
            text = _read_relative(v.strip(), f"{where}.{k}", base, errors)
            if text is not None:
                out[k] = text
        else:
            out[k] = v
    return out


def _read_items(value: Any, where: str, base: Path | None, errors: list[str]) -> list[str]:
    """An items file: one instance id a line; blank lines and lines starting with # ignored."""
    if not isinstance(value, str):
        errors.append(f"{where}: expected a file name, got {_show(value)}")
        return []
    text = _read_relative(value, where, base, errors)
    if text is None:
        return []
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]


def _read_relative(name: str, where: str, base: Path | None, errors: list[str]) -> str | None:
    if base is None:
        errors.append(f"{where}: refers to the file {name}, which an uploaded study file cannot bring (put the text "
                      "inline, or create the study with `study create` next to its files)")
        return None
    p = base / name
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        errors.append(f"{where}: no such file {p}")
    except (OSError, UnicodeDecodeError) as e:
        errors.append(f"{where}: cannot read {p} as UTF-8 ({e})")
    return None


def _type_word(hint: Any) -> str:
    return {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}.get(hint, str(hint))


def _show(value: Any) -> str:
    kind = {bool: "a boolean", int: "a whole number", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)
    text = repr(value)
    return f"{kind} {text if len(text) <= 40 else text[:37] + '...'}"


# --------------------------------------------------------------------------- writing a study file back

def settings(cfg: StudyConfig) -> dict[str, Any]:
    """The study's settings as a study file names them (derived fields left out), in field order."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cfg):
        if f.name in DERIVED:
            continue
        v = getattr(cfg, f.name)
        out[FIELD_NAMES.get(f.name, f.name)] = dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v
    return out


def dump_study(cfg: StudyConfig, header: str = "") -> str:
    """A study file that creates a study with the same settings (`load_study_text(dump_study(c))` equals c's
    settings). Tables (sample, texts, any dict) come last, as TOML wants; None is written as "none" (or left out
    when it is the default)."""
    fields = {f.name: f for f in dataclasses.fields(cfg)}
    lines = [f"# {ln}" if ln else "#" for ln in header.splitlines()]
    tables: list[tuple[str, dict]] = []
    for key, v in settings(cfg).items():
        f = fields[TOML_NAMES.get(key, key)]
        if v is None:
            if f.default is None:
                continue
            v = NONE
        if isinstance(v, dict):
            tables.append((key, v))
            continue
        lines.append(f"{key} = {_toml(v)}")
    for key, table in tables:
        lines += ["", f"[{key}]"] + [f"{_key(k)} = {_toml(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def _key(k: str) -> str:
    return k if k and all(c.isalnum() or c in "_-" for c in k) else json.dumps(k, ensure_ascii=False)


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        if "\n" in v and "'''" not in v and all(c >= " " or c in "\n\t" for c in v) and not v.endswith("'"):
            return "'''\n" + v + "'''"    # a literal multi-line string: Markdown stays readable
        return json.dumps(v, ensure_ascii=False)   # JSON's escapes are TOML basic-string escapes
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_toml(x)}" for k, x in v.items()) + "}"
    raise StudyError(f"cannot write {v!r} to a study file")
