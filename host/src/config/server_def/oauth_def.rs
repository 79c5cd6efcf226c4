//! How toolport signs in to a remote server, as its definition's `oauth: {…}` says: the grant
//! and the client, and for the enterprise grant the company's identity provider. Secrets are
//! kept as written (`${VAR}` is expanded when connecting) and never shown by `Debug`.

use crate::config::model::MASK;

/// The OAuth grant a server's definition asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Grant {
    /// A person signs in in a browser (`toolport mcp login`), authorization code + PKCE.
    #[default]
    AuthorizationCode,
    /// Machine to machine: the client's own secret or key, no person, no login step.
    ClientCredentials,
    /// Workload identity federation (RFC 7523, SEP-1933): a token the platform issued to this
    /// workload (`assertion` or `assertionFile`) is exchanged for an access token.
    JwtBearer,
    /// Enterprise-managed authorization (SEP-990): the person's ID token from the company's
    /// identity provider (`idp`) is exchanged there for an ID-JAG, and that at the server's
    /// authorization server for an access token. No consent screen, no login step.
    Enterprise,
}

impl Grant {
    /// The value as the definition spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AuthorizationCode => "authorization_code",
            Self::ClientCredentials => "client_credentials",
            Self::JwtBearer => "jwt_bearer",
            Self::Enterprise => "enterprise",
        }
    }

    /// The grant a definition's spelling names.
    pub(in crate::config) fn parse(text: &str) -> Option<Self> {
        [Self::AuthorizationCode, Self::ClientCredentials, Self::JwtBearer, Self::Enterprise]
            .into_iter()
            .find(|grant| grant.as_str() == text)
    }
}

/// `oauth: { clientId, clientSecret, clientMetadataUrl, scopes, callbackPort, grant,
/// privateKey, privateKeyJwt, assertion, assertionFile, issuer, tokenEndpoint, idp }`, values as written (`${VAR}` is expanded when connecting, so a
/// secret need not sit in the store). Debug output shows secrets as [`MASK`].
#[derive(Clone, PartialEq, Eq, Default)]
pub struct OAuthDef {
    /// A client registered with the authorization server beforehand (else a client ID
    /// metadata document, else dynamic registration).
    pub client_id: Option<String>,
    /// The pre-registered client's secret (`client_secret_basic` / `_post`, or the
    /// client-credentials grant's secret).
    pub client_secret: Option<String>,
    /// An HTTPS URL of this client's metadata document (SEP-991), used as its client id where
    /// the authorization server supports that.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for, overriding the server's challenge and `scopes_supported`.
    pub scopes: Option<Vec<String>>,
    /// A fixed port for the loopback redirect (for clients registered with one redirect URI).
    pub callback_port: Option<u16>,
    /// Which grant to use.
    pub grant: Grant,
    /// PEM text of the key that signs `private_key_jwt` assertions (client credentials).
    pub private_key: Option<String>,
    /// The signing algorithm for `private_key_jwt` (`RS256`, `ES256`, …).
    pub private_key_jwt: Option<String>,
    /// The workload's JWT for the `jwt_bearer` grant (usually `${VAR}`).
    pub assertion: Option<String>,
    /// A file holding the workload's JWT, read on every connect (platforms rotate it there:
    /// a Kubernetes projected service-account token, a CI job's OIDC token).
    pub assertion_file: Option<String>,
    /// The authorization server the `jwt_bearer` grant trusts with the workload's token, its
    /// issuer identifier as its metadata says it (required for that grant, read as written:
    /// the server must not choose where the token goes, as it does not choose the enterprise
    /// grant's IdP).
    pub issuer: Option<String>,
    /// That authorization server's token endpoint, for one whose metadata names an endpoint on
    /// another origin; else the endpoint is taken from the issuer's metadata, on its origin.
    pub token_endpoint: Option<String>,
    /// The enterprise identity provider of the `enterprise` grant.
    pub idp: Option<IdpDef>,
}

/// `oauth.idp: { issuer, tokenEndpoint, clientId, clientSecret, idToken, idTokenFile }`: the
/// company's identity provider, approved by whoever wrote the definition (it is not
/// discovered from the server, which must not choose where the person's ID token goes).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct IdpDef {
    /// The IdP's issuer identifier, exactly as its metadata says.
    pub issuer: Option<String>,
    /// Its token endpoint; discovered from the issuer's metadata when absent.
    pub token_endpoint: Option<String>,
    /// toolport's client id at the IdP.
    pub client_id: Option<String>,
    /// That client's secret (HTTP Basic), if it is confidential.
    pub client_secret: Option<String>,
    /// The person's OIDC ID token from the IdP (usually `${VAR}`, set by the company's SSO tool).
    pub id_token: Option<String>,
    /// A file holding that ID token, read on every connect.
    pub id_token_file: Option<String>,
}

impl std::fmt::Debug for IdpDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let masked = |v: &Option<String>| v.as_ref().map(|_| MASK);
        f.debug_struct("IdpDef")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &masked(&self.client_secret))
            .field("id_token", &masked(&self.id_token))
            .field("id_token_file", &self.id_token_file)
            .finish()
    }
}

impl std::fmt::Debug for OAuthDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let masked = |v: &Option<String>| v.as_ref().map(|_| MASK);
        f.debug_struct("OAuthDef")
            .field("client_id", &self.client_id)
            .field("client_secret", &masked(&self.client_secret))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("callback_port", &self.callback_port)
            .field("grant", &self.grant)
            .field("private_key", &masked(&self.private_key))
            .field("private_key_jwt", &self.private_key_jwt)
            .field("assertion", &masked(&self.assertion))
            .field("assertion_file", &self.assertion_file)
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("idp", &self.idp)
            .finish()
    }
}
