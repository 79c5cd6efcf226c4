//! The span of a sign-in, when traces are exported: which server, which grant, how it ended.
//! Never a token, a code, a secret or a URL: only the server's configured name and the grant's
//! word (`authorization_code`, `client_credentials`, `enterprise`, `jwt_bearer`).

use tracing::Instrument as _;

/// `work` (one sign-in to `server` by `grant`) inside an INTERNAL span `sign-in <grant>`.
pub(crate) async fn traced<T>(
    server: &str,
    grant: &'static str,
    work: impl Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    if !crate::observe::traces::on() {
        return work.await;
    }
    let span = tracing::info_span!(
        target: "toolport::auth",
        "sign-in",
        otel.name = %format!("sign-in {grant}"),
        otel.kind = "internal",
        otel.status_code = tracing::field::Empty,
        toolport.server = server,
        toolport.sign_in.grant = grant,
        error.type = tracing::field::Empty,
    );
    let outcome = work.instrument(span.clone()).await;
    if outcome.is_err() {
        // The error's words may quote an endpoint or a server's answer: only that it failed.
        span.record("error.type", "sign_in_failed");
        span.record("otel.status_code", "ERROR");
    }
    outcome
}
