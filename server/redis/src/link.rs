//! One connection to a store, shared by every session kept there, opened again when it is lost.
//!
//! A call that finds the connection broken drops it; the next call connects again. After a failed
//! connect, calls fail at once (naming the store and when it is tried again) for a pause that
//! doubles from 250 ms up to 8 s, so that a store that is down costs the callers nothing but an
//! error. Reads are tried once more right after a lost connection (they change nothing); writes
//! are never sent twice: a write whose answer was lost may or may not have landed, and the next
//! read of the session finds out (every write is conditional on the value's length, so a line is
//! never appended twice).

use crate::address::StoreAddress;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a connect may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one command may wait for its answer (a 100 MB read on a slow link included).
const IO_TIMEOUT: Duration = Duration::from_secs(20);
const FIRST_PAUSE: Duration = Duration::from_millis(250);
const LONGEST_PAUSE: Duration = Duration::from_secs(8);

/// A shared connection to one store.
pub struct Link {
    address: StoreAddress,
    client: redis::Client,
    state: Mutex<State>,
    /// Bytes of session values read so far (see [`Link::value_bytes_read`]).
    value_bytes: AtomicU64,
}

#[derive(Default)]
struct State {
    conn: Option<redis::Connection>,
    /// After a failed connect: no new try before this instant; the pause before the next one.
    retry_at: Option<(Instant, Duration)>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("address", &self.address.to_string())
            .finish()
    }
}

/// Whether a call may be sent again on a fresh connection after the first one was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// A read: sent again once.
    Once,
    /// A write: never sent twice.
    Never,
}

impl Link {
    /// A link to `address`; nothing is connected until the first call.
    /// A `rediss://` store's certificate is checked against the public certificate authorities
    /// (Mozilla's, `webpki-roots`), or those of its `ca_file` when one is named.
    pub fn new(address: StoreAddress) -> std::io::Result<Arc<Link>> {
        let url = address.connection_url();
        let client = match (&address.ca_file, address.tls) {
            (None, _) => redis::Client::open(url.as_str()),
            (Some(_), false) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "store {address}: a CA certificate file is only for TLS stores (rediss://)"
                    ),
                ))
            }
            (Some(ca), true) => {
                let pem = std::fs::read(ca).map_err(|e| {
                    std::io::Error::new(
                        e.kind(),
                        format!(
                            "store {address}: cannot read the CA certificate file {}: {e}",
                            ca.display()
                        ),
                    )
                })?;
                let certificates = redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(pem),
                };
                redis::Client::build_with_tls(url.as_str(), certificates)
            }
        }
        .map_err(|e| {
            std::io::Error::other(format!(
                "store {address}: {}",
                e.detail().unwrap_or(&e.to_string())
            ))
        })?;
        Ok(Arc::new(Link {
            address,
            client,
            state: Mutex::new(State::default()),
            value_bytes: AtomicU64::new(0),
        }))
    }

    /// The store's address (without credentials).
    pub fn address(&self) -> &StoreAddress {
        &self.address
    }

    /// How many bytes of session values (`GETRANGE`s of their keys, title rows aside) calls on
    /// this link have read: what the tests and the bench weigh a listing or an open by.
    pub fn value_bytes_read(&self) -> u64 {
        self.value_bytes.load(Ordering::Relaxed)
    }

    /// Counts `n` bytes of session values read.
    pub(crate) fn count_value_bytes(&self, n: usize) {
        self.value_bytes.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// A new connection of its own (for subscriptions).
    pub fn connect(&self) -> std::io::Result<redis::Connection> {
        let conn = self
            .client
            .get_connection_with_timeout(CONNECT_TIMEOUT)
            .map_err(|e| self.error(&e))?;
        let _ = conn.set_read_timeout(Some(IO_TIMEOUT));
        let _ = conn.set_write_timeout(Some(IO_TIMEOUT));
        Ok(conn)
    }

    /// Runs `f` on the shared connection (connecting first when there is none).
    pub fn run<T>(
        &self,
        retry: Retry,
        mut f: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> std::io::Result<T> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut tries = match retry {
            Retry::Once => 2,
            Retry::Never => 1,
        };
        loop {
            tries -= 1;
            let conn = self.connected(&mut state)?;
            match f(conn) {
                Ok(value) => return Ok(value),
                Err(err) if is_connection_lost(&err) => {
                    state.conn = None;
                    tracing::info!(store = %self.address, "connection lost: {err}");
                    if tries == 0 {
                        return Err(self.error(&err));
                    }
                }
                Err(err) => return Err(self.error(&err)),
            }
        }
    }

    fn connected<'a>(&self, state: &'a mut State) -> std::io::Result<&'a mut redis::Connection> {
        if state.conn.is_none() {
            if let Some((at, _)) = state.retry_at {
                let now = Instant::now();
                if now < at {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::NotConnected,
                        format!(
                            "store {} is unreachable; trying again in {} ms",
                            self.address,
                            (at - now).as_millis()
                        ),
                    ));
                }
            }
            match self.connect() {
                Ok(conn) => {
                    if state.retry_at.take().is_some() {
                        tracing::info!(store = %self.address, "connected again");
                    }
                    state.conn = Some(conn);
                }
                Err(err) => {
                    let pause = state
                        .retry_at
                        .map_or(FIRST_PAUSE, |(_, p)| (p * 2).min(LONGEST_PAUSE));
                    state.retry_at = Some((Instant::now() + pause, pause));
                    return Err(err);
                }
            }
        }
        state
            .conn
            .as_mut()
            .ok_or_else(|| std::io::Error::other("no connection"))
    }

    /// A Redis error as an I/O error naming the store (never its credentials).
    pub(crate) fn error(&self, err: &redis::RedisError) -> std::io::Error {
        let kind = if is_connection_lost(err) {
            std::io::ErrorKind::NotConnected
        } else if err.kind() == redis::ErrorKind::AuthenticationFailed {
            std::io::ErrorKind::PermissionDenied
        } else {
            std::io::ErrorKind::Other
        };
        let text = err.to_string();
        // rustls's words for a certificate its roots do not vouch for.
        let hint = if text.contains("invalid peer certificate") && self.address.ca_file.is_none() {
            " (a store whose certificate a private CA signed needs that CA's certificate: caFile in the settings, --store-ca-file on the command line)"
        } else {
            ""
        };
        std::io::Error::new(kind, format!("store {}: {text}{hint}", self.address))
    }
}

fn is_connection_lost(err: &redis::RedisError) -> bool {
    err.is_io_error()
        || err.is_connection_dropped()
        || err.is_connection_refusal()
        || err.is_timeout()
}
