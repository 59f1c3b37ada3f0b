//! Text safety: model output is untrusted, so every line is cleaned of escape sequences,
//! control characters and bidi overrides before it reaches the terminal.
//!
//! - An escape sequence (CSI, OSC, DCS, SOS, PM, APC, a two-char `ESC x`, or their 8-bit
//!   C1 introducers) becomes one visible `␛` and is consumed whole, even when it is
//!   unterminated.
//! - Other C0 controls become their control picture (`\x07` → `␇`), DEL becomes `␡`, other
//!   C1 controls become `�`, and `\r` is dropped.
//! - Tabs expand to spaces up to the next multiple of 8 display columns.
//! - Bidi embedding, override, isolate and mark characters are removed.

use std::borrow::Cow;

use unicode_width::UnicodeWidthStr;

/// Shown in place of an escape sequence.
pub const ESCAPE_PICTURE: char = '\u{241B}';

/// Tab stops are every this many display columns.
pub const TAB_WIDTH: usize = 8;

/// Whether `c` is a bidi control character that sanitizing removes.
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
    )
}

/// The first character of a name that would hide or rearrange text where names are
/// printed (terminals, file names): a control character or a bidi control.
pub fn invisible_in(name: &str) -> Option<char> {
    name.chars().find(|&c| c.is_control() || is_bidi_control(c))
}

/// Why `name` cannot be a name: it holds an invisible character (see [`invisible_in`]).
pub fn invisible_name(name: &str) -> Option<String> {
    invisible_in(name).map(|c| {
        format!(
            "contains the invisible character U+{:04X}; names may not hold control characters or bidi overrides",
            c as u32
        )
    })
}

/// Cleans one line of untrusted text for display (see the module docs). A `'\n'` inside is
/// treated like any other control character (`␊`).
pub fn sanitize(s: &str) -> String {
    sanitize_cow(s).into_owned()
}

/// Like [`sanitize`], but borrows when the line is all printable ASCII (the common case).
pub fn sanitize_cow(s: &str) -> Cow<'_, str> {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(sanitize_slow(s))
    }
}

/// Splits multi-line untrusted text on `'\n'` (and `"\r\n"`) and sanitizes each line.
pub fn sanitize_lines(text: &str) -> Vec<String> {
    text.split('\n').map(sanitize).collect()
}

/// Display width in terminal columns of an already sanitized string (Chinese is two).
pub fn display_width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// What kind of escape sequence an introducer starts.
#[derive(Clone, Copy)]
enum Seq {
    /// `ESC [` / U+009B: parameters, intermediates, one final byte.
    Csi,
    /// `ESC ]` / U+009D: a string ended by BEL or ST.
    Osc,
    /// `ESC P`, `ESC X`, `ESC ^`, `ESC _` and their C1 forms: a string ended by ST.
    Str,
}

/// Builds the sanitized line; tracks the column so tabs land on tab stops.
struct Out {
    text: String,
    /// Byte offset in `text` where the current tab-free segment starts.
    segment_start: usize,
    /// Display column at `segment_start`.
    segment_col: usize,
}

impl Out {
    fn push(&mut self, c: char) {
        self.text.push(c);
    }

    fn tab(&mut self) {
        let col = self.segment_col + self.text[self.segment_start..].width();
        let spaces = TAB_WIDTH - col % TAB_WIDTH;
        self.text.extend(std::iter::repeat_n(' ', spaces));
        self.segment_start = self.text.len();
        self.segment_col = col + spaces;
    }
}

fn sanitize_slow(s: &str) -> String {
    let mut out = Out {
        text: String::with_capacity(s.len() + 8),
        segment_start: 0,
        segment_col: 0,
    };
    let mut chars = s.chars().peekable();
    // Set when a string sequence was cut short by an ESC that starts the next sequence.
    let mut pending_esc = false;
    loop {
        let c = if std::mem::take(&mut pending_esc) {
            '\x1b'
        } else {
            match chars.next() {
                Some(c) => c,
                None => break,
            }
        };
        match c {
            '\x1b' => {
                out.push(ESCAPE_PICTURE);
                match chars.peek().copied() {
                    Some('[') => {
                        chars.next();
                        pending_esc = skip_sequence(&mut chars, Seq::Csi);
                    }
                    Some(']') => {
                        chars.next();
                        pending_esc = skip_sequence(&mut chars, Seq::Osc);
                    }
                    Some('P' | 'X' | '^' | '_') => {
                        chars.next();
                        pending_esc = skip_sequence(&mut chars, Seq::Str);
                    }
                    Some(_) => skip_short_escape(&mut chars),
                    None => {}
                }
            }
            '\u{9b}' => {
                out.push(ESCAPE_PICTURE);
                pending_esc = skip_sequence(&mut chars, Seq::Csi);
            }
            '\u{9d}' => {
                out.push(ESCAPE_PICTURE);
                pending_esc = skip_sequence(&mut chars, Seq::Osc);
            }
            '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => {
                out.push(ESCAPE_PICTURE);
                pending_esc = skip_sequence(&mut chars, Seq::Str);
            }
            '\t' => out.tab(),
            '\r' => {}
            '\0'..='\x1f' => {
                // The control pictures block maps C0 code c to U+2400 + c.
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{FFFD}'));
            }
            '\x7f' => out.push('\u{2421}'),
            '\u{80}'..='\u{9f}' => out.push('\u{FFFD}'),
            c if is_bidi_control(c) => {}
            c => out.push(c),
        }
    }
    out.text
}

