"""Whether a `pattern` is ECMA-262 regular-expression syntax (H2's `regex` format).

JSON Schema's `pattern`, `patternProperties` and the `regex` format use ECMA-262 syntax (with
the `u` flag, as the JSON-Schema-Test-Suite reads it), not Python's. Python's `re` rejects valid
ECMA-262 (`(?<word>…)`, `\\p{L}`, variable-width lookbehind, `\\cJ`, `[]`) and accepts Python-only
syntax (`(?P<name>…)`, `(?i)`, `\\a`). No installable parser judges it exactly on every Python
the kit supports (docs/tool-authors.md has the measurements), so the judgment is in two steps:

1. a scan for the constructs where the two dialects certainly differ: Python-only group syntax
   and letter escapes ECMA-262 does not have are failures; ECMA-only constructs are rewritten
   into the `regex` package's spelling (`\\cJ` -> `\\x0a`, `\\k<n>` -> `(?P=n)`, `[]` -> `(?!)`);
2. the `regex` package (named groups, `\\p{…}`, variable-width lookbehind) compiles the result.

A pattern `regex` refuses only where the dialects may disagree (property names, group names,
back-references, `\\u{…}`) is undecided: the caller gives a note, never a failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import regex

__all__ = ["RegexVerdict", "judge"]

_ESCAPES_OUTSIDE = frozenset("bBdDsSwWfnrtvcxukpP")
"""Letters ECMA-262 gives a meaning after a backslash outside a class; with the `u` flag every
other letter there is a syntax error (the suite's `\\a` case)."""
_ESCAPES_INSIDE = frozenset("bdDsSwWfnrtvcxupP")
_MODIFIERS = re.compile(r"[ims]*(?:-[ims]+)?:")
_GROUP_NAME = re.compile(r"<([^>]*)>")
_PYTHON_GROUPS = (
    ("P<", "Python's named group `(?P<name>…)`", "ECMA-262 writes `(?<name>…)`"),
    ("P=", "Python's named back-reference `(?P=name)`", "ECMA-262 writes `\\k<name>`"),
    ("#", "an inline comment `(?#…)` is Python syntax", "remove the comment"),
    (">", "an atomic group `(?>…)` is not ECMA-262", "use a plain group `(?:…)`"),
)


_DIALECT_ERRORS = ("property", "group name", "unknown group", "group reference", "escape")
"""`regex` errors about the constructs the dialects may read differently; any other error
(an unbalanced parenthesis, a bad repeat) is invalid ECMA-262 too."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RegexVerdict:
    """`valid` is True, False, or None (undecided); `message`/`fix` explain False and None."""

    valid: bool | None
    message: str = ""
    fix: str = ""


class _Invalid(Exception):
    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.message, self.fix = message, fix


def _group(pattern: str, i: int) -> tuple[str, int, bool]:
    """The `regex` spelling of the group opener at `pattern[i] == "("`, the next index, and
    whether it names a group (a dialect difference `regex` may not share)."""
    if not pattern.startswith("(?", i):
        return "(", i + 1, False
    rest = pattern[i + 2 :]
    if rest[:1] in (":", "=", "!") or rest[:2] in ("<=", "<!"):
        return "(?", i + 2, False
    named = _GROUP_NAME.match(rest)
    if named is not None:
        return "(?", i + 2, True
    for start, message, fix in _PYTHON_GROUPS:
        if rest.startswith(start):
            raise _Invalid(message, fix)
    modifiers = _MODIFIERS.match(rest)
    if modifiers is not None and modifiers.end() > 1:
        return "(?", i + 2, False
    flags = re.match(r"[a-zA-Z-]+\)", rest)
    if flags is not None:
        raise _Invalid(
            f"a global inline flag group `(?{flags.group()}` is not ECMA-262",
            "ECMA-262 has only scoped modifiers, `(?i:…)`, or flags outside the pattern",
        )
    raise _Invalid(
        f"`(?{rest[:1]}` is not ECMA-262 group syntax",
        "use `(?:…)`, `(?<name>…)`, or a lookaround `(?=…)`, `(?!…)`, `(?<=…)`, `(?<!…)`",
    )


def _escape(pattern: str, i: int, in_class: bool) -> tuple[str, int, bool]:
    """The `regex` spelling of the escape at `pattern[i] == "\\\\"`, the next index, and whether
    it is a construct the two dialects may read differently."""
    char = pattern[i + 1 : i + 2]
    if not char:
        raise _Invalid("the pattern ends in a lone backslash", "escape it as `\\\\`")
    if char == "c":
        letter = pattern[i + 2 : i + 3]
        if not (letter.isascii() and letter.isalpha()):
            raise _Invalid(
                "`\\c` must be followed by a letter A-Z", "write `\\\\c` for a backslash and c"
            )
        return f"\\x{ord(letter) % 32:02x}", i + 3, False
    if char == "k" and not in_class:
        named = _GROUP_NAME.match(pattern, i + 2)
        if named is None:
            raise _Invalid("`\\k` must name a group: `\\k<name>`", "write `\\k<name>`")
        return f"(?P={named.group(1)})", named.end(), True
    if char == "u" and pattern.startswith("{", i + 2):
        end = pattern.find("}", i + 3)
        digits = pattern[i + 3 : end] if end > 0 else ""
        if digits and all(d in "0123456789abcdefABCDEF" for d in digits) and len(digits) <= 8:
            return f"\\U{int(digits, 16):08x}", end + 1, True
        return pattern[i : i + 2], i + 2, True
    allowed = _ESCAPES_INSIDE if in_class else _ESCAPES_OUTSIDE
    if char.isascii() and char.isalpha() and char not in allowed:
        raise _Invalid(
            f"`\\{char}` is not an ECMA-262 escape"
            + (" (Python's)" if char in "aAZgGNUlLhzQE" else ""),
            f"write `{char}` for the letter itself, or `\\\\{char}` for a backslash and {char}",
        )
    unsure = char in "pP" or (char.isdigit() and char != "0")
    return pattern[i : i + 2], i + 2, unsure


def _translate(pattern: str) -> tuple[str, bool]:
    """`pattern` in the `regex` package's spelling, and whether it holds a construct the two
    dialects may read differently. Raises `_Invalid` for syntax ECMA-262 certainly refuses."""
    out: list[str] = []
    unsure = False
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            text, i, doubt = _escape(pattern, i, in_class)
            out.append(text)
            unsure = unsure or doubt
        elif in_class:
            in_class = char != "]"
            out.append("\\[" if char == "[" else char)
            i += 1
        elif char == "[":
            if pattern.startswith("[]", i):
                out.append("(?!)")  # ECMA-262: the empty class matches nothing
                i += 2
            elif pattern.startswith("[^]", i):
                out.append("[\\s\\S]")  # ... and its negation any character
                i += 3
            else:
                in_class = True
                caret = pattern.startswith("[^", i)
                out.append("[^" if caret else "[")
                i += 2 if caret else 1
        elif char == "(":
            text, i, doubt = _group(pattern, i)
            out.append(text)
            unsure = unsure or doubt
        else:
            out.append(char)
            i += 1
    return "".join(out), unsure


def judge(pattern: str) -> RegexVerdict:
    """Whether `pattern` is an ECMA-262 regular expression: True, False, or None (undecided)."""
    try:
        translated, unsure = _translate(pattern)
    except _Invalid as exc:
        return RegexVerdict(valid=False, message=exc.message, fix=exc.fix)
    try:
        regex.compile(translated)
    except regex.error as exc:
        if unsure and any(part in str(exc) for part in _DIALECT_ERRORS):
            return RegexVerdict(
                valid=None,
                message=f"the kit cannot judge this pattern as ECMA-262 ({exc})",
                fix='check it with a JavaScript engine: `new RegExp(pattern, "u")`',
            )
        return RegexVerdict(
            valid=False,
            message=f"not a valid regular expression ({exc})",
            fix="write a valid ECMA-262 regular expression",
        )
    except (RecursionError, OverflowError, ValueError) as exc:
        return RegexVerdict(
            valid=None,
            message=f"the kit cannot judge this pattern ({type(exc).__name__})",
            fix='check it with a JavaScript engine: `new RegExp(pattern, "u")`',
        )
    return RegexVerdict(valid=True)
