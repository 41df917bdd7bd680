//! Endpoint URLs: accept what operators paste (`http://host:port`, `…/v1`, trailing slashes),
//! and never record credentials.

use url::Url;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UrlError {
    #[error("endpoint {0:?} is not a URL; give one like http://127.0.0.1:8080")]
    Malformed(String),
    #[error("endpoint {0:?} uses scheme {1:?}; use http:// or https://")]
    Scheme(String, String),
    #[error("endpoint {0:?} has no host; give one like http://127.0.0.1:8080")]
    NoHost(String),
    #[error("endpoint {0:?} has a port out of range; a port is 1 to 65535")]
    Port(String),
}

/// A validated endpoint: the server root (engine control paths such as `/props` hang off it)
/// and the OpenAI API base (`…/v1`).
///
/// Credentials given in the URL (`http://user:pass@host`) are kept apart from the root, so no
/// URL handed to an HTTP library carries them (reqwest would turn them into a Basic header of
/// its own beside ours): the client decides the one `Authorization` of every request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointUrl {
    root: Url,
    credentials: Option<(String, Option<String>)>,
}

impl EndpointUrl {
    pub fn parse(input: &str) -> Result<Self, UrlError> {
        let trimmed = input.trim();
        let mut url = Url::parse(trimmed).map_err(|e| match e {
            url::ParseError::InvalidPort => UrlError::Port(trimmed.to_string()),
            _ => UrlError::Malformed(trimmed.to_string()),
        })?;
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(UrlError::Scheme(
                trimmed.to_string(),
                url.scheme().to_string(),
            ));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(UrlError::NoHost(trimmed.to_string()));
        }
        url.set_query(None);
        url.set_fragment(None);
        let path = url.path().trim_end_matches('/').to_string();
        let path = path.strip_suffix("/v1").unwrap_or(&path).to_string();
        url.set_path(&format!("{path}/"));
        if url.port() == Some(0) {
            return Err(UrlError::Port(trimmed.to_string()));
        }
        let credentials = (!url.username().is_empty()).then(|| {
            (
                url.username().to_string(),
                url.password().map(str::to_string),
            )
        });
        let _ = url.set_username("");
        let _ = url.set_password(None);
        Ok(Self {
            root: url,
            credentials,
        })
    }

    /// A path under the server root, e.g. `props` → `http://h:p/props`.
    pub fn root_path(&self, path: &str) -> Url {
        self.root
            .join(path.trim_start_matches('/'))
            .unwrap_or_else(|_| self.root.clone())
    }

    /// A path under the OpenAI base, e.g. `chat/completions` → `http://h:p/v1/chat/completions`.
    pub fn v1_path(&self, path: &str) -> Url {
        self.root_path(&format!("v1/{}", path.trim_start_matches('/')))
    }

    /// Username and password, if the operator put them in the URL (sent as Basic auth).
    pub fn credentials(&self) -> Option<(String, Option<String>)> {
        self.credentials.clone()
    }

    /// The URL as it may be written down: credentials and query stripped.
    pub fn redacted(&self) -> String {
        self.root.as_str().trim_end_matches('/').to_string()
    }

    pub fn host_port(&self) -> String {
        format!(
            "{}:{}",
            self.root.host_str().unwrap_or(""),
            self.root.port_or_known_default().unwrap_or(80)
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn v1_suffix_and_slashes_are_normalized() {
        for s in [
            "http://h:8080",
            "http://h:8080/",
            "http://h:8080/v1",
            "http://h:8080/v1/",
        ] {
            let e = EndpointUrl::parse(s).unwrap();
            assert_eq!(
                e.v1_path("chat/completions").as_str(),
                "http://h:8080/v1/chat/completions"
            );
            assert_eq!(e.root_path("/props").as_str(), "http://h:8080/props");
        }
    }

    #[test]
    fn gateway_prefix_is_kept() {
        let e = EndpointUrl::parse("http://gw:4000/litellm/v1").unwrap();
        assert_eq!(
            e.v1_path("models").as_str(),
            "http://gw:4000/litellm/v1/models"
        );
    }

    #[test]
    fn credentials_never_in_the_redacted_form() {
        let e = EndpointUrl::parse("http://user:s3cret@h:1/v1?api_key=s3cret").unwrap();
        assert_eq!(e.redacted(), "http://h:1");
        assert!(e.credentials().is_some());
        // No URL handed to an HTTP library carries them.
        assert_eq!(e.root_path("props").as_str(), "http://h:1/props");
        assert_eq!(e.v1_path("models").as_str(), "http://h:1/v1/models");
    }

    #[test]
    fn bad_input_gets_one_line_errors() {
        assert!(matches!(
            EndpointUrl::parse("localhost:8080"),
            Err(UrlError::Scheme(..) | UrlError::Malformed(_))
        ));
        assert!(matches!(
            EndpointUrl::parse("not a url"),
            Err(UrlError::Malformed(_))
        ));
        for bad in [
            "http://127.0.0.1:99999",
            "http://127.0.0.1:65536",
            "http://h:0",
        ] {
            let e = EndpointUrl::parse(bad).unwrap_err();
            assert!(matches!(e, UrlError::Port(_)), "{bad}: {e:?}");
            assert!(e.to_string().contains("port out of range"), "{e}");
        }
        assert!(matches!(
            EndpointUrl::parse("ftp://h/"),
            Err(UrlError::Scheme(..))
        ));
        // https is an endpoint like any other (crate::tls).
        assert_eq!(
            EndpointUrl::parse("https://h/v1")
                .unwrap()
                .v1_path("models")
                .as_str(),
            "https://h/v1/models"
        );
        assert!(
            !EndpointUrl::parse("nope")
                .unwrap_err()
                .to_string()
                .contains('\n')
        );
    }
}
