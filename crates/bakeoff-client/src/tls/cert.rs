//! What the endpoint's certificate says, for the endpoint facts: its subject, issuer, names
//! and validity, read with `x509-parser` (RFC 5280 §4.1). The certificate was verified by
//! rustls already (or `--insecure` said not to); this only reads it.

use chrono::{DateTime, Utc};
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::{FromDer, X509Certificate, X509Name};

/// The fields of a certificate an operator checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertSummary {
    /// The subject's distinguished name, attributes in their order in the certificate
    /// (`O=Example,CN=gw.example`).
    pub subject: String,
    pub issuer: String,
    /// DNS names and IP addresses of the subjectAltName extension.
    pub names: Vec<String>,
    pub not_before: DateTime<Utc>,
    pub not_after: DateTime<Utc>,
}

/// Why a certificate's DER does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CertError {
    #[error("not an X.509 certificate: {0}")]
    Der(String),
    #[error("its subjectAltName extension: {0}")]
    AltNames(String),
    #[error("{which} time {seconds} is out of range")]
    Time { which: &'static str, seconds: i64 },
}

/// Read the subject, issuer, alternative names and validity of a DER certificate.
pub fn summary(der: &[u8]) -> Result<CertSummary, CertError> {
    let (_, cert) = X509Certificate::from_der(der).map_err(|e| CertError::Der(e.to_string()))?;
    let mut names = Vec::new();
    let alt = cert
        .subject_alternative_name()
        .map_err(|e| CertError::AltNames(e.to_string()))?;
    for n in alt.iter().flat_map(|a| a.value.general_names.iter()) {
        match n {
            GeneralName::DNSName(d) => names.push((*d).to_string()),
            GeneralName::IPAddress(b) => {
                if let Ok(o) = <[u8; 4]>::try_from(*b) {
                    names.push(std::net::Ipv4Addr::from(o).to_string());
                } else if let Ok(o) = <[u8; 16]>::try_from(*b) {
                    names.push(std::net::Ipv6Addr::from(o).to_string());
                }
            }
            _ => {}
        }
    }
    let validity = cert.validity();
    let time = |which: &'static str, t: x509_parser::time::ASN1Time| {
        let seconds = t.timestamp();
        DateTime::from_timestamp(seconds, 0).ok_or(CertError::Time { which, seconds })
    };
    Ok(CertSummary {
        subject: name(cert.subject()),
        issuer: name(cert.issuer()),
        names,
        not_before: time("notBefore", validity.not_before)?,
        not_after: time("notAfter", validity.not_after)?,
    })
}

/// A Name as `O=…,CN=…`, attributes in their order in the certificate: the usual short names
/// (CN, C, L, ST, O, OU, …), else the dotted OID; a value that is not text as `#` and its hex.
fn name(n: &X509Name<'_>) -> String {
    let registry = x509_parser::objects::oid_registry();
    n.iter_attributes()
        .map(|a| {
            let key = x509_parser::objects::oid2abbrev(a.attr_type(), registry)
                .map(str::to_string)
                .unwrap_or_else(|_| a.attr_type().to_id_string());
            let value = match a.as_str() {
                Ok(s) => s.to_string(),
                Err(_) => format!("#{}", hex(a.attr_value().data)),
            };
            format!("{key}={value}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
