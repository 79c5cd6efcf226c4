#!/usr/bin/env python3
"""An OAuth-protected MCP server for toolport's sign-in tests (tests/it/auth/login.rs,
session.rs, machine.rs).

Authorization server and resource server on one loopback port, built on the official Python
MCP SDK (PyPI `mcp`, pinned in tests/peers/install_clients.sh; run it with that venv's python):

    oauth_server.py [--port 0] [--token-seconds 3600] [--issued FILE] [--client ID:SECRET]...
                    [--authorization-endpoint URL] [--token-endpoint URL] [--step-up SCOPE]
                    [--workload JWT]

Prints exactly one line, `READY http://127.0.0.1:PORT/mcp`, on stdout once it accepts
connections, then serves until killed. Everything else goes to stderr.

What it serves (the SDK's handlers, with this file's provider behind them):
  POST /mcp                 streamable HTTP; 401 with `WWW-Authenticate: Bearer …,
                            resource_metadata="…"` without a valid token for scope mcp:tools
  GET  /.well-known/oauth-protected-resource/mcp       RFC 9728 metadata
  GET  /.well-known/oauth-authorization-server         RFC 8414 metadata (issuer = the origin)
  POST /register            RFC 7591 dynamic client registration
  GET  /authorize           approves at once (no login page): 302 to the client's redirect_uri
                            with code, state and iss (RFC 9207); PKCE S256 is required
  POST /token               authorization_code and refresh_token grants (the SDK's),
                            client_credentials for a --client and with --workload the
                            JWT bearer grant (this file's, see below)
  POST /revoke              RFC 7009 (revokes the whole grant)

Tools: `whoami` (`client_id=ID scopes=S…` of the caller's token) and `echo {text}`; with
--step-up SCOPE also `write_note {text}`, whose call is refused `403 insufficient_scope` with
`WWW-Authenticate: Bearer error="insufficient_scope", scope="mcp:tools SCOPE", …` (a step-up,
SEP-835) unless the token carries SCOPE, which any client may then ask for.

Behaviour a test relies on:
  - access tokens live --token-seconds (at most: their expiry is rounded down);
  - every refresh ROTATES the refresh token, and presenting one that was already used fails
    with invalid_grant AND revokes every token of that grant (reuse detection, as Auth0, Okta
    and others do it): a client that races itself on one refresh token ends signed out;
  - a reused authorization code likewise revokes what it was exchanged for;
  - tokens are bound to the resource (RFC 8707): the client must send `resource` (the MCP
    spec's MUST), and a token issued for another resource is refused at /mcp;
  - --issued FILE gets every access token, refresh token and client secret it issues (and
    each --client secret), one per line, appended and flushed as they are made;
  - --client ID:SECRET pre-registers a confidential client (what `oauth.clientId` and
    `oauth.clientSecret` name) that may use any loopback redirect URI and either
    client_secret_basic or client_secret_post;
  - such a client may also use the client_credentials grant (RFC 6749 §4.4, SEP-1046), with
    `resource` (RFC 8707) as above: an access token for the client itself, no refresh token,
    that lives --token-seconds like the others. Each one is logged on stderr as
    `client_credentials token issued to ID (resource R)`, so a test can count them;
  - --workload JWT accepts the JWT bearer grant (RFC 7523 §2.1, `grant_type`
    urn:ietf:params:oauth:grant-type:jwt-bearer, SEP-1933) for that exact `assertion` (the
    fixture is the authorization server a workload's platform token is for; it checks no
    signature), with `resource` as above, and refuses any other with invalid_grant. Every such
    request is logged on stderr as `jwt_bearer assertion received`, and each token as
    `jwt_bearer token issued to ID (resource R)` (ID: the request's client_id, else
    `workload`);
  - --token-endpoint URL advertises URL as the token endpoint in the RFC 8414 metadata (a lie,
    as --authorization-endpoint; /token still answers here);
  - an expired or revoked access token is refused at /mcp (401), whatever grant issued it.

Loopback redirect URIs match whatever their port (RFC 8252 §7.3), so a registered client can
sign in again on a new ephemeral callback port.
"""

