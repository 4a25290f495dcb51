"""The sandbox's route table as data, and the OpenAPI 3.1 document built from it.

Routes are declared once (`Endpoint`) and turned both into Starlette routes (`sandbox.server`) and
into `/openapi.json`, so the document cannot drift from what is served. Record schemas are
inferred from the world's records, which keeps them in step with the world without a second
hand-written schema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sandbox.filters import ARRAY, BOOL, DATE, DATETIME, INT, NUMBER, OBJECT, STRING
from sandbox.protocol import COLLECTIONS

Kind = Literal["page", "item", "array", "object", "token"]
_CONVERTOR = re.compile(r"\{(\w+):\w+\}")

_JSON_TYPES: dict[str, dict[str, Any]] = {
    INT: {"type": ["integer", "null"], "format": "int64"},
    NUMBER: {"type": ["number", "null"]},
    BOOL: {"type": ["boolean", "null"]},
    DATE: {"type": ["string", "null"], "format": "date"},
    DATETIME: {"type": ["string", "null"], "description": "yyyy-MM-ddTHH:mm:ss.SSS, UTC"},
    STRING: {"type": ["string", "null"]},
    ARRAY: {"type": ["array", "null"]},
    OBJECT: {"type": ["object", "null"]},
}


@dataclass(frozen=True)
class Param:
    name: str
    type: str = "string"  # a JSON schema type
    required: bool = False
    description: str = ""
    list: bool = False  # comma-separated or repeated


@dataclass(frozen=True)
class Endpoint:
    """One served operation: what the router mounts and what the document describes."""

    method: str
    path: str  # relative to the base path, Starlette syntax (`{reservationId:int}`)
    handler: Callable[..., Any] = field(compare=False, repr=False)
    kind: Kind = "page"
    collection: str | None = None
    summary: str = ""
    params: tuple[Param, ...] = ()
    no_content_when_empty: bool = False
    body: bool = False  # takes a JSON body


def template(path: str) -> str:
    """`/reservations/{reservationId:int}` -> `/reservations/{reservationId}`."""
    return _CONVERTOR.sub(r"{\1}", path)


def _schema_name(collection: str) -> str:
    return collection[:1].upper() + collection[1:]


def record_schema(collection: str, types: Mapping[str, str]) -> dict[str, Any]:
    pk = COLLECTIONS.get(collection)
    props = {name: dict(_JSON_TYPES.get(kind, {})) for name, kind in types.items()}
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if pk:
        props[pk] = {"type": "integer", "format": "int64"}
        schema["required"] = [pk]
    return schema


_PAGE_PARAMS = (
    Param("page", "integer", description="0-based page number (default 0)"),
    Param("size", "integer", description="page size (default 20, clamped to the server maximum)"),
    Param("sort", "string", description="field,asc|desc; repeatable", list=True),
    Param(
        "filter",
        "string",
        description="field op value (`:`, `::`, `!:`, `>`, `>:`, `<`, "
        "`<:`, `a:x||b:y`, `field:[v1,v2]`); repeatable = AND",
        list=True,
    ),
)
_HEADERS = (
    {"name": "locale", "in": "header", "required": False, "schema": {"type": "string"}},
    {
        "name": "x-show-archived",
        "in": "header",
        "required": False,
        "schema": {"type": "boolean", "default": False},
    },
)


def _parameters(endpoint: Endpoint) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "schema": {"type": "integer", "format": "int64"},
        }
        for name in _CONVERTOR.findall(endpoint.path)
    ]
    params = (_PAGE_PARAMS if endpoint.kind == "page" else ()) + endpoint.params
    for param in params:
        schema: dict[str, Any] = {"type": param.type}
        if param.list:
            schema = {"type": "array", "items": schema}
        entry = {"name": param.name, "in": "query", "required": param.required, "schema": schema}
        if param.list:
            entry["explode"] = True
        if param.description:
            entry["description"] = param.description
        out.append(entry)
    if endpoint.kind != "token":
        out.extend(dict(h) for h in _HEADERS)
    return out


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _responses(endpoint: Endpoint) -> dict[str, Any]:
    ref = (
        {"$ref": f"#/components/schemas/{_schema_name(endpoint.collection)}"}
        if (endpoint.collection)
        else {"type": "object"}
    )
    if endpoint.kind == "page":
        content: dict[str, Any] = {
            "$ref": f"#/components/schemas/Page{_schema_name(endpoint.collection or 'Record')}"
        }
    elif endpoint.kind == "array":
        content = {"type": "array", "items": ref}
    elif endpoint.kind == "token":
        content = {"$ref": "#/components/schemas/Token"}
    elif endpoint.kind == "item":
        content = ref
    else:
        content = {"type": "object"}
    ok = (
        "201"
        if endpoint.method == "POST" and endpoint.kind == "object" and endpoint.body
        else "200"
    )
    responses: dict[str, Any] = {
        ok: {"description": "OK", "content": {"application/json": {"schema": content}}},
        "400": _error("invalid parameter, filter or body"),
        "401": _error("missing, invalid or expired token (or wrong credentials)"),
        "429": _error("too many concurrent requests; see Retry-After"),
    }
    if endpoint.no_content_when_empty:
        responses["204"] = {"description": "no records"}
    if endpoint.kind == "item" or "{" in endpoint.path:
        responses["404"] = _error("not found")
    return responses


def _components(collections: Sequence[str], types_for: Callable[[str], Mapping[str, str]]) -> dict:
    schemas: dict[str, Any] = {
        "Error": {
            "type": "object",
            "required": ["status", "error", "code", "message"],
            "properties": {
                "status": {"type": "integer"},
                "error": {"type": "string"},
                "code": {"type": "string"},
                "message": {"type": "string"},
            },
        },
        "SortEntry": {
            "type": "object",
            "properties": {
                "direction": {"type": "string", "enum": ["ASC", "DESC"]},
                "property": {"type": "string"},
                "ignoreCase": {"type": "boolean"},
                "nullHandling": {"type": "string"},
                "ascending": {"type": "boolean"},
                "descending": {"type": "boolean"},
            },
        },
        "Token": {
            "type": "object",
            "required": ["access_token", "token_type", "expires_in"],
            "properties": {
                "access_token": {"type": "string"},
                "token_type": {"type": "string"},
                "expires_in": {"type": "integer"},
                "scope": {"type": "string"},
                "jti": {"type": "string"},
                "client_id": {"type": "string"},
                "concern_id": {"type": "integer"},
                "details": {"type": "object"},
            },
        },
    }
    for collection in collections:
        name = _schema_name(collection)
        schemas[name] = record_schema(collection, types_for(collection))
        schemas[f"Page{name}"] = {
            "type": "object",
            "required": [
                "content",
                "size",
                "number",
                "numberOfElements",
                "totalElements",
                "totalPages",
                "first",
                "last",
                "empty",
                "sort",
            ],
            "properties": {
                "content": {"type": "array", "items": {"$ref": f"#/components/schemas/{name}"}},
                **{
                    k: {"type": "integer"}
                    for k in ("size", "number", "numberOfElements", "totalElements", "totalPages")
                },
                **{k: {"type": "boolean"} for k in ("first", "last", "empty")},
                "sort": {"type": "array", "items": {"$ref": "#/components/schemas/SortEntry"}},
            },
        }
    return {
        "schemas": schemas,
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
    }


def build_openapi(
    endpoints: Sequence[Endpoint],
    *,
    base_path: str,
    types_for: Callable[[str], Mapping[str, str]],
    title: str = "Reservation service (sandbox)",
) -> dict[str, Any]:
    """The OpenAPI 3.1 document for `endpoints`, mounted under `base_path`."""
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in endpoints:
        slug = re.sub(r"\W+", "_", template(endpoint.path)).strip("_")
        operation: dict[str, Any] = {
            "operationId": f"{endpoint.method.lower()}_{slug}",
            "summary": endpoint.summary,
            "parameters": _parameters(endpoint),
            "responses": _responses(endpoint),
        }
        if endpoint.kind == "token":
            operation["security"] = []
            operation["requestBody"] = {
                "required": True,
                "content": {
                    "application/x-www-form-urlencoded": {
                        "schema": {
                            "type": "object",
                            "required": ["grantType", "clientId", "clientSecret"],
                            "properties": {
                                k: {"type": "string"}
                                for k in ("grantType", "clientId", "clientSecret", "scope")
                            },
                        }
                    }
                },
            }
        elif endpoint.body:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": {"type": "object"}}},
            }
        paths.setdefault(base_path + template(endpoint.path), {})[endpoint.method.lower()] = (
            operation
        )
    collections = sorted({e.collection for e in endpoints if e.collection})
    return {
        "openapi": "3.1.0",
        "info": {"title": title, "version": "2"},
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": _components(collections, types_for),
    }
