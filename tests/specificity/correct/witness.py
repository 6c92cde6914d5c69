"""The witness from the issue, verbatim: the simplest honest executor.

It validates with the registry, hands the handler a plain copy and maps exceptions as the table
says; `make_executor = Honest` is the only addition (and `fmt: off` keeps the text verbatim).
"""
# fmt: off
# ruff: noqa: I001

from polyloop import ActionOutcome, ActionStatus, ToolEnvironmentError, ToolValidationError

def _plain(value):
    if hasattr(value, "items"):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value

def _outcome(status, text, synthetic):
    return ActionOutcome(status=status, observation=text, observation_is_synthetic=synthetic,
                         env_reported_completion=False, observation_truncated_chars=0)

def _text(exc):
    try:
        return str(exc)
    except Exception:
        return "<exception str() failed>"

class Honest:
    def __init__(self, registry):
        self.registry = registry
    def parameters(self):
        return {"tools": ",".join(self.registry.names())}
    async def execute(self, action):
        call = action.tool_call
        if call is None:
            return _outcome(ActionStatus.NOT_EXECUTED, "code actions are not supported", True)
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            return _outcome(ActionStatus.NOT_EXECUTED, str(exc), True)
        handler = self.registry.spec_for(call.name).handler
        try:
            result = await handler(_plain(call.arguments))
        except ToolEnvironmentError as exc:
            return _outcome(ActionStatus.ENV_ERROR, _text(exc), False)
        except Exception as exc:
            return _outcome(ActionStatus.EXECUTED, f"{type(exc).__name__}: {_text(exc)}", False)
        if not isinstance(result, str):
            raise TypeError(f"tool {call.name!r} returned {type(result).__name__}, not str")
        return _outcome(ActionStatus.EXECUTED, result, False)


make_executor = Honest
