//! Data types as the protocol lists them: a source file is code (referenced by its
//! extension, sent whole, or cut as whole functions, never summarised as prose).

use crate::common;

use common::{quick_sim, run_plan, test_config, Ran};
use serde_json::{json, Value};

/// A Python module of `n` functions of about 190 tokens each.
fn module(n: usize) -> String {
    let body = "    total = weight * step + offset  # the guidance term of this step\n".repeat(12);
    let mut text = String::from("import math\n\n\n");
    for i in 0..n {
        text.push_str(&format!(
            "def guidance_{i}(weight, step, offset):\n{body}    return total\n\n\n"
        ));
    }
    text
}

async fn run_over(code: &str, transfer: Value) -> Ran {
    let w = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(w.path().join("src")).expect("src");
    std::fs::write(w.path().join("src/guidance.py"), code).expect("code");
    let plan = json!({"plan_id": "P", "execution_mode": "Deep_Internalization",
        "agents": {"Reader": {}},
        "tasks": [{"task_id": "A", "agent": "Reader", "instruction": "Explain the guidance terms.",
            "data_references": [{"ref_type": "file", "path": "src/guidance.py"}],
            "transfer_config": transfer,
            "output_requirements": {"quality_threshold": "C", "max_atoms": 2}}]})
    .to_string();
    let mut cfg = test_config();
    cfg.workspace = w.path().to_path_buf();
    run_plan(&plan, quick_sim(), cfg).await
}

#[tokio::test]
async fn a_python_file_of_11k_tokens_is_code_and_goes_whole() {
    let code = module(60);
    let tokens = plexus::base::tokens::TokenCounter::default().count(&code);
    assert!((10_000..14_000).contains(&tokens), "{tokens}");
    let r = run_over(&code, json!({})).await;
    assert_eq!(r.status_of("A"), "success");
    let input = r.first_input("A");
    assert_eq!(input["transfer_mode"], "full", "{input}");
    assert_eq!(input["data"]["format"], "code");
    assert_eq!(input["data"]["language"], "python");
    assert_eq!(input["data"]["text"], code.as_str());
}

#[tokio::test]
async fn code_over_its_cap_is_cut_as_whole_functions() {
    let code = module(60);
    let r = run_over(&code, json!({"max_tokens": 1_500})).await;
    let input = r.first_input("A");
    assert_eq!(input["transfer_mode"], "summary", "{input}");
    assert_eq!(input["summary_config"]["strategy"], "whole_blocks");
    let sent = input["data"]["text"].as_str().expect("the code's text");
    // Every function sent is whole: as many `return total` as `def`.
    let defs = sent.matches("\ndef guidance_").count();
    assert!(defs >= 3, "{sent}");
    assert_eq!(defs, sent.matches("    return total\n").count(), "{sent}");
    // The rest is named by signature, not paraphrased.
    assert!(sent.contains("blocks left out"), "{sent}");
    assert!(
        sent.contains("- def guidance_20(weight, step, offset):"),
        "{sent}"
    );
    assert!(
        sent.contains("more\n"),
        "a long list says how many more: {sent}"
    );
    let tokens = plexus::base::tokens::TokenCounter::default().count(sent);
    assert!(tokens <= 1_500, "{tokens}");
}
