//! Terminal cells: how wide the agents' terminal UI draws a text (0 for controls and combining
//! marks, 2 for wide characters, clusters joined as it joins them) and its truncation to a width
//! with each agent's ellipsis (`...` for pi, `…` for omp).

/// Terminal cells taken by one character (0 for controls and combining marks, 2 for wide ones).
pub fn char_width(c: char) -> usize {
    let cp = c as u32;
    if cp < 0x20 || (0x7f..0xa0).contains(&cp) {
        return 0;
    }
    if is_zero_width(cp) {
        return 0;
    }
    if is_wide(cp) {
        2
    } else {
        1
    }
}

fn is_zero_width(cp: u32) -> bool {
    matches!(cp,
        0x0300..=0x036f | 0x0483..=0x0489 | 0x0591..=0x05bd | 0x0610..=0x061a | 0x064b..=0x065f
        | 0x0e31 | 0x0e34..=0x0e3a | 0x1ab0..=0x1aff | 0x1dc0..=0x1dff | 0x200b..=0x200f
        | 0x20d0..=0x20ff | 0xfe00..=0xfe0f | 0xfe20..=0xfe2f | 0xfeff | 0xe0100..=0xe01ef)
}

fn is_wide(cp: u32) -> bool {
    matches!(cp,
        0x1100..=0x115f | 0x231a..=0x231b | 0x2329..=0x232a | 0x23e9..=0x23ec | 0x23f0 | 0x23f3
        | 0x25fd..=0x25fe | 0x2614..=0x2615 | 0x2648..=0x2653 | 0x267f | 0x2693 | 0x26a1
        | 0x26aa..=0x26ab | 0x26bd..=0x26be | 0x26c4..=0x26c5 | 0x26ce | 0x26d4 | 0x26ea
        | 0x26f2..=0x26f3 | 0x26f5 | 0x26fa | 0x26fd | 0x2705 | 0x270a..=0x270b | 0x2728 | 0x274c
        | 0x274e | 0x2753..=0x2755 | 0x2757 | 0x2795..=0x2797 | 0x27b0 | 0x27bf | 0x2b1b..=0x2b1c
        | 0x2b50 | 0x2b55 | 0x2e80..=0x303e | 0x3041..=0x33ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff
        | 0xa000..=0xa4cf | 0xa960..=0xa97f | 0xac00..=0xd7a3 | 0xf900..=0xfaff | 0xfe10..=0xfe19
        | 0xfe30..=0xfe6f | 0xff00..=0xff60 | 0xffe0..=0xffe6 | 0x16fe0..=0x16fe4 | 0x17000..=0x18cff
        | 0x1b000..=0x1b2ff | 0x1f004 | 0x1f0cf | 0x1f18e | 0x1f191..=0x1f19a | 0x1f200..=0x1f251
        | 0x1f300..=0x1f64f | 0x1f680..=0x1f6ff | 0x1f7e0..=0x1f7eb | 0x1f90c..=0x1f9ff
        | 0x1fa70..=0x1faff | 0x20000..=0x3fffd)
}

/// Splits a string into terminal clusters (a base character with its combining marks, variation
/// selectors, skin-tone modifiers, zero-width-joined followers, or a regional-indicator pair),
/// each with its cell width: an approximation of the grapheme clusters the agents measure.
pub fn clusters(s: &str) -> Vec<(&str, usize)> {
    Clusters::new(s).collect()
}

/// [`clusters`] one at a time, so that a measure can stop once it knows enough (a row's text
/// can be kilobytes long; the terminal shows a line of it).
struct Clusters<'a> {
    text: &'a str,
    chars: std::str::CharIndices<'a>,
    start: usize,
    width: usize,
    prev: Option<char>,
    regional_open: bool,
    has_vs16: bool,
    base: Option<char>,
    done: bool,
}

