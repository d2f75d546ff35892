"""Markdown rows whose cells are text, never markup: a label holding ``<script>`` or ``|``
(a model name, a component label, an axis value) is shown as written, not run or split."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

#: a ``<`` that could open an HTML tag, comment or declaration (``p<0.05`` stays as it is)
_TAG = re.compile(r"<(?=[A-Za-z/!?])")


def md_cell(value: Any) -> str:
    """One table cell: whatever could open an HTML tag escaped, ``|`` escaped, one line."""
    text = _TAG.sub("&lt;", str(value)).replace("|", "\\|")
    return " ".join(text.splitlines())


def md_row(cells: Iterable[Any]) -> str:
    return "| " + " | ".join(md_cell(c) for c in cells) + " |"
