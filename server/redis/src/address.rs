//! A store's address: `redis://HOST:PORT[/DB][?prefix=PREFIX]` (`rediss://` for TLS), with the
//! credentials kept apart so that no address shown or logged ever carries them; and the URI a
//! session of a store is known by (`redis://HOST:PORT/DB/PATH[?prefix=PREFIX]`).

use std::fmt;
use std::path::{Path, PathBuf};

/// `text` with what stands before an `@` of its authority (credentials) replaced, for messages.
fn without_credentials(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_owned();
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}://<credentials>{}", &rest[at..]),
        None => text.to_owned(),
    }
}

/// omp's default key prefix.
pub const DEFAULT_PREFIX: &str = "omp:sessions:";

/// Where a store is and which part of it holds the sessions.
#[derive(Clone, PartialEq, Eq)]
pub struct StoreAddress {
    /// `rediss://`: TLS.
    pub tls: bool,
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// Database number.
    pub db: i64,
    /// Key prefix of omp's `RedisSessionStorage` (default `omp:sessions:`).
    pub prefix: String,
    /// ACL user name, when one is used.
    pub username: Option<String>,
    password: Option<String>,
    /// For `rediss://`: a PEM file of the certificate authorities the server's certificate is
    /// checked against instead of the public ones (a store with a private CA).
    pub ca_file: Option<PathBuf>,
}

impl fmt::Debug for StoreAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreAddress")
            .field("address", &self.to_string())
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<hidden>"))
            .finish()
    }
}

/// The address without credentials (what is shown and logged).
impl fmt::Display for StoreAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "rediss" } else { "redis" };
        write!(f, "{scheme}://{}:{}/{}", self.host, self.port, self.db)?;
        if self.prefix != DEFAULT_PREFIX {
            write!(f, "?prefix={}", percent_encode(&self.prefix))?;
        }
        Ok(())
    }
}

impl StoreAddress {
    /// Parses `redis://HOST:PORT[/DB][?prefix=PREFIX]` or `rediss://…`. Credentials in the
    /// address are refused: they come from settings or an environment variable
    /// ([`StoreAddress::with_credentials`]), so that an address can be shown and logged.
    pub fn parse(text: &str) -> Result<StoreAddress, String> {
        let shown = without_credentials(text);
        let bad = |why: &str| {
            format!("bad store address {shown:?}: {why} (expected redis://HOST:PORT[/DB][?prefix=PREFIX])")
        };
        let (tls, rest) = if let Some(rest) = text.strip_prefix("redis://") {
            (false, rest)
        } else if let Some(rest) = text.strip_prefix("rediss://") {
            (true, rest)
        } else {
            return Err(bad("it does not start with redis:// or rediss://"));
        };
        let (rest, query) = match rest.split_once('?') {
            Some((rest, query)) => (rest, Some(query)),
            None => (rest, None),
        };
        let (authority, db) = match rest.split_once('/') {
            Some((authority, db)) => (authority, db),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(bad("credentials do not go into the address; set them in the user settings or name an environment variable"));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => {
                let port = port
                    .parse::<u16>()
                    .map_err(|_| bad("the port is not a number"))?;
                (host, port)
            }
            _ => (authority, 6379),
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let db = match db.trim_end_matches('/') {
            "" => 0,
            n => n
                .parse::<i64>()
                .map_err(|_| bad("the database is not a number"))?,
        };
        let mut prefix = DEFAULT_PREFIX.to_owned();
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("prefix", value)) => {
                    prefix = percent_decode(value)
                        .ok_or_else(|| bad("the prefix is not valid percent-encoded UTF-8"))?;
                }
                _ => return Err(bad(&format!("unknown parameter {pair:?}"))),
            }
        }
        Ok(StoreAddress {
            tls,
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            port,
            db,
            prefix,
            username: None,
            password: None,
            ca_file: None,
        })
    }

    /// The address with the certificate authorities of a `rediss://` store (see
    /// [`StoreAddress::ca_file`]).
    pub fn with_ca_file(mut self, ca_file: Option<PathBuf>) -> StoreAddress {
        self.ca_file = ca_file;
        self
    }

    /// The address with an ACL user and a password (either may be absent).
    pub fn with_credentials(
        mut self,
        username: Option<String>,
        password: Option<String>,
    ) -> StoreAddress {
        self.username = username.filter(|u| !u.is_empty());
        self.password = password.filter(|p| !p.is_empty());
        self
    }

    /// Whether a password is set.
    pub fn has_password(&self) -> bool {
        self.password.is_some()
    }

    /// The URL the client connects with (credentials included: never show or log it).
    pub(crate) fn connection_url(&self) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        let user = match (&self.username, &self.password) {
            (Some(u), Some(p)) => format!("{}:{}@", percent_encode(u), percent_encode(p)),
            (None, Some(p)) => format!(":{}@", percent_encode(p)),
            (Some(u), None) => format!("{}@", percent_encode(u)),
            (None, None) => String::new(),
        };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("{scheme}://{user}{host}:{}/{}", self.port, self.db)
    }
}

