//! HTTPS: rustls (0.23, the `ring` provider) for every call to an `https://` endpoint — the
//! reqwest calls (control calls, discovery, `/metrics`, non-streamed completions, webhooks) and
//! the streamed hot path ([`crate::h1`]) alike, from one [`Tls`] built once per command.
//!
//! - Trust: the system's roots (`rustls-native-certs`: `SSL_CERT_FILE`/`SSL_CERT_DIR`, else the
//!   distribution's bundle, e.g. Debian's /etc/ssl/certs), plus `--ca-cert FILE` (PEM; a private
//!   CA or a self-signed certificate).
//! - `--insecure` accepts any certificate (the handshake's signatures are still checked): an
//!   explicit choice, recorded in the artifact ([`Tls::insecure`]).
//! - A certificate that is not trusted is refused with the fix named ([`refusal`]).
//! - [`peer_certificate`]: one handshake to read what the endpoint presents (subject, issuer,
//!   expiry), for the endpoint facts.
//!
//! ALPN offers `http/1.1` only: every transport here speaks HTTP/1.1.

mod cert;
mod insecure;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rustls::ClientConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use url::Url;

pub use cert::{CertError, CertSummary};

/// What the operator asked of TLS (`--ca-cert FILE`, `--insecure`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    pub ca_cert: Option<PathBuf>,
    pub insecure: bool,
}

/// The TLS set-up could not be built.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum TlsError {
    #[error(
        "--ca-cert {path}: {message}; give a PEM file with the CA's certificate (BEGIN CERTIFICATE)"
    )]
    CaCert { path: String, message: String },
    #[error("TLS: {0}")]
    Config(String),
}

/// The client side of TLS, shared by every client of a command (cheap to clone).
#[derive(Clone)]
pub struct Tls {
    /// An error only where rustls' builder refused the provider's protocol versions (never
    /// seen with `ring`); every connection then fails with it.
    config: Result<Arc<ClientConfig>, TlsError>,
    options: TlsOptions,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("ca_cert", &self.options.ca_cert)
            .field("insecure", &self.options.insecure)
            .finish()
    }
}

impl PartialEq for Tls {
    fn eq(&self, other: &Self) -> bool {
        self.options == other.options
    }
}

impl Default for Tls {
    /// The system's roots, loaded once per process.
    fn default() -> Self {
        static SYSTEM: OnceLock<Result<Arc<ClientConfig>, TlsError>> = OnceLock::new();
        let config = SYSTEM
            .get_or_init(|| config_with(system_roots(), None).map(Arc::new))
            .clone();
        Self {
            config,
            options: TlsOptions::default(),
        }
    }
}

impl Tls {
    /// The TLS of `opts`: the system's roots plus `--ca-cert`, or `--insecure`.
    pub fn new(opts: &TlsOptions) -> Result<Self, TlsError> {
        if !opts.insecure && opts.ca_cert.is_none() {
            return Ok(Self::default());
        }
        let mut roots = system_roots();
        if let Some(path) = &opts.ca_cert {
            let added = read_pem(path)?;
            let (ok, _) = roots.add_parsable_certificates(added);
            if ok == 0 {
                return Err(TlsError::CaCert {
                    path: path.display().to_string(),
                    message: "no certificate in it could be used as a trust anchor".into(),
                });
            }
        }
        let verifier = opts.insecure.then(insecure::AcceptAny::new);
        Ok(Self {
            config: Ok(Arc::new(config_with(roots, verifier)?)),
            options: opts.clone(),
        })
    }

    /// Trusting only `ca` (DER): the loopback calibration target's throwaway CA.
    pub fn trusting(ca: CertificateDer<'static>) -> Result<Self, TlsError> {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(ca)
            .map_err(|e| TlsError::Config(format!("the calibration CA: {e}")))?;
        Ok(Self {
            config: Ok(Arc::new(config_with(roots, None)?)),
            options: TlsOptions::default(),
        })
    }

    /// `--insecure`: certificates are not verified.
    pub fn insecure(&self) -> bool {
        self.options.insecure
    }

    /// `--ca-cert FILE`, as given.
    pub fn ca_cert(&self) -> Option<&Path> {
        self.options.ca_cert.as_deref()
    }

    pub fn options(&self) -> &TlsOptions {
        &self.options
    }

    /// The rustls configuration (for reqwest's builder).
    pub(crate) fn config(&self) -> Result<Arc<ClientConfig>, TlsError> {
        self.config.clone()
    }

