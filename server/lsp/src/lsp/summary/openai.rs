//! The `openai` provider: any OpenAI-compatible `POST {baseUrl}/chat/completions` endpoint
//! (Ollama, llama.cpp's server, vLLM, OpenAI, OpenRouter…), streamed as server-sent events over
//! `http://` or `https://` (rustls with the ring backend; the Mozilla roots of `webpki-roots`
//! plus the CA files the user names). The API key is read from the environment variable the
//! user settings name, sent as a bearer token, and never logged nor put into an error message.

use super::{Failure, OpenAiConfig, Tokens};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_rustls::rustls;

/// Where to connect, from a base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// `https://`.
    pub tls: bool,
    pub host: String,
    pub port: u16,
    /// The request path (`/v1/chat/completions`).
    pub path: String,
}

impl Endpoint {
    /// The `host` header: the port only when it is not the scheme's default.
    fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == if self.tls { 443 } else { 80 } {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

/// Parses `http[s]://host[:port][/prefix]` into the chat-completions endpoint.
pub(crate) fn endpoint(base_url: &str) -> Result<Endpoint, Failure> {
    let (tls, rest) = if let Some(rest) = base_url.strip_prefix("http://") {
        (false, rest)
    } else if let Some(rest) = base_url.strip_prefix("https://") {
        (true, rest)
    } else {
        return Err(Failure::Config(format!(
            "branchSummary.openai.baseUrl `{base_url}` is not an http:// or https:// URL"
        )));
    };
    let (authority, prefix) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => {
            let port = p.parse::<u16>().map_err(|_| {
                Failure::Config(format!(
                    "branchSummary.openai.baseUrl `{base_url}` has a bad port"
                ))
            })?;
            (h, port)
        }
        _ => (authority, if tls { 443 } else { 80 }),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(Failure::Config(format!(
            "branchSummary.openai.baseUrl `{base_url}` names no host"
        )));
    }
    Ok(Endpoint {
        tls,
        host: host.to_owned(),
        port,
        path: format!("{}/chat/completions", prefix.trim_end_matches('/')),
    })
}

/// Environment variables naming extra CA bundles (PEM) that other tools already honour: a
/// corporate CA set up for OpenSSL-based tools or for Node/Bun (what the agents run on).
pub(crate) const CA_ENV: [&str; 2] = ["SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS"];

/// Reads the certificates of a PEM file.
fn pem_certificates(
    path: &Path,
) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, String> {
    use rustls::pki_types::pem::PemObject;
    let certs = rustls::pki_types::CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{} is not a PEM certificate file: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{} holds no PEM certificate", path.display()));
    }
    Ok(certs)
}

