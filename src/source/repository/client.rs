//! The HTTP(S) client repositories are read with: HTTP/1 on hyper, rustls with the system's roots plus a
//! repository's own CA and client certificate, a connect timeout and an overall one per request (so that a
//! repository that is down answers within seconds), redirects followed as Go's client follows them (an
//! `Authorization` header is not carried to another host), and a size limit per body.

use std::sync::Arc;
use std::time::Duration;

use http::header::{AUTHORIZATION, HeaderMap, HeaderValue, LOCATION};
use http::{Request, StatusCode};
use http_body_util::{BodyExt as _, Empty, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::urls::Url;
use super::{Credentials, RepositoryError};

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one request may take, body included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Redirects followed before giving up (Go's client stops after 10).
const MAX_REDIRECTS: usize = 10;

/// A response: its status, headers and body.
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

/// The client, built once per fetch from the repository's credentials.
pub struct Http {
    client: Client<HttpsConnector<HttpConnector>, Empty<&'static [u8]>>,
}

impl Http {
    /// A client that trusts the system's roots and `creds.ca_pem`, presents `creds.cert_pem`/`key_pem`
    /// when both are given, and checks no certificate with `insecure_skip_verify`.
    pub fn new(creds: &Credentials) -> Result<Http, RepositoryError> {
        let tls = tls_config(creds)?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        Ok(Http { client: Client::builder(TokioExecutor::new()).build(https) })
    }

    /// GETs `url` with `headers`, following redirects, reading at most `limit` bytes of body. Errors only
    /// when no answer came (the status is the caller's to judge).
    pub async fn get(&self, url: &Url, headers: &HeaderMap, limit: usize) -> Result<Reply, RepositoryError> {
        let mut url = url.clone();
        let mut headers = headers.clone();
        for _ in 0..=MAX_REDIRECTS {
            let reply =
                tokio::time::timeout(REQUEST_TIMEOUT, self.once(&url, &headers, limit)).await.map_err(|_| {
                    RepositoryError::Unreachable {
                        url: url.public(),
                        why: format!("no answer within {}s", REQUEST_TIMEOUT.as_secs()),
                    }
                })??;
            let location = reply.headers.get(LOCATION).and_then(|l| l.to_str().ok());
            match location {
                Some(next) if reply.status.is_redirection() => {
                    let next = url.join(next);
                    if next.host_port() != url.host_port() {
                        headers.remove(AUTHORIZATION);
                    }
                    url = next;
                }
                _ => return Ok(reply),
            }
        }
        Err(RepositoryError::Unreachable { url: url.public(), why: format!("more than {MAX_REDIRECTS} redirects") })
    }

    /// One request, no redirects followed.
    async fn once(&self, url: &Url, headers: &HeaderMap, limit: usize) -> Result<Reply, RepositoryError> {
        let bad = |why: String| RepositoryError::BadUrl { url: url.public(), why };
        let uri: http::Uri = url.request_target().parse().map_err(|e: http::uri::InvalidUri| bad(e.to_string()))?;
        let mut request = Request::get(uri).body(Empty::new()).map_err(|e| bad(e.to_string()))?;
        request.headers_mut().extend(headers.clone());
        request.headers_mut().insert(http::header::USER_AGENT, HeaderValue::from_static("cozyhr"));
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| RepositoryError::Unreachable { url: url.public(), why: crate::support::error::cause(&e) })?;
        let (parts, body) = response.into_parts();
        let body = Limited::new(body, limit).collect().await.map_err(|e| {
            if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() {
                RepositoryError::TooLarge { url: url.public(), limit }
            } else {
                RepositoryError::Unreachable { url: url.public(), why: e.to_string() }
            }
        })?;
        Ok(Reply { status: parts.status, headers: parts.headers, body: body.to_bytes().to_vec() })
    }
}

/// The TLS configuration of `creds` (see [`Http::new`]).
fn tls_config(creds: &Credentials) -> Result<rustls::ClientConfig, RepositoryError> {
    let tls = |why: String| RepositoryError::Tls { why };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls(e.to_string()))?;
    let builder = if creds.insecure_skip_verify {
        builder.dangerous().with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
    } else {
        let mut roots = rustls::RootCertStore::empty();
        // A system store that cannot be read leaves the repository's own CA, as Go's pool would.
        let _ = roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        if let Some(ca) = &creds.ca_pem {
            let certs = pem_certificates(ca, "the CA")?;
            roots.add_parsable_certificates(certs);
        }
        builder.with_root_certificates(roots)
    };
    match (&creds.cert_pem, &creds.key_pem) {
        (Some(cert), Some(key)) => {
            let chain = pem_certificates(cert, "the client certificate")?;
            let key = PrivateKeyDer::from_pem_slice(key.as_bytes())
                .map_err(|e| tls(format!("the client key is not a PEM private key: {e}")))?;
            builder.with_client_auth_cert(chain, key).map_err(|e| tls(format!("the client certificate: {e}")))
        }
        (None, None) => Ok(builder.with_no_client_auth()),
        _ => Err(tls("a client certificate needs both the certificate and its key".into())),
    }
}

/// The certificates of a PEM text; an error naming `what` when it holds none.
fn pem_certificates(pem: &str, what: &str) -> Result<Vec<CertificateDer<'static>>, RepositoryError> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| RepositoryError::Tls { why: format!("{what} is not PEM: {e}") })?;
    if certs.is_empty() {
        return Err(RepositoryError::Tls { why: format!("{what} holds no PEM certificate") });
    }
    Ok(certs)
}

/// `insecure_skip_verify`: any server certificate is taken (signatures of the handshake are still checked).
#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
