#!/usr/bin/env python3
"""A test OpenID/OAuth issuer for `serve --http --auth oidc` (issue 30's team tests).

Run it with the SDK venv's python (target/clients/venv, tests/peers/install_clients.sh):

    issuer.py [--port 0] [--user SUB] [--group G]...

Prints exactly one line, `READY http://127.0.0.1:PORT` (the issuer), on stdout once it accepts
connections, then serves until killed. Everything else goes to stderr.

What it serves:
  GET  /.well-known/openid-configuration        OpenID discovery: issuer, jwks_uri, endpoints
  GET  /.well-known/oauth-authorization-server  RFC 8414, the same document
  GET  /jwks            the public keys (RSA 2048, RS256, each with its kid); logged on stderr
                        as `jwks served`, so a test can count fetches
  POST /mint            JSON {"sub", "groups", "aud", "client_id", "expires_in" (seconds, may
                        be negative: already expired), "alg": "RS256"|"none", "kid",
                        "forged": true (signed by a key nobody publishes, under the current
                        kid), "claims": {...} (merged last, e.g. another "iss")} -> {"token"}
  POST /rotate          a new signing key (new kid), published beside the old ones -> {"kid"}
  POST /register, GET /authorize, POST /token, POST /revoke
                        the Python SDK's authorization server handlers with
                        tests/auth/oauth_server.py's provider (dynamic registration, PKCE S256,
                        /authorize approving at once with a 302 carrying code and state), except
                        that access tokens are JWTs from the current key: `aud` the `resource`
                        parameter (RFC 8707), `sub` --user, `groups` the --group list,
                        `client_id` the registered client, `scope`.

Keys are made at start and live in memory only.
"""

import argparse
import asyncio
import json
import socket
import sys
import time
import uuid
from pathlib import Path

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp.server.auth import routes as auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions

# The SDK-based provider (clients, codes, grants) of the sign-in tests' fixture.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "auth"))
import oauth_server  # noqa: E402

# Access tokens from /token live this long; /mint says its own.
TOKEN_SECONDS = 3600


def log(message):
    print(f"issuer: {message}", file=sys.stderr, flush=True)


class Keys:
    """The signing keys, oldest first; the last one signs."""

    def __init__(self):
        self.keys = []
        self.rotate()

    def rotate(self):
        kid = uuid.uuid4().hex[:12]
        self.keys.append((kid, rsa.generate_private_key(public_exponent=65537, key_size=2048)))
        log(f"signing key {kid}")
        return kid

    def jwks(self):
        found = []
        for kid, key in self.keys:
            jwk = jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
            found.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return {"keys": found}

    def sign(self, claims, alg="RS256", kid=None, forged=False):
        current_kid, key = self.keys[-1]
        if alg == "none":
            return jwt.encode(claims, None, algorithm="none")
        if forged:
            key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        named = dict(self.keys).get(kid) if kid else None
        if named is not None and not forged:
            key = named
        return jwt.encode(claims, key, algorithm=alg, headers={"kid": kid or current_kid})


class JwtProvider(oauth_server.Provider):
    """oauth_server.py's provider, whose access tokens are JWTs a resource server checks itself."""

    def __init__(self, issuer, keys, user, groups):
        super().__init__(issuer, TOKEN_SECONDS, None)
        self.keys = keys
        self.user = user
        self.groups = groups

    def issue(self, grant, client_id, scopes, resource, subject=None, rotating=True):
        tokens = super().issue(grant, client_id, scopes, resource, rotating=rotating)
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": subject or self.user,
            "aud": str(resource) if resource else self.issuer,
            "iat": now,
            "nbf": now,
            "exp": now + TOKEN_SECONDS,
            "client_id": client_id,
            "scope": " ".join(scopes),
            "groups": self.groups,
        }
        log(f"token issued to {client_id} for {claims['sub']} (aud {claims['aud']})")
        return tokens.model_copy(update={"access_token": self.keys.sign(claims)})


def metadata(issuer):
    """The RFC 8414 document the SDK builds, plus what OpenID discovery adds."""
    built = auth_routes.build_metadata(
        issuer,
        None,
        ClientRegistrationOptions(enabled=True, valid_scopes=[oauth_server.SCOPE], default_scopes=[oauth_server.SCOPE]),
        RevocationOptions(enabled=True),
    )
    document = json.loads(built.model_dump_json(exclude_none=True))
    document.update(
        issuer=issuer,
        jwks_uri=f"{issuer}/jwks",
        subject_types_supported=["public"],
        id_token_signing_alg_values_supported=["RS256"],
    )
    return document


def build(issuer, keys, user, groups):
    provider = JwtProvider(issuer, keys, user, groups)
    document = metadata(issuer)

    async def discovery(request: Request):
        return JSONResponse(document)

    async def jwks(request: Request):
        served = keys.jwks()
        log(f"jwks served ({' '.join(k['kid'] for k in served['keys'])})")
        return JSONResponse(served)

    async def mint(request: Request):
        try:
            asked = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, status_code=400)
        now = int(time.time())
        claims = {
            "iss": issuer,
            "sub": asked.get("sub", user),
            "aud": asked.get("aud", issuer),
            "iat": now,
            "nbf": now,
            "exp": now + int(asked.get("expires_in", 300)),
        }
        for name in ("groups", "client_id"):
            if name in asked:
                claims[name] = asked[name]
        claims.update(asked.get("claims") or {})
        token = keys.sign(claims, asked.get("alg", "RS256"), asked.get("kid"), bool(asked.get("forged")))
        log(f"minted a token for {claims['sub']} (aud {claims['aud']}, alg {asked.get('alg', 'RS256')})")
        return JSONResponse({"token": token})

    async def rotate(request: Request):
        return JSONResponse({"kid": keys.rotate()})

    sdk = auth_routes.create_auth_routes(
        provider,
        AnyHttpUrl(issuer),  # the SDK's own metadata route, which carries it, is replaced below
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=[oauth_server.SCOPE], default_scopes=[oauth_server.SCOPE]
        ),
        revocation_options=RevocationOptions(enabled=True),
    )
    well_known = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")
    routes = [
        *(Route(path, discovery, methods=["GET"]) for path in well_known),
        Route("/jwks", jwks, methods=["GET"]),
        Route("/mint", mint, methods=["POST"]),
        Route("/rotate", rotate, methods=["POST"]),
        *(route for route in sdk if getattr(route, "path", None) not in well_known),
    ]
    return Starlette(routes=routes)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="loopback port (0: ephemeral)")
    parser.add_argument("--user", default=oauth_server.SUBJECT, help="the `sub` of tokens from /token")
    parser.add_argument("--group", action="append", default=[], help="a `groups` entry of tokens from /token")
    args = parser.parse_args()

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    issuer = f"http://127.0.0.1:{sock.getsockname()[1]}"

    app = build(issuer, Keys(), args.user, args.group)
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            serving.result()
            raise SystemExit("issuer: uvicorn stopped before it started")
        await asyncio.sleep(0.02)
    print(f"READY {issuer}", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(main())
