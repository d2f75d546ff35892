"""The spellings of the OpenAI-compatible backends, parsed in one place.

``openai-compat:<base_url>#<model>[?options]`` and ``openai:<model>[?options]``: the base
URL is checked (scheme http/https, a host, a port in 1-65535, no credentials in its query),
the model is named, and the options are read into :class:`~statelab.llm._options.
ModelOptions`. Every error is one line, with the spec as :func:`~statelab.llm.public_spec`
shows it (never a password, whatever characters it holds).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import SplitResult, parse_qsl, urlsplit

import httpx

from statelab.core import ConfigError
from statelab.llm._options import ModelOptions, parse_options
from statelab.llm._safe import looks_secret, public_spec

__all__ = ["OPENAI_BASE_URL", "HTTPSpec", "check_base_url", "parse_compat", "parse_openai"]

OPENAI_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class HTTPSpec:
    """A parsed spec: where (None: the OpenAI API, or ``OPENAI_BASE_URL``), which model,
    and the options it sets."""

    base_url: str | None
    model: str
    options: ModelOptions


def check_base_url(base_url: str) -> SplitResult:
    """The parsed URL, or a one-line ConfigError saying what is wrong with it (no secrets)."""
    shown = public_spec(base_url)
    # with userinfo in the URL, a detail parsed from it may be a piece of the password
    # (``u:pa/ss@h`` parses as port ``pa/ss``): such details are not shown
    i, at = base_url.find("://"), base_url.rfind("@")
    userinfo = base_url[i + 3 : at] if 0 <= i < at else ""
    pieces = [p for p in re.split(r"[:/?#@\[\]]", userinfo) if p]
    try:
        url = urlsplit(base_url.strip())
        port = url.port  # raises on a port out of range or not a number
        host = url.hostname or ""
    except ValueError as e:
        raise ConfigError(f"model URL {shown!r} is not a valid URL ({_why(e, pieces)})") from None
    if url.scheme not in ("http", "https"):
        raise ConfigError(f"model URL {shown!r} must start with http:// or https://")
    if not host:
        raise ConfigError(f"model URL {shown!r} has no host")
    if port == 0:
        raise ConfigError(f"model URL {shown!r}: port 0 is not a port (1-65535)")
    if url.fragment:
        raise ConfigError(f"model URL {shown!r}: '#' starts the model name; put it last")
    if url.netloc.rpartition("@")[2].startswith("["):
        try:
            ipaddress.IPv6Address(host.partition("%")[0])
        except ValueError:
            raise ConfigError(
                f"model URL {shown!r}: bad IPv6 address{_show(host, pieces)}"
            ) from None
    elif not all(c.isalnum() or c in "-._" for c in host):
        raise ConfigError(f"model URL {shown!r}: bad host name{_show(host, pieces)}")
    secret = [k for k, _ in parse_qsl(url.query) if looks_secret(k)]
    if secret:  # a URL's query is logged (httpx logs every request's URL): no place for keys
        raise ConfigError(
            f"model URL {shown!r}: no credentials in the query"
            f"{'' if pieces else ' (' + ', '.join(secret) + ')'}; "
            "give the key in OPENAI_COMPAT_API_KEY"
        )
    try:
        httpx.URL(base_url)
    except (httpx.InvalidURL, ValueError) as e:
        raise ConfigError(f"model URL {shown!r} is not a valid URL ({_why(e, pieces)})") from None
    return url


def _leaks(text: str, pieces: list[str]) -> bool:
    return any(p in text for p in pieces)


def _show(part: str, pieces: list[str]) -> str:
    return "" if _leaks(part, pieces) else f" {part!r}"


def _why(e: Exception, pieces: list[str]) -> str:
    text = str(e)
    return "percent-encode '/', '?' and '#' in a password" if _leaks(text, pieces) else text


def parse_compat(arg: str) -> HTTPSpec:
    """``<base_url>#<model>[?options]``, checked."""
    spec = public_spec(f"openai-compat:{arg}")
    base_url, _, rest = arg.partition("#")
    model, _, query = rest.partition("?")
    if (
        "@" in model and "@" not in base_url and ("/" in model or ":" in model)
    ):  # the '#' was a password's: the URL is cut there
        raise ConfigError(
            f"model {spec!r}: a '#', '?' or '/' in a URL's password must be percent-encoded "
            "(%23, %3F, %2F)"
        )
    if not model.strip():
        raise ConfigError(f"model {spec!r} must look like openai-compat:<url>#<model>")
    check_base_url(base_url)
    return HTTPSpec(base_url, model.strip(), parse_options(spec, query))


def parse_openai(arg: str) -> HTTPSpec:
    """``<model>[?options]``, checked."""
    model, _, query = arg.partition("?")
    if not model.strip():
        raise ConfigError("model 'openai:' needs a model name, e.g. openai:gpt-4o-mini")
    return HTTPSpec(None, model.strip(), parse_options(public_spec(f"openai:{arg}"), query))
