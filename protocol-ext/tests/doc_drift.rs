//! `docs/protocol.md` against the Rust types: every method has a section, every section is a
//! method, each section follows the template, its direction is right, and its JSON examples are
//! exactly what the types serialize to (`UPDATE_EXPECT=1 cargo test -p sessiontree-protocol`
//! rewrites the examples). The error kinds table lists every kind with its code.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use sessiontree_protocol::{catalog, ErrorKind, MethodKind};
use std::path::PathBuf;

fn doc_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("docs")
        .join("protocol.md")
}

const TEMPLATE: &[&str] = &[
    "**Direction:**",
    "**Capability:**",
    "**Params:**",
    "**Result:**",
    "**Errors:**",
    "**Semantics:**",
];

/// Splits the doc into (heading method, section text) for `### \`sessionTree/…\`` headings.
fn sections(doc: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in doc.lines() {
        if let Some(rest) = line.strip_prefix("### `") {
            let method = rest.trim_end_matches('`').to_owned();
            out.push((method, String::new()));
            continue;
        }
        if line.starts_with("## ") || line.starts_with("### ") {
            out.push((String::new(), String::new()));
            continue;
        }
        if let Some(last) = out.last_mut() {
            last.1.push_str(line);
            last.1.push('\n');
        }
    }
    out.into_iter().filter(|(m, _)| !m.is_empty()).collect()
}

/// The body of the fenced block whose info string is `info` (e.g. `json params`).
fn block<'a>(section: &'a str, info: &str) -> Option<&'a str> {
    let open = format!("```{info}\n");
    let start = section.find(&open)? + open.len();
    let end = section[start..].find("```")? + start;
    Some(&section[start..end])
}

fn pretty(v: &serde_json::Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

/// Replaces the body of block `info` in the section of `method`.
fn replace_block(doc: &str, method: &str, info: &str, body: &str) -> String {
    let heading = format!("### `{method}`");
    let Some(at) = doc.find(&heading) else {
        return doc.to_owned();
    };
    let open = format!("```{info}\n");
    let next_heading = doc[at + heading.len()..]
        .find("\n### ")
        .map_or(doc.len(), |i| i + at + heading.len());
    let Some(start) = doc[at..next_heading]
        .find(&open)
        .map(|i| i + at + open.len())
    else {
        return doc.to_owned();
    };
    let Some(end) = doc[start..].find("```").map(|i| i + start) else {
        return doc.to_owned();
    };
    format!("{}{}{}", &doc[..start], body, &doc[end..])
}

#[test]
fn protocol_doc_matches_the_types() {
    let path = doc_path();
    let mut doc =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let methods = catalog();
    let mut problems = Vec::new();

    let documented = sections(&doc);
    for (method, _) in &documented {
        if !methods.iter().any(|m| m.method == method) {
            problems.push(format!(
                "section `{method}` documents no method of the protocol"
            ));
        }
    }
    for m in &methods {
        let Some((_, section)) = documented.iter().find(|(name, _)| name == m.method) else {
            problems.push(format!(
                "method `{}` has no `### \\`{}\\`` section",
                m.method, m.method
            ));
            continue;
        };
        for field in TEMPLATE {
            if !section.contains(field) {
                problems.push(format!("section `{}` lacks {field}", m.method));
            }
        }
        let direction = format!("**Direction:** {}", m.direction.as_doc());
        let kind = match m.kind {
            MethodKind::Request => "request",
            MethodKind::Notification => "notification",
        };
        if !section.contains(&direction) || !section.contains(kind) {
            problems.push(format!(
                "section `{}` should say `{direction}` and that it is a {kind}",
                m.method
            ));
        }
        let mut expected = vec![("json params", pretty(&m.params))];
        if let Some(result) = &m.result {
            expected.push(("json result", pretty(result)));
        }
        for (info, want) in expected {
            match block(section, info) {
                Some(got) if got == want => {}
                Some(_) if update => doc = replace_block(&doc, m.method, info, &want),
                Some(got) => problems.push(format!(
                    "section `{}`: the ```{info} block drifted from the Rust types\n--- documented\n{got}--- from the types\n{want}",
                    m.method
                )),
                None => problems.push(format!("section `{}` lacks a ```{info} block", m.method)),
            }
        }
    }
    for kind in ErrorKind::ALL {
        if !doc.contains(&format!("| `{}` | {} |", kind.as_str(), kind.code())) {
            problems.push(format!(
                "the error kinds table lacks the row `| `{}` | {} |`",
                kind.as_str(),
                kind.code()
            ));
        }
    }
    if update {
        std::fs::write(&path, &doc).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
    assert!(
        problems.is_empty(),
        "docs/protocol.md drifted ({} problems; UPDATE_EXPECT=1 regenerates examples):\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}
