"""Errors as RFC 9457 problem details (``application/problem+json``), with a ``detail`` that says what to do.

``type`` stays ``about:blank`` (so ``title`` is the HTTP status phrase); the machine-readable kind of
error is the ``code`` extension member, e.g. ``not_found`` or ``scope_denied``.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memstrata.api.principal import AccessDenied, Unauthenticated
from memstrata.errors import (
    ConfirmationRequiredError,
    ConflictError,
    EmbeddingMismatchError,
    InvalidInputError,
    JobFailedError,
    MemstrataError,
    NotFoundError,
    ProviderError,
    StoreError,
)
from memstrata.validation import MAX_NESTING

MEDIA_TYPE = "application/problem+json"
logger = logging.getLogger("memstrata.api")

# Most specific first: EmbeddingMismatchError is a server configuration problem, not the caller's.
STATUS: list[tuple[type[Exception], int, str]] = [
    (Unauthenticated, 401, "unauthenticated"),
    (AccessDenied, 403, "scope_denied"),
    (InvalidInputError, 422, "invalid_input"),
    (NotFoundError, 404, "not_found"),
    (ConflictError, 409, "conflict"),
    (ConfirmationRequiredError, 409, "confirmation_required"),
    (EmbeddingMismatchError, 503, "embedding_mismatch"),
    (StoreError, 503, "store_unavailable"),
    (ProviderError, 502, "provider_failed"),
    (JobFailedError, 424, "job_failed"),  # the turns were stored; the extraction they waited for failed
    (MemstrataError, 500, "internal"),
]


class FieldProblem(BaseModel):
    loc: list[str | int]
    msg: str
    type: str


class Problem(BaseModel):
    """RFC 9457 problem details plus ``code`` (stable, machine-readable) and, for 422s, the bad fields."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    code: str
    instance: str | None = None
    errors: list[FieldProblem] | None = Field(default=None, description="one entry per invalid request field")


class RequestTooLarge(StarletteHTTPException):
    """Raised while a body is read; a StarletteHTTPException so FastAPI's body parsing re-raises it as is."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            413,
            f"the request body is over the limit of {limit} bytes; send less per request (split batches), "
            "or raise server.max_request_bytes in the configuration",
        )


def problem_response(
    status: int,
    detail: str,
    code: str,
    *,
    instance: str | None = None,
    errors: list[FieldProblem] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = Problem(
        title=HTTPStatus(status).phrase, status=status, detail=detail, code=code, instance=instance, errors=errors
    )
    return JSONResponse(
        body.model_dump(mode="json", exclude_none=True), status_code=status, media_type=MEDIA_TYPE, headers=headers
    )


def classify(exc: Exception) -> tuple[int, str]:
    for kind, status, code in STATUS:
        if isinstance(exc, kind):
            return status, code
    return 500, "internal"


def auth_headers(status: int) -> dict[str, str] | None:
    return {"WWW-Authenticate": 'Bearer realm="memstrata"'} if status == 401 else None


def install(app: FastAPI) -> None:
    """Register the handlers that turn every error into a problem response."""

    async def on_known(request: Request, exc: Exception) -> JSONResponse:
        status, code = classify(exc)
        if status >= 500:
            logger.error("%s on %s %s: %s", code, request.method, request.url.path, exc)
        return problem_response(status, str(exc), code, instance=request.url.path, headers=auth_headers(status))

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        broken = [err for err in exc.errors() if err.get("type") == "json_invalid"]
        if broken:  # not JSON at all: an unreadable body (400), not a body of the wrong shape (422)
            where = broken[0].get("loc", ())[-1]
            detail = (f"the body is not valid JSON (at character {where}: {broken[0].get('msg')}); send UTF-8 JSON "
                      "with Content-Type: application/json, shaped as /docs shows")  # fmt: skip
            return problem_response(400, detail, "bad_request", instance=request.url.path)
        declared = request.headers.get("content-type", "").split(";")[0].strip().lower()
        body_errors = [err for err in exc.errors() if tuple(err.get("loc", ()))[:1] == ("body",)]
        # a body sent with no Content-Type reaches validation as raw text ("Input should be a valid dictionary"):
        # the fix is the header, as for any other type (a user trial got 422 for valid JSON sent without it)
        unlabelled = not declared and any(isinstance(err.get("input"), str | bytes) for err in body_errors)
        mislabelled = declared not in ("", "application/json") and not declared.endswith("+json") \
            and not declared.startswith("multipart/")  # fmt: skip
        if body_errors and (unlabelled or mislabelled):
            sent = f"sent as {declared}" if declared else "sent without a Content-Type"
            detail = f"the body was {sent}; send JSON with Content-Type: application/json"
            return problem_response(415, detail, "unsupported_media_type", instance=request.url.path)
        errors = [_field_problem(_with_hint(err)) for err in exc.errors()]
        fields = "; ".join(f"{'.'.join(map(str, e.loc))}: {e.msg}" for e in errors)
        detail = f"the request does not match the schema ({fields}); see /docs for the expected shape"
        return problem_response(422, detail, "invalid_request", instance=request.url.path, errors=errors)

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        status = exc.status_code
        detail = str(exc.detail) if exc.detail and exc.detail != HTTPStatus(status).phrase else ""
        detail = _HINTS.get(detail, _HINTS.get(status, detail))
        if isinstance(exc.__cause__, RecursionError):  # valid JSON nested past what the parser follows
            detail = f"the body nests deeper than JSON parsing allows; values may nest at most {MAX_NESTING} levels"
        headers = dict(exc.headers or {}) | (auth_headers(status) or {})
        if status == 405:  # every method the path takes, not only those of the route that matched first
            headers["Allow"] = ", ".join(sorted(allowed_methods(request)))
        code = _HTTP_CODES.get(status, HTTPStatus(status).phrase.lower().replace(" ", "_"))
        return problem_response(
            status, detail or HTTPStatus(status).phrase, code, instance=request.url.path, headers=headers or None
        )

    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unexpected error on %s %s", request.method, request.url.path)
        return unexpected_response()

    for kind, _, _ in STATUS:
        app.add_exception_handler(kind, on_known)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_unexpected)  # for errors outside the routes (in a middleware)
    app.add_middleware(AnswerUnexpected)


def unexpected_response() -> JSONResponse:
    return problem_response(
        500, "an unexpected server error; the server log has the details. Retry, or report it", "internal"
    )


class StartWatch:
    """An ASGI ``send`` that passes every message on and remembers whether the response has started (after that
    an error can no longer be answered with a response of its own)."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: Message) -> None:
        self.started = self.started or message["type"] == "http.response.start"
        await self.send(message)