import argparse
import asyncio
import base64
import contextvars
import json
import secrets
import socket
import sys
import time
from urllib.parse import parse_qsl, unquote, urlencode, urlparse

import uvicorn
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp.server.auth import routes as auth_routes
from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.handlers.token import TokenErrorResponse
from mcp.server.auth.json_response import PydanticJSONResponse
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull, OAuthToken

SCOPE = "mcp:tools"
# Authorization codes are for the redirect round trip only (RFC 6749 §4.1.2 says at most
# 10 minutes); five is plenty for a test pasting a URL back.
CODE_SECONDS = 300
# The one resource owner: every token speaks for the same user, so an MCP session created
# with one access token may be continued with the next (the SDK binds sessions to it).
SUBJECT = "fixture-user"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
CLIENT_CREDENTIALS = "client_credentials"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"

# Set for the duration of one /token or /revoke request by `TokenEndpointShim`: whether the
# client authenticated with HTTP Basic. `Provider.get_client` reads it for pre-registered
# clients, which accept either secret method.
basic_auth_used = contextvars.ContextVar("basic_auth_used", default=False)


def log(message):
    print(f"oauth_server: {message}", file=sys.stderr, flush=True)


def is_loopback(url):
    parsed = urlparse(str(url))
    return parsed.scheme == "http" and parsed.hostname in LOOPBACK_HOSTS


class LoopbackClient(OAuthClientInformationFull):
    """A client record whose loopback redirect URIs match on any port (RFC 8252 §7.3).

    A pre-registered client (`--client`) holds no redirect URIs and takes any loopback one: the
    person configuring toolport cannot know its ephemeral callback port or path."""

    preregistered: bool = False

    def validate_redirect_uri(self, redirect_uri):
        if redirect_uri is None:
            return super().validate_redirect_uri(redirect_uri)
        if self.preregistered:
            if is_loopback(redirect_uri):
                return redirect_uri
            raise InvalidRedirectUriError(f"Redirect URI '{redirect_uri}' is not a loopback http URI")
        asked = urlparse(str(redirect_uri))
        for registered in self.redirect_uris or []:
            known = urlparse(str(registered))
            if str(registered) == str(redirect_uri):
                return redirect_uri
            if (
                is_loopback(registered)
                and is_loopback(redirect_uri)
                and (known.hostname, known.path, known.query) == (asked.hostname, asked.path, asked.query)
            ):
                return redirect_uri
        raise InvalidRedirectUriError(f"Redirect URI '{redirect_uri}' not registered for client")


    def validate_scope(self, requested_scope):
        # A step-up scope (--step-up) is there for any client to ask for, registered or not.
        if requested_scope is None:
            return super().validate_scope(requested_scope)
        asked = requested_scope.split(" ")
        if all(scope in STEP_UP_SCOPES for scope in asked):
            return asked
        own = [scope for scope in asked if scope not in STEP_UP_SCOPES]
        return [*super().validate_scope(" ".join(own)), *[s for s in asked if s in STEP_UP_SCOPES]]


# The scopes of --step-up, for `LoopbackClient.validate_scope`.
STEP_UP_SCOPES = []


async def read_body(receive):
    """The whole body of an ASGI request, read from `receive`."""
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


def replaying(body, receive):
    """A `receive` for the app behind a shim that read the request: `body` first, then
    whatever `receive` brings (the disconnect)."""
    replayed = False

    async def replay():
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class StepUpShim:
    """--step-up SCOPE: a `tools/call` of `write_note` with a token that lacks SCOPE is
    refused 403 insufficient_scope, naming the scopes it needs (SEP-835), before the SDK sees
    it; everything else passes through."""

    TOOL = "write_note"

    def __init__(self, app, provider, scope, resource_metadata):
        self.app = app
        self.provider = provider
        self.scope = scope
        self.resource_metadata = resource_metadata

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/mcp" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        body = await read_body(receive)
        replay = replaying(body, receive)

        if await self.refused(scope, body):
            log(f"refused a {self.TOOL} call: the token lacks {self.scope}")
            challenge = (
                f'Bearer error="insufficient_scope", scope="{SCOPE} {self.scope}", '
                f'resource_metadata="{self.resource_metadata}"'
            )
            response = JSONResponse(
                {"error": "insufficient_scope", "error_description": f"needs {self.scope}"},
                status_code=403,
                headers={"WWW-Authenticate": challenge},
            )
            return await response(scope, replay, send)
        await self.app(scope, replay, send)

    async def refused(self, scope, body):
        try:
            message = json.loads(body)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return False
        if (message.get("params") or {}).get("name") != self.TOOL:
            return False
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        bearer = headers.get("authorization", "")
        token = await self.provider.load_access_token(bearer[7:].strip()) if bearer[:7].lower() == "bearer " else None
        return token is None or self.scope not in token.scopes


