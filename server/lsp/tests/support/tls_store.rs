//! A `redis-server` of a test's own serving TLS on a port of its own besides its plain one, with
//! a certificate for 127.0.0.1 and localhost signed by a CA made here.

use sessiontree_redis::testing::RedisServer;
use std::path::{Path, PathBuf};

/// The server, its TLS port and the CA's certificate (a PEM file in `dir`).
pub struct TlsStore {
    pub server: RedisServer,
    pub tls_port: u16,
    pub ca_file: PathBuf,
}

impl TlsStore {
    /// Starts it; the certificate files go into `dir`.
    pub fn start(dir: &Path) -> TlsStore {
        let ca_key = rcgen::KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
        let mut ca_params =
            rcgen::CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|e| panic!("{e}"));
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "sessiontree test CA");
        let ca = ca_params
            .self_signed(&ca_key)
            .unwrap_or_else(|e| panic!("{e}"));
        let key = rcgen::KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
        let cert =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .unwrap_or_else(|e| panic!("{e}"))
                .signed_by(&key, &ca, &ca_key)
                .unwrap_or_else(|e| panic!("{e}"));
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
            path
        };
        let ca_file = write("ca.pem", ca.pem());
        let cert_file = write("server.pem", cert.pem());
        let key_file = write("server.key", key.serialize_pem());
        let tls_port = sessiontree_redis::testing::free_port();
        let server = RedisServer::start_with(&[
            "--tls-port",
            &tls_port.to_string(),
            "--tls-cert-file",
            &cert_file.to_string_lossy(),
            "--tls-key-file",
            &key_file.to_string_lossy(),
            "--tls-auth-clients",
            "no",
        ]);
        TlsStore {
            server,
            tls_port,
            ca_file,
        }
    }

    /// The store's `rediss://` address.
    pub fn url(&self) -> String {
        format!("rediss://127.0.0.1:{}", self.tls_port)
    }
}