/// Consumes the body of a CSI or string sequence whose introducer was already read.
/// An unterminated sequence is consumed to the end of the line. Returns `true` when a
/// string sequence was ended by an ESC that is not ST: that ESC was consumed and starts
/// the next sequence (terminals treat it the same way).
fn skip_sequence(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, seq: Seq) -> bool {
    match seq {
        Seq::Csi => {
            skip_csi(chars);
            false
        }
        Seq::Osc | Seq::Str => skip_string(chars, matches!(seq, Seq::Osc)),
    }
}

/// Consumes the body of a CSI sequence: up to its final byte, or up to the first
/// character that cannot be part of it (left for the caller).
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(&c) = chars.peek() {
        match c {
            // Parameter and intermediate bytes.
            '\x20'..='\x3f' => {
                chars.next();
            }
            // The final byte ends the sequence.
            '\x40'..='\x7e' => {
                chars.next();
                return;
            }
            // Anything else aborts the sequence; it is handled on its own.
            _ => return,
        }
    }
}

/// Consumes the body of a string sequence up to its terminator (BEL too for an OSC,
/// `osc`). Returns `true` when an ESC that is not ST ended it (the ESC is consumed).
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, osc: bool) -> bool {
    while let Some(c) = chars.next() {
        match c {
            '\x07' if osc => return false,
            '\u{9c}' => return false,
            '\x1b' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                    return false;
                }
                return true;
            }
            _ => {}
        }
    }
    false
}