class GrantAccessToken(AccessToken):
    grant: int


class GrantRefreshToken(RefreshToken):
    grant: int


class Provider:
    """The authorization server's state, in memory. One *grant* is what one authorization code
    was exchanged for: its current refresh token, every refresh token it rotated away from, and
    every access token it issued. Revoking a grant invalidates all of them.

    No method awaits between reading and changing this state, so under asyncio each token
    request is atomic: two refreshes presenting the same token cannot both win."""

    def __init__(self, issuer, token_seconds, issued_file):
        self.issuer = issuer
        self.token_seconds = token_seconds
        self.issued_file = issued_file
        self.clients = {}
        self.codes = {}
        self.used_codes = {}
        self.access = {}
        self.refresh = {}
        # grant id -> {"current": refresh token or None, "revoked": bool}
        self.grants = {}
        self.next_grant = 1

    def record(self, value):
        if self.issued_file and value:
            with open(self.issued_file, "a") as f:
                f.write(value + "\n")
                f.flush()

    def preregister(self, client_id, client_secret):
        self.clients[client_id] = LoopbackClient(
            client_id=client_id,
            client_secret=client_secret,
            client_secret_expires_at=0,
            token_endpoint_auth_method="client_secret_basic",
            grant_types=["authorization_code", "refresh_token", CLIENT_CREDENTIALS],
            response_types=["code"],
            scope=SCOPE,
            client_name="pre-registered",
            preregistered=True,
        )
        self.record(client_secret)
        log(f"pre-registered client {client_id}")

    # --- clients -------------------------------------------------------------------------

    async def get_client(self, client_id):
        client = self.clients.get(client_id)
        if client is not None and client.preregistered:
            method = "client_secret_basic" if basic_auth_used.get() else "client_secret_post"
            return client.model_copy(update={"token_endpoint_auth_method": method})
        return client

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = LoopbackClient.model_validate(client_info.model_dump())
        self.record(client_info.client_secret)
        log(
            f"registered client {client_info.client_id} ({client_info.token_endpoint_auth_method}, "
            f"redirect_uris={[str(u) for u in client_info.redirect_uris or []]})"
        )

    # --- authorization code ----------------------------------------------------------------

    async def authorize(self, client, params: AuthorizationParams):
        scopes = params.scopes or (client.scope.split() if client.scope else [SCOPE])
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=scopes,
            expires_at=time.time() + CODE_SECONDS,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=SUBJECT,
        )
        log(f"approved client {client.client_id} for {' '.join(scopes)} (resource {params.resource})")
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, iss=self.issuer)

    async def load_authorization_code(self, client, authorization_code):
        if authorization_code in self.used_codes:
            # RFC 6749 §4.1.2: a code used twice SHOULD revoke what it was exchanged for.
            self.revoke_grant(self.used_codes[authorization_code], "authorization code reused")
            return None
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client, authorization_code):
        del self.codes[authorization_code.code]
        grant = self.next_grant
        self.next_grant += 1
        self.grants[grant] = {"current": None, "revoked": False}
        self.used_codes[authorization_code.code] = grant
        log(f"grant {grant}: code exchanged by client {client.client_id}")
        return self.issue(grant, client.client_id, authorization_code.scopes, authorization_code.resource)

    # --- refresh ---------------------------------------------------------------------------

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        grant = self.grants[refresh_token.grant]
        if grant["revoked"]:
            log(f"grant {refresh_token.grant}: refresh refused, the grant is revoked")
            raise TokenError("invalid_grant", "refresh token revoked")
        if grant["current"] != refresh_token.token:
            self.revoke_grant(refresh_token.grant, "a rotated refresh token was presented again")
            raise TokenError("invalid_grant", "refresh token already used; every token of this grant is revoked")
        log(f"grant {refresh_token.grant}: refreshed")
        return self.issue(refresh_token.grant, client.client_id, scopes, refresh_token.resource)

    # --- client credentials ----------------------------------------------------------------

    def exchange_client_credentials(self, client, scopes, resource):
        """An access token for the client itself (RFC 6749 §4.4), so its subject is the
        client (RFC 9068 §2.2); no refresh token (§4.4.3): the client asks again instead.
        Each token is a grant of its own, so /revoke ends just that one."""
        grant = self.next_grant
        self.next_grant += 1
        self.grants[grant] = {"current": None, "revoked": False}
        log(f"grant {grant}: client_credentials token issued to {client.client_id} (resource {resource})")
        return self.issue(grant, client.client_id, scopes, resource, subject=client.client_id, rotating=False)

    def issue(self, grant, client_id, scopes, resource, subject=SUBJECT, rotating=True):
        """An access token, and with `rotating` the grant's next refresh token."""
        access = secrets.token_urlsafe(32)
        refresh = secrets.token_urlsafe(32) if rotating else None
        # Rounded down, and checked again in load_access_token against the exact time: a token
        # is never good for longer than --token-seconds.
        expires_at = int(time.time() + self.token_seconds)
        self.access[access] = GrantAccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=expires_at,
            resource=resource,
            subject=subject,
            claims={"iss": self.issuer},
            grant=grant,
        )
        if refresh:
            self.refresh[refresh] = GrantRefreshToken(
                token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject=subject, grant=grant
            )
            self.grants[grant]["current"] = refresh
        self.record(access)
        self.record(refresh)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.token_seconds,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    # --- access and revocation -------------------------------------------------------------

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found is None or self.grants[found.grant]["revoked"]:
            return None
        if found.expires_at is not None and time.time() >= found.expires_at:
            return None
        return found

    async def revoke_token(self, token):
        self.revoke_grant(token.grant, "revoked at /revoke")

    def revoke_grant(self, grant, why):
        if not self.grants[grant]["revoked"]:
            self.grants[grant]["revoked"] = True
            log(f"grant {grant}: revoked ({why})")


