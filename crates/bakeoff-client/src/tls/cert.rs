//! What the endpoint's certificate says, for the endpoint facts: its subject, issuer, names
//! and validity. A small DER reader over the X.509 structure (RFC 5280 §4.1: Certificate →
//! TBSCertificate → version, serialNumber, signature, issuer, validity, subject, …,
//! extensions), reading only those fields; the certificate was verified by rustls already (or
//! `--insecure` said not to).

use chrono::{DateTime, NaiveDateTime, Utc};

/// The fields of a certificate an operator checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertSummary {
    /// The subject's distinguished name, RFC 4514 style (`CN=gw.example,O=Example`).
    pub subject: String,
    pub issuer: String,
    /// DNS names and IP addresses of the subjectAltName extension.
    pub names: Vec<String>,
    pub not_before: DateTime<Utc>,
    pub not_after: DateTime<Utc>,
}

/// Why a certificate's DER does not parse (the reader is strict about what it reads).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CertError {
    #[error("truncated")]
    Truncated,
    #[error("truncated length")]
    TruncatedLength,
    #[error("unsupported length")]
    UnsupportedLength,
    #[error("length overflow")]
    LengthOverflow,
    #[error("truncated element")]
    TruncatedElement,
    #[error("{what}: tag {found:#04x}, expected {expected:#04x}")]
    Tag {
        what: &'static str,
        found: u8,
        expected: u8,
    },
    #[error("time is not text")]
    TimeNotText,
    #[error("bad UTCTime")]
    BadUtcTime,
    #[error("time: tag {0:#04x}")]
    TimeTag(u8),
    #[error("time is not UTC (Z)")]
    TimeNotUtc,
    #[error("time {full:?}: {source}")]
    Time {
        full: String,
        source: chrono::ParseError,
    },
}

/// One DER element: tag and contents.
struct Tlv<'a> {
    tag: u8,
    body: &'a [u8],
}

/// Reads the next element of `input`, advancing it.
fn next<'a>(input: &mut &'a [u8]) -> Result<Tlv<'a>, CertError> {
    let b = *input;
    if b.len() < 2 {
        return Err(CertError::Truncated);
    }
    let tag = b[0];
    let (len, head) = match b[1] {
        n if n < 0x80 => (n as usize, 2),
        0x81..=0x84 => {
            let k = (b[1] & 0x7f) as usize;
            if b.len() < 2 + k {
                return Err(CertError::TruncatedLength);
            }
            let len = b[2..2 + k]
                .iter()
                .fold(0usize, |acc, x| (acc << 8) | *x as usize);
            (len, 2 + k)
        }
        _ => return Err(CertError::UnsupportedLength),
    };
    let end = head.checked_add(len).ok_or(CertError::LengthOverflow)?;
    if b.len() < end {
        return Err(CertError::TruncatedElement);
    }
    *input = &b[end..];
    Ok(Tlv {
        tag,
        body: &b[head..end],
    })
}

fn expect<'a>(input: &mut &'a [u8], tag: u8, what: &'static str) -> Result<&'a [u8], CertError> {
    let t = next(input)?;
    if t.tag != tag {
        return Err(CertError::Tag {
            what,
            found: t.tag,
            expected: tag,
        });
    }
    Ok(t.body)
}

const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;

