//! JSON text read token by token without building values: the one grammar every fast reader of
//! session lines shares (the message line read at open, the context's read of a message), so that
//! what they accept is exactly what serde_json accepts into a `Value`.
//!
//! A [`Scanner`] walks one text: white space, strings (validated: no control characters, only
//! JSON's escapes, `\u` surrogates in pairs), numbers, literals, objects and arrays (nested no
//! deeper than [`MAX_DEPTH`]), and skips any value. Readers walk objects and arrays with closures
//! that pick the fields they want and skip the rest. What a reader must know beyond the grammar
//! (whether the text is what serde_json writes, which numbers it can take) it learns through a
//! [`Watch`]; the readers that need nothing use [`Quiet`], which compiles to nothing.
//!
//! The scanner gives up (`None`) on anything it does not accept; the reader then leaves the line
//! to its full parse, which finds the same error or reads the line. [`decode`] turns a string's
//! inside into its text. The tests (`oracle.rs`) compare all of it with serde_json on random and
//! adversarial texts.

#[cfg(test)]
mod oracle;

/// Containers nested deeper than this are left to the full parse (serde_json's limit is 128).
pub(crate) const MAX_DEPTH: u32 = 100;

/// What a reader learns of the text as it is scanned, beyond the grammar. Every method has a
/// default that does nothing.
pub(crate) trait Watch {
    /// White space was skipped between tokens.
    #[inline(always)]
    fn whitespace(&mut self) {}

    /// An escape in a string: the bytes after the backslash (`n`, or `u` and its four hex digits).
    #[inline(always)]
    fn escape(&mut self, _escape: &[u8]) {}

    /// A number token (valid JSON); `false` gives up on the text.
    #[inline(always)]
    fn number(&mut self, _token: &str) -> bool {
        true
    }
}

/// A reader that needs nothing but the grammar.
pub(crate) struct Quiet;

impl Watch for Quiet {}

/// A string token's escapes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Escapes {
    /// Any escape.
    pub any: bool,
    /// A `\u` escape.
    pub unicode: bool,
}

/// An object's key as scanned.
#[derive(Clone, Copy)]
pub(crate) struct Key<'a> {
    /// Where the key's string token starts in the text.
    pub start: usize,
    /// The token, quotes included.
    pub raw: &'a str,
    pub escapes: Escapes,
}

impl<'a> Key<'a> {
    /// The key's text when it is written without escapes.
    pub(crate) fn plain(&self) -> Option<&'a str> {
        if self.escapes.any {
            return None;
        }
        self.raw.get(1..self.raw.len() - 1)
    }

    /// The key's text, decoded when it has escapes.
    pub(crate) fn text(&self) -> Option<std::borrow::Cow<'a, str>> {
        let inner = self.raw.get(1..self.raw.len() - 1)?;
        if !self.escapes.any {
            return Some(std::borrow::Cow::Borrowed(inner));
        }
        decode(inner).map(std::borrow::Cow::Owned)
    }

    /// The key's span in the text, quotes included.
    pub(crate) fn span(&self) -> std::ops::Range<usize> {
        self.start..self.start + self.raw.len()
    }
}

/// A position in a JSON text, read as serde_json reads it.
pub(crate) struct Scanner<'a, W: Watch = Quiet> {
    pub text: &'a str,
    bytes: &'a [u8],
    /// The next byte to read.
    pub at: usize,
    pub watch: W,
}

impl<'a> Scanner<'a, Quiet> {
    /// A scanner at the start of `text` that needs nothing but the grammar.
    pub(crate) fn new(text: &'a str) -> Self {
        Scanner::watched(text, Quiet)
    }
}

impl<'a, W: Watch> Scanner<'a, W> {
    /// A scanner at the start of `text` that tells `watch` what it sees.
    pub(crate) fn watched(text: &'a str, watch: W) -> Self {
        Scanner {
            text,
            bytes: text.as_bytes(),
            at: 0,
            watch,
        }
    }

    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Whether the whole text has been read.
    pub(crate) fn at_end(&self) -> bool {
        self.at == self.bytes.len()
    }

    /// serde_json's white space: space, line feed, tab, carriage return.
    #[inline]
    pub(crate) fn ws(&mut self) {
        let start = self.at;
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
        if self.at != start {
            self.watch.whitespace();
        }
    }

