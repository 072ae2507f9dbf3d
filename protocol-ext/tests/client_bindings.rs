//! The editor clients name every method of the protocol, and only those: the method strings in
//! `editors/vscode/src/protocol.ts` and `editors/nvim/lua/sessiontree/protocol.lua` must equal the
//! catalog's (the Rust types are the single source of truth). Runs without Node or Neovim.

use std::collections::BTreeSet;
use std::path::Path;

fn catalog_methods() -> BTreeSet<String> {
    sessiontree_protocol::catalog()
        .into_iter()
        .map(|m| m.method.to_owned())
        .collect()
}

/// Every quoted `sessionTree/…` string in a source file.
fn quoted_methods(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for quote in ['\'', '"', '`'] {
        let needle = format!("{quote}sessionTree/");
        let mut rest = text;
        while let Some(start) = rest.find(&needle) {
            let after = &rest[start + 1..];
            match after.find(quote) {
                Some(end) => {
                    let name = &after[..end];
                    // Comments speak of "`sessionTree/…`"; method names are plain identifiers.
                    if name["sessionTree/".len()..]
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric())
                    {
                        found.insert(name.to_owned());
                    }
                    rest = &after[end..];
                }
                None => break,
            }
        }
    }
    found
}

fn check(relative: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let client = quoted_methods(&text);
    let catalog = catalog_methods();
    let missing: Vec<_> = catalog.difference(&client).collect();
    let unknown: Vec<_> = client.difference(&catalog).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "{relative}: methods missing from the client: {missing:?}; methods the protocol lacks: {unknown:?}"
    );
}

#[test]
fn vscode_client_names_every_method() {
    check("editors/vscode/src/protocol.ts");
}

#[test]
fn neovim_client_names_every_method() {
    check("editors/nvim/lua/sessiontree/protocol.lua");
}

#[test]
fn the_scanner_finds_quoted_methods() {
    let found =
        quoted_methods("a = 'sessionTree/open', b = \"sessionTree/rows\" -- sessionTree/not");
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        ["sessionTree/open", "sessionTree/rows"]
    );
}
