//! Where the bridge and the server meet on this machine: the private runtime folder (the same one
//! the bridge computes: `$XDG_RUNTIME_DIR/sessiontree`, else `<tmp>/sessiontree-<uid>`, mode
//! 0700), the discovery file of a terminal agent's session, and the bridge file the server hands
//! to the agents it starts (written from the copy built into the binary).

use sha2::Digest as _;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// The bridge extension, as shipped (`server/bridge/sessiontree-bridge.ts`).
pub const BRIDGE_SOURCE: &str = include_str!("../../../../bridge/sessiontree-bridge.ts");

/// The bridge's file name in an agent's extensions folder.
pub const BRIDGE_FILE_NAME: &str = "sessiontree-bridge.ts";

/// The private folder (created 0700 when missing; refused when someone else owns it or others
/// can enter it, since the sockets' tokens live there).
pub fn runtime_dir() -> std::io::Result<PathBuf> {
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(base) => PathBuf::from(base).join("sessiontree"),
        None => std::env::temp_dir().join(format!(
            "sessiontree-{}",
            rustix::process::getuid().as_raw()
        )),
    };
    match std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
    {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::metadata(&dir)?;
    use std::os::unix::fs::MetadataExt as _;
    if meta.uid() != rustix::process::getuid().as_raw() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{} belongs to another user", dir.display()),
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(dir)
}

/// The discovery file a terminal agent writes for `session_file` (the bridge's rule: the first 32
/// hex digits of the SHA-256 of the resolved path).
pub fn discovery_file(dir: &Path, session_file: &Path) -> PathBuf {
    let digest = sha2::Sha256::digest(session_file.as_os_str().as_encoded_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("{}.json", &hex[..32]))
}

/// The bridge file handed to agents the server starts: written once per content into the
/// runtime folder (0600), so an agent never runs a file someone else could have changed.
pub fn bridge_file(dir: &Path) -> std::io::Result<PathBuf> {
    let digest = sha2::Sha256::digest(BRIDGE_SOURCE.as_bytes());
    let short: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let path = dir.join(format!("bridge-{short}.ts"));
    if std::fs::read(&path).is_ok_and(|bytes| bytes == BRIDGE_SOURCE.as_bytes()) {
        return Ok(path);
    }
    let temp = dir.join(format!("bridge-{short}.{}.tmp", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)?;
    file.write_all(BRIDGE_SOURCE.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&temp, &path)?;
    Ok(path)
}

/// A fresh socket path for an agent the server starts (short: Unix socket paths hold 107 bytes).
pub fn spawn_socket(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("s{}-{n}.sock", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_discovery_key_is_the_bridges() {
        // node -e 'console.log(require("crypto").createHash("sha256").update("/home/me/s.jsonl").digest("hex").slice(0,32))'
        let file = discovery_file(Path::new("/run"), Path::new("/home/me/s.jsonl"));
        assert_eq!(
            file,
            Path::new("/run/b358f143c36080351c700a8d22f9ce9b.json"),
            "the bridge names the file after the same digest"
        );
    }
}

/// A private copy (0600, a new file in the runtime folder) of a session whose file is not written
/// yet, for the agent to start on; removed when dropped.
#[derive(Debug)]
pub struct UnwrittenCopy(PathBuf);

impl UnwrittenCopy {
    /// Writes `contents` to a new file in `dir` named `n`.
    pub fn write(dir: &Path, n: u64, contents: &str) -> std::io::Result<UnwrittenCopy> {
        let path = dir.join(format!("unwritten-{}-{n}.jsonl", std::process::id()));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        let copy = UnwrittenCopy(path);
        file.write_all(contents.as_bytes())?;
        Ok(copy)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for UnwrittenCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