class TokenEndpointShim:
    """What real authorization servers accept and the SDK's token and revocation endpoints
    do not:

    - RFC 6749 §2.3.1: with HTTP Basic client authentication the client_id is in the header,
      and a client may leave it out of the body (the Rust `oauth2` crate does); the SDK's
      handlers need it in the form, so it is copied there from the header;
    - RFC 7009: a revocation request need not carry `client_secret` (a public client has
      none), but the SDK's request model requires the key, so a missing one is sent empty;
    - a pre-registered client may authenticate either way (see `basic_auth_used`);
    - the client_credentials grant, which the SDK's token handler does not know (its request
      types are a closed union): answered here, with the SDK's client authentication and its
      response shapes, and the token from `Provider.exchange_client_credentials`."""

    PATHS = ("/token", "/revoke")

    def __init__(self, app, provider, workload=None):
        self.app = app
        self.provider = provider
        self.workload = workload

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] not in self.PATHS or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        authorization = headers.get("authorization", "")
        basic = authorization.lower().startswith("basic ")
        body = await read_body(receive)
        form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        added = {}
        if basic and "client_id" not in form:
            try:
                decoded = base64.b64decode(authorization[6:].strip()).decode("utf-8")
                added["client_id"] = unquote(decoded.split(":", 1)[0])
            except (ValueError, UnicodeDecodeError):
                pass  # the SDK answers a broken header itself
        if scope["path"] == "/revoke" and "client_secret" not in form:
            added["client_secret"] = ""
        if added:
            body += (b"&" if body else b"") + urlencode(added).encode()
        scope = dict(scope)
        scope["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"] + [
            (b"content-length", str(len(body)).encode())
        ]
        replay = replaying(body, receive)

        reset = basic_auth_used.set(basic)
        try:
            if scope["path"] == "/token" and form.get("grant_type") == CLIENT_CREDENTIALS:
                response = await self.client_credentials(Request(scope, replay), {**form, **added})
                await response(scope, replay, send)
            elif scope["path"] == "/token" and form.get("grant_type") == JWT_BEARER and self.workload:
                await self.jwt_bearer(form)(scope, replay, send)
            else:
                await self.app(scope, replay, send)
        finally:
            basic_auth_used.reset(reset)

    async def client_credentials(self, request, form):
        """A client_credentials token request, checked as the SDK checks the grants it knows:
        the client authenticates (401 invalid_client otherwise), may use the grant, names the
        resource, and asks for no scope beyond its own."""
        headers = {"Cache-Control": "no-store", "Pragma": "no-cache"}

        def error(status, code, description):
            body = TokenErrorResponse(error=code, error_description=description)
            return PydanticJSONResponse(content=body, status_code=status, headers=headers)

        try:
            client = await ClientAuthenticator(self.provider).authenticate_request(request)
        except AuthenticationError as e:
            return error(401, "invalid_client", e.message)
        if not client.preregistered:
            return error(400, "unauthorized_client", "the client_credentials grant is for a pre-registered client")
        resource = form.get("resource")
        if not resource:
            # The MCP spec's MUST, as for the other grants.
            return error(400, "invalid_target", "the resource parameter (RFC 8707) is required")
        allowed = client.scope.split() if client.scope else [SCOPE]
        asked = form.get("scope", "").split()
        for s in asked:
            if s not in allowed:
                return error(400, "invalid_scope", f"scope {s} is not granted to this client")
        tokens = self.provider.exchange_client_credentials(client, asked or allowed, str(resource))
        return PydanticJSONResponse(content=tokens, status_code=200, headers=headers)


    def jwt_bearer(self, form):
        """A JWT bearer token request (RFC 7523 §2.1): the workload's assertion is its whole
        credential (no client authentication), so it must be --workload's exactly; the token
        is the workload's own (subject and client: the request's client_id, else `workload`)."""
        headers = {"Cache-Control": "no-store", "Pragma": "no-cache"}
        log("jwt_bearer assertion received")

        def error(code, description):
            body = TokenErrorResponse(error=code, error_description=description)
            return PydanticJSONResponse(content=body, status_code=400, headers=headers)

        if form.get("assertion") != self.workload:
            return error("invalid_grant", "the assertion is not the workload's token")
        resource = form.get("resource")
        if not resource:
            return error("invalid_target", "the resource parameter (RFC 8707) is required")
        asked = form.get("scope", "").split()
        for s in asked:
            if s != SCOPE:
                return error("invalid_scope", f"scope {s} is not granted to the workload")
        client_id = form.get("client_id") or "workload"
        grant = self.provider.next_grant
        self.provider.next_grant += 1
        self.provider.grants[grant] = {"current": None, "revoked": False}
        log(f"grant {grant}: jwt_bearer token issued to {client_id} (resource {resource})")
        tokens = self.provider.issue(grant, client_id, [SCOPE], str(resource), subject=client_id, rotating=False)
        return PydanticJSONResponse(content=tokens, status_code=200, headers=headers)


