"""Issue 13: the kit on tool files and registries someone else wrote.

It never retrieves a `$ref` (no request reaches a listener on 127.0.0.1, no file is opened),
escapes names in text reports (JSON keeps them exactly), bounds its work on hostile schemas
(a per-tool finding, the other tools still reported) and refuses a JSON bomb cleanly.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import certify
from conformance._core.dialect import in_place_ref_cycle, unresolved_refs
from conformance._core.generation import MAX_ENUM_ITEMS, SchemaRefused, from_schema
from conformance._core.report import Report
from conformance._core.text import escape_name, json_dumps
from conformance.cli import main
from conformance.executor.oracle import UnresolvedReference, full_validator
from conformance.toolcheck import ToolCheckReport, check_registry, load_tool_file
from polyloop import RegistryExecutor, ToolRegistry, ToolSpec

REPO = Path(__file__).resolve().parents[2]
SECRET = "root:x:0:0:SECRET-7f3a"
OK_TOOL = {"name": "ok", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}


class _Counting(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        body = b'{"type": "integer"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.1 (port 0) that answers every GET and counts it."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    server.hits = []  # type: ignore[attr-defined]
    server.timeout = 1
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.hits  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _tool(name: str, parameters: object) -> dict[str, object]:
    return {"name": name, "description": "", "parameters": parameters}


def _ref_schemas(ref: str) -> dict[str, dict[str, Any]]:
    """A remote or file `$ref` in each keyword hypothesis-jsonschema does not interpret, and
    under `properties`."""
    return {
        "dependentSchemas": {"type": "object", "dependentSchemas": {"a": {"$ref": ref}}},
        "unevaluatedProperties": {"type": "object", "unevaluatedProperties": {"$ref": ref}},
        "prefixItems": {
            "type": "object",
            "properties": {"xs": {"type": "array", "prefixItems": [{"$ref": ref}]}},
        },
        "properties": {"type": "object", "properties": {"x": {"$ref": ref}}},
    }


def _write(path: Path, tools: list[dict[str, object]]) -> str:
    path.write_text(json.dumps(tools), encoding="utf-8")
    return str(path)


def _run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


# --- 13.1: never retrieve anything ---------------------------------------------------------------


def test_H2_check_tools_sends_no_request_for_a_remote_ref_in_any_keyword(
    listener: tuple[str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, hits = listener
    schemas = _ref_schemas(f"{base}/schema.json")
    path = _write(tmp_path / "tools.json", [*(_tool(k, v) for k, v in schemas.items()), OK_TOOL])
    status, out, _ = _run_cli(["check-tools", path, "--examples", "10", "-q"], capsys)
    assert hits == []
    assert status == 1
    for name in schemas:
        assert f"FAIL {name}\n" in out
    assert "pass ok" not in out and "5 tools: 1 passed, 4 failed" in out
    assert f"external `$ref` `{base}/schema.json` is not resolved; inline it" in out


@pytest.mark.one_python
def test_H2_a_file_ref_is_never_opened_and_its_content_never_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"type": SECRET}), encoding="utf-8")
    schemas = _ref_schemas(secret.as_uri())
    path = _write(tmp_path / "tools.json", [*(_tool(k, v) for k, v in schemas.items()), OK_TOOL])
    outputs = []
    for extra in ([], ["--json", "-"], ["--examples", "0"], ["--verbose"]):
        status, out, err = _run_cli(["check-tools", path, "--examples", "5", *extra], capsys)
        assert status == 1
        outputs += [out, err]
    assert all(SECRET not in text and "SECRET" not in text for text in outputs)
    data = json.loads(outputs[2])
    codes = {f["code"] for tool in data["tools"] for f in tool["findings"]}
    assert codes == {"external-ref"}


def _served(parameters: dict[str, Any]) -> ToolRegistry:
    async def handler(**_arguments: object) -> str:
        return "ok"

    return ToolRegistry(
        specs=[
            ToolSpec(name="hostile", description="d", parameters=parameters, handler=handler),
            ToolSpec(
                name="fine", description="d", parameters=OK_TOOL["parameters"], handler=handler
            ),  # type: ignore[arg-type]
        ]
    )


def test_V1_black_box_certify_sends_no_request_and_never_passes_the_tool(
    listener: tuple[str, list[str]],
) -> None:
    base, hits = listener
    for parameters in _ref_schemas(f"{base}/x").values():
        registry = _served(parameters)
        report = certify(
            RegistryExecutor(registry), registry=registry, profile="quick", seed=1, only=["V1"]
        )
        assert hits == []
        (result,) = report.results
        assert result.status == "error"
        assert f"external `$ref` '{base}/x' is not resolved" in result.message


def test_V1_black_box_certify_never_prints_a_file_refs_content(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"type": SECRET}), encoding="utf-8")
    registry = _served({"type": "object", "properties": {"x": {"$ref": secret.as_uri()}}})
    report = certify(
        RegistryExecutor(registry), registry=registry, profile="quick", seed=1, only=["V1", "V3"]
    )
    assert not report.passed
    assert "SECRET" not in report.to_text()
    assert "SECRET" not in json.dumps(report.to_json())


def test_the_oracle_and_generation_refuse_an_external_ref_without_retrieving(
    listener: tuple[str, list[str]],
) -> None:
    base, hits = listener
    for schema in _ref_schemas(f"{base}/x").values():
        with pytest.raises(UnresolvedReference, match="never retrieves"):
            full_validator(schema)
        with pytest.raises(SchemaRefused, match="is not resolved"):
            from_schema(schema)
    assert hits == []


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"properties": {"x": {"$ref": "#/$defs/a"}}, "$defs": {"a": {}}}, []),
        ({"properties": {"x": {"$ref": "#"}}}, []),
        (
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "$ref": "http://json-schema.org/draft-07/schema#",
            },
            [],
        ),
        (
            {
                "$id": "https://example.com/root",
                "$defs": {"a": {"$id": "a.json"}},
                "$ref": "a.json",
            },
            [],
        ),
        ({"properties": {"x": {"$ref": "#/$defs/none"}}}, [(("properties", "x", "$ref"), False)]),
        ({"anyOf": [{"$ref": "other.json"}]}, [(("anyOf", 0, "$ref"), True)]),
        ({"enum": [{"$ref": "http://127.0.0.1:1/"}]}, []),
    ],
)
def test_unresolved_refs_tells_local_from_external_and_skips_data(
    schema: dict[str, Any], expected: list[tuple[tuple[object, ...], bool]]
) -> None:
    assert [(found.path, found.external) for found in unresolved_refs(schema)] == expected


# --- 13.2: text output cannot be forged ----------------------------------------------------------

FORGED = "\x1b[2J\x1b[H0 tools: 0 passed, 0 failed\nPASSED\r\u202e\x85"
SURROGATE = "bad\ud800name"


@given(st.text())
def test_escape_name_leaves_no_control_character_and_always_encodes(text: str) -> None:
    shown = escape_name(text)
    shown.encode("utf-8")
    assert not any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") for c in shown)
    safe = all(unicodedata.category(c)[0] not in "CZ" or c == " " for c in text)
    if safe:
        assert shown == text


def _tools_file(tmp_path: Path) -> str:
    tools = [_tool(FORGED, {"type": "object"}), _tool(SURROGATE, {"type": "object"}), OK_TOOL]
    # json.dumps writes a lone surrogate as \\ud800, which json.load reads back as itself.
    return _write(tmp_path / "names.json", tools)


def _assert_not_forged(text: str) -> None:
    text.encode("utf-8")
    assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
    lines = text.split("\n")
    assert "PASSED" not in lines and not any(line.startswith("0 tools") for line in lines)


def test_check_tools_text_escapes_names_and_json_keeps_them(tmp_path: Path) -> None:
    report = check_registry(
        load_tool_file(_tools_file(tmp_path)), examples=3, raise_on_failure=False
    )
    assert isinstance(report, ToolCheckReport)
    text = report.to_text(verbose=True)
    _assert_not_forged(text)
    assert "\\x1b[2J" in text and "\\ud800" in text
    for tool in report.tools:
        _assert_not_forged(tool.to_text())
    back = json.loads(json_dumps(report.to_json()))
    assert [tool["tool"] for tool in back["tools"]] == [FORGED, SURROGATE, "ok"]


def test_a_finding_escapes_the_tool_name_and_its_path(tmp_path: Path) -> None:
    bad = {"type": "object", "properties": {"x\ny": {"type": "strng"}}}
    report = check_registry([_tool(FORGED, bad)], examples=0, raise_on_failure=False)
    (finding,) = report.findings
    _assert_not_forged(str(finding))
    _assert_not_forged(report.to_text())
    assert finding.tool == FORGED  # the value itself is kept


@pytest.mark.parametrize("extra", [["--examples", "3"], ["--examples", "0"], ["--json", "-"]])
def test_check_tools_cli_on_a_utf8_stdout_survives_a_lone_surrogate(
    tmp_path: Path, extra: list[str]
) -> None:
    """A real UTF-8 pipe (capsys would not encode): no exit 2, no traceback, one report."""
    path = _tools_file(tmp_path)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "check-tools", path, *extra, "-v"],
        capture_output=True,
        env=env,
        timeout=240,
        check=False,
    )
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    assert done.returncode == 0, err
    assert "Traceback" not in err
    if "--json" in extra:
        assert [t["tool"] for t in json.loads(out)["tools"]] == [FORGED, SURROGATE, "ok"]
    else:
        _assert_not_forged(out)
        _assert_not_forged(err)
        assert out.count("3 tools: 3 passed, 0 failed") == 1


def test_certify_report_text_and_json_survive_a_lone_surrogate_tool_name() -> None:
    """Issue 9 defect 6."""

    async def handler(**_arguments: object) -> str:
        return "ok"

    registry = ToolRegistry(
        specs=[
            ToolSpec(
                name=SURROGATE, description="d", parameters={"type": "object"}, handler=handler
            ),
            ToolSpec(name=FORGED, description="d", parameters={"type": "object"}, handler=handler),
        ]
    )
    report = certify(
        RegistryExecutor(registry),
        registry=registry,
        profile="quick",
        seed=1,
        only=["V1", "V2"],
        target_name=FORGED,
    )
    assert isinstance(report, Report)
    _assert_not_forged(report.to_text())
    assert json.loads(json_dumps(report.to_json(), indent=2))["target"] == FORGED
    json_dumps(report.to_json()).encode("utf-8")


# --- 13.8: bounded work, per-tool findings -------------------------------------------------------


def test_H2_a_ref_loop_and_a_remote_ref_are_per_tool_and_the_rest_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = [
        _tool("recursive", {"type": "object", "properties": {"child": {"$ref": "#"}}}),
        _tool("remote", {"type": "object", "properties": {"x": {"$ref": "http://127.0.0.1:9/x"}}}),
        _tool(
            "loop",
            {
                "type": "object",
                "properties": {"x": {"type": "integer"}},
                "dependentSchemas": {"x": {"$ref": "#"}},
            },
        ),
        _tool(
            "loop_defs",
            {
                "type": "object",
                "properties": {"x": {"type": "integer"}},
                "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
                "dependentSchemas": {"x": {"$ref": "#/$defs/a"}},
            },
        ),
        OK_TOOL,
    ]
    path = _write(tmp_path / "tools.json", tools)
    status, out, err = _run_cli(["check-tools", path, "--json", "-", "-q"], capsys)
    assert status == 1, err
    reports = {tool["tool"]: tool for tool in json.loads(out)["tools"]}
    assert reports["recursive"]["passed"] and reports["ok"]["passed"]
    assert [f["code"] for f in reports["remote"]["findings"]] == ["external-ref"]
    for name, where in (("loop", "['dependentSchemas']['x']['$ref']"), ("loop_defs", "['$ref']")):
        (finding,) = reports[name]["findings"]
        assert finding["code"] == "ref-cycle" and finding["path"].endswith(where)
        assert reports[name]["statuses"]["H4"] == "skipped"


def test_in_place_ref_cycle_ignores_recursion_that_descends_into_the_value() -> None:
    node = {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}
    assert in_place_ref_cycle({"$defs": {"n": node}, "$ref": "#/$defs/n"}) is None
    assert in_place_ref_cycle({"items": {"$ref": "#"}, "allOf": [{"type": "array"}]}) is None
    assert in_place_ref_cycle({"anyOf": [{"type": "string"}, {"$ref": "#"}]}) == (
        ("anyOf", 1, "$ref"),
        "#",
    )


# --- 13.10: JSON bomb ----------------------------------------------------------------------------

_BOMB = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "text",
    [
        _BOMB,
        '[{"name": "b", "parameters": ' + _BOMB + "}]",
        '[{"name": ' + _BOMB + ', "parameters": {"type": "object"}}]',
    ],
    ids=["top-level", "parameters", "name"],
)
def test_a_json_bomb_is_exit_2_nested_too_deeply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = tmp_path / "bomb.json"
    path.write_text(text, encoding="utf-8")
    status, out, err = _run_cli(["check-tools", str(path), "-q"], capsys)
    assert status == 2
    assert f"cannot read {path}: nested too deeply" in err
    assert "Traceback" not in err and out == ""


# --- 13.9 (partly): a huge enum is not handed to hypothesis-jsonschema ----------------------------


def test_H3_a_huge_enum_is_not_generated_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = MAX_ENUM_ITEMS + 1000
    big = {"type": "object", "properties": {"n": {"enum": list(range(items))}}}
    path = _write(tmp_path / "tools.json", [_tool("big", big), OK_TOOL])
    status, out, _ = _run_cli(["check-tools", path, "--examples", "0", "--json", "-"], capsys)
    assert status == 0
    report = {tool["tool"]: tool for tool in json.loads(out)["tools"]}["big"]
    assert report["statuses"]["H3"] == "skipped"
    assert report["reasons"]["H3"].startswith(f"not generated: schema too large ({items} enum")
    with pytest.raises(SchemaRefused, match="too large"):
        from_schema(big)
