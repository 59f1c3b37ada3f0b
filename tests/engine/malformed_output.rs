//! Malformed model output through `parse_response`: every kind must come back as an
//! error with the right code — E002 (parse_error) when no JSON can be read, E003
//! (validation_error) for shape problems, naming the field in the message and in
//! `extra.field` — and a deterministic fuzz loop must never panic.

use std::collections::HashSet;

use plexus::base::protocol::{ErrorCode, ErrorInfo};
use plexus::model::gate::quality::{run_gate, QualityConfig};
use plexus::run::engine::parse::{parse_response, ParsedOutput, MAX_RESPONSE_BYTES};
use serde_json::Value;

const ATOM1: &str = r##"{"asset_id":"MATH_A_01","category":"Math_Ops","metadata":{"created_by":"Scholar_Internalizer","tags":["#Diffusion"]},"content":{"mathematical_expression":"x_{t-1} = f(x_t)","physical_intuition":"去噪"},"provenance":{"paper_id":"ArXiv:2406.01234","paper_location":"p.4, Eq.(7)"},"delta_audit":{"existing_assets":["MATH_KNOWN_01"],"incremental_value":"adds guidance","contradiction_marked":false}}"##;
const ATOM2: &str = r#"{"asset_id":"MATH_A_02","content":{"mathematical_expression":"y = g(x)"},"provenance":{"code_link":"src/a.py#L3"}}"#;

fn valid_response() -> String {
    format!(
        r#"{{"output":{{"atoms":[{ATOM1},{ATOM2}],"summary":"提取了2个数学原子"}},"quality_check":{{"atoms_generated":2,"avg_quality_score":0.99}}}}"#
    )
}

/// Asserts an error of `code` and returns it.
fn expect_err(text: &str, max_atoms: Option<u32>, code: ErrorCode) -> ErrorInfo {
    match parse_response(text, max_atoms) {
        Ok(p) => panic!(
            "expected {code}, got Ok with {} atoms for {:?}",
            p.atoms.len(),
            preview(text)
        ),
        Err(e) => {
            assert_eq!(
                e.error_code,
                code,
                "wrong code for {:?}: {}",
                preview(text),
                e.message
            );
            assert_eq!(e.error_type, code.error_type());
            assert!(e.recoverable, "{code} is recoverable");
            e
        }
    }
}

/// Asserts E002 whose message contains `needle`.
fn expect_parse_error(text: &str, needle: &str) -> ErrorInfo {
    let e = expect_err(text, None, ErrorCode::E002);
    assert!(
        e.message.contains(needle),
        "E002 message {:?} lacks {needle:?}",
        e.message
    );
    e
}

/// Asserts E003 naming `field` in `extra.field` and at the start of the message.
fn expect_validation_error(text: &str, max_atoms: Option<u32>, field: &str) -> ErrorInfo {
    let e = expect_err(text, max_atoms, ErrorCode::E003);
    assert_eq!(
        e.extra.get("field"),
        Some(&Value::String(field.to_string())),
        "extra.field for {:?} (message {:?})",
        preview(text),
        e.message
    );
    assert!(
        e.message.starts_with(&format!("{field}: ")),
        "message {:?} does not name {field}",
        e.message
    );
    e
}

fn preview(text: &str) -> String {
    text.chars().take(120).collect()
}

#[test]
fn the_valid_response_parses() {
    let p = parse_response(&valid_response(), Some(2)).expect("valid");
    assert_eq!(p.atoms.len(), 2);
    assert_eq!(p.atoms[0].asset_id, "MATH_A_01");
    assert_eq!(p.atoms[1].asset_id, "MATH_A_02");
    assert_eq!(p.summary, "提取了2个数学原子");
}

// ---------- E002: nothing parseable ----------

#[test]
fn empty_string() {
    expect_parse_error("", "empty");
}

#[test]
fn whitespace_only() {
    expect_parse_error(" \n\t\r\n   ", "empty");
}

#[test]
fn plain_prose() {
    expect_parse_error(
        "I read the paper carefully but could not extract any atoms, sorry.",
        "no JSON object",
    );
}