def advertise_what_the_shims_add(app, settings, authorization_endpoint=None, token_endpoint=None, workload=False):
    """The SDK's metadata leaves out what this file adds to it, and a real server would say:
    `authorization_response_iss_parameter_supported` (this server sends `iss`, RFC 9207) and
    the client_credentials grant in `grant_types_supported`. Its
    `token_endpoint_auth_methods_supported` already names client_secret_post and
    client_secret_basic, which the shim accepts for that grant too."""
    metadata = auth_routes.build_metadata(
        settings.issuer_url,
        settings.service_documentation_url,
        settings.client_registration_options,
        settings.revocation_options,
    )
    metadata.authorization_response_iss_parameter_supported = True
    metadata.grant_types_supported = [
        *(metadata.grant_types_supported or []),
        CLIENT_CREDENTIALS,
        *([JWT_BEARER] if workload else []),
    ]
    if authorization_endpoint:
        # A lying server (--authorization-endpoint): any text, unvalidated, as an attacker sends it.
        metadata = metadata.model_copy(update={"authorization_endpoint": authorization_endpoint})
    if token_endpoint:
        # Likewise (--token-endpoint): where a server would have a client send its grant.
        metadata = metadata.model_copy(update={"token_endpoint": token_endpoint})
    path = "/.well-known/oauth-authorization-server"
    for i, route in enumerate(app.router.routes):
        if isinstance(route, Route) and route.path == path:
            app.router.routes[i] = Route(
                path,
                endpoint=auth_routes.cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"]),
                methods=["GET", "OPTIONS"],
            )
            return
    raise RuntimeError(f"the SDK no longer serves {path}")


