//! `plexus providers` (the profiles of plexus.toml) and `plexus ping NAME` (one tiny
//! call: latency, model, usage).

use std::sync::Arc;
use std::time::Instant;

use color_eyre::eyre::{eyre, Result};

use crate::base::protocol::{AgentRequest, Constraints, UserPrompt};
use crate::base::table::{Col, TextTable};
use crate::cli::launch::profile::{config, profile_named};
use crate::cli::launch::Globals;
use crate::data::provider::profile::{self, ProviderProfile};
use crate::data::provider::{ChunkSink, ProviderError, SimConfig};

/// Prints the profiles: name, kind, model, endpoint, key source (never the key).
pub fn print_providers(globals: &Globals, json: bool) -> Result<()> {
    let cfg = config(globals)?;
    let mut all = vec![ProviderProfile::simulated()];
    all.extend(profile::profiles(&cfg).map_err(|e| eyre!("{e}"))?);
    if json {
        let rows: Vec<_> = all
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.name, "kind": p.kind.as_str(), "model": p.model,
                    "base_url": p.base_url, "key": p.key_source().to_string(),
                    "concurrency": p.concurrency, "rate_limit_rpm": p.rate_limit_rpm,
                    "stream": p.stream, "headers": p.headers.keys().collect::<Vec<_>>(),
                })
            })
            .collect();
        crate::rawln!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    match &cfg.path {
        Some(p) => crate::outln!("profiles from {}", p.display()),
        None => crate::outln!("no plexus.toml found; only the built-in simulated provider"),
    }
    let mut table = TextTable::new(&[
        Col::left("NAME"),
        Col::left("KIND"),
        Col::left("MODEL"),
        Col::left("BASE_URL").max(60),
        Col::left("KEY"),
        Col::right("CONC"),
        Col::right("RPM"),
    ]);
    for p in &all {
        let rpm = if p.rate_limit_rpm == 0 {
            "-".to_string()
        } else {
            p.rate_limit_rpm.to_string()
        };
        let base = if p.base_url.is_empty() {
            "(built in, offline)"
        } else {
            &p.base_url
        };
        table.row([
            p.name.as_str(),
            p.kind.as_str(),
            p.model.as_str(),
            base,
            &p.key_source().to_string(),
            &p.concurrency.to_string(),
            &rpm,
        ]);
    }
    table.print();
    Ok(())
}

/// Records when text first arrived.
struct PingSink {
    started: Instant,
    first_ms: Option<u128>,
    text: String,
}

impl ChunkSink for PingSink {
    fn chunk(&mut self, text: &str) {
        self.first_ms
            .get_or_insert_with(|| self.started.elapsed().as_millis());
        if self.text.len() < 200 {
            self.text.push_str(text);
        }
    }
}