#[test]
fn truncated_json() {
    let full = valid_response();
    // cut in the middle of the second atom (after a `}` so the outermost-brace search
    // has something to try)
    let cut = full.find(r#""provenance":{"code_link""#).expect("marker");
    let truncated = &full[..cut];
    let e = expect_parse_error(truncated, "does not parse");
    assert!(e.extra.get("field").is_none());
    // and cut with no closing brace at all
    expect_parse_error(r#"{"output": {"atoms": [{"asset_id": "A"#, "no JSON object");
}

#[test]
fn fenced_json_block_with_invalid_json() {
    let text = "Here is the result:\n```json\n{\"output\": {\"atoms\": [{\"asset_id\": \"A1\",]}}\n```\nHope it helps.";
    expect_parse_error(text, "fenced JSON block does not parse");
    // an unterminated fence
    let text = "```json\n{\"output\": {\"atoms\": [";
    expect_parse_error(text, "fenced JSON block does not parse");
}

#[test]
fn deeply_nested_json() {
    // 10,000 `[` — bare, balanced, and inside an otherwise valid response
    let open = "[".repeat(10_000);
    let close = "]".repeat(10_000);
    expect_err(&open, None, ErrorCode::E002);
    expect_err(&format!("{open}{close}"), None, ErrorCode::E002);
    let text = format!(r#"{{"output":{{"atoms":[{open}{close}],"summary":""}}}}"#);
    expect_parse_error(&text, "recursion limit");
    let text = format!(
        r#"{{"output":{{"atoms":[{{"asset_id":"A","content":{open}{close}}}],"summary":""}}}}"#
    );
    expect_parse_error(&text, "recursion limit");
    // 10,000 nested objects
    let objs = format!("{}0{}", r#"{"a":"#.repeat(10_000), "}".repeat(10_000));
    expect_parse_error(&objs, "recursion limit");
    // in a fence
    expect_parse_error(&format!("```json\n{open}{close}\n```"), "recursion limit");
}

#[test]
fn huge_text_over_the_limit() {
    let mut text = valid_response();
    text.push_str(&" ".repeat(MAX_RESPONSE_BYTES));
    let e = expect_parse_error(&text, "byte limit");
    assert!(e.message.contains(&MAX_RESPONSE_BYTES.to_string()));
    // a huge string value inside the JSON too
    let big = "x".repeat(MAX_RESPONSE_BYTES + 1);
    let text = format!(r#"{{"atoms":[{{"asset_id":"A","content":{{"t":"{big}"}}}}]}}"#);
    expect_parse_error(&text, "byte limit");
}

// ---------- E003: shape problems ----------

#[test]
fn top_level_array() {
    let text = format!("[{ATOM1}]");
    let e = expect_validation_error(&text, None, "$");
    assert!(e.message.contains("object"), "{}", e.message);
}

#[test]
fn top_level_scalars() {
    expect_validation_error("42", None, "$");
    expect_validation_error("\"just a string\"", None, "$");
    expect_validation_error("null", None, "$");
    expect_validation_error("true", None, "$");
}

#[test]
fn output_is_a_number() {
    expect_validation_error(r#"{"output": 5}"#, None, "output");
    expect_validation_error(r#"{"output": null}"#, None, "output");
    expect_validation_error(r#"{"output": [1, 2]}"#, None, "output");
}

#[test]
fn no_atoms_anywhere() {
    expect_validation_error("{}", None, "output.atoms");
    expect_validation_error(r#"{"result": {"atoms": []}}"#, None, "output.atoms");
    expect_validation_error(r#"{"output": {"summary": "s"}}"#, None, "output.atoms");
}

#[test]
fn atoms_not_an_array() {
    let e = expect_validation_error(
        &format!(r#"{{"output": {{"atoms": {ATOM1}, "summary": "s"}}}}"#),
        None,
        "output.atoms",
    );
    assert!(e.message.contains("array"), "{}", e.message);
    // the bare form names the bare field
    expect_validation_error(r#"{"atoms": "none"}"#, None, "atoms");
    expect_validation_error(r#"{"output": {"atoms": null}}"#, None, "output.atoms");
}

#[test]
fn an_atom_that_is_a_string() {
    let e = expect_validation_error(
        &format!(r#"{{"output": {{"atoms": [{ATOM1}, "MATH_A_02"]}}}}"#),
        None,
        "output.atoms[1]",
    );
    assert!(e.message.contains("object"), "{}", e.message);
    expect_validation_error(r#"{"atoms": [null]}"#, None, "atoms[0]");
    expect_validation_error(r#"{"atoms": [[]]}"#, None, "atoms[0]");
}

#[test]
fn an_atom_without_asset_id() {
    expect_validation_error(
        &format!(r#"{{"output": {{"atoms": [{ATOM1}, {{"content": {{"x": "y"}}}}]}}}}"#),
        None,
        "output.atoms[1].asset_id",
    );
    // empty, blank, or not a string
    for bad in [r#""""#, r#""   ""#, "7", "null", r#"["A"]"#] {
        expect_validation_error(
            &format!(r#"{{"output": {{"atoms": [{{"asset_id": {bad}}}]}}}}"#),
            None,
            "output.atoms[0].asset_id",
        );
    }
}

#[test]
fn duplicate_asset_ids_get_ids_of_their_own_and_a_word_for_word_repeat_is_kept_once() {
    // Another atom under an id already used: stored under the next free one, said so.
    let other = ATOM2.replace("MATH_A_02", "MATH_A_01");
    let p = parse_response(
        &format!(r#"{{"output": {{"atoms": [{ATOM1}, {ATOM2}, {other}]}}}}"#),
        None,
    )
    .expect("a duplicate id is no error");
    let ids: Vec<&str> = p.atoms.iter().map(|a| a.asset_id.as_str()).collect();
    assert_eq!(ids, ["MATH_A_01", "MATH_A_02", "MATH_A_01_2"]);
    assert_eq!(p.issues.len(), 1);
    assert_eq!(p.issues[0].issue_type, "duplicate_asset_id");
    assert!(
        p.issues[0].message.contains("stored as `MATH_A_01_2`"),
        "{:?}",
        p.issues
    );
    // A weak model repeats an atom exactly: kept once, the repeat named, and the repeat
    // does not count against max_atoms.
    let p = parse_response(
        &format!(r#"{{"output": {{"atoms": [{ATOM1}, {ATOM2}, {ATOM1}]}}}}"#),
        Some(2),
    )
    .expect("a repeat is no error");
    assert_eq!(p.atoms.len(), 2);
    assert_eq!(p.issues[0].issue_type, "repeated_atom");
    assert_eq!(p.issues[0].atom_id, "MATH_A_01");
}

#[test]
fn more_atoms_than_max_atoms() {
    let text = valid_response();
    let e = expect_validation_error(&text, Some(1), "output.atoms");
    assert!(e.message.contains("2 atoms"), "{}", e.message);
    assert!(e.message.contains("at most 1"), "{}", e.message);
    expect_validation_error(&text, Some(0), "output.atoms");
    assert!(parse_response(&text, Some(2)).is_ok());
    assert!(parse_response(r#"{"atoms": []}"#, Some(0)).is_ok());
}

#[test]
fn summary_that_is_a_number() {
    let e = expect_validation_error(
        &format!(r#"{{"output": {{"atoms": [{ATOM1}], "summary": 3}}}}"#),
        None,
        "output.summary",
    );
    assert!(e.message.contains("string"), "{}", e.message);
    expect_validation_error(
        r#"{"atoms": [], "summary": {"text": "s"}}"#,
        None,
        "summary",
    );
    // null summary is the same as none
    let p = parse_response(r#"{"atoms": [], "summary": null}"#, None).expect("null summary");
    assert_eq!(p.summary, "");
}

#[test]
fn invalid_content_types_name_the_field() {
    let cases: &[(&str, &str)] = &[
        (r#""metadata": "oops""#, "metadata"),
        (r#""metadata": null"#, "metadata"),
        (r##""metadata": {"tags": "#Diffusion"}"##, "metadata.tags"),
        (r##""metadata": {"tags": ["#A", 7]}"##, "metadata.tags[1]"),
        (r#""metadata": {"version": 2}"#, "metadata.version"),
        (r#""provenance": ["p.4"]"#, "provenance"),
        (
            r#""provenance": {"paper_location": 4}"#,
            "provenance.paper_location",
        ),
        (r#""delta_audit": 1"#, "delta_audit"),
        (
            r#""delta_audit": {"existing_assets": "MATH_KNOWN_01"}"#,
            "delta_audit.existing_assets",
        ),
        (
            r#""delta_audit": {"existing_assets": ["MATH_KNOWN_01", {"id": "X"}]}"#,
            "delta_audit.existing_assets[1]",
        ),
        (
            r#""delta_audit": {"contradiction_marked": "no"}"#,
            "delta_audit.contradiction_marked",
        ),
        (r#""category": 12"#, "category"),
        (r#""data_status": ["Verified"]"#, "data_status"),
    ];
    for (member, field) in cases {
        let text = format!(
            r#"{{"output": {{"atoms": [{ATOM1}, {{"asset_id": "BAD_01", {member}}}], "summary": "s"}}}}"#
        );
        expect_validation_error(&text, None, &format!("output.atoms[1].{field}"));
    }
    // several bad fields at once still name the atom (at least)
    let text = r#"{"atoms": [{"asset_id": "B", "metadata": 1, "provenance": 2}]}"#;
    let e = expect_err(text, None, ErrorCode::E003);
    let field = e
        .extra
        .get("field")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    assert!(field.starts_with("atoms[0]"), "{field}");
    assert!(
        e.message.starts_with(&format!("{field}: ")),
        "{}",
        e.message
    );
}

#[test]
fn a_bad_element_deep_in_a_large_array_is_located() {
    // 100,000 references, the last one not a string: the field is still found exactly
    let mut refs: Vec<String> = (0..100_000).map(|i| format!("\"R{i}\"")).collect();
    refs.push("false".into());
    let text = format!(
        r#"{{"atoms": [{{"asset_id": "A", "delta_audit": {{"existing_assets": [{}]}}}}]}}"#,
        refs.join(",")
    );
    expect_validation_error(&text, None, "atoms[0].delta_audit.existing_assets[100000]");
}

#[test]
fn content_of_any_json_type_is_accepted() {
    // `content` is free-form; a string or array is a quality issue, not a parse error
    for content in [r#""text""#, "[1, 2]", "null", "3"] {
        let text = format!(r#"{{"atoms": [{{"asset_id": "A", "content": {content}}}]}}"#);
        let p = parse_response(&text, None).expect(&text);
        assert_eq!(p.atoms.len(), 1);
    }
}

// ---------- fuzz: no input panics ----------

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// A char boundary of `s` at or before `i`.
fn boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate(base: &str, rng: &mut XorShift) -> String {
    let mut s = base.to_string();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        match rng.below(5) {
            // truncate
            0 => {
                let at = boundary(&s, rng.below(s.len() + 1));
                s.truncate(at);
            }
            // flip an ASCII byte to another ASCII byte
            1 => {
                let ascii: Vec<usize> = s
                    .bytes()
                    .enumerate()
                    .filter(|(_, b)| b.is_ascii())
                    .map(|(i, _)| i)
                    .collect();
                if !ascii.is_empty() {
                    let i = ascii[rng.below(ascii.len())];
                    let mut bytes = s.into_bytes();
                    bytes[i] ^= 1 << rng.below(7);
                    s = String::from_utf8(bytes).expect("ASCII flip keeps UTF-8");
                }
            }
            // insert a structural character
            2 => {
                let at = boundary(&s, rng.below(s.len() + 1));
                let c = ['{', '}', '[', ']', '"', ',', ':', '`', '\\'][rng.below(9)];
                s.insert(at, c);
            }
            // delete a range
            3 => {
                let a = boundary(&s, rng.below(s.len() + 1));
                let b = boundary(&s, a + rng.below(16));
                s.replace_range(a..b.max(a), "");
            }
            // wrap in prose / a fence
            _ => {
                s = match rng.below(3) {
                    0 => format!("Sure, here it is:\n```json\n{s}\n```\nDone."),
                    1 => format!("prefix {s} suffix"),
                    _ => format!("```\n{s}"),
                };
            }
        }
    }
    s
}

#[test]
fn fuzzed_responses_never_panic() {
    let base = valid_response();
    let known: HashSet<String> = ["MATH_KNOWN_01".to_string()].into_iter().collect();
    let required = vec!["content.physical_intuition".to_string()];
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let (mut ok, mut e002, mut e003) = (0u32, 0u32, 0u32);
    for i in 0..2_000 {
        let text = mutate(&base, &mut rng);
        let max_atoms = if i % 3 == 0 { Some(1) } else { None };
        // `None` when the text parsed, else the error
        let outcome = std::panic::catch_unwind(|| -> Option<ErrorInfo> {
            let r: Result<ParsedOutput, ErrorInfo> = parse_response(&text, max_atoms);
            if let Ok(p) = &r {
                // what parses must also grade without panicking
                let g = run_gate(&p.atoms, &required, &known, &QualityConfig::default());
                assert_eq!(g.quality_check.atoms_generated as usize, p.atoms.len());
            }
            r.err()
        });
        match outcome {
            Ok(None) => ok += 1,
            Ok(Some(e)) => match e.error_code {
                ErrorCode::E002 => e002 += 1,
                ErrorCode::E003 => {
                    e003 += 1;
                    let field = e.extra.get("field").and_then(Value::as_str);
                    assert!(
                        field.is_some_and(|f| e.message.starts_with(&format!("{f}: "))),
                        "E003 without its field for {text:?}: {e:?}"
                    );
                }
                other => panic!("unexpected code {other} for {text:?}"),
            },
            Err(_) => panic!("parse_response panicked on mutation #{i}: {text:?}"),
        }
    }
    assert_eq!(ok + e002 + e003, 2_000);
    // the mutations must exercise all three outcomes
    assert!(
        ok > 0 && e002 > 0 && e003 > 0,
        "ok {ok}, E002 {e002}, E003 {e003}"
    );
}