/// Consumes the rest of a short `ESC [intermediates] final` sequence (`ESC c`, `ESC ( B`).
/// Followers that cannot be part of one (controls, non-ASCII) are left alone.
fn skip_short_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(&c) = chars.peek() {
        match c {
            '\x20'..='\x2f' => {
                chars.next();
            }
            '\x30'..='\x7e' => {
                chars.next();
                return;
            }
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn assert_clean(out: &str) {
        for c in out.chars() {
            assert!(!c.is_control(), "control char {c:?} in {out:?}");
            assert!(!is_bidi_control(c), "bidi char {c:?} in {out:?}");
        }
    }

    #[test]
    fn printable_ascii_is_borrowed_and_unchanged() {
        let s = "hello, world ~ {}[]";
        assert!(matches!(sanitize_cow(s), Cow::Borrowed(_)));
        assert_eq!(sanitize(s), s);
        assert!(matches!(sanitize_cow(""), Cow::Borrowed("")));
    }

    #[test]
    fn the_hostile_line() {
        let s = "\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \u{202e}abc \u{9b}31m";
        let out = sanitize(s);
        assert_clean(&out);
        assert_eq!(out, "␛␛␛␛link␛ abc ␛");
        assert!(!out.contains("pwned"));
        assert!(!out.contains("http"));
    }

    #[test]
    fn clear_screen_and_cursor_moves() {
        assert_eq!(sanitize("a\x1b[2Jb"), "a␛b");
        assert_eq!(sanitize("\x1b[10;20Hx"), "␛x");
        assert_eq!(sanitize("\x1b[?1049h\x1b[?25lx"), "␛␛x");
        assert_eq!(sanitize("up\x1b[3Adown"), "up␛down");
        assert_eq!(sanitize("\x1b7saved\x1b8"), "␛saved␛");
        assert_eq!(sanitize("\x1bcreset"), "␛reset");
        assert_eq!(sanitize("\x1b(Bcharset"), "␛charset");
    }

    #[test]
    fn osc_clipboard_and_title() {
        // OSC 52 writes the clipboard; BEL and ST terminated.
        assert_eq!(sanitize("a\x1b]52;c;cHduZWQ=\x07b"), "a␛b");
        assert_eq!(sanitize("a\x1b]52;c;cHduZWQ=\x1b\\b"), "a␛b");
        // Title set.
        assert_eq!(sanitize("\x1b]2;owned title\x07text"), "␛text");
        // 8-bit OSC with 8-bit ST.
        assert_eq!(sanitize("x\u{9d}0;title\u{9c}y"), "x␛y");
    }

    #[test]
    fn string_sequences_need_st() {
        assert_eq!(sanitize("a\x1bPq#0;2;0;0;0\x1b\\b"), "a␛b");
        assert_eq!(sanitize("a\x1b_apc\x07still\x1b\\b"), "a␛b");
        assert_eq!(sanitize("a\x1bXsos\x1b\\b"), "a␛b");
        assert_eq!(sanitize("a\x1b^pm\u{9c}b"), "a␛b");
        assert_eq!(sanitize("a\u{90}dcs\u{9c}b"), "a␛b");
    }

    #[test]
    fn string_cut_short_by_another_escape() {
        assert_eq!(sanitize("a\x1b]0;title\x1b[31mb"), "a␛␛b");
        assert_eq!(sanitize("a\x1bPdcs\x1b]0;t\x07b"), "a␛␛b");
    }

    #[test]
    fn unterminated_sequences_run_to_the_end() {
        assert_eq!(sanitize("a\x1b]0;title never ends"), "a␛");
        assert_eq!(sanitize("a\x1b[12;4"), "a␛");
        assert_eq!(sanitize("a\x1bP dcs"), "a␛");
        assert_eq!(sanitize("a\x1b"), "a␛");
        assert_eq!(sanitize("a\u{9b}"), "a␛");
        assert_eq!(sanitize("a\x1b("), "a␛");
    }

    #[test]
    fn csi_aborted_by_odd_bytes_keeps_them_visible() {
        assert_eq!(sanitize("\x1b[31\u{4e2d}"), "␛\u{4e2d}");
        assert_eq!(sanitize("\x1b[31\x07"), "␛␇");
        assert_eq!(sanitize("\x1b[1\x1b[2m!"), "␛␛!");
        assert_eq!(sanitize("\x1b\x07"), "␛␇");
    }

    #[test]
    fn controls_become_pictures() {
        assert_eq!(sanitize("a\x07b"), "a␇b");
        assert_eq!(sanitize("\0"), "␀");
        assert_eq!(sanitize("x\x08y"), "x␈y");
        assert_eq!(sanitize("a\nb"), "a␊b");
        assert_eq!(sanitize("a\r\n"), "a␊");
        assert_eq!(sanitize("line\rover"), "lineover");
        assert_eq!(sanitize("\x7f"), "␡");
        assert_eq!(sanitize("\u{85}\u{9c}\u{80}"), "\u{FFFD}\u{FFFD}\u{FFFD}");
        assert_eq!(sanitize("\x1f"), "\u{241F}");
    }

    #[test]
    fn bidi_controls_are_removed() {
        let s = "\u{202a}a\u{202b}b\u{202c}c\u{202d}d\u{202e}e\u{2066}f\u{2067}g\u{2068}h\u{2069}i\u{200e}j\u{200f}k\u{061c}l";
        assert_eq!(sanitize(s), "abcdefghijkl");
    }

    #[test]
    fn zero_width_joiners_and_marks_stay() {
        assert_eq!(sanitize("e\u{301}"), "e\u{301}");
        assert_eq!(sanitize("a\u{200b}b"), "a\u{200b}b");
    }

    #[test]
    fn tabs_expand_to_stops() {
        assert_eq!(sanitize("\t"), " ".repeat(8));
        assert_eq!(sanitize("ab\tc"), "ab      c");
        assert_eq!(sanitize("12345678\tx"), "12345678        x");
        assert_eq!(sanitize("a\t\tb"), format!("a{}b", " ".repeat(15)));
    }

    #[test]
    fn tabs_after_chinese_count_two_columns() {
        // 中文 is 4 columns, so the tab adds 4 spaces.
        let out = sanitize("中文\tx");
        assert_eq!(out, "中文    x");
        assert_eq!(display_width(&out), 9);
        // 7 columns then a tab: one space.
        let out = sanitize("中文中a\tb");
        assert_eq!(out, "中文中a b");
        // 中 fills columns 6-7, so the tab sits at column 8 and adds a full 8 spaces.
        let out = sanitize("abcdef中\t|");
        assert_eq!(out, format!("abcdef中{}|", " ".repeat(8)));
        assert_eq!(display_width(&out), 17);
    }

    #[test]
    fn tabs_after_removed_sequences_use_visible_columns() {
        // The escape leaves one visible ␛ column.
        assert_eq!(sanitize("\x1b[31mab\tc"), "␛ab     c");
    }

    #[test]
    fn chinese_width() {
        let out = sanitize("你好，世界");
        assert_eq!(out, "你好，世界");
        assert_eq!(display_width(&out), 10);
        assert_eq!(display_width("mixed 中 text"), 13);
        assert_eq!(display_width(""), 0);
    }

    #[test]
    fn no_control_survives_any_byte_mix() {
        // Every C0, DEL, C1, bidi char, alone and after ESC / CSI / OSC introducers.
        let mut specials: Vec<char> = (0u32..0x20)
            .chain(0x7f..0xa0)
            .filter_map(char::from_u32)
            .collect();
        specials.extend([
            '\u{202e}', '\u{2066}', '\u{200f}', '\u{061c}', 'a', '中', '[', ']',
        ]);
        for &a in &specials {
            for &b in &specials {
                for prefix in ["", "\x1b", "\x1b[", "\x1b]", "\u{9b}", "\x1bP"] {
                    let s = format!("{prefix}{a}{b}x");
                    assert_clean(&sanitize(&s));
                }
            }
        }
    }

    #[test]
    fn sanitize_lines_splits_and_resets_tab_columns() {
        let lines = sanitize_lines("ab\tc\r\n\x1b[2Jx\ty");
        assert_eq!(
            lines,
            vec!["ab      c".to_string(), "␛x      y".to_string()]
        );
    }
}