impl StoreAddress {
    /// The URI a session of this store is known by in the language server:
    /// `redis://HOST:PORT/DB/PATH[?prefix=PREFIX]` (`rediss://` for TLS), where `PATH` is the
    /// session's absolute path as omp names it, percent-encoded as a `file://` URI's path is. The
    /// prefix is given only when it is not omp's default; credentials are never part of it.
    /// `None` for a path that is not absolute (it has no place after the database).
    pub fn session_uri(&self, path: &Path) -> Option<String> {
        let text = path.to_str()?;
        if !text.starts_with('/') {
            return None;
        }
        let scheme = if self.tls { "rediss" } else { "redis" };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let mut uri = format!("{scheme}://{host}:{}/{}", self.port, self.db);
        for segment in text.split('/').skip(1) {
            uri.push('/');
            uri.push_str(&percent_encode(segment));
        }
        if self.prefix != DEFAULT_PREFIX {
            uri.push_str("?prefix=");
            uri.push_str(&percent_encode(&self.prefix));
        }
        Some(uri)
    }

    /// Reads a session URI ([`StoreAddress::session_uri`]): the store's address (without
    /// credentials) and the session's path.
    pub fn parse_session_uri(text: &str) -> Result<(StoreAddress, PathBuf), String> {
        let shown = without_credentials(text);
        let bad = |why: &str| {
            format!(
                "bad session URI {shown:?}: {why} (expected redis://HOST:PORT/DB/PATH[?prefix=PREFIX])"
            )
        };
        let (rest, query) = match text.split_once('?') {
            Some((rest, query)) => (rest, Some(query)),
            None => (text, None),
        };
        let after_scheme = rest
            .strip_prefix("redis://")
            .or_else(|| rest.strip_prefix("rediss://"))
            .ok_or_else(|| bad("it does not start with redis:// or rediss://"))?;
        let (authority, path) = after_scheme
            .split_once('/')
            .ok_or_else(|| bad("no database and path"))?;
        let (db, path) = path
            .split_once('/')
            .ok_or_else(|| bad("no session path after the database"))?;
        let path = percent_decode(path)
            .ok_or_else(|| bad("the path is not valid percent-encoded UTF-8"))?;
        if path.is_empty() {
            return Err(bad("no session path after the database"));
        }
        let scheme_len = rest.len() - after_scheme.len();
        let mut address_text = format!("{}{authority}/{db}", &rest[..scheme_len]);
        if let Some(query) = query {
            address_text.push('?');
            address_text.push_str(query);
        }
        let address = StoreAddress::parse(&address_text).map_err(|e| bad(&e))?;
        Ok((address, PathBuf::from(format!("/{path}"))))
    }

    /// Whether `other` names the same store and prefix (credentials aside).
    pub fn same_store(&self, other: &StoreAddress) -> bool {
        self.tls == other.tls
            && self.host.eq_ignore_ascii_case(&other.host)
            && self.port == other.port
            && self.db == other.db
            && self.prefix == other.prefix
    }
}

