//! One TLS configuration for every HTTP client toolport builds for a server (its transport's
//! client, and the sign-in's and refreshes' `TokenClient`): reqwest makes a new certificate
//! verifier for each client it builds, and that verifier reads and parses the system's whole
//! root-certificate bundle (`rustls-platform-verifier` over `rustls-native-certs`), a few
//! milliseconds each time; a signed-in connect built three clients. Here the configuration is
//! made once per process, as reqwest would make it (its crypto provider, the platform
//! verifier, every TLS version, HTTP/1.1 by ALPN), and each client gets a copy: the roots are
//! shared, while each client keeps its own resolver (the address rule), redirects, timeouts
//! and connection pool.
//!
//! Certificates added to the system while toolport runs are seen by the next process, as
//! before for every client of a connection.

use std::sync::{Arc, OnceLock};

static CONFIG: OnceLock<Option<rustls::ClientConfig>> = OnceLock::new();

/// A `reqwest::Client` builder on the shared TLS configuration. When that configuration cannot
/// be made (no root certificates, say) it is reqwest's own builder, whose `build` then fails
/// with reqwest's error, as before.
pub(crate) fn client_builder() -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder();
    match CONFIG.get_or_init(config) {
        Some(config) => builder.tls_backend_preconfigured(config.clone()),
        None => builder,
    }
}

/// What reqwest 0.13 builds for a client with default TLS settings (`async_impl/client.rs`).
fn config() -> Option<rustls::ClientConfig> {
    // reqwest's choice: an installed default provider, else aws-lc-rs.
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
    let verifier = match rustls_platform_verifier::Verifier::new(provider.clone()) {
        Ok(verifier) => verifier,
        Err(e) => {
            tracing::debug!("no shared TLS configuration, each client loads its own: {e}");
            return None;
        }
    };
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(rustls::ALL_VERSIONS)
        .map_err(|e| tracing::debug!("no shared TLS configuration: {e}"))
        .ok()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    // reqwest is built without HTTP/2 here, so it offers only HTTP/1.1.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Some(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared configuration is made (the machine has root certificates) and reqwest
    /// accepts it as its own kind of backend.
    #[test]
    fn clients_build_on_the_shared_configuration() {
        assert!(CONFIG.get_or_init(config).is_some(), "no root certificates on this machine?");
        client_builder().build().unwrap_or_else(|e| panic!("{e}"));
        client_builder().build().unwrap_or_else(|e| panic!("{e}"));
    }
}
