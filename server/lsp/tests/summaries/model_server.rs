//! The tests' own model server: an OpenAI-compatible endpoint on 127.0.0.1 speaking just enough
//! HTTP/1.1 and server-sent events, over plain TCP or over TLS with a CA and certificate made
//! here, that answers every request with one scripted [`Reply`] and records what it was sent.

use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the fake model server answers.
#[derive(Clone)]
pub enum Reply {
    /// 200, these content deltas as SSE events (with a pause between them), then `[DONE]`.
    Stream(Vec<&'static str>, Duration),
    /// An error status with a JSON error body.
    Status(u16, &'static str),
    /// 200 with a broken event.
    Malformed,
    /// 200, one delta, then nothing for a minute.
    Hang,
    /// 200 with the whole answer in one JSON body (not streamed).
    Whole(&'static str),
}

/// A request the fake server received.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    pub head: String,
    pub body: Value,
}

pub struct ModelServer {
    pub base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Set when a connection was closed by the client before the reply ended.
    closed_early: Arc<std::sync::atomic::AtomicBool>,
    got_request: Arc<tokio::sync::Notify>,
}

pub async fn read_request<S: AsyncRead + Unpin>(sock: &mut S) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())
                .flatten()
        })
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null);
    Some(Seen { head, body })
}

fn event(delta: &str) -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": delta}, "finish_reason": null}]})
    )
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    mut sock: S,
    reply: Reply,
    server: Arc<ModelServerState>,
) {
    let Some(seen) = read_request(&mut sock).await else {
        return;
    };
    server.seen.lock().expect("seen").push(seen);
    server.got_request.notify_one();
    let sse_head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
    match reply {
        Reply::Stream(deltas, pause) => {
            let _ = sock.write_all(sse_head.as_bytes()).await;
            let _ = sock.write_all(b": keep-alive\n\n").await;
            for d in deltas {
                tokio::time::sleep(pause).await;
                let _ = sock.write_all(event(d).as_bytes()).await;
                let _ = sock.flush().await;
            }
            let _ = sock
                .write_all(b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
                .await;
        }
        Reply::Status(code, message) => {
            let body = json!({"error": {"message": message, "type": "test"}}).to_string();
            let text = format!(
                "HTTP/1.1 {code} Whatever\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(text.as_bytes()).await;
        }
        Reply::Malformed => {
            let _ = sock.write_all(sse_head.as_bytes()).await;
            let _ = sock.write_all(event("Half a ").as_bytes()).await;
            let _ = sock.write_all(b"data: {\"choices\": [oops\n\n").await;
        }
        Reply::Whole(content) => {
            let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}).to_string();
            let text = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(text.as_bytes()).await;
        }
        Reply::Hang => {
            let _ = sock.write_all(sse_head.as_bytes()).await;
            let _ = sock.write_all(event("Starting").as_bytes()).await;
            let _ = sock.flush().await;
            // Wait for the client to go away (or a minute).
            let mut buf = [0u8; 64];
            let gone = tokio::time::timeout(Duration::from_secs(60), sock.read(&mut buf)).await;
            if matches!(gone, Ok(Ok(0)) | Ok(Err(_))) {
                server
                    .closed_early
                    .store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
    }
    let _ = sock.shutdown().await;
}

struct ModelServerState {
    seen: Arc<Mutex<Vec<Seen>>>,
    closed_early: Arc<std::sync::atomic::AtomicBool>,
    got_request: Arc<tokio::sync::Notify>,
}

impl ModelServer {
    /// A listener on a free loopback port, the server's handle and the state its connections share.
    async fn bind(scheme: &str) -> (TcpListener, ModelServer, Arc<ModelServerState>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let state = Arc::new(ModelServerState {
            seen: Arc::default(),
            closed_early: Arc::default(),
            got_request: Arc::new(tokio::sync::Notify::new()),
        });
        let server = ModelServer {
            base_url: format!("{scheme}://127.0.0.1:{port}/v1"),
            seen: Arc::clone(&state.seen),
            closed_early: Arc::clone(&state.closed_early),
            got_request: Arc::clone(&state.got_request),
        };
        (listener, server, state)
    }

    pub async fn start(reply: Reply) -> ModelServer {
        let (listener, server, state) = ModelServer::bind("http").await;
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                tokio::spawn(serve(sock, reply.clone(), Arc::clone(&state)));
            }
        });
        server
    }

    /// The same server over TLS, with a certificate for 127.0.0.1 and localhost signed by a
    /// CA made here; also returns the CA's PEM.
    pub async fn start_tls(reply: Reply) -> (ModelServer, String) {
        let ca_key = rcgen::KeyPair::generate().expect("ca key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("ca params");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "sessiontree test CA");
        let ca = ca_params.self_signed(&ca_key).expect("ca");
        let key = rcgen::KeyPair::generate().expect("key");
        let cert =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .expect("params")
                .signed_by(&key, &ca, &ca_key)
                .expect("cert");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .expect("server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
        let (listener, server, state) = ModelServer::bind("https").await;
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let (acceptor, reply, state) =
                    (acceptor.clone(), reply.clone(), Arc::clone(&state));
                tokio::spawn(async move {
                    // A client that does not trust the certificate hangs up here.
                    if let Ok(tls) = acceptor.accept(sock).await {
                        serve(tls, reply, state).await;
                    }
                });
            }
        });
        (server, ca.pem())
    }

    /// The requests received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("seen").clone()
    }

    /// Waits until the server has been sent a request; fails after 10 s.
    pub async fn asked(&self) {
        tokio::time::timeout(Duration::from_secs(10), self.got_request.notified())
            .await
            .expect("the model was asked");
    }

    /// Whether a client closed its connection before a [`Reply::Hang`] ended, waiting for that
    /// up to a minute (the deadline only ends a hang).
    pub async fn closed_early(&self) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !self.closed_early.load(std::sync::atomic::Ordering::SeqCst) {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        true
    }
}