def build(issuer, provider, authorization_endpoint=None, step_up=None, token_endpoint=None, workload=None):
    settings = AuthSettings(
        # Strings, not AnyHttpUrl: AuthSettings then keeps the issuer without a trailing slash,
        # and RFC 8414/9207 compare issuers as exact strings.
        issuer_url=issuer,
        resource_server_url=f"{issuer}/mcp",
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=[SCOPE, *([step_up] if step_up else [])], default_scopes=[SCOPE]
        ),
        revocation_options=RevocationOptions(enabled=True),
        required_scopes=[SCOPE],
        validate_token_resource=True,
    )
    server = MCPServer(name="oauth-fixture", auth_server_provider=provider, auth=settings)

    @server.tool(description="The client id and scopes of the caller's access token")
    def whoami() -> str:
        token = get_access_token()
        if token is None:
            return "client_id=(none) scopes="
        return f"client_id={token.client_id} scopes={' '.join(token.scopes)}"

    @server.tool(description="Returns its text")
    def echo(text: str) -> str:
        return text

    if step_up:

        @server.tool(description="Keeps a note (needs the step-up scope)")
        def write_note(text: str) -> str:
            return f"noted: {text}"

    app = server.streamable_http_app()
    advertise_what_the_shims_add(app, settings, authorization_endpoint, token_endpoint, bool(workload))
    app = TokenEndpointShim(app, provider, workload)
    if step_up:
        STEP_UP_SCOPES.append(step_up)
        app = StepUpShim(app, provider, step_up, f"{issuer}/.well-known/oauth-protected-resource/mcp")
    return app


def client_arg(value):
    client_id, sep, secret = value.partition(":")
    if not sep or not client_id or not secret:
        raise argparse.ArgumentTypeError("expected ID:SECRET")
    return client_id, secret


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="loopback port (0: ephemeral)")
    parser.add_argument("--token-seconds", type=int, default=3600, help="access token lifetime")
    parser.add_argument("--issued", metavar="FILE", help="append every token and secret issued here")
    parser.add_argument(
        "--client", type=client_arg, action="append", default=[], metavar="ID:SECRET", help="pre-register a client"
    )
    parser.add_argument(
        "--authorization-endpoint", metavar="URL", help="advertise this as the authorization endpoint (a lie)"
    )
    parser.add_argument(
        "--token-endpoint", metavar="URL", help="advertise this as the token endpoint (a lie)"
    )
    parser.add_argument("--step-up", metavar="SCOPE", help="write_note needs SCOPE (403 insufficient_scope)")
    parser.add_argument("--workload", metavar="JWT", help="accept the JWT bearer grant for this assertion")
    args = parser.parse_args()

    # Bound before the app is built: the issuer and resource URLs carry the port.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    issuer = f"http://127.0.0.1:{port}"

    provider = Provider(issuer, args.token_seconds, args.issued)
    for client_id, secret in args.client:
        provider.preregister(client_id, secret)
    app = build(issuer, provider, args.authorization_endpoint, args.step_up, args.token_endpoint, args.workload)

    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            serving.result()
            raise SystemExit("oauth_server: uvicorn stopped before it started")
        await asyncio.sleep(0.02)
    print(f"READY {issuer}/mcp", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(main())
