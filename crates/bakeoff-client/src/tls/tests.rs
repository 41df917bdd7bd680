#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use std::process::Command;

/// A self-signed certificate made by the openssl CLI (a real one, as an operator makes it):
/// its PEM path and DER bytes.
fn openssl_cert(dir: &Path, cn: &str, days: u32) -> (PathBuf, Vec<u8>) {
    let pem = dir.join("cert.pem");
    let key = dir.join("key.pem");
    let der = dir.join("cert.der");
    let ok = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&pem)
        .args(["-days", &days.to_string(), "-subj"])
        .arg(format!("/O=Bakeoff Test/CN={cn}"))
        .args(["-addext", &format!("subjectAltName=DNS:{cn},IP:127.0.0.1")])
        .output()
        .expect("openssl");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let ok = Command::new("openssl")
        .args(["x509", "-outform", "der", "-in"])
        .arg(&pem)
        .arg("-out")
        .arg(&der)
        .output()
        .unwrap();
    assert!(ok.status.success());
    (pem, std::fs::read(der).unwrap())
}

#[test]
fn a_certificate_s_subject_names_and_expiry_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let (_, der) = openssl_cert(dir.path(), "gw.test", 30);
    let s = cert::summary(&der).unwrap();
    assert_eq!(s.subject, "O=Bakeoff Test,CN=gw.test");
    assert_eq!(s.issuer, s.subject, "self-signed");
    assert_eq!(
        s.names,
        vec!["gw.test".to_string(), "127.0.0.1".to_string()]
    );
    let days = (s.not_after - s.not_before).num_days();
    assert_eq!(days, 30, "{s:?}");
    assert!(cert::summary(&der[..der.len() / 2]).is_err());
}

#[test]
fn a_ca_file_is_read_and_a_bad_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (pem, _) = openssl_cert(dir.path(), "ca.test", 1);
    let t = Tls::new(&TlsOptions {
        ca_cert: Some(pem),
        insecure: false,
    })
    .unwrap();
    assert!(!t.insecure());
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "not a certificate\n").unwrap();
    let e = Tls::new(&TlsOptions {
        ca_cert: Some(junk),
        insecure: false,
    })
    .unwrap_err();
    assert!(e.to_string().starts_with("--ca-cert "), "{e}");
    let e = Tls::new(&TlsOptions {
        ca_cert: Some(dir.path().join("absent.pem")),
        insecure: false,
    })
    .unwrap_err();
    assert!(e.to_string().contains("absent.pem"), "{e}");
    assert!(
        Tls::new(&TlsOptions {
            ca_cert: None,
            insecure: true
        })
        .unwrap()
        .insecure()
    );
}

#[test]
fn an_untrusted_certificate_s_refusal_names_the_fix() {
    let m = refusal("invalid peer certificate: UnknownIssuer");
    assert!(
        m.contains("--ca-cert FILE") && m.contains("--insecure"),
        "{m}"
    );
    assert_eq!(m.lines().count(), 1);
    assert!(!refusal("received fatal alert: HandshakeFailure").contains("--ca-cert"));
}