/// The TLS client: the Mozilla roots, the CA files of `SSL_CERT_FILE`/`NODE_EXTRA_CA_CERTS`
/// when set, and `branchSummary.openai.caFile` (which must be readable).
pub(crate) fn tls_connector(config: &OpenAiConfig) -> Result<tokio_rustls::TlsConnector, Failure> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let mut add = |certs: Vec<rustls::pki_types::CertificateDer<'static>>, origin: &str| {
        let (added, ignored) = roots.add_parsable_certificates(certs);
        if ignored > 0 {
            tracing::warn!("branch summaries: {ignored} certificate(s) of {origin} are not usable CAs ({added} added)");
        }
        added
    };
    for var in CA_ENV {
        if let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) {
            match pem_certificates(Path::new(&path)) {
                Ok(certs) => {
                    add(certs, var);
                }
                Err(e) => tracing::warn!("branch summaries: {var} ignored: {e}"),
            }
        }
    }
    if let Some(path) = &config.ca_file {
        let certs = pem_certificates(path)
            .map_err(|e| Failure::Config(format!("branchSummary.openai.caFile: {e}")))?;
        if add(certs, "branchSummary.openai.caFile") == 0 {
            return Err(Failure::Config(format!(
                "branchSummary.openai.caFile: {} holds no usable CA certificate",
                path.display()
            )));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Failure::Config(format!("cannot set up TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsConnector::from(Arc::new(tls)))
}

/// A failed TLS handshake, in words naming the host.
fn tls_failure(host: &str, err: &std::io::Error) -> Failure {
    use rustls::CertificateError as C;
    let inner = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>());
    let why = match inner {
        Some(rustls::Error::InvalidCertificate(c)) => match c {
            C::UnknownIssuer => format!(
                "the certificate of {host} is not signed by a trusted authority (unknown issuer); if your network has its own CA, name its PEM file in branchSummary.openai.caFile (or SSL_CERT_FILE / NODE_EXTRA_CA_CERTS)"
            ),
            C::NotValidForName | C::NotValidForNameContext { .. } => {
                format!("the certificate of {host} is not valid for the name {host}")
            }
            C::Expired | C::ExpiredContext { .. } => {
                format!("the certificate of {host} has expired")
            }
            C::NotValidYet | C::NotValidYetContext { .. } => {
                format!("the certificate of {host} is not valid yet (check the clock)")
            }
            C::Revoked => format!("the certificate of {host} is revoked"),
            other => format!("the certificate of {host} is rejected ({other:?})"),
        },
        Some(other) => format!("{other} (is {host} an https server?)"),
        None => err.to_string(),
    };
    Failure::Connect(format!("TLS handshake with {host} failed: {why}"))
}

/// Aborts a spawned task when dropped (the connection driver of a cancelled request).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Removes the key from text that may echo it (an error body).
fn scrub(text: &str, key: Option<&str>) -> String {
    let mut out: String = text.chars().take(300).collect();
    if let Some(key) = key.filter(|k| k.len() >= 4) {
        out = out.replace(key, "***");
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The error message a provider's `{"error": {...}}` object carries.
fn error_message(v: &Value) -> Option<String> {
    let e = v.get("error")?;
    Some(
        e.get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| e.to_string()),
    )
}

/// Parses the SSE stream line by line; `feed` returns the text of `data:` payloads.
#[derive(Default)]
pub(crate) struct SseParser {
    buffer: Vec<u8>,
    /// The text so far.
    pub text: String,
    /// `[DONE]` or a `finish_reason` arrived.
    pub finished: bool,
}

impl SseParser {
    /// Feeds bytes; returns whether new text arrived.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<bool, Failure> {
        self.buffer.extend_from_slice(bytes);
        let mut grew = false;
        while let Some(nl) = self.buffer.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=nl).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\r', '\n']);
            grew |= self.line(line)?;
        }
        Ok(grew)
    }

    fn line(&mut self, line: &str) -> Result<bool, Failure> {
        let Some(data) = line.strip_prefix("data:") else {
            // Comments (`: keep-alive`), `event:`/`id:` fields and blank separators.
            return Ok(false);
        };
        let data = data.trim();
        if data == "[DONE]" {
            self.finished = true;
            return Ok(false);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            Failure::Stream(format!(
                "the model server sent a malformed stream event ({e}): `{}`",
                scrub(data, None)
            ))
        })?;
        if let Some(message) = error_message(&v) {
            return Err(Failure::Stream(format!(
                "the model server reported an error mid-stream: {}",
                scrub(&message, None)
            )));
        }
        let Some(choice) = v.pointer("/choices/0") else {
            return Ok(false);
        };
        if choice.get("finish_reason").is_some_and(|r| !r.is_null()) {
            self.finished = true;
        }
        match choice.pointer("/delta/content").and_then(Value::as_str) {
            Some(s) if !s.is_empty() => {
                self.text.push_str(s);
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

/// Writes the summary through the endpoint; reports the streamed token count through `tokens`.
pub(crate) async fn generate(
    config: &OpenAiConfig,
    system: &str,
    prompt: &str,
    tokens: &Tokens,
) -> Result<String, Failure> {
    let overall = Duration::from_secs(config.timeout_seconds.max(1));
    match tokio::time::timeout(overall, request(config, system, prompt, tokens)).await {
        Ok(result) => result,
        Err(_) => Err(Failure::Timeout(format!(
            "the model at {} did not finish within {} s (branchSummary.openai.timeoutSeconds)",
            config.base_url, config.timeout_seconds
        ))),
    }
}

async fn request(
    config: &OpenAiConfig,
    system: &str,
    prompt: &str,
    tokens: &Tokens,
) -> Result<String, Failure> {
    let ep = endpoint(&config.base_url)?;
    let key = match &config.api_key_env {
        Some(name) => match std::env::var(name) {
            Ok(v) if !v.is_empty() => Some(v),
            _ => {
                return Err(Failure::Config(format!(
                    "the environment variable {name} (branchSummary.openai.apiKeyEnv) is not set for the server"
                )))
            }
        },
        None => None,
    };
    let connect = TcpStream::connect((ep.host.as_str(), ep.port));
    let stream = match tokio::time::timeout(
        Duration::from_secs(config.connect_timeout_seconds.max(1)),
        connect,
    )
    .await
    {
        Ok(Ok(s)) => s,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Err(Failure::Connect(format!(
                "cannot reach the model server at {}: connection refused (is it running?)",
                config.base_url
            )))
        }
        Ok(Err(e)) => {
            return Err(Failure::Connect(format!(
                "cannot reach the model server at {}: {e}",
                config.base_url
            )))
        }
        Err(_) => {
            return Err(Failure::Timeout(format!(
                "cannot reach the model server at {}: no connection within {} s",
                config.base_url, config.connect_timeout_seconds
            )))
        }
    };
    let _ = stream.set_nodelay(true);
    if !ep.tls {
        return exchange(
            hyper_util::rt::TokioIo::new(stream),
            config,
            &ep,
            key,
            system,
            prompt,
            tokens,
        )
        .await;
    }
    let connector = tls_connector(config)?;
    let name = rustls::pki_types::ServerName::try_from(ep.host.clone()).map_err(|_| {
        Failure::Config(format!(
            "branchSummary.openai.baseUrl `{}`: `{}` is not a valid TLS server name",
            config.base_url, ep.host
        ))
    })?;
    let tls = match tokio::time::timeout(
        Duration::from_secs(config.connect_timeout_seconds.max(1)),
        connector.connect(name, stream),
    )
    .await
    {
        Ok(Ok(tls)) => tls,
        Ok(Err(e)) => return Err(tls_failure(&ep.host, &e)),
        Err(_) => {
            return Err(Failure::Timeout(format!(
                "TLS handshake with {} failed: no answer within {} s",
                ep.host, config.connect_timeout_seconds
            )))
        }
    };
    exchange(
        hyper_util::rt::TokioIo::new(tls),
        config,
        &ep,
        key,
        system,
        prompt,
        tokens,
    )
    .await
}

/// Sends the request over an established connection and reads the answer.
async fn exchange<I>(
    io: I,
    config: &OpenAiConfig,
    ep: &Endpoint,
    key: Option<String>,
    system: &str,
    prompt: &str,
    tokens: &Tokens,
) -> Result<String, Failure>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake::<_, Full<Bytes>>(io)
        .await
        .map_err(|e| {
            Failure::Connect(format!(
                "HTTP handshake with {} failed: {e}",
                config.base_url
            ))
        })?;
    // Dropping this (cancellation, timeout) closes the connection.
    let _driver = AbortOnDrop(tokio::spawn(async move {
        let _ = conn.await;
    }));
    let body = json!({
        "model": config.model,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": prompt},
        ],
        "max_tokens": config.max_tokens,
        "stream": true,
    });
    let mut builder = hyper::Request::post(ep.path.as_str())
        .header("host", ep.host_header())
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .header(
            "user-agent",
            concat!("sessiontree/", env!("CARGO_PKG_VERSION")),
        );
    if let Some(key) = &key {
        builder = builder.header("authorization", format!("Bearer {key}"));
    }
    let req = builder
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| Failure::Config(format!("cannot build the request: {e}")))?;
    let response = sender.send_request(req).await.map_err(|e| {
        Failure::Connect(format!(
            "the model server at {} closed the connection: {e}",
            config.base_url
        ))
    })?;
    let status = response.status().as_u16();
    let is_json = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/json"));
    let mut body = response.into_body();
    if !(200..300).contains(&status) {
        let bytes = tokio::time::timeout(Duration::from_secs(5), body.collect())
            .await
            .ok()
            .and_then(Result::ok)
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let detail = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| error_message(&v))
            .unwrap_or(text);
        let detail = scrub(&detail, key.as_deref());
        let what = match status {
            401 | 403 => match &config.api_key_env {
                Some(name) => format!("the model server refused the API key from {name}"),
                None => "the model server wants an API key: name its environment variable in branchSummary.openai.apiKeyEnv".to_owned(),
            },
            404 => format!(
                "the model server has no {} or no model `{}`: check branchSummary.openai.baseUrl and model",
                ep.path, config.model
            ),
            429 => "the model server is rate-limiting or out of quota; try again later".to_owned(),
            500..=599 => "the model server failed".to_owned(),
            _ => "the model server refused the request".to_owned(),
        };
        let sep = if detail.is_empty() { "" } else { ": " };
        return Err(Failure::Status(
            status,
            format!("{what} (HTTP {status}){sep}{detail}"),
        ));
    }
    if is_json {
        // A server that ignores `stream: true` answers one JSON object.
        let bytes = body
            .collect()
            .await
            .map_err(|e| Failure::Stream(format!("reading the answer failed: {e}")))?
            .to_bytes();
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| Failure::Stream(format!("the model server sent malformed JSON: {e}")))?;
        let text = v
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                Failure::Stream(
                    "the model server's answer has no choices[0].message.content".to_owned(),
                )
            })?;
        tokens.report(super::estimate(text));
        return Ok(text.to_owned());
    }
    let mut sse = SseParser::default();
    while !sse.finished {
        let Some(frame) = body.frame().await else {
            break;
        };
        let frame = frame.map_err(|e| Failure::Stream(format!("the stream broke off: {e}")))?;
        if let Ok(data) = frame.into_data() {
            if sse.feed(&data)? {
                tokens.report(super::estimate(&sse.text));
            }
        }
    }
    if !sse.finished {
        // A last line without its newline.
        sse.feed(b"\n")?;
    }
    if !sse.finished {
        return Err(Failure::Stream(
            "the stream ended before the model finished (no [DONE] nor finish_reason)".to_owned(),
        ));
    }
    Ok(sse.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        let e = endpoint("http://127.0.0.1:11434/v1").ok();
        assert_eq!(
            e,
            Some(Endpoint {
                tls: false,
                host: "127.0.0.1".into(),
                port: 11434,
                path: "/v1/chat/completions".into()
            })
        );
        let e = endpoint("http://localhost/").ok();
        assert_eq!(
            e.map(|e| (e.port, e.path.clone(), e.host_header())),
            Some((80, "/chat/completions".into(), "localhost".into()))
        );
        let e = endpoint("https://openrouter.ai/api/v1").ok();
        assert_eq!(
            e.map(|e| (e.tls, e.port, e.path.clone(), e.host_header())),
            Some((
                true,
                443,
                "/api/v1/chat/completions".into(),
                "openrouter.ai".into()
            ))
        );
        let e = endpoint("https://[::1]:8443/v1").ok();
        assert_eq!(
            e.map(|e| (e.host.clone(), e.host_header())),
            Some(("::1".into(), "[::1]:8443".into()))
        );
        assert!(matches!(endpoint("ftp://x"), Err(Failure::Config(_))));
        assert!(matches!(
            endpoint("http://h:notaport"),
            Err(Failure::Config(_))
        ));
    }

    #[test]
    fn an_unreadable_ca_file_is_a_settings_problem() {
        let config = OpenAiConfig {
            base_url: "https://x/v1".into(),
            model: "m".into(),
            api_key_env: None,
            connect_timeout_seconds: 1,
            timeout_seconds: 1,
            max_tokens: 1,
            context_window: 1,
            ca_file: Some("/nonexistent/ca.pem".into()),
        };
        assert!(matches!(
            tls_connector(&config),
            Err(Failure::Config(m)) if m.contains("caFile") && m.contains("/nonexistent/ca.pem")
        ));
        let config = OpenAiConfig {
            ca_file: None,
            ..config
        };
        assert!(tls_connector(&config).is_ok());
    }

    #[test]
    fn sse_events() {
        let mut p = SseParser::default();
        assert_eq!(
            p.feed(b": hi\n\ndata: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n")
                .ok(),
            Some(false)
        );
        assert_eq!(
            p.feed(b"data: {\"choices\":[{\"delta\":{\"content\":\"Hel")
                .ok(),
            Some(false)
        );
        assert_eq!(p.feed(b"lo\"}}]}\r\n\r\n").ok(), Some(true));
        assert!(!p.finished);
        assert_eq!(p.feed(b"data: [DONE]\n").ok(), Some(false));
        assert!(p.finished);
        assert_eq!(p.text, "Hello");
        let mut p = SseParser::default();
        assert!(matches!(p.feed(b"data: {nope\n"), Err(Failure::Stream(_))));
        let mut p = SseParser::default();
        assert!(matches!(
            p.feed(b"data: {\"error\":{\"message\":\"boom\"}}\n"),
            Err(Failure::Stream(m)) if m.contains("boom")
        ));
    }

    #[test]
    fn keys_are_scrubbed() {
        assert_eq!(
            scrub("bad key sk-secret-1 here", Some("sk-secret-1")),
            "bad key *** here"
        );
    }
}
