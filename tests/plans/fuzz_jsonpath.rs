//! Fuzzing the JSONPath parser, the path evaluator and the reference filters with
//! proptest: arbitrary and near-valid paths, arbitrary JSON documents, arbitrary filters.
//! None may panic. CI runs a few thousand cases; a long run is
//! `PROPTEST_CASES=4200000 cargo test --release --test fuzz_jsonpath` (ten minutes on a
//! 2-core machine; see the README).

use plexus::base::jsonpath::JsonPath;
use plexus::base::protocol::{RefFilter, TaskOutputRef};
use plexus::data::resolve::{filter_matches, resolve_task_output};
use proptest::prelude::*;
use serde_json::{json, Value};

/// JSON values up to a small depth.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        "[a-z0-9 _'\"\\\\.*@?=<>!()\\[\\]$-]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("atoms".to_string()),
                        Just("confidence".to_string()),
                        Just("atom_type".to_string()),
                        "[a-z_]{1,8}"
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Path-like strings built from the grammar's pieces, often valid, often nearly so.
fn near_path() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just(".atoms".to_string()),
        Just("[0]".to_string()),
        Just("[-1]".to_string()),
        Just("[*]".to_string()),
        Just(".content".to_string()),
        Just("..".to_string()),
        Just("[?(@.confidence>0.8)]".to_string()),
        Just("[?(@.atom_type=='claim')]".to_string()),
        Just("[?(@.x!=\"y\")]".to_string()),
        Just("[?(@.a<=".to_string()),
        Just("['key']".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("(".to_string()),
        Just("@".to_string()),
        "[a-z_]{1,6}".prop_map(|s| format!(".{s}")),
        "[0-9]{1,20}".prop_map(|s| format!("[{s}]")),
        any::<char>().prop_map(|c| c.to_string()),
    ];
    (
        prop::bool::weighted(0.9),
        prop::collection::vec(piece, 0..8),
    )
        .prop_map(|(root, ps)| {
            let mut s = if root { "$".to_string() } else { String::new() };
            for p in ps {
                s.push_str(&p);
            }
            s
        })
}

fn filter() -> impl Strategy<Value = RefFilter> {
    (
        prop_oneof![
            Just("confidence"),
            Just("atom_type"),
            Just("tags"),
            Just("missing")
        ],
        prop_oneof![
            Just("eq"),
            Just("ne"),
            Just("in"),
            Just("gt"),
            Just("gte"),
            Just("lt"),
            Just("lte"),
            Just("contains")
        ],
        json_value(),
    )
        .prop_map(|(field, op, value)| {
            serde_json::from_value(json!({"field": field, "operator": op, "value": value}))
                .expect("filter shape")
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4_000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics_the_parser(s in ".{0,64}") {
        let _ = JsonPath::parse(&s);
    }

    #[test]
    fn near_valid_paths_parse_and_evaluate_without_panic(p in near_path(), doc in json_value()) {
        if let Ok(path) = JsonPath::parse(&p) {
            let _ = path.select(&doc);
            let _ = path.select_value(&doc);
            let _ = path.is_multi();
        }
    }

    #[test]
    fn filters_never_panic(f in filter(), items in prop::collection::vec(json_value(), 0..8)) {
        for it in &items {
            let _ = filter_matches(it, &f);
        }
        let r: TaskOutputRef = serde_json::from_value(json!({"task_id": "T", "path": "$.atoms", "filter": f})).expect("ref");
        let _ = resolve_task_output(&json!({"atoms": items}), &r, Some("atom"));
    }
}

#[test]
fn the_seed_paths_still_select_what_they_should() {
    // A fixed check beside the fuzzing: the five paths of seed 000 §2.2.
    let doc = json!({"atoms": [
        {"atom_type": "claim", "confidence": 0.9, "content": "a"},
        {"atom_type": "evidence", "confidence": 0.7, "content": "b"}
    ], "metadata": {"quality_score": 0.8}});
    let sel = |p: &str| JsonPath::parse(p).expect(p).select_value(&doc);
    assert_eq!(
        sel("$.atoms").map(|v| v.as_array().map_or(0, Vec::len)),
        Some(2)
    );
    assert_eq!(
        sel("$.atoms[0]").and_then(|v| v["content"].as_str().map(str::to_string)),
        Some("a".into())
    );
    assert_eq!(sel("$.atoms[*].content"), Some(json!(["a", "b"])));
    assert_eq!(sel("$.metadata.quality_score"), Some(json!(0.8)));
    assert_eq!(
        sel("$.atoms[?(@.confidence>0.8)]").map(|v| v.as_array().map_or(0, Vec::len)),
        Some(1)
    );
    assert_eq!(
        sel("$.atoms[?(@.atom_type=='claim')]").map(|v| v[0]["content"].clone()),
        Some(json!("a"))
    );
}

#[test]
fn multibyte_whitespace_is_skipped_whole() {
    // Found by the fuzzer: U+0085 (two bytes in UTF-8) inside a path.
    for p in [
        "$.atoms[?(\u{85}@.a == 1)]",
        "\u{85}$",
        "$\u{2003}.a",
        "$.atoms[?(@.a\u{3000}>\u{85}1)]",
    ] {
        let _ = JsonPath::parse(p);
    }
    assert!(JsonPath::parse("$.atoms[?(@.a\u{3000}>\u{85}1)]").is_ok());
}
