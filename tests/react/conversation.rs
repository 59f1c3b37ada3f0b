//! Conversations: exact counts (per block, plus the documented overhead), the
//! compression threshold, what compression keeps and summarises, the summary cache, and
//! the benchmark's smoke run.

use plexus::base::conversation::{
    bench_conversation, text_block, thinking_block, tool_result_block, tool_use_block,
    ContextManager, Conversation, Message, MESSAGE_OVERHEAD,
};
use plexus::base::protocol::Extra;
use plexus::base::tokens::{Encoding, TokenCounter};
use serde_json::json;

fn input(v: serde_json::Value) -> Extra {
    match v {
        serde_json::Value::Object(m) => m,
        _ => Extra::new(),
    }
}

/// Round `i`: a thought, an answer, a tool call and its result, all marked with `i`.
fn round(i: usize) -> [Message; 2] {
    let id = format!("toolu_{i:03}");
    [
        Message::assistant(vec![
            thinking_block(format!(
                "R{i}-THOUGHT first sentence. A second sentence that is long enough to be cut away by the extract budget of one hundred and sixty characters, surely, because it goes on and on."
            )),
            text_block(format!("R{i}-ANSWER I will search. Then more.")),
            tool_use_block(
                id.clone(),
                "file_search",
                input(json!({"pattern": format!("**/R{i}.py")})),
            ),
        ]),
        Message::user(vec![tool_result_block(
            id,
            format!(
                "R{i}-OBS Found 12 items.\n{}",
                (0..12)
                    .map(|k| format!("  - src/module_{k}/file_{i}_{k}.py\n"))
                    .collect::<String>()
            ),
            false,
        )]),
    ]
}

/// A conversation with an instruction and `n` rounds.
fn conversation(n: usize) -> Conversation {
    let mut c = Conversation::new(TokenCounter::default(), "You are a ReAct agent.");
    c.push(Message::user_text("INSTRUCTION: analyse the repository."));
    for i in 1..=n {
        for m in round(i) {
            c.push(m);
        }
    }
    c
}

#[test]
fn counts_are_the_sum_of_block_counts_plus_the_overhead() {
    for counter in [
        TokenCounter::default(),
        TokenCounter::for_model("gpt-4o"),
        TokenCounter::for_model("claude-sonnet-4"),
    ] {
        let mut c = Conversation::new(counter, "System prompt 系统提示");
        let tool_input =
            input(json!({"sql": "SELECT region, SUM(amount) FROM sales", "limit": 100}));
        let assistant = Message::assistant(vec![
            thinking_block("用户想了解销售数据的分布。"),
            text_block("I will query the database."),
            tool_use_block("call_123", "query_database", tool_input.clone()),
        ]);
        // The seed's shape: the observation in `text`, beside a Claude `content`.
        let mut result = tool_result_block("call_123", "", false);
        result.text = Some("Found 10 items".into());
        result.extra.insert(
            "content".into(),
            json!([{"type": "text", "text": "Data stored in file: tool_data/x.json"}]),
        );
        let user = Message::user(vec![result]);
        let n_assistant = c.push(assistant);
        let n_user = c.push(user);
        let k = |s: &str| counter.count(s);
        let want_assistant = MESSAGE_OVERHEAD
            + k("用户想了解销售数据的分布。")
            + k("I will query the database.")
            + k("call_123")
            + k("query_database")
            + k(&serde_json::to_string(&tool_input).expect("json"));
        let want_user = MESSAGE_OVERHEAD
            + k("call_123")
            + k("Found 10 items")
            + k("Data stored in file: tool_data/x.json");
        assert_eq!(n_assistant, want_assistant);
        assert_eq!(n_user, want_user);
        assert_eq!(c.message_tokens(), [want_assistant, want_user]);
        let system = MESSAGE_OVERHEAD + k("System prompt 系统提示");
        assert_eq!(c.system_tokens(), system);
        assert_eq!(c.total_tokens(), system + want_assistant + want_user);
        assert_eq!(c.recount(), c.total_tokens());
    }
}