    /// The byte `c`, which must be next.
    #[inline]
    pub(crate) fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek() == Some(c)).then(|| self.at += 1)
    }

    /// The literal `word` (`true`, `false`, `null`), which must be next.
    #[inline]
    pub(crate) fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end) == Some(word)).then(|| self.at = end)
    }

    /// A string token, validated as serde_json reads it into a `String`: no control characters,
    /// only JSON's escapes, `\u` surrogates in pairs. Gives the token, quotes included.
    pub(crate) fn string(&mut self) -> Option<(&'a str, Escapes)> {
        let start = self.at;
        self.eat(b'"')?;
        let mut escapes = Escapes::default();
        loop {
            self.at = plain_run(self.bytes, self.at);
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some((self.text.get(start..self.at)?, escapes));
                }
                b'\\' => {
                    escapes.any = true;
                    self.at += 1;
                    escapes.unicode |= self.escape()?;
                }
                _ => return None,
            }
        }
    }

    /// The escape after a backslash; whether it is a `\u` escape.
    fn escape(&mut self) -> Option<bool> {
        match self.peek()? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                self.watch.escape(&self.bytes[self.at..self.at + 1]);
                self.at += 1;
                Some(false)
            }
            b'u' => {
                match self.unicode()? {
                    0xDC00..=0xDFFF => return None,
                    0xD800..=0xDBFF => {
                        self.eat(b'\\')?;
                        if !(0xDC00..=0xDFFF).contains(&self.unicode()?) {
                            return None;
                        }
                    }
                    _ => {}
                }
                Some(true)
            }
            _ => None,
        }
    }

    /// `u` and four hex digits: the code unit.
    fn unicode(&mut self) -> Option<u16> {
        let escape = self.bytes.get(self.at..self.at + 5)?;
        if escape[0] != b'u' {
            return None;
        }
        let unit = hex4(&escape[1..])?;
        self.watch.escape(escape);
        self.at += 5;
        Some(unit)
    }

    /// A string written without escapes: its text, borrowed.
    pub(crate) fn plain_str(&mut self) -> Option<&'a str> {
        match self.string()? {
            (raw, Escapes { any: false, .. }) => raw.get(1..raw.len() - 1),
            _ => None,
        }
    }

    /// `null` (`None`) or a string written without escapes.
    pub(crate) fn opt_str(&mut self) -> Option<Option<&'a str>> {
        if self.peek() == Some(b'n') {
            return self.literal(b"null").map(|()| None);
        }
        self.plain_str().map(Some)
    }

    /// A number, by JSON's grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    pub(crate) fn number(&mut self) -> Option<()> {
        let start = self.at;
        let digits = |cur: &mut Self| {
            let from = cur.at;
            while cur.peek().is_some_and(|c| c.is_ascii_digit()) {
                cur.at += 1;
            }
            (cur.at > from).then_some(())
        };
        let _ = self.eat(b'-');
        match self.peek()? {
            b'0' => {
                self.at += 1;
                if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    return None;
                }
            }
            b'1'..=b'9' => digits(self)?,
            _ => return None,
        }
        if self.eat(b'.').is_some() {
            digits(self)?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            digits(self)?;
        }
        let token = self.text.get(start..self.at)?;
        self.watch.number(token).then_some(())
    }

    /// Skips one value (validated), inside `depth` containers.
    pub(crate) fn skip(&mut self, depth: u32) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(depth, |cur, _, depth| cur.skip(depth)),
            b'[' => self.array(depth, |cur, depth| cur.skip(depth)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// Skips one value and gives its span (the text serde_json's `RawValue` holds).
    pub(crate) fn skip_span(&mut self, depth: u32) -> Option<std::ops::Range<usize>> {
        let start = self.at;
        self.skip(depth)?;
        Some(start..self.at)
    }

    /// Skips one value and gives its text.
    pub(crate) fn raw(&mut self, depth: u32) -> Option<&'a str> {
        let span = self.skip_span(depth)?;
        self.text.get(span)
    }

    /// A whole text holding one value, white space around it allowed (as `serde_json::from_str`).
    #[cfg(test)]
    pub(crate) fn document(&mut self) -> Option<()> {
        self.ws();
        self.skip(0)?;
        self.ws();
        self.at_end().then_some(())
    }

    /// An object inside `depth` containers: `field` reads each value (the scanner is at it)
    /// given its key and the depth inside the object.
    pub(crate) fn object(
        &mut self,
        depth: u32,
        mut field: impl FnMut(&mut Self, Key<'a>, u32) -> Option<()>,
    ) -> Option<()> {
        self.container(depth, b'{', b'}', |cur, depth| {
            let start = cur.at;
            let (raw, escapes) = cur.string()?;
            cur.ws();
            cur.eat(b':')?;
            cur.ws();
            field(
                cur,
                Key {
                    start,
                    raw,
                    escapes,
                },
                depth,
            )
        })
    }

    /// An array inside `depth` containers: `element` reads each element (the scanner is at it).
    pub(crate) fn array(
        &mut self,
        depth: u32,
        element: impl FnMut(&mut Self, u32) -> Option<()>,
    ) -> Option<()> {
        self.container(depth, b'[', b']', element)
    }

    /// A container from `open` to `close` inside `depth` containers, its items separated by
    /// commas: `item` reads each one (the scanner is at it, white space skipped) given the depth
    /// inside the container.
    fn container(
        &mut self,
        depth: u32,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self, u32) -> Option<()>,
    ) -> Option<()> {
        let depth = depth + 1;
        if depth > MAX_DEPTH {
            return None;
        }
        self.eat(open)?;
        self.ws();
        if self.eat(close).is_some() {
            return Some(());
        }
        loop {
            self.ws();
            item(self, depth)?;
            self.ws();
            match self.peek()? {
                b',' => self.at += 1,
                c if c == close => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
}

/// Four hex digits (either case) as a code unit.
fn hex4(hex: &[u8]) -> Option<u16> {
    hex.iter().try_fold(0u16, |n, &c| {
        let digit = (c as char).to_digit(16)?;
        Some(n << 4 | digit as u16)
    })
}

/// Whether a string byte ends a run of plain characters: a quote, a backslash, or a control
/// character (which JSON forbids in strings).
#[inline(always)]
fn stops_string(c: u8) -> bool {
    c < 0x20 || c == b'"' || c == b'\\'
}

/// The index of the first byte at or after `at` that [`stops_string`] (`bytes.len()` if none),
/// tested sixteen bytes at a time with vector compares (`wide`: SSE2 on x86-64, NEON on
/// aarch64): a quote, a backslash, or a byte whose minimum with 0x1f is itself.
#[inline]
pub(crate) fn plain_run(bytes: &[u8], mut at: usize) -> usize {
    use wide::u8x16;
    let quote = u8x16::splat(b'"');
    let backslash = u8x16::splat(b'\\');
    let last_control = u8x16::splat(0x1f);
    while let Some(block) = bytes.get(at..).and_then(|rest| rest.first_chunk::<16>()) {
        let v = u8x16::new(*block);
        let stops = v.simd_eq(quote) | v.simd_eq(backslash) | v.min(last_control).simd_eq(v);
        let mask = stops.to_bitmask();
        if mask != 0 {
            return at + mask.trailing_zeros() as usize;
        }
        at += 16;
    }
    while bytes.get(at).is_some_and(|&c| !stops_string(c)) {
        at += 1;
    }
    at
}

/// The character a JSON one-character escape stands for (`\n` → line feed, …): what follows
/// the backslash; `None` for `u` and anything else.
pub(crate) fn simple_escape(byte: u8) -> Option<char> {
    Some(match byte {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        _ => return None,
    })
}

/// The text of a string token's inside (the scanner validated it): escapes decoded.
/// serde_json's own decoding is several times slower on text with many line breaks.
pub(crate) fn decode(inner: &str) -> Option<String> {
    decode_prefix(inner, usize::MAX).map(|(text, _)| text)
}

/// The text of a string token's inside decoded for at least `limit` bytes of text (ending at a
/// character or an escape), and whether that is the whole text. `None` when the inside is not
/// one a scanned string has (an unknown escape, a lone surrogate).
pub(crate) fn decode_prefix(inner: &str, limit: usize) -> Option<(String, bool)> {
    let bytes = inner.as_bytes();
    let mut out = String::with_capacity(limit.min(inner.len()) + 4);
    let mut at = 0;
    while at < bytes.len() {
        let run_end = memchr::memchr(b'\\', &bytes[at..]).map_or(bytes.len(), |k| at + k);
        if out.len().saturating_add(run_end - at) >= limit {
            let mut end = at + limit.saturating_sub(out.len());
            while !inner.is_char_boundary(end) {
                end += 1;
            }
            out.push_str(inner.get(at..end)?);
            return Some((out, end == bytes.len()));
        }
        out.push_str(inner.get(at..run_end)?);
        if run_end == bytes.len() {
            break;
        }
        let escape = *bytes.get(run_end + 1)?;
        at = run_end + 2;
        if escape != b'u' {
            out.push(simple_escape(escape)?);
            continue;
        }
        let unit = hex4(bytes.get(at..at + 4)?)?;
        at += 4;
        let c = match unit {
            0xD800..=0xDBFF => {
                if bytes.get(at..at + 2) != Some(b"\\u") {
                    return None;
                }
                let low = hex4(bytes.get(at + 2..at + 6)?)?;
                at += 6;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return None;
                }
                let c = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                char::from_u32(c)?
            }
            _ => char::from_u32(u32::from(unit))?,
        };
        out.push(c);
    }
    Some((out, true))
}
