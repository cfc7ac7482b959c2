"""Writes almanac_client/types.py from the Almanac OpenAPI document.

    python3 clients/python/scripts/generate_types.py DOC.json   # a file, or - for stdin, or an http(s) URL

Every schema of `components.schemas` becomes a TypedDict (nested objects get their own, named
after their parent and property), every client operation a typed method of `Operations` that
calls `self._call(...)`. Standard library only. The repository's `npm run check` runs it over
the document the server serves, so the committed file follows the document.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
import urllib.request
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "almanac_client" / "types.py"
#: Enums longer than this become a named alias instead of an inline Literal.
INLINE_ENUM = 24


def camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[^A-Za-z0-9]+", name) if p)


def snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    s = re.sub(r"[^A-Za-z0-9]+", "_", s).strip("_").lower()
    return s + "_" if keyword.iskeyword(s) else s


class Generator:
    def __init__(self, doc: dict) -> None:
        self.doc = doc
        self.blocks: list[str] = []
        self.aliases: dict[str, str] = {}
        self.taken: set[str] = set(doc.get("components", {}).get("schemas", {}))

    def fresh(self, name: str) -> str:
        candidate, n = name, 2
        while candidate in self.taken:
            candidate, n = f"{name}{n}", n + 1
        self.taken.add(candidate)
        return candidate

    def literal(self, values: list, name: str) -> str:
        lit = "Literal[" + ", ".join(json.dumps(v) if isinstance(v, str) else repr(v) for v in values) + "]"
        if len(values) <= INLINE_ENUM:
            return lit
        if lit not in self.aliases:
            alias = self.fresh(name)
            self.aliases[lit] = alias
            self.blocks.append(f"{alias} = {lit}\n")
        return self.aliases[lit]

    def type_of(self, s: dict, name: str) -> str:
        if "$ref" in s:
            return json.dumps(s["$ref"].rsplit("/", 1)[-1])
        if "const" in s:
            return self.literal([s["const"]], name)
        if "enum" in s:
            return self.literal(s["enum"], name)
        alternatives = s.get("anyOf") or s.get("oneOf")
        if alternatives:
            return self.union([self.type_of(a, f"{name}Option{i + 1}") for i, a in enumerate(alternatives)])
        types = s.get("type")
        if isinstance(types, list):
            return self.union([self.type_of({**s, "type": t}, name) for t in types])
        if types == "string":
            return "str"
        if types == "integer":
            return "int"
        if types == "number":
            return "float"
        if types == "boolean":
            return "bool"
        if types == "null":
            return "None"
        if types == "array":
            return f"list[{self.type_of(s.get('items', {}), name + 'Item')}]"
        if types == "object" or "properties" in s:
            if not s.get("properties"):
                extra = s.get("additionalProperties")
                value = self.type_of(extra, name + "Value") if isinstance(extra, dict) else "Any"
                return f"dict[str, {value}]"
            return json.dumps(self.typed_dict(self.fresh(name), s))
        return "Any"

    @staticmethod
    def union(parts: list[str]) -> str:
        unique = list(dict.fromkeys(parts))
        return unique[0] if len(unique) == 1 else "Union[" + ", ".join(unique) + "]"

    def typed_dict(self, name: str, s: dict) -> str:
        required = set(s.get("required", []))
        fields = []
        for prop, ps in s.get("properties", {}).items():
            t = self.type_of(ps, name + camel(prop))
            fields.append((prop, t if prop in required else f"NotRequired[{t}]", ps.get("description")))
        doc = s.get("description")
        if all(p.isidentifier() and not keyword.iskeyword(p) for p, _, _ in fields):
            lines = [f"class {name}(TypedDict):"]
            if doc:
                lines.append(f"    {json.dumps(doc, ensure_ascii=False)}")
            for prop, t, _ in fields:
                lines.append(f"    {prop}: {t}")
            if len(lines) == 1:
                lines.append("    pass")
        else:
            body = ", ".join(f"{json.dumps(p)}: {t}" for p, t, _ in fields)
            lines = [f"{name} = TypedDict({json.dumps(name)}, {{{body}}})"]
        self.blocks.append("\n".join(lines) + "\n")
        return name

    def schemas(self) -> None:
        for name, s in self.doc.get("components", {}).get("schemas", {}).items():
            if s.get("type") == "object" or "properties" in s:
                self.typed_dict(name, s)
            else:
                self.blocks.append(f"{name} = {self.type_of(s, name)}\n")

    def operations(self) -> None:
        methods = []
        for path, item in self.doc["paths"].items():
            for method, op in item.items():
                methods.append(self.operation(path, method.upper(), op))
        self.blocks.append(
            "class Operations:\n"
            '    """Every operation of the document, typed; `Almanac` supplies `_call`."""\n\n'
            "    def _call(self, method: str, path: str, *, query: dict[str, Any], headers: dict[str, Optional[str]],\n"
            "              body: Any = None, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> Any:\n"
            "        raise NotImplementedError\n\n" + "\n".join(methods)
        )

    def operation(self, path: str, method: str, op: dict) -> str:
        name = snake(op["operationId"])
        base = camel(op["operationId"])
        ok = op["responses"].get("200", {}).get("content", {}).get("application/json", {}).get("schema", {})
        data = self.type_of(ok, base + "Answer")
        required, optional, query, headers = [], [], [], []
        for p in op.get("parameters", []):
            arg = snake(p["name"])
            t = self.type_of(p.get("schema", {}), base + camel(p["name"]))
            if p.get("required"):
                required.append(f"{arg}: {t}")
            else:
                optional.append(f"{arg}: Optional[{t}] = None")
            (query if p["in"] == "query" else headers).append((p["name"], arg))
        body = op.get("requestBody")
        if body:
            bt = self.type_of(body["content"]["application/json"]["schema"], base + "Body")
            required.insert(0, f"body: {bt}")
        limits = ["timeout: Optional[float] = None", "max_retries: Optional[int] = None"]

        def signature(optional: list[str]) -> str:
            return ", ".join(["self", *(["body: " + required[0][6:]] if body else []), "*", *required[1 if body else 0:], *optional, *limits])

        conditional = any(n.lower() == "if-none-match" for n, _ in headers)
        ret = f"Union[Answer[{data}], NotModified]" if conditional else f"Answer[{data}]"
        summary = (op.get("summary") or "").strip()
        lines = []
        if conditional:
            # A 304 can answer only a call that sends If-None-Match: the overloads say so.
            plain = [a.replace("if_none_match: Optional[str] = None", "if_none_match: None = None") for a in optional]
            sent = [a.replace("if_none_match: Optional[str] = None", "if_none_match: str") for a in optional]
            lines += ["    @overload", f"    def {name}({signature(plain)}) -> Answer[{data}]: ...\n"]
            lines += ["    @overload", f"    def {name}({signature(sent)}) -> {ret}: ...\n"]
        lines.append(f"    def {name}({signature(optional)}) -> {ret}:")
        lines.append(f'        """{method} {path}{": " + summary if summary else ""}"""'.replace("\\", "\\\\"))
        q = ", ".join(f"{json.dumps(n)}: {a}" for n, a in query)
        h = ", ".join(f"{json.dumps(n)}: {a}" for n, a in headers)
        call = f"self._call({json.dumps(method)}, {json.dumps(path)}, query={{{q}}}, headers={{{h}}}"
        call += ", body=body" if body else ""
        lines.append(f"        return {call}, timeout=timeout, max_retries=max_retries)  # type: ignore[no-any-return]\n")
        return "\n".join(lines)

    def render(self) -> str:
        self.schemas()
        self.operations()
        head = (
            '"""Generated by clients/python/scripts/generate_types.py from the Almanac OpenAPI document. Do not edit."""\n\n'
            "from __future__ import annotations\n\n"
            "from typing import Any, Literal, NotRequired, Optional, TypedDict, Union, overload\n\n"
            "from ._answer import Answer, NotModified\n\n"
        )
        return head + "\n\n".join(self.blocks)


def main() -> None:
    source = sys.argv[1] if len(sys.argv) > 1 else "-"
    if source == "-":
        doc = json.load(sys.stdin)
    elif source.startswith(("http://", "https://")):
        with urllib.request.urlopen(source) as res:  # noqa: S310 (the caller names the server)
            doc = json.load(res)
    else:
        doc = json.loads(Path(source).read_text(encoding="utf-8"))
    OUT.write_text(Generator(doc).render(), encoding="utf-8")


if __name__ == "__main__":
    main()
