"""A model run's settings (prompt variant, sampling, token limit, date, endpoint): what a paper must say about how
the numbers were produced. `run-model` writes them beside its answers (`<out>.settings.toml`); `import-run` reads
that file, or the one `--settings FILE.toml` names, checks it, and stores it in the run's `runs.meta` under
"settings", where the bundle's checklist reads it. Unknown keys and wrong types are refused by name: a typo
(`temprature`) must not become a silently missing setting."""
from __future__ import annotations

import datetime as dt
import math
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

# key -> (what it holds, its type(s)); a TOML file holds any subset of them, one key at least
FIELDS: dict[str, tuple[str, tuple[type, ...]]] = {
    "model": ("the model's name at the endpoint", (str,)),
    "endpoint": ("the API's base URL (without credentials or query)", (str,)),
    "prompt_variant": ("which prompt the model got (run-model: 'instance', each instance's own prompt)", (str,)),
    "system_prompt": ("the system prompt, if any", (str,)),
    "temperature": ("sampling temperature", (int, float)),
    "top_p": ("nucleus sampling threshold", (int, float)),
    "top_k": ("top-k sampling: only the k likeliest tokens", (int,)),
    "max_tokens": ("the response's token limit", (int,)),
    "seed": ("the sampling seed the endpoint was given", (int,)),
    "date": ("when the run was made (ISO 8601 date or date-time, UTC)", (str, dt.date, dt.datetime)),
    "protocol": ("sgp run-model: the message layout (studio or ivispar)", (str,)),
    "reader": ("sgp run-model: how replies became moves (strict or ivispar)", (str,)),
    "preset": ("sgp run-model: the sampling preset named after the paper's settings", (str,)),
    "prompt_digest": ("sgp run-model: SHA-256 of the instruction texts the model got", (str,)),
    "notes": ("anything else the authors want on record", (str,)),
}
PROMPT_VARIANT = "instance"   # run-model sends each instance's own prompt (the dataset's text) with its image


class RunSettingsError(ValueError):
    """Settings that cannot be stored as they are; every problem named."""


def sidecar(path: Path | str) -> Path:
    """Where run-model writes the settings of the answers file `path`."""
    return Path(f"{path}.settings.toml")


def clean_endpoint(url: str) -> str:
    """The base URL without user, password, query or fragment: a key put into a URL is never stored."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def check_settings(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """The settings as stored (dates as ISO text, the endpoint cleaned), or RunSettingsError naming `where` and
    each bad key."""
    problems = []
    if not raw:
        problems.append(f"{where}: no settings (expected some of {', '.join(FIELDS)})")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in FIELDS:
            problems.append(f"{where}: unknown key {key!r} (known: {', '.join(FIELDS)})")
            continue
        what, types = FIELDS[key]
        if isinstance(value, bool) or not isinstance(value, types):
            problems.append(f"{where}: {key} = {value!r}: expected {' or '.join(t.__name__ for t in types)} "
                            f"({what})")
            continue
        if isinstance(value, float) and not math.isfinite(value):
            problems.append(f"{where}: {key} = {value!r}: not a finite number")
            continue
        if key == "date":
            if isinstance(value, str):
                try:   # a date stays a date, a date-time a date-time
                    value = (dt.date.fromisoformat(value) if len(value) == 10 else
                             dt.datetime.fromisoformat(value)).isoformat()
                except ValueError:
                    problems.append(f"{where}: date = {value!r}: not an ISO 8601 date or date-time")
                    continue
            else:
                value = value.isoformat()
        elif key == "endpoint":
            value = clean_endpoint(value)
        elif key in ("temperature", "top_p") and value < 0:
            problems.append(f"{where}: {key} = {value!r}: must not be negative")
            continue
        elif key in ("max_tokens", "top_k") and value <= 0:
            problems.append(f"{where}: {key} = {value!r}: must be positive")
            continue
        out[key] = value
    if problems:
        raise RunSettingsError("\n".join(problems))
    return out


def read_settings(path: Path | str) -> dict[str, Any]:
    """A settings TOML file, checked (`check_settings`)."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise RunSettingsError(f"{path}: cannot read ({e.strerror or e})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise RunSettingsError(f"{path}: not valid TOML: {e}") from None
    nested = [k for k, v in raw.items() if isinstance(v, (dict, list))]
    if nested:
        raise RunSettingsError(f"{path}: {', '.join(nested)}: tables and arrays are not settings; write "
                               f"key = value lines (known keys: {', '.join(FIELDS)})")
    return check_settings(raw, str(path))


def _toml_value(v: Any) -> str:
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return repr(v)


def settings_toml(settings: dict[str, Any]) -> str:
    """Settings as the TOML file `read_settings` reads back to the same dict."""
    lines = ["# A model run's settings: written by `python -m rose_core run-model`, read by `import-run`"]
    lines += [f"{k} = {_toml_value(settings[k])}" for k in FIELDS if k in settings]
    return "\n".join(lines) + "\n"