/// Makes one tiny call through profile `name` and reports latency, model and usage.
/// `Ok(false)` when the call failed (the reason is printed).
pub async fn ping(globals: &Globals, name: &str, timeout_s: f64) -> Result<bool> {
    let profile = profile_named(globals, name)?;
    let provider = crate::data::provider::build(
        &profile,
        &SimConfig {
            first_chunk_ms: 0,
            chunk_ms: 0,
            ..SimConfig::default()
        },
    )
    .map_err(|e| eyre!("{e}"))?;
    let request = Arc::new(AgentRequest {
        invocation_id: "INV_00000000_000000_PING_001".into(),
        agent: "ping".into(),
        task_id: "ping".into(),
        plan_id: "ping".into(),
        system_prompt: "This is a connectivity check. Reply with the single word: pong".into(),
        user_prompt: UserPrompt {
            instruction: "ping".into(),
            ..UserPrompt::default()
        },
        constraints: Constraints {
            timeout_seconds: timeout_s,
            max_tokens: 16,
            temperature: 0.0,
        },
        extra: Default::default(),
        response_schema: None,
    });
    let mut sink = PingSink {
        started: Instant::now(),
        first_ms: None,
        text: String::new(),
    };
    let limits = crate::data::provider::call::Limits::for_call(
        provider.as_ref(),
        crate::base::ranges::duration_from_secs(timeout_s),
        16,
    );
    sink.started = Instant::now();
    let result = crate::data::provider::call::admitted(
        provider.as_ref(),
        request.clone(),
        1,
        &mut sink,
        &limits,
    )
    .await;
    let total = sink.started.elapsed().as_millis();
    let label = provider.name();
    match result {
        Err(stopped) => {
            crate::outln!(
                "{label}: FAILED (E004) {}",
                crate::data::provider::call::said(&stopped)
            );
            Ok(false)
        }
        Ok(Err(e)) => {
            let said = crate::base::text::sanitize::sanitize(&e.to_string());
            crate::outln!("{label}: FAILED ({}) {said}", code_of(&e));
            Ok(false)
        }
        Ok(Ok(out)) => {
            let first = sink
                .first_ms
                .map(|m| format!("{m} ms"))
                .unwrap_or_else(|| "-".into());
            let usage = out
                .usage
                .map(|u| format!("{} in / {} out", u.prompt_tokens, u.completion_tokens))
                .unwrap_or_else(|| "not reported".into());
            let answer = crate::base::text::cut::cut_chars(
                &crate::base::text::sanitize::sanitize(sink.text.trim()),
                60,
            )
            .into_owned();
            crate::outln!("{label}: ok");
            crate::outln!("  latency   first text {first}, whole answer {total} ms");
            crate::outln!(
                "  model     {}",
                out.model.as_deref().unwrap_or(&profile.model)
            );
            crate::outln!("  usage     {usage}");
            crate::outln!("  answer    {answer:?}");
            structured_ping(provider.as_ref(), &request, &limits).await;
            Ok(true)
        }
    }
}

/// Asks once more, for an answer held to a tiny JSON Schema, and says which dialect the
/// server took (and which it refused on the way).
async fn structured_ping(
    provider: &dyn crate::data::provider::Provider,
    request: &AgentRequest,
    limits: &crate::data::provider::call::Limits,
) {
    let (now, _) = provider.structured_output();
    if now.is_none() {
        crate::outln!("  structured output  off (the prompt alone states an answer's shape)");
        return;
    }
    let mut req = request.clone();
    req.system_prompt = "This is a connectivity check. Reply with {\"answer\": \"pong\"}".into();
    req.response_schema = Some(Arc::new(serde_json::json!({
        "type": "object",
        "properties": {"answer": {"type": "string", "enum": ["pong"]}},
        "required": ["answer"],
        "additionalProperties": false,
    })));
    let mut sink = PingSink {
        started: Instant::now(),
        first_ms: None,
        text: String::new(),
    };
    let result =
        crate::data::provider::call::admitted(provider, Arc::new(req), 1, &mut sink, limits).await;
    let (kept, notes) = provider.structured_output();
    for n in &notes {
        crate::outln!(
            "  structured output  {}",
            crate::base::text::sanitize::sanitize(n)
        );
    }
    match (result, kept) {
        (Ok(Ok(out)), Some(_)) => crate::outln!(
            "  structured output  {} (answer {:?})",
            out.structured_output.as_deref().unwrap_or("?"),
            crate::base::text::cut::cut_chars(
                &crate::base::text::sanitize::sanitize(sink.text.trim()),
                40
            )
        ),
        (Ok(Ok(_)), None) => crate::outln!(
            "  structured output  none taken: the prompt alone states an answer's shape"
        ),
        (Ok(Err(e)), _) => crate::outln!(
            "  structured output  the call failed: {}",
            crate::base::text::sanitize::sanitize(&e.to_string())
        ),
        (Err(stopped), _) => crate::outln!(
            "  structured output  the call was stopped: {}",
            crate::data::provider::call::said(&stopped)
        ),
    }
}

/// The seed 001 code a provider error becomes.
fn code_of(e: &ProviderError) -> &'static str {
    match e {
        ProviderError::Transient { .. } | ProviderError::SourceNotFound(_) => "E001",
        ProviderError::Timeout(_) => "E004",
        ProviderError::Malformed(_) => "E002",
        ProviderError::Permanent(_) => "E008",
    }
}
