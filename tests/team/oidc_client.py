#!/usr/bin/env python3
"""The client of `serve --http --auth oidc` (tests/it/team/oidc.rs): the official Python SDK's
default `mcp.Client` over streamable HTTP, calling one tool. Prints one JSON object (what it
saw: the result's texts, the protocol, or the error), never a verdict: the tests judge.

    oidc_client.py --url URL --token JWT [--session] [--tool echo --args JSON]
        the token sent as `Authorization: Bearer` by the SDK's httpx client; with --session
        through the low-level `ClientSession` and its `initialize` (a 2025-11-25 session)
    oidc_client.py --url URL --oauth [--tool echo --args JSON]
        the SDK's OAuth client (`OAuthClientProvider`): discovers the protected-resource
        metadata from the 401, registers at the issuer, signs in (the "browser" here takes the
        /authorize redirect without following it, as tests/auth/browser.sh does) and retries
"""

import argparse
import json
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from outcome import print_outcome

REDIRECT_URI = "http://127.0.0.1:9/callback"


class Memory:
    """The SDK's TokenStorage, in memory: one sign-in per run."""

    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


def oauth(url, seen):
    """An OAuthClientProvider whose browser GETs the authorization URL and keeps the redirect's
    code and state for the callback (the redirect URI itself is never reached)."""
    redirected = {}

    async def browse(authorization_url):
        seen["authorize"] = urlparse(authorization_url).path
        async with httpx2.AsyncClient() as browser:
            answer = await browser.get(authorization_url)
        query = parse_qs(urlparse(answer.headers.get("location", "")).query)
        redirected.update({k: v[0] for k, v in query.items()})

    async def callback():
        return AuthorizationCodeResult(code=redirected["code"], state=redirected.get("state"), iss=redirected.get("iss"))

    metadata = OAuthClientMetadata(
        client_name="oidc-test",
        redirect_uris=[REDIRECT_URI],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(url, metadata, Memory(), browse, callback)


async def run(args):
    seen = {}
    if args.oauth:
        http = create_mcp_http_client(auth=oauth(args.url, seen))
    else:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {args.token}"})
    async with http:
        if args.session:
            async with streamable_http_client(args.url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    initialized = await session.initialize()
                    result = await session.call_tool(args.tool, json.loads(args.args))
                    seen["protocol"] = initialized.protocol_version
        else:
            async with Client(streamable_http_client(args.url, http_client=http)) as client:
                result = await client.call_tool(args.tool, json.loads(args.args))
                seen["protocol"] = client.protocol_version
        seen["texts"] = [c.text for c in result.content if getattr(c, "type", None) == "text"]
        seen["is_error"] = bool(result.is_error)
    return seen


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--token", default="")
    p.add_argument("--oauth", action="store_true")
    p.add_argument("--session", action="store_true", help="a 2025-11-25 ClientSession")
    p.add_argument("--tool", default="echo")
    p.add_argument("--args", default='{"message": "hello"}')
    p.add_argument("--timeout", type=float, default=60.0)
    args = p.parse_args()

    print_outcome(run, args)


if __name__ == "__main__":
    main()