#[test]
fn chinese_text_is_counted_exactly() {
    let text = "Transformer架构通过自注意力机制实现了并行计算。查询结果有120行，华东地区的销售额增长了15%。";
    for (model, enc) in [
        ("gpt-4", Encoding::Cl100kBase),
        ("gpt-4o", Encoding::O200kBase),
    ] {
        let mut c = Conversation::new(TokenCounter::for_model(model), "");
        let n = c.push(Message::user_text(text));
        assert_eq!(n, MESSAGE_OVERHEAD + enc.count_reference(text) as u64);
        assert_eq!(c.total_tokens(), n);
    }
}

#[test]
fn adding_a_message_keeps_the_other_counts() {
    let mut c = conversation(30);
    let before = c.message_tokens().to_vec();
    let total = c.total_tokens();
    let n = c.push(Message::user_text("one more 再来一条"));
    assert_eq!(&c.message_tokens()[..before.len()], &before[..]);
    assert_eq!(c.total_tokens(), total + n);
    assert_eq!(c.recount(), c.total_tokens());
}

/// A conversation of exactly `tokens` tokens (no system prompt; padding with `hello`,
/// one token each).
fn exactly(tokens: u64) -> Conversation {
    let counter = TokenCounter::default();
    let mut c = Conversation::new(counter, "");
    c.push(Message::user_text("instruction"));
    let need = tokens - c.total_tokens() - MESSAGE_OVERHEAD;
    let pad = format!("hello{}", " hello".repeat(need as usize - 1));
    c.push(Message::assistant(vec![text_block(pad)]));
    assert_eq!(c.total_tokens(), tokens);
    c
}

#[test]
fn compression_triggers_at_or_above_eighty_percent() {
    let m = ContextManager::new(1000);
    assert_eq!(m.threshold_tokens(), 800);
    assert!(!m.should_compress(&exactly(799)));
    assert!(m.should_compress(&exactly(800)));
    assert!(m.should_compress(&exactly(801)));
    // windows whose 80% is not a whole number round the threshold up
    assert_eq!(ContextManager::new(7).threshold_tokens(), 6);
    assert_eq!(ContextManager::new(5).threshold_tokens(), 4);
    assert_eq!(ContextManager::new(128_000).threshold_tokens(), 102_400);
    assert_eq!(ContextManager::new(200_000).threshold_tokens(), 160_000);
    // on a realistic conversation: the window whose threshold is its total compresses,
    // the one whose threshold is one more does not
    let c = conversation(12);
    let total = c.total_tokens();
    let at = (1..total * 2)
        .map(ContextManager::new)
        .find(|m| m.threshold_tokens() == total)
        .expect("a window");
    assert!(at.should_compress(&c));
    let mut above = (1..total * 2)
        .map(ContextManager::new)
        .find(|m| m.threshold_tokens() == total + 1)
        .expect("a window");
    assert!(!above.should_compress(&c));
    assert!(above.maybe_compress(&mut c.clone()).is_none());
}

#[test]
fn compression_keeps_the_last_five_rounds_whole() {
    let n = 12;
    let mut c = conversation(n);
    let original = c.messages().to_vec();
    let before = c.total_tokens();
    let mut m = ContextManager::new(before); // far over 80%
    m.summary_budget = 10_000; // room for every extract
    let r = m.maybe_compress(&mut c).expect("over the threshold");
    assert_eq!(r.rounds_reduced, 0);
    assert_eq!((r.rounds_summarised, r.rounds_kept), (n - 5, 5));
    assert_eq!(r.before_tokens, before);
    assert_eq!(r.after_tokens, c.total_tokens());
    assert!(r.after_tokens < before);
    assert_eq!(c.recount(), c.total_tokens());

    // head: the instruction, then the summary
    let msgs = c.messages();
    assert_eq!(msgs[0], original[0]);
    assert_eq!(c.summary_index(), Some(1));
    let summary = msgs[1].content[0].text.clone().expect("summary text");
    // the last five rounds, whole and in order
    assert_eq!(&msgs[2..], &original[original.len() - 10..]);
    let numbers: Vec<usize> = c.rounds().iter().map(|r| r.number).collect();
    assert_eq!(numbers, [8, 9, 10, 11, 12]);
    // rounds 1..=7 summarised (first sentences only), rounds 8..=12 not
    for i in 1..=7 {
        assert!(summary.contains(&format!("Round {i}:")), "{summary}");
        assert!(
            summary.contains(&format!("thought: R{i}-THOUGHT first sentence.\n")),
            "{summary}"
        );
        assert!(summary.contains(&format!("said: R{i}-ANSWER I will search. Then more.")));
        assert!(summary.contains(&format!(
            "file_search [toolu_{i:03}] {{\"pattern\":\"**/R{i}.py\"}} → R{i}-OBS"
        )));
    }
    assert!(!summary.contains("second sentence"));
    for i in 8..=12 {
        assert!(
            !summary.contains(&format!("R{i}-")),
            "round {i} in {summary}"
        );
    }
    let stats = c.stats();
    assert_eq!(
        (
            stats.rounds,
            stats.rounds_in_context,
            stats.rounds_summarised,
            stats.compressions
        ),
        (12, 5, 7, 1)
    );
}

