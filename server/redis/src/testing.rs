//! A `redis-server` of a test's own, on a free loopback port, stopped when dropped. Missing
//! `redis-server` fails the test (`scripts/install-test-deps.sh` installs Debian's).

use crate::address::StoreAddress;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `redis-server`.
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    /// Extra `redis-server` arguments it was started with.
    args: Vec<String>,
}

impl RedisServer {
    /// Starts a server on a free loopback port.
    pub fn start() -> RedisServer {
        RedisServer::start_with(&[])
    }

    /// Starts a server with extra configuration (`["--notify-keyspace-events", "K$"]`).
    pub fn start_with(args: &[&str]) -> RedisServer {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let port = free_port();
        let mut server = RedisServer {
            child: None,
            port,
            dir,
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let binary = which("redis-server").unwrap_or_else(|| {
            panic!("redis-server is not installed: run scripts/install-test-deps.sh (it installs Debian's redis-server)")
        });
        let child = Command::new(binary)
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .arg("--dir")
            .arg(self.dir.path())
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start redis-server: {e}"));
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{}/", self.port)) {
                if let Ok(mut conn) = client.get_connection_with_timeout(Duration::from_millis(200))
                {
                    if redis::cmd("PING").query::<String>(&mut conn).is_ok() {
                        return;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "redis-server on port {} did not answer within 20 s",
            self.port
        );
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>` (`/db?prefix=…` added by the caller when needed).
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Its address with omp's default prefix.
    pub fn address(&self) -> StoreAddress {
        StoreAddress::parse(&self.url()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A plain connection for a test's own checks.
    pub fn connection(&self) -> redis::Connection {
        redis::Client::open(format!("{}/", self.url()))
            .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(2)))
            .unwrap_or_else(|e| panic!("cannot connect to the test redis: {e}"))
    }

    /// Kills the server (SIGKILL: nothing is saved; the data is gone, as after a crash without
    /// persistence).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port (empty, or with what the test puts back).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}

/// The path of an executable on `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}