class AnswerUnexpected:
    """A route's unexpected error answered with a 500 problem here, inside the app. Starlette's outermost error
    handler answers too but then raises on, and uvicorn closes the connection after a response it did not
    expect to follow an error: the client's next request on that keep-alive connection failed as well."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        watched = StartWatch(send)
        try:
            await self.app(scope, receive, watched)
        except Exception:
            if watched.started:  # half a response is out: nothing to answer with but a closed connection
                raise
            logger.exception("unexpected error on %s %s", scope.get("method"), scope.get("path"))
            await unexpected_response()(scope, receive, send)


_HINTS: dict[int | str, str] = {
    # FastAPI's words when a body is not JSON at all (or undecodable), with what to do about it added.
    "There was an error parsing the body": "the body could not be read as JSON; send UTF-8 JSON with "
    "Content-Type: application/json, shaped as /docs shows",
    404: "no such endpoint; GET /docs lists them",
    405: "this endpoint does not accept that method; GET /docs lists the methods",
}
_HTTP_CODES = {404: "no_route", 405: "method_not_allowed", 413: "too_large", 415: "unsupported_media_type"}


def allowed_methods(request: Request) -> set[str]:
    """The methods some route takes on this path, asked of the routes themselves (FastAPI keeps included routers
    as routes of their own, so reading each route's path found none and the Allow header came out empty)."""
    methods = set()
    for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"):
        probe = {**request.scope, "method": method}
        if any(route.matches(probe)[0] == Match.FULL for route in request.app.router.routes):
            methods.add(method)
    return methods


_SCOPE_FIELDS = {"user_id", "agent_id", "session_id"}


def _with_hint(err: Any) -> Any:
    """The fix, where the schema's own words do not say it.

    Some endpoints take the scope in the body, others (a task's steps, a memory's id) in the query string: a scope
    field in a body that has none was refused as "Extra inputs are not permitted" with no word of where. A turn
    sent as a bare string ("messages": ["hi"]) was refused as "Input should be a valid dictionary or object"."""
    loc = tuple(err.get("loc", ()))
    if err.get("type") == "extra_forbidden" and loc[:1] == ("body",) and loc[-1:] and loc[-1] in _SCOPE_FIELDS:
        name = loc[-1]
        return {**err, "msg": f"{err.get('msg')}: this endpoint takes {name} in the query string (?{name}=...)"}
    if loc[:2] == ("body", "messages") and len(loc) == 3 and not isinstance(err.get("input"), dict | list):
        hint = 'send each turn as {"role": "user", "content": "..."}, or plain memories as "text"'
        return {**err, "msg": f"{err.get('msg')}: {hint}"}
    return err


def _field_problem(err: Any) -> FieldProblem:
    return FieldProblem(loc=list(err.get("loc", ())), msg=str(err.get("msg", "")), type=str(err.get("type", "")))