    /// A TLS session over `tcp` to `url`'s host, within the caller's deadline.
    pub(crate) async fn connect(
        &self,
        url: &Url,
        tcp: TcpStream,
    ) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
        let name = server_name(url)?;
        let config = self
            .config
            .clone()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        tokio_rustls::TlsConnector::from(config)
            .connect(name, tcp)
            .await
    }
}

/// Install ring as the process's rustls provider, for code that builds a reqwest client of its
/// own: reqwest is built with `rustls-no-provider` (this crate configures its own clients'
/// TLS), and without a process provider its builder panics. A second call is a no-op.
pub fn install_process_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

fn config_with(
    roots: rustls::RootCertStore,
    verifier: Option<Arc<insecure::AcceptAny>>,
) -> Result<ClientConfig, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let mut config = match verifier {
        Some(v) => builder
            .dangerous()
            .with_custom_certificate_verifier(v)
            .with_no_client_auth(),
        None => builder.with_root_certificates(roots).with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The system's trust anchors; those that do not parse are skipped (a bundle with one odd
/// entry still trusts the rest).
fn system_roots() -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(found.certs);
    roots
}

fn read_pem(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bad = |message: String| TlsError::CaCert {
        path: path.display().to_string(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<_, _>>()
        .map_err(|e| bad(format!("not PEM: {e}")))?;
    if certs.is_empty() {
        return Err(bad("no certificate in it".into()));
    }
    Ok(certs)
}

fn server_name(url: &Url) -> std::io::Result<ServerName<'static>> {
    let host = match url.host() {
        Some(url::Host::Ipv4(a)) => {
            return Ok(ServerName::IpAddress(std::net::IpAddr::V4(a).into()));
        }
        Some(url::Host::Ipv6(a)) => {
            return Ok(ServerName::IpAddress(std::net::IpAddr::V6(a).into()));
        }
        Some(url::Host::Domain(d)) => d.to_string(),
        None => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the endpoint URL has no host",
            ));
        }
    };
    ServerName::try_from(host)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))
}

/// What to do about a TLS failure, appended to its message.
pub const FIX: &str = "give the CA that signed the endpoint's certificate with --ca-cert FILE, or skip verification with --insecure (recorded in the artifact)";

/// A TLS failure's message, with the fix when the certificate was the problem (untrusted,
/// expired, for another name).
pub fn refusal(message: &str) -> String {
    let m = message.trim();
    if is_certificate_problem(m) {
        format!("the server's TLS certificate is not trusted ({m}): {FIX}")
    } else {
        format!("TLS handshake failed: {m}")
    }
}

/// Whether an error's text is rustls' word for a certificate it would not accept
/// (`rustls::Error::InvalidCertificate`, shown as "invalid peer certificate: …").
pub fn is_certificate_problem(message: &str) -> bool {
    message.contains("invalid peer certificate")
}

/// Whether an error's text is a TLS failure at all (rustls' own wordings).
pub(crate) fn is_tls_failure(message: &str) -> bool {
    is_certificate_problem(message)
        || message.contains("peer is incompatible")
        || message.contains("received fatal alert")
        || message.contains("InvalidContentType")
        || message.contains("corrupt message")
}

/// Why the endpoint's certificate could not be read (recorded in the endpoint facts as text).
#[derive(Debug, thiserror::Error)]
pub enum PeerCertError {
    #[error("{0}")]
    Connect(#[source] std::io::Error),
    /// The handshake's error, already worded by [`refusal`] (with the fix when untrusted).
    #[error("{0}")]
    Handshake(String),
    #[error("the server presented no certificate")]
    NoCertificate,
    #[error("its certificate does not parse: {0}")]
    Parse(#[source] CertError),
    #[error("no TLS handshake within {}", crate::seconds(*.0))]
    Timeout(Duration),
}

/// The certificate `url`'s server presents, read in one handshake within `limit` (verified as
/// every other call verifies it: an untrusted one is an error naming the fix).
pub async fn peer_certificate(
    tls: &Tls,
    url: &Url,
    limit: Duration,
) -> Result<CertSummary, PeerCertError> {
    let work = async {
        let tcp = crate::h1::connect(url)
            .await
            .map_err(PeerCertError::Connect)?;
        let s = tls
            .connect(url, tcp)
            .await
            .map_err(|e| PeerCertError::Handshake(refusal(&e.to_string())))?;
        let (_, conn) = s.get_ref();
        let der = conn
            .peer_certificates()
            .and_then(|c| c.first())
            .ok_or(PeerCertError::NoCertificate)?;
        cert::summary(der.as_ref()).map_err(PeerCertError::Parse)
    };
    match tokio::time::timeout(limit, work).await {
        Ok(r) => r,
        Err(_) => Err(PeerCertError::Timeout(limit)),
    }
}

#[cfg(test)]
mod tests;