#[test]
fn a_second_compression_extends_the_one_summary() {
    let mut c = conversation(12);
    let mut m = ContextManager::new(1_000_000);
    m.compress(&mut c);
    for i in 13..=15 {
        for msg in round(i) {
            c.push(msg);
        }
    }
    let r = m.compress(&mut c);
    assert_eq!((r.rounds_summarised, r.rounds_kept), (3, 5));
    assert_eq!(c.summary_index(), Some(1));
    let summary = c.messages()[1].content[0].text.clone().expect("text");
    assert!(summary.starts_with("[Summary of rounds 1–10,"), "{summary}");
    assert!(summary.contains("R1-THOUGHT") && summary.contains("R10-THOUGHT"));
    assert!(!summary.contains("R11-"));
    let numbers: Vec<usize> = c.rounds().iter().map(|r| r.number).collect();
    assert_eq!(numbers, [11, 12, 13, 14, 15]);
    assert_eq!(c.stats().compressions, 2);
    assert_eq!(
        c.messages().iter().filter(|m| !m.is_assistant()).count(),
        2 + 5
    );
    assert_eq!(c.recount(), c.total_tokens());
}

#[test]
fn tool_references_survive_even_a_tight_summary_budget() {
    let mut c = conversation(0);
    let stored = "Data stored in file: tool_data/call_124_9f2c1a.json";
    c.push(Message::assistant(vec![
        thinking_block("I need the full sales table."),
        tool_use_block(
            "call_124",
            "query_database",
            input(json!({"sql": "SELECT *"})),
        ),
    ]));
    let rows: String = (0..40)
        .map(|i| {
            format!(
                "{{\"id\": {i}, \"region\": \"华东\", \"amount\": {}.5}}\n",
                i * 37
            )
        })
        .collect();
    c.push(Message::user(vec![tool_result_block(
        "call_124",
        format!("{stored}\nSummary: 12,480 rows × 8 columns. First rows:\n{rows}"),
        false,
    )]));
    c.push(Message::assistant(vec![tool_use_block(
        "call_125",
        "query_database",
        Extra::new(),
    )]));
    c.push(Message::user(vec![tool_result_block(
        "call_125",
        "Operation failed.\nError Type: timeout",
        true,
    )]));
    for i in 3..=7 {
        for m in round(i) {
            c.push(m);
        }
    }
    for budget in [100_000, 1] {
        let mut conv = c.clone();
        let mut m = ContextManager::new(100_000);
        m.summary_budget = budget;
        let r = m.compress(&mut conv);
        assert_eq!(r.rounds_summarised, 2);
        let s = conv.messages()[1].content[0].text.clone().expect("text");
        if budget == 1 {
            assert_eq!(r.rounds_reduced, 2);
            assert!(
                // The call's short input is kept beside its id.
                s.contains(&format!(
                    "  query_database [call_124] {{\"sql\":\"SELECT *\"}}; {stored}\n"
                )),
                "{s}"
            );
            assert!(
                s.contains("  query_database [call_125] {} (error)\n"),
                "{s}"
            );
            assert!(!s.contains("thought:"), "{s}");
        } else {
            assert!(s.contains("thought: I need the full sales table."), "{s}");
            // The observation's first line, the facts of its rows, its last line, then
            // the file it was stored in.
            let line = s
                .lines()
                .find(|l| l.contains("query_database [call_124]"))
                .expect("the call's line");
            assert!(
                line.starts_with(
                    "  query_database [call_124] {\"sql\":\"SELECT *\"} → Summary: 12,480 rows × 8 columns. First rows: ["
                ),
                "{line}"
            );
            assert!(line.ends_with(&format!("; {stored}")), "{line}");
            assert!(s.contains("query_database [call_125]"), "{s}");
            assert!(s.contains("(error)"), "{s}");
        }
    }
}

