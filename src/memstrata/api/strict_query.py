"""Unknown query parameters are refused (422), not ignored: a typo such as ``limt=5`` or ``user=alice`` would
otherwise run a different request than the caller meant, and the OpenAPI document promises no others. So is a body
sent to an operation that takes none (``POST /memories/{id}/archive`` with ``{"reason": ...}`` archived and dropped
the reason): empty, ``{}`` or ``null`` pass, other JSON is a 422, and what is not JSON a 400. A JSON body that
names one key twice is a 422 too: ``{"text": "a", "text": "b"}`` stored "b" without a word, and another parser
(a proxy, a log reader) may take "a"."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import UnionType
from typing import Any, Union, get_args, get_origin

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel

from memstrata.api.browser_guard import is_json

_DECLARED: dict[int, tuple[frozenset[str], frozenset[str]]] = {}  # per route; routes live as long as the app


def _is_list(annotation: Any) -> bool:
    """A parameter that takes a list (``status=a&status=b``), optional or not."""
    return get_origin(annotation) in (list, tuple, set, frozenset) or any(
        _is_list(arg) for arg in get_args(annotation) if get_origin(annotation) in (Union, UnionType)
    )


def _query_names(dependant: Any) -> dict[str, bool]:
    """Query parameters of a route and of every dependency it uses (a pydantic query model: its fields), each with
    whether it takes a list."""
    names: dict[str, bool] = {}
    for param in dependant.query_params:
        model = getattr(param.field_info, "annotation", None)
        if isinstance(model, type) and issubclass(model, BaseModel):
            names.update(
                {field.alias or name: _is_list(field.annotation) for name, field in model.model_fields.items()}
            )
        else:
            names[param.alias] = _is_list(param.field_info.annotation)
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


def _declared(route: Any) -> tuple[frozenset[str], frozenset[str]]:
    """The route's query parameter names, and those of them that may repeat."""
    if id(route) not in _DECLARED:
        names = _query_names(route.dependant)
        _DECLARED[id(route)] = frozenset(names), frozenset(name for name, listed in names.items() if listed)
    return _DECLARED[id(route)]


async def reject_unknown_query(request: Request) -> None:
    """A router dependency: every query parameter must be one the matched route declares. ``async``, though it
    awaits nothing: FastAPI runs a plain ``def`` dependency in a worker thread, a hop costing more than the check."""
    route = request.scope.get("route")
    if getattr(route, "dependant", None) is None:
        return
    declared, repeatable = _declared(route)
    sent = [name for name, _ in request.query_params.multi_items()]
    unknown = [name for name in dict.fromkeys(sent) if name not in declared]
    takes = ", ".join(sorted(declared)) or "none"
    _refuse(
        request,
        "extra_forbidden",
        unknown,
        lambda name: f"unknown query parameter {name!r}; this operation takes: {takes}",
    )
    # ?user_id=lin&user_id=mallory read mallory's memories: the last value won without a word
    twice = [name for name in dict.fromkeys(sent) if sent.count(name) > 1 and name not in repeatable]
    _refuse(request, "duplicate_parameter", twice,
            lambda name: f"query parameter {name!r} is given {sent.count(name)} times; give it once")  # fmt: skip


def _refuse(request: Request, kind: str, names: list[str], message: Callable[[str], str]) -> None:
    """A 422 naming each of ``names`` with its values as sent, when there are any."""
    if names:
        raise RequestValidationError([
            {"type": kind, "loc": ("query", name), "input": request.query_params.getlist(name), "msg": message(name)}
            for name in names
        ])  # fmt: skip


class _DuplicateKey(ValueError):
    pass


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(key)
        found[key] = value
    return found


def _check_unique_keys(raw: bytes) -> None:
    try:
        json.loads(raw, object_pairs_hook=_refuse_duplicates)
    except _DuplicateKey as exc:
        message = f"the key {str(exc)!r} appears twice in one JSON object; send it once"
        raise RequestValidationError([{"type": "duplicate_key", "loc": ("body", str(exc)), "input": None,
                                       "msg": message}]) from None  # fmt: skip
    except (ValueError, RecursionError):
        return  # not JSON: the body's own validation says so


async def check_body(request: Request) -> None:
    """A router dependency: an operation that declares no body gets none (beyond ``{}``: body-less writes may send
    one, docs/server.md); a JSON body names each key of an object once."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None or request.method in ("GET", "HEAD", "OPTIONS"):
        return
    if dependant.body_params:
        if is_json(request.headers.get("content-type")):  # a form upload is streamed to a file, never read here
            _check_unique_keys(await request.body())
        return
    raw = (await request.body()).strip()
    if not raw:
        return
    try:
        sent = json.loads(raw)
    except ValueError as exc:
        raise RequestValidationError([{"type": "json_invalid", "loc": ("body", 0), "input": None,
                                       "msg": f"JSON decode error: {exc}"}]) from None  # fmt: skip
    if sent not in ({}, None):
        raise RequestValidationError([{"type": "extra_forbidden", "loc": ("body",), "input": sent,
                                       "msg": "this operation takes no body; send none (or {})"}])  # fmt: skip
