"""The .proto files are what a bot author in another language reads: everything in them is documented."""

from __future__ import annotations

import re
from pathlib import Path

PROTOS = sorted((Path(__file__).resolve().parents[2] / "proto" / "croupier" / "v1").glob("*.proto"))
DECLARATION = re.compile(r"\s*(message|enum|service|oneof) (\w+) \{")
RPC = re.compile(r"\s*rpc (\w+)\(")
FIELD = re.compile(r"\s*(optional |repeated )?[\w.]+ (\w+) = \d+;")


def undocumented(path: Path) -> list[str]:
    """Declarations without a comment: every message, enum, service, rpc and oneof needs its own;
    a field needs its own, or its message's comment names it in `backquotes`, or its oneof's comment."""
    lines = path.read_text(encoding="utf-8").splitlines()

    def comment_above(index: int) -> str:
        above = []
        while index > 0 and lines[index - 1].strip().startswith("//"):
            index -= 1
            above.append(lines[index])
        return "\n".join(above)

    missing = []
    scopes: list[tuple[str, str]] = []  # (kind, comment) of the enclosing declarations
    for index, line in enumerate(lines):
        where = f"{path.name}:{index + 1}"
        if declaration := DECLARATION.match(line):
            comment = comment_above(index)
            if not comment:
                missing.append(f"{where}: {declaration.group(1)} {declaration.group(2)}")
            scopes.append((declaration.group(1), comment))
        elif line.strip() == "}" and scopes:
            scopes.pop()
        elif (rpc := RPC.match(line)) and not comment_above(index):
            missing.append(f"{where}: rpc {rpc.group(1)}")
        elif (field := FIELD.match(line)) and scopes and scopes[-1][0] != "enum":
            name = field.group(2)
            messages = [comment for kind, comment in scopes if kind == "message"]
            documented = (
                comment_above(index)
                or "//" in line
                or (messages and f"`{name}`" in messages[-1])
                or scopes[-1][0] == "oneof"
            )
            if not documented:
                missing.append(f"{where}: field {name}")
    return missing


def test_every_message_field_and_service_of_the_contract_is_documented() -> None:
    assert PROTOS
    assert [m for path in PROTOS for m in undocumented(path)] == []


def test_the_checker_notices_an_undocumented_field(tmp_path: Path) -> None:
    proto = tmp_path / "x.proto"
    proto.write_text("// A thing.\nmessage Thing {\n  // Documented.\n  int32 a = 1;\n  int32 b = 2;\n}\n")
    assert undocumented(proto) == ["x.proto:5: field b"]
