//! What a work tree holds, read whole so a test can compare it before and after an operation.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Every file under `root` except `.git`: path → (bytes, permission bits); a symbolic link is
/// `("-> target", 0o120000)`, not followed.
pub fn files(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// [`files`] without the permission bits: path → bytes.
pub fn contents(root: &Path) -> BTreeMap<String, Vec<u8>> {
    files(root)
        .into_iter()
        .map(|(path, (bytes, _))| (path, bytes))
        .collect()
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
    let read = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in read {
        let path = entry.expect("a folder entry").path();
        let rel = path
            .strip_prefix(root)
            .expect("inside the work tree")
            .to_string_lossy()
            .into_owned();
        if rel == ".git" {
            continue;
        }
        let meta =
            std::fs::symlink_metadata(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).expect("a link's target");
            let shown = format!("-> {}", target.display()).into_bytes();
            out.insert(rel, (shown, 0o120000));
        } else if meta.is_dir() {
            walk(root, &path, out);
        } else {
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.insert(rel, (bytes, meta.permissions().mode() & 0o777));
        }
    }
}
