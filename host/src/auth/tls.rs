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
//! The certificates themselves are read at the first TLS handshake, not before: a process that
//! only reaches plain-http servers (a loopback server, a test fixture) never reads them.
//! Certificates added to the system while toolport runs are seen by the next process.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

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

/// What reqwest 0.13 builds for a client with default TLS settings (`async_impl/client.rs`),
/// but with the platform verifier made at the first handshake.
fn config() -> Option<rustls::ClientConfig> {
    // reqwest's choice: an installed default provider, else aws-lc-rs.
    let provider = CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
    let verifier = Arc::new(LazyVerifier { provider: provider.clone(), platform: OnceLock::new() });
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(rustls::ALL_VERSIONS)
        .map_err(|e| tracing::debug!("no shared TLS configuration, each client makes its own: {e}"))
        .ok()?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    // reqwest is built without HTTP/2 here, so it offers only HTTP/1.1.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Some(config)
}

/// `rustls-platform-verifier`'s verifier (the system's root certificates, as reqwest uses),
/// made when a certificate first needs checking. Until then only the provider's signature
/// schemes are needed (they go into the handshake's first message).
#[derive(Debug)]
struct LazyVerifier {
    provider: Arc<CryptoProvider>,
    platform: OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl LazyVerifier {
    /// The platform verifier; without root certificates, every handshake fails saying so (as
    /// reqwest's client build did before).
    fn platform(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        self.platform
            .get_or_init(|| rustls_platform_verifier::Verifier::new(self.provider.clone()))
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl ServerCertVerifier for LazyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.platform()?.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    // The platform verifier checks handshake signatures with the provider's algorithms
    // (WebPKI's verifier under it): the same functions, without loading any certificate.
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// reqwest accepts the shared configuration as its own kind of backend, and building
    /// clients on it reads no certificate yet.
    #[test]
    fn clients_build_on_the_shared_configuration_without_reading_certificates() {
        let config = CONFIG.get_or_init(config).as_ref().unwrap_or_else(|| panic!("no shared configuration"));
        client_builder().build().unwrap_or_else(|e| panic!("{e}"));
        client_builder().build().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
        let verifier = LazyVerifier {
            provider: Arc::new(rustls::crypto::aws_lc_rs::default_provider()),
            platform: OnceLock::new(),
        };
        assert!(!verifier.supported_verify_schemes().is_empty());
        assert!(verifier.platform.get().is_none(), "the schemes need no certificate");
        assert!(verifier.platform().is_ok(), "no root certificates on this machine?");
    }
}