#[test]
fn summaries_are_reused_from_the_cache() {
    let c = conversation(20);
    let mut m = ContextManager::new(10_000);
    let mut first = c.clone();
    let r1 = m.compress(&mut first);
    assert_eq!((r1.rounds_summarised, r1.cache_hits), (15, 0));
    assert_eq!(m.cached_summaries(), 15);
    let mut second = c.clone();
    let r2 = m.compress(&mut second);
    assert_eq!((r2.rounds_summarised, r2.cache_hits), (15, 15));
    assert_eq!(m.cached_summaries(), 15);
    assert_eq!(first.messages(), second.messages());
    assert_eq!(r1.after_tokens, r2.after_tokens);
    // a changed round is summarised anew
    let mut third = conversation(20);
    third = {
        let mut msgs = third.messages().to_vec();
        msgs[1].content[0].thinking = Some("Changed thought.".into());
        let mut t = Conversation::new(TokenCounter::default(), "You are a ReAct agent.");
        for msg in msgs {
            t.push(msg);
        }
        t
    };
    let r3 = m.compress(&mut third);
    assert_eq!(r3.cache_hits, 14);
}

#[test]
fn five_rounds_or_fewer_are_never_compressed() {
    for n in [0, 1, 5] {
        let mut c = conversation(n);
        let big = "很长的观察结果。".repeat(500);
        c.push(Message::user_text(big));
        let before = c.messages().to_vec();
        let mut m = ContextManager::new(100);
        assert!(m.should_compress(&c));
        let r = m.compress(&mut c);
        assert_eq!((r.rounds_summarised, r.rounds_kept), (0, n));
        assert!(!r.under_threshold);
        assert_eq!(r.after_tokens, r.before_tokens);
        assert_eq!(c.messages(), &before[..]);
        assert_eq!(c.stats().compressions, 0);
    }
}

#[test]
fn when_the_kept_rounds_are_too_big_the_result_says_so() {
    let mut c = conversation(6);
    let big = "Data rows 数据行 ".repeat(2000);
    c.push(Message::user(vec![tool_result_block(
        "toolu_006",
        big,
        false,
    )]));
    let mut m = ContextManager::new(2000);
    let r = m.compress(&mut c);
    assert_eq!((r.rounds_summarised, r.rounds_kept), (1, 5));
    assert!(!r.under_threshold);
    assert!(r.after_tokens >= r.threshold_tokens);
    // compressing again changes nothing
    let again = m.compress(&mut c);
    assert_eq!(again.rounds_summarised, 0);
    assert_eq!(again.after_tokens, r.after_tokens);
}

#[test]
fn tiny_rounds_are_not_replaced_by_a_larger_summary() {
    let mut c = Conversation::new(TokenCounter::default(), "");
    c.push(Message::user_text("go"));
    for i in 0..8 {
        c.push(Message::assistant(vec![text_block(format!("ok {i}"))]));
    }
    let before = c.messages().to_vec();
    let r = ContextManager::new(10).compress(&mut c);
    assert_eq!(r.rounds_summarised, 0);
    assert_eq!(r.after_tokens, r.before_tokens);
    assert!(!r.under_threshold);
    assert_eq!(c.messages(), &before[..]);
}

#[test]
fn the_benchmark_runs_on_a_small_conversation() {
    let f = bench_conversation(20_000, 1);
    assert!(f.tokens >= 20_000, "{f}");
    assert!(f.rounds > 10);
    assert!(f.compressed_tokens < f.tokens);
    assert_eq!(f.rounds_summarised, f.rounds - 5);
    assert!(f.count_cold_ms > 0.0 && f.compress_ms > 0.0);
}

/// `cargo test --test conversation -- --ignored --nocapture bench_200k`
#[test]
#[ignore]
fn bench_200k() {
    let f = bench_conversation(200_000, 5);
    eprintln!("{f}");
}
