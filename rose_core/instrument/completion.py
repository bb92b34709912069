"""Completion codes: what a participant who completed takes back to the platform.

With `completion_code_kind = "study"` everyone gets the study's `completion_code` (Prolific's fixed code): one bot
run reveals it, and anyone who has it can claim a completion. With "participant" each participant gets their own
code: an HMAC-SHA256 of the study's secret (made on first use, kept on the study's row in the database, never in
its settings, pages or study files) over the study id and their external (Prolific) id, shown only on the end page
of a completed participant and put in the completion URL's `cc` parameter. A code is valid for one participant
of one study only, and cannot be made without the secret. The approvals check the code each submission reported
(`analysis.approvals`). What it buys on Prolific, whose own codes are fixed per study: docs/running-a-study.md,
"Completion codes"."""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..storage import studies
from ..storage.connection import Connection, Store
from .config import Study, StudyError

CODE_CHARS = 12        # base32 (A-Z, 2-7): 60 bits, typed without ambiguity between 0/O and 1/I


def participant_code(secret: str, study_id: str, external_id: str) -> str:
    """The code of one participant of one study (deterministic: the same inputs, the same code)."""
    mac = hmac.new(secret.encode(), f"{study_id}\x1f{external_id.strip()}".encode(), hashlib.sha256).digest()
    return base64.b32encode(mac).decode()[:CODE_CHARS]


def with_code(url: str, code: str) -> str:
    """The completion URL with its `cc` parameter (Prolific's completion code) set to `code`; a URL without one is
    returned as it is (the end page shows the code)."""
    if not url:
        return url
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if not any(k == "cc" for k, _ in query):
        return url
    return urlunsplit(parts._replace(query=urlencode([(k, code if k == "cc" else v) for k, v in query])))


def url_code(url: str) -> str:
    """The completion code a completion URL carries (its `cc` parameter; "" when it has none)."""
    return next((v for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True) if k == "cc"), "") if url else ""


def study_secret(conn: Connection, study_id: str) -> str:
    secret = studies.completion_secret(conn, study_id, secrets.token_hex(32))
    if secret is None:
        raise StudyError(f"no study {study_id!r}")
    return secret


def completion(conn: Connection, study: Study, external_id: str) -> tuple[str, str]:
    """(code, URL) for a participant who completed, in the caller's transaction."""
    cfg = study.config
    if cfg.completion_code_kind != "participant":
        return cfg.completion_code, cfg.completion_url
    code = participant_code(study_secret(conn, study.study_id), study.study_id, external_id)
    return code, with_code(cfg.completion_url, code)


def expected_codes(store: Store, study: Study, external_ids: list[str]) -> dict[str, str]:
    """external id -> the completion code that participant was (or will be) shown, or sent back with in the
    completion URL's `cc` (a study set up with its Prolific URL alone)."""
    cfg = study.config
    if cfg.completion_code_kind != "participant":
        return {e: cfg.completion_code or url_code(cfg.completion_url) for e in external_ids}
    with store.write() as c:
        secret = study_secret(c, study.study_id)
    return {e: participant_code(secret, study.study_id, e) for e in external_ids}


def code_matches(expected: str, reported: str) -> bool:
    """Compared in constant time, ignoring case and surrounding spaces (people retype codes)."""
    return hmac.compare_digest(expected.strip().upper().encode(), reported.strip().upper().encode())
