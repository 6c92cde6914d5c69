"""Actions without a tool call, observation texts and handler behaviours."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from hypothesis import reject
from hypothesis import strategies as st

from conformance._core.values import BEHAVIOUR_KINDS
from conformance.executor import behaviours as bh
from polyloop import Action

# ---------------------------------------------------------------------------------------------
# Actions without a tool call, and handler behaviours

_CODE = (
    'print("hello")',
    '{"name": "read_file", "arguments": {"path": "a.txt"}}',
    "import os\nos.listdir('.')",
    "read_file(path='a.txt')",
    " ",
)


@st.composite
def code_actions(draw: st.DrawFn) -> Action:
    """Actions carrying code instead of a tool call (E1), some looking like a tool call."""
    code = draw(st.sampled_from(_CODE) | st.text(min_size=1, max_size=80))
    try:
        return Action(code=code)
    except (TypeError, ValueError):
        reject()


def observation_texts() -> st.SearchStrategy[str]:
    """Handler results: short and long texts of any alphabet, including empty, control
    characters, lone surrogates and 100,000+ characters."""
    # Whitespace at either end (what an executor trims) comes first among the hand-picked
    # edges, since derandomized runs favour the simplest choice.
    samples = st.sampled_from(
        ["line 1\nline 2\n", "", "ok", "  padded \n", "\x00\x1b[31m", "\ud800 lone surrogate"]
    )
    return st.one_of(
        st.text(max_size=40),
        samples,
        st.text(st.characters(exclude_categories=()), max_size=200),
        st.builds(
            lambda n, unit: (unit * (n // len(unit) + 1))[:n],
            st.integers(1_000, 150_000),
            st.sampled_from(["abc\n", "日本語", "\U0001f600", "x"]),
        ),
    )


@lru_cache(maxsize=1)
def _messages() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(max_size=40), st.sampled_from(["", "backend unreachable", "multi\nline\nmessage"])
    )


def handler_behaviours(
    kinds: Iterable[str] = ("text", "environment_error", "error"),
) -> st.SearchStrategy[bh.Behaviour]:
    """Scripted handler behaviours of the given kinds (see `BEHAVIOUR_KINDS`):

    ``text`` return an `observation_texts` text (E5); ``environment_error`` raise
    ToolEnvironmentError or a subclass (E3); ``error`` raise an ordinary exception (E4);
    ``error_like`` raise ValueError, the handler's own ToolValidationError, OSError and other
    exceptions an executor may mistake for validation or environment errors (E10);
    ``unprintable`` raise an exception whose str() raises (E12); ``base_exception`` raise a
    non-Exception BaseException (E6); ``suspend`` wait until cancelled (E6); ``non_str``
    return a non-str (E9); ``mutate``, ``yield`` and ``sleep`` wrap a text-returning behaviour
    to mutate the arguments (E13), yield to the event loop, or sleep a few milliseconds."""
    chosen = list(kinds)
    unknown = sorted(set(chosen) - set(BEHAVIOUR_KINDS))
    if unknown or not chosen:
        raise ValueError(f"unknown behaviour kinds {unknown}; choose from {BEHAVIOUR_KINDS}")
    texts = st.builds(bh.ReturnText, text=observation_texts())
    table: dict[str, st.SearchStrategy[bh.Behaviour]] = {
        "text": texts,
        "environment_error": st.builds(
            bh.RaiseEnvironmentError, message=_messages(), subclass=st.booleans()
        ),
        "error": st.builds(
            bh.RaiseError, kind=st.sampled_from(sorted(bh.ERROR_KINDS)), message=_messages()
        ),
        "error_like": st.builds(
            bh.RaiseError,
            kind=st.sampled_from(sorted(bh.ENVIRONMENT_LIKE_ERROR_KINDS)),
            message=_messages(),
        ),
        "unprintable": st.builds(
            bh.RaiseUnprintable,
            environment=st.booleans(),
            non_str_message=st.booleans(),
            raises=st.sampled_from(sorted(bh.STR_RAISES_KINDS)),
        ),
        "base_exception": st.builds(
            bh.RaiseBaseException, kind=st.sampled_from(sorted(bh.BASE_EXCEPTION_KINDS))
        ),
        "suspend": st.just(bh.Suspend()),
        "non_str": st.builds(bh.ReturnNonStr, kind=st.sampled_from(sorted(bh.NON_STR_KINDS))),
        "mutate": st.builds(bh.MutateArguments, then=texts),
        "yield": st.builds(bh.YieldFirst, times=st.integers(0, 5), then=texts),
        "sleep": st.builds(bh.Sleep, seconds=st.sampled_from([0.0, 0.001, 0.003]), then=texts),
    }
    return st.one_of([table[kind] for kind in chosen])