/// The summary of a DER certificate.
pub fn summary(der: &[u8]) -> Result<CertSummary, CertError> {
    let mut input = der;
    let mut cert = expect(&mut input, SEQUENCE, "certificate")?;
    let mut tbs = expect(&mut cert, SEQUENCE, "tbsCertificate")?;
    // version [0] EXPLICIT, optional.
    if tbs.first() == Some(&0xa0) {
        next(&mut tbs)?;
    }
    next(&mut tbs)?; // serialNumber
    next(&mut tbs)?; // signature algorithm
    let issuer = name(expect(&mut tbs, SEQUENCE, "issuer")?)?;
    let mut validity = expect(&mut tbs, SEQUENCE, "validity")?;
    let not_before = time(next(&mut validity)?)?;
    let not_after = time(next(&mut validity)?)?;
    let subject = name(expect(&mut tbs, SEQUENCE, "subject")?)?;
    next(&mut tbs)?; // subjectPublicKeyInfo
    let mut names = Vec::new();
    while !tbs.is_empty() {
        let t = next(&mut tbs)?;
        // extensions [3] EXPLICIT SEQUENCE OF Extension
        if t.tag == 0xa3 {
            let mut body = t.body;
            let mut exts = expect(&mut body, SEQUENCE, "extensions")?;
            while !exts.is_empty() {
                let mut ext = expect(&mut exts, SEQUENCE, "extension")?;
                let oid = expect(&mut ext, 0x06, "extension id")?;
                // subjectAltName: 2.5.29.17
                if oid == [0x55, 0x1d, 0x11] {
                    let mut rest = ext;
                    let mut v = next(&mut rest)?;
                    if v.tag == 0x01 {
                        v = next(&mut rest)?; // critical BOOLEAN
                    }
                    let mut inner = v.body;
                    let mut alts = expect(&mut inner, SEQUENCE, "subjectAltName")?;
                    while !alts.is_empty() {
                        let a = next(&mut alts)?;
                        match a.tag {
                            0x82 => names.push(String::from_utf8_lossy(a.body).into_owned()),
                            0x87 if a.body.len() == 4 => {
                                let o: [u8; 4] = [a.body[0], a.body[1], a.body[2], a.body[3]];
                                names.push(std::net::Ipv4Addr::from(o).to_string());
                            }
                            0x87 if a.body.len() == 16 => {
                                let mut o = [0u8; 16];
                                o.copy_from_slice(a.body);
                                names.push(std::net::Ipv6Addr::from(o).to_string());
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
    }
    Ok(CertSummary {
        subject,
        issuer,
        names,
        not_before,
        not_after,
    })
}

/// A Name (RDNSequence) as `CN=…,O=…`, attributes in their order in the certificate.
fn name(mut rdns: &[u8]) -> Result<String, CertError> {
    let mut parts = Vec::new();
    while !rdns.is_empty() {
        let mut set = expect(&mut rdns, SET, "relative distinguished name")?;
        while !set.is_empty() {
            let mut atv = expect(&mut set, SEQUENCE, "attribute")?;
            let oid = expect(&mut atv, 0x06, "attribute type")?;
            let value = next(&mut atv)?;
            let key = match oid {
                [0x55, 0x04, 0x03] => "CN".to_string(),
                [0x55, 0x04, 0x06] => "C".to_string(),
                [0x55, 0x04, 0x07] => "L".to_string(),
                [0x55, 0x04, 0x08] => "ST".to_string(),
                [0x55, 0x04, 0x0a] => "O".to_string(),
                [0x55, 0x04, 0x0b] => "OU".to_string(),
                _ => format!("OID:{}", hex(oid)),
            };
            let text = match value.tag {
                // UTF8String, PrintableString, IA5String, TeletexString
                0x0c | 0x13 | 0x16 | 0x14 => String::from_utf8_lossy(value.body).into_owned(),
                _ => format!("#{}", hex(value.body)),
            };
            parts.push(format!("{key}={text}"));
        }
    }
    Ok(parts.join(","))
}

/// UTCTime (`YYMMDDHHMMSSZ`, years 1950–2049, RFC 5280 §4.1.2.5.1) or GeneralizedTime
/// (`YYYYMMDDHHMMSSZ`).
fn time(t: Tlv<'_>) -> Result<DateTime<Utc>, CertError> {
    let s = std::str::from_utf8(t.body).map_err(|_| CertError::TimeNotText)?;
    let full = match t.tag {
        0x17 => {
            let yy: u32 = s
                .get(..2)
                .and_then(|y| y.parse().ok())
                .ok_or(CertError::BadUtcTime)?;
            format!("{}{s}", if yy >= 50 { "19" } else { "20" })
        }
        0x18 => s.to_string(),
        other => return Err(CertError::TimeTag(other)),
    };
    let digits = full.strip_suffix('Z').ok_or(CertError::TimeNotUtc)?;
    NaiveDateTime::parse_from_str(digits, "%Y%m%d%H%M%S")
        .map(|n| n.and_utc())
        .map_err(|source| CertError::Time { full, source })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