impl<'a> Clusters<'a> {
    fn new(text: &'a str) -> Clusters<'a> {
        Clusters {
            text,
            chars: text.char_indices(),
            start: 0,
            width: 0,
            prev: None,
            regional_open: false,
            has_vs16: false,
            base: None,
            done: false,
        }
    }

    /// The cluster `start..end` with the width it gets, if it is not empty.
    fn close(&self, end: usize) -> Option<(&'a str, usize)> {
        (end > self.start).then(|| {
            let vs16_wide =
                self.has_vs16 && self.width == 1 && self.base.is_some_and(|b| b as u32 >= 0x2000);
            let w = if vs16_wide { 2 } else { self.width };
            (&self.text[self.start..end], w)
        })
    }
}

impl<'a> Iterator for Clusters<'a> {
    type Item = (&'a str, usize);

    fn next(&mut self) -> Option<(&'a str, usize)> {
        if self.done {
            return None;
        }
        while let Some((i, c)) = self.chars.next() {
            let cp = c as u32;
            let regional = (0x1f1e6..=0x1f1ff).contains(&cp);
            let joins = i > 0
                && (is_zero_width(cp)
                    || (0x1f3fb..=0x1f3ff).contains(&cp)
                    || self.prev == Some('\u{200d}')
                    || (regional && self.regional_open));
            if joins {
                if cp == 0xfe0f {
                    self.has_vs16 = true;
                }
                if regional {
                    self.regional_open = false;
                }
                self.prev = Some(c);
                continue;
            }
            let closed = self.close(i);
            self.start = i;
            self.width = if regional { 2 } else { char_width(c) };
            self.regional_open = regional;
            self.has_vs16 = false;
            self.base = Some(c);
            self.prev = Some(c);
            if closed.is_some() {
                return closed;
            }
        }
        self.done = true;
        self.close(self.text.len())
    }
}

/// Visible width of a plain (ANSI-free) string.
pub fn visible_width(s: &str) -> usize {
    if s.is_ascii() {
        return s.bytes().filter(|b| *b >= 0x20 && *b != 0x7f).count();
    }
    Clusters::new(s).map(|(_, w)| w).sum()
}

/// Whether a plain string's visible width is at most `width`, reading no further than needed.
fn fits_width(s: &str, width: usize) -> bool {
    if s.is_ascii() {
        return s.len() <= width || visible_width(s) <= width;
    }
    let mut used = 0;
    let mut fits = true;
    walk_clusters(s, |_, w| {
        used += w;
        fits = used <= width;
        fits
    });
    fits
}

/// Walks the clusters of `s` as [`Clusters`] splits them, calling `each(end, width)` with each
/// one's end offset and width until it returns `false`. An ASCII character never joins the one
/// before it at a cluster boundary, so one followed by another ASCII character (or by nothing) is
/// a cluster of its own: such runs are walked byte by byte, and only the rest goes through
/// [`Clusters`], restarted at each boundary (which reads the same there).
fn walk_clusters(s: &str, mut each: impl FnMut(usize, usize) -> bool) {
    let bytes = s.as_bytes();
    let mut pos = 0;
    while pos < bytes.len() {
        let (end, width) = if bytes[pos].is_ascii() && bytes.get(pos + 1).is_none_or(u8::is_ascii) {
            (
                pos + 1,
                usize::from(bytes[pos] >= 0x20 && bytes[pos] != 0x7f),
            )
        } else {
            match Clusters::new(&s[pos..]).next() {
                Some((cluster, width)) => (pos + cluster.len(), width),
                None => return,
            }
        };
        pos = end;
        if !each(end, width) {
            return;
        }
    }
}

/// `truncateToWidth(text, width, ellipsis)`: the text when it fits, otherwise the longest prefix
/// of whole clusters that leaves room for the ellipsis, then the ellipsis.
pub fn truncate_to_width(text: &str, width: usize, ellipsis: &str) -> String {
    if width == 0 {
        return String::new();
    }
    if fits_width(text, width) {
        return text.to_owned();
    }
    let ellipsis_width = visible_width(ellipsis);
    let (source, target, tail) = if ellipsis_width >= width {
        (ellipsis, width, "")
    } else {
        (text, width - ellipsis_width, ellipsis)
    };
    let (mut used, mut cut) = (0, 0);
    walk_clusters(source, |end, w| {
        if used + w > target {
            return false;
        }
        used += w;
        cut = end;
        true
    });
    let mut out = String::with_capacity(cut + tail.len());
    out.push_str(&source[..cut]);
    out.push_str(tail);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Measuring and truncating that stop early answer as measuring the whole text does.
    #[test]
    fn early_stopping_measures_equal_whole_text_measures() {
        let samples = [
            "plain ascii text that goes on",
            "├─ • café ✓ naïve e\u{301}e\u{301} 👨\u{200d}👩\u{200d}👧 🇫🇷🇩🇪 ❤\u{fe0f} 漢字かな",
            "│  └─ \u{7}\u{1b}tab\there 👍🏽👍🏽 ok",
            "",
            "🇫",
            // ASCII next to joining characters, controls, keycaps and joiners.
            "ab\u{301}c de\u{200d}f 1\u{fe0f}\u{20e3}x \u{1}\u{7f}y 🇫🇷z 👍🏽a\tb\r\nc",
            "\u{200d}a e\u{301}\u{301} \u{fe0f}ok",
            "a",
            "aé",
        ];
        for text in samples {
            let mut walked = Vec::new();
            let mut start = 0;
            walk_clusters(text, |end, w| {
                walked.push((&text[start..end], w));
                start = end;
                true
            });
            assert_eq!(walked, clusters(text), "{text:?}");
            let whole: usize = clusters(text).iter().map(|(_, w)| w).sum();
            assert_eq!(visible_width(text), whole, "{text:?}");
            for width in 0..=whole + 2 {
                assert_eq!(fits_width(text, width), whole <= width, "{text:?} {width}");
                let cut = truncate_to_width(text, width, "...");
                if width > 0 && whole <= width {
                    assert_eq!(cut, text);
                } else if width > 3 {
                    // The longest prefix of whole clusters that leaves room for the ellipsis.
                    let mut used = 0;
                    let prefix: String = clusters(text)
                        .into_iter()
                        .take_while(|(_, w)| {
                            used += w;
                            used <= width - 3
                        })
                        .map(|(c, _)| c)
                        .collect();
                    assert_eq!(cut, format!("{prefix}..."), "{text:?} {width}");
                }
            }
        }
        let rebuilt: String = clusters(samples[1]).into_iter().map(|(c, _)| c).collect();
        assert_eq!(rebuilt, samples[1]);
    }

    #[test]
    fn truncation_by_cells() {
        assert_eq!(truncate_to_width("hello world", 8, "..."), "hello...");
        assert_eq!(truncate_to_width("hello world", 8, "…"), "hello w…");
        assert_eq!(truncate_to_width("日本語テキスト", 7, "…"), "日本語…");
        assert_eq!(truncate_to_width("short", 8, "…"), "short");
        assert_eq!(visible_width("e\u{301}"), 1);
        assert_eq!(visible_width("👨\u{200d}👩\u{200d}👧"), 2);
        assert_eq!(visible_width("🇫🇷"), 2);
        assert_eq!(visible_width("❤\u{fe0f}"), 2);
        assert_eq!(truncate_to_width("ab👨\u{200d}👩cd", 4, "…"), "ab…");
    }
}
