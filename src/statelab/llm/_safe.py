"""Text from models and servers made safe at the boundary: storable, and printable.

* :func:`storable`: any ``str`` becomes one that encodes as UTF-8 (SQLite, JSON files,
  Parquet): lone surrogates (a server's ``"\\ud800"`` escape decodes to one) and NULs become
  U+FFFD; a surrogate pair split across two code points is joined back into its character.
* :func:`terminal_safe`: text shown in a terminal loses ANSI escape sequences (CSI, OSC, the
  two-character ones, 8-bit CSI), other control characters but newline and tab, and the
  bidirectional overrides that make a line read other than it is.

Both are linear in the text's length and never raise.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

__all__ = [
    "Redactor",
    "looks_secret",
    "public_spec",
    "storable",
    "strip_userinfo",
    "terminal_safe",
]

_REPLACEMENT = "\ufffd"
_NUL_OR_SURROGATE = re.compile("[\x00\ud800-\udfff]")

# ESC [ params intermediates final | ESC ] text (BEL | ESC \ | end) | ESC one char | 8-bit CSI.
# The classes in each branch are disjoint and each is followed by a character it cannot
# match, so no attempt backtracks.
_ESCAPE = re.compile(
    "(?:\x1b\\[|\x9b)[0-?]*[ -/]*[@-~]?|\x1b\\][^\x07\x1b\x9c]*(?:\x07|\x1b\\\\|\x9c)?|\x1b[ -~]?"
)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def storable(text: str) -> str:
    """``text`` with every code point that UTF-8 cannot encode, and NUL, as U+FFFD."""
    if "\x00" not in text:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            pass
        else:
            return text
    # round-trip through UTF-16: surrogate pairs re-join, lone surrogates become U+FFFD
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return _NUL_OR_SURROGATE.sub(_REPLACEMENT, joined)


def terminal_safe(text: str) -> str:
    """``text`` without escape sequences and control characters (newline and tab kept)."""
    return _CONTROL.sub("", _ESCAPE.sub("", storable(text)))


# -- credentials ----------------------------------------------------------------------------

#: query parameter names (lowercased, without - and _) that carry credentials contain one of
_SECRET_NAMES = ("key", "token", "secret", "passw", "pwd", "auth", "sig", "credential", "cookie")
_QUERY = re.compile(r"\?([^#]*)")


def looks_secret(name: str) -> bool:
    """Whether a query parameter's name says it carries a credential."""
    n = name.lower().replace("-", "").replace("_", "")
    return any(s in n for s in _SECRET_NAMES)


def _public_query(m: re.Match[str]) -> str:
    kept = [p for p in m.group(1).split("&") if p and not looks_secret(p.partition("=")[0])]
    return "?" + "&".join(kept) if kept else ""


def strip_userinfo(text: str) -> str:
    """``text`` with the ``user:password@`` part of every ``scheme://`` URL in it removed.

    Everything from ``://`` up to the last ``@`` of the spelling goes, so a password holding
    a raw ``/``, ``:``, ``#``, ``?`` or space goes too (an ``@`` in a path, a model name or
    an option is lost with it: safe rather than exact). Meant for specs and URLs, not prose.
    """
    i, at = text.find("://"), text.rfind("@")
    if 0 <= i < at:
        head, tail = text[: i + 3], text[at + 1 :]
        return head + strip_userinfo(tail) if "://" in tail else head + tail
    return text


def public_spec(spec: str) -> str:
    """A model spec (or URL) without credentials, fit to store, log and report.

    Every URL loses its userinfo (``http://user:secret@host`` -> ``http://host``) and every
    query parameter whose name looks like a credential (``api_key``, ``token``, ``sig``...)
    is dropped, in the URL's query and in the spec's options alike. Other options stay.
    """
    return _QUERY.sub(_public_query, strip_userinfo(spec))


# -- redaction ------------------------------------------------------------------------------
#: secrets shorter than this are not masked (masking a 3-letter word everywhere would garble
#: replies; a secret that short protects nothing)
MIN_SECRET = 4


def _forms(secret: str) -> set[str]:
    """How a secret may come back in a server's text: raw, URL-encoded, JSON-escaped,
    base64 (standard and URL-safe, with and without padding)."""
    b64 = base64.b64encode(secret.encode()).decode()
    url64 = base64.urlsafe_b64encode(secret.encode()).decode()
    json_form = json.dumps(secret, ensure_ascii=False)[1:-1]
    out = {secret, quote(secret, safe=""), quote(secret), quote_plus(secret), json_form}
    out |= {json_form.replace("/", "\\/"), json.dumps(secret)[1:-1]}
    out |= {b64, b64.rstrip("="), url64, url64.rstrip("=")}
    return {f for f in out if len(f) >= MIN_SECRET}


class Redactor:
    """Masks secrets, and every encoded form of them, as ``***``: the one place through
    which error texts and replies pass before anything stores, caches or prints them.

    ``secrets`` are single values (an API key, a password); ``pairs`` are ``(user,
    password)`` whose ``user:password`` travels as a ``Basic`` header (base64) and is masked
    in that form too. Secrets under :data:`MIN_SECRET` characters are not masked."""

    def __init__(
        self, secrets: Iterable[str | None] = (), pairs: Iterable[tuple[str, str]] = ()
    ) -> None:
        forms: set[str] = set()
        for s in secrets:
            if s and len(s) >= MIN_SECRET:
                forms |= _forms(s)
        for user, password in pairs:
            if len(password) >= MIN_SECRET or len(user) + len(password) >= MIN_SECRET + 4:
                forms |= _forms(f"{user}:{password}")
        self._set(forms)

    def _set(self, forms: set[str]) -> None:
        self._forms = frozenset(forms)
        ordered = sorted(forms, key=len, reverse=True)  # longest first: no partial masks
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __call__(self, text: str) -> str:
        """``text`` with every secret form masked."""
        return text if self._pattern is None else self._pattern.sub("***", text)

    def __add__(self, other: Redactor) -> Redactor:
        out = Redactor()
        out._set(set(self._forms | other._forms))
        return out