/// Percent-encodes everything but unreserved characters.
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes; `None` when one is malformed or the result is not UTF-8.
pub fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_with_defaults_and_show_no_credentials() {
        let a = StoreAddress::parse("redis://127.0.0.1:6390").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (a.host.as_str(), a.port, a.db, a.prefix.as_str(), a.tls),
            ("127.0.0.1", 6390, 0, DEFAULT_PREFIX, false)
        );
        let b = StoreAddress::parse("rediss://cache.example:7000/3?prefix=team%3Aa%3A")
            .unwrap_or_else(|e| panic!("{e}"))
            .with_credentials(Some("alice".into()), Some("s3cret p@ss".into()));
        assert_eq!((b.db, b.prefix.as_str(), b.tls), (3, "team:a:", true));
        assert_eq!(
            b.to_string(),
            "rediss://cache.example:7000/3?prefix=team%3Aa%3A"
        );
        assert!(!format!("{b:?}").contains("s3cret"));
        assert_eq!(
            b.connection_url(),
            "rediss://alice:s3cret%20p%40ss@cache.example:7000/3"
        );
    }

    #[test]
    fn session_uris_carry_the_store_and_the_path_and_read_back() {
        let a = StoreAddress::parse("redis://127.0.0.1:6390/2").unwrap_or_else(|e| panic!("{e}"));
        let path = Path::new("/home/me/.omp/agent/sessions/-proj/2026-01-01T00-00_a b%.jsonl");
        let uri = a.session_uri(path).unwrap_or_default();
        assert_eq!(
            uri,
            "redis://127.0.0.1:6390/2/home/me/.omp/agent/sessions/-proj/2026-01-01T00-00_a%20b%25.jsonl"
        );
        let (back, back_path) =
            StoreAddress::parse_session_uri(&uri).unwrap_or_else(|e| panic!("{e}"));
        assert!(back.same_store(&a));
        assert_eq!(back_path, path);
        let b = StoreAddress::parse("rediss://cache:7000/0?prefix=team%3Aa%3A")
            .unwrap_or_else(|e| panic!("{e}"))
            .with_credentials(Some("alice".into()), Some("secret".into()));
        let uri = b.session_uri(Path::new("/s/x.jsonl")).unwrap_or_default();
        assert_eq!(uri, "rediss://cache:7000/0/s/x.jsonl?prefix=team%3Aa%3A");
        let (back, _) = StoreAddress::parse_session_uri(&uri).unwrap_or_else(|e| panic!("{e}"));
        assert!(back.same_store(&b) && !back.same_store(&a));
        assert_eq!(a.session_uri(Path::new("relative/x.jsonl")), None);
        for (text, why) in [
            ("file:///x.jsonl", "does not start"),
            ("redis://h:1", "no database"),
            ("redis://h:1/0", "no session path"),
            ("redis://h:1/0/", "no session path"),
            ("redis://u:p@h:1/0/x.jsonl", "credentials"),
            ("redis://h:1/x/y.jsonl", "database"),
            ("redis://h:1/0/%ZZ.jsonl", "percent"),
        ] {
            let err = StoreAddress::parse_session_uri(text)
                .err()
                .unwrap_or_default();
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn bad_addresses_are_refused_with_the_reason() {
        for (text, why) in [
            ("http://x:1", "does not start"),
            ("redis://u:p@host:1", "credentials"),
            ("rediss://alice:s3cret@host:1/0?prefix=a", "credentials"),
            ("redis://host:port", "port"),
            ("redis://host:1/x", "database"),
            ("redis://host:1?db=2", "unknown parameter"),
            ("redis://:1", "no host"),
        ] {
            let err = StoreAddress::parse(text).err().unwrap_or_default();
            assert!(err.contains(why), "{text}: {err}");
            assert!(!err.contains("s3cret") && !err.contains("u:p@"), "{err}");
        }
        let err = StoreAddress::parse_session_uri("redis://u:s3cret@h:1/0/x.jsonl")
            .err()
            .unwrap_or_default();
        assert!(
            err.contains("<credentials>@h:1") && !err.contains("s3cret"),
            "{err}"
        );
    }
}
