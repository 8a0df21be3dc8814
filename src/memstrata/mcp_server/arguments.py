"""Tool arguments checked as strictly as REST bodies: an argument no tool takes is refused by name, not
silently dropped (an agent that sends ``confidence`` or ``user`` would otherwise believe it was used), and a
value of the wrong shape is explained in one line instead of pydantic's multi-line report with its links.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError
from jsonschema.exceptions import best_match
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from memstrata.mcp_server.stdio_lines import serve_stdio
from memstrata.validation import describe_validation_error


class StrictArgumentsServer(MCPServer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._withheld: dict[str, str] = {}  # tool name -> why this server does not offer it

    def withhold(self, name: str, why: str) -> None:
        """Leave a tool out (it is not listed) and answer a call to it with ``why`` rather than 'unknown tool'."""
        self._withheld[name] = why

    def close_argument_lists(self) -> None:
        """Publish every tool's input schema as closed (no properties beyond those listed); call after
        registering the tools, so clients that check arguments before sending them see it too."""
        for tool in self._tool_manager.list_tools():
            tool.parameters["additionalProperties"] = False

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            check_arguments(tool, arguments)
        elif name in self._withheld:
            raise ToolError(f"Error executing tool {name}: {self._withheld[name]}")
        return await super().call_tool(name, arguments, context)

    async def run_stdio_async(self) -> None:
        # The SDK offers no public seam between its stdio transport and the server, hence the private attribute.
        await serve_stdio(self._lowlevel_server)


def check_arguments(tool: Tool, arguments: dict[str, Any]) -> None:
    """Refuse unknown arguments and invalid values with a message that names them and what the tool takes."""
    known = set(tool.parameters.get("properties", {}))
    unknown = sorted(set(arguments) - known)
    if unknown:
        raise ToolError(
            f"Error executing tool {tool.name}: unknown argument(s) {', '.join(map(repr, unknown))}; "
            f"it takes {', '.join(sorted(known))}"
        )
    # The published schema first: the SDK's pydantic model is lax and reads `true` as the count 1 or "5" as 5,
    # which REST (and the schema the client was shown) refuses.
    mismatch = best_match(Draft202012Validator(tool.parameters).iter_errors(arguments))
    if mismatch is not None:
        raise ToolError(f"Error executing tool {tool.name}: invalid arguments: {_describe(mismatch)}")
    try:
        tool.fn_metadata.validate_arguments(arguments)
    except ValidationError as exc:
        raise ToolError(
            f"Error executing tool {tool.name}: invalid arguments: {describe_validation_error(exc)}"
        ) from None


def _describe(error: SchemaError) -> str:
    where = ".".join(str(part) for part in error.absolute_path) or "arguments"
    if error.validator in ("type", "anyOf"):
        expected = _expected_types(error.schema)
        if expected:
            got = json.dumps(error.instance, ensure_ascii=False)[:80]
            return f"{where}: expected {' or '.join(expected)}, got {got}"
    return f"{where}: {error.message[:200]}"


def _expected_types(schema: Any) -> list[str]:
    if not isinstance(schema, dict):
        return []
    named = schema.get("type")
    if isinstance(named, str):
        return [named]
    if isinstance(named, list):
        return [str(name) for name in named]
    return [name for option in schema.get("anyOf", []) for name in _expected_types(option)]
