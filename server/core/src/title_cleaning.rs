//! Session names: omp's title cleaning and plan-title humanizing, pi's trimming.

/// omp's cleaning of a title: C0/C1 control characters become spaces, runs of spaces collapse,
/// and the result is trimmed.
pub fn clean_title(raw: &str) -> String {
    let replaced: String = raw
        .chars()
        .map(|c| {
            if (c as u32) <= 0x1f || (0x7f..=0x9f).contains(&(c as u32)) {
                ' '
            } else {
                c
            }
        })
        .collect();
    let mut out = String::with_capacity(replaced.len());
    let mut last_space = false;
    for c in replaced.chars() {
        if c == ' ' {
            if !last_space {
                out.push(c);
            }
            last_space = true;
        } else {
            out.push(c);
            last_space = false;
        }
    }
    crate::js::trim(&out).to_owned()
}

/// omp's `humanizePlanTitle`: runs of `-`/`_` become one space, trimmed, first character
/// upper-cased (`charAt(0).toUpperCase()`); `""` when nothing is left.
pub fn humanize_plan_title(title: &str) -> String {
    let mut spaced = String::with_capacity(title.len());
    let mut in_run = false;
    for c in title.chars() {
        if c == '-' || c == '_' {
            if !in_run {
                spaced.push(' ');
            }
            in_run = true;
        } else {
            spaced.push(c);
            in_run = false;
        }
    }
    crate::js::upper_first(crate::js::trim(&spaced))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_control_characters() {
        assert_eq!(clean_title("  a\u{1b}[31m\tb\n\u{85}c  "), "a [31m b c");
        // Only spaces collapse; other white space is trimmed at the ends as `trim` does.
        assert_eq!(
            clean_title("\u{a0}a\u{2003}\u{2003}b\u{feff}"),
            "a\u{2003}\u{2003}b"
        );
        assert_eq!(clean_title("\u{7}\u{7}"), "");
    }

    #[test]
    fn humanizes_plan_titles() {
        // The examples of the design notes.
        assert_eq!(
            humanize_plan_title("migrate-mcp-loader"),
            "Migrate mcp loader"
        );
        assert_eq!(
            humanize_plan_title("fix_session_naming"),
            "Fix session naming"
        );
        assert_eq!(humanize_plan_title("foo--bar__baz"), "Foo bar baz");
        assert_eq!(humanize_plan_title("RefactorRouter"), "RefactorRouter");
        assert_eq!(humanize_plan_title(""), "");
        assert_eq!(humanize_plan_title("---"), "");
        assert_eq!(humanize_plan_title("fix-login-bug"), "Fix login bug");
        assert_eq!(humanize_plan_title("add__dark--mode_"), "Add dark mode");
        assert_eq!(humanize_plan_title("--__--"), "");
        assert_eq!(
            humanize_plan_title("refactor_session-manager"),
            "Refactor session manager"
        );
        assert_eq!(humanize_plan_title("éclair-recipe"), "Éclair recipe");
        // `charAt(0)` is one UTF-16 unit: a letter outside the BMP stays as it is.
        assert_eq!(humanize_plan_title("\u{10428}-x"), "\u{10428} x");
        assert_eq!(humanize_plan_title("ßx"), "SSx");
    }
}
