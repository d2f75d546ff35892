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

import re

__all__ = ["looks_secret", "public_spec", "storable", "strip_userinfo", "terminal_safe"]

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

    Everything up to the last ``@`` before the URL's query or fragment goes, so a password
    holding a raw ``/``, ``:`` or space goes too (an ``@`` in a path is lost with it: safe
    rather than exact). Meant for specs and URLs, not for prose.
    """
    return _URL_TOKEN.sub(_drop_userinfo, text)


_URL_TOKEN = re.compile(r"[^?#]+")


def _drop_userinfo(m: re.Match[str]) -> str:
    token = m.group(0)
    i, at = token.find("://"), token.rfind("@")
    return token[: i + 3] + token[at + 1 :] if 0 <= i < at - 2 else token


def public_spec(spec: str) -> str:
    """A model spec (or URL) without credentials, fit to store, log and report.

    Every URL loses its userinfo (``http://user:secret@host`` -> ``http://host``) and every
    query parameter whose name looks like a credential (``api_key``, ``token``, ``sig``...)
    is dropped, in the URL's query and in the spec's options alike. Other options stay.
    """
    return _QUERY.sub(_public_query, strip_userinfo(spec))
