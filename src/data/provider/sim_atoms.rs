//! The text of a simulated task answer: its atoms built from the request (fields asked
//! for, paper and code cited, assets referred to), sentences drawn from the papers, each
//! fault's mark on them, and the JSON they are written as.

use serde_json::{Map, Value};

use super::sim_answer::{Answer, DeltaAudit, Metadata, Output, SimAtom};
use super::sim_fault::Fault;
use crate::base::protocol::AgentRequest;

/// The answer to a task's request under `fault`: one to three atoms (at most the
/// request's `max_atoms`), sentences drawn from `sentences`, every draw from `rng`.
pub(super) fn answer(
    sentences: &[&'static str],
    req: &AgentRequest,
    fault: Fault,
    rng: &mut fastrand::Rng,
) -> String {
    let max = req
        .user_prompt
        .output_requirements
        .max_atoms
        .unwrap_or(3)
        .max(1);
    let n = 1 + rng.u32(..max.min(3));
    let plan = AtomPlan::of(sentences, req, fault, rng);
    let mut atoms = Vec::new();
    for k in 0..n {
        atoms.push(plan.atom(k, rng));
    }
    render(&plan, &atoms, n, rng)
}

/// What every atom of one simulated answer shares, read from the request once.
struct AtomPlan<'r> {
    /// The sentences answers are made of.
    sentences: &'r [&'static str],
    /// The request answered.
    req: &'r AgentRequest,
    /// The attempt's fault.
    fault: Fault,
    /// The atom type asked for (`Atom` when none is).
    atom_type: String,
    /// The asset ids' prefix (`MATH`, `CODE` …).
    prefix: &'static str,
    /// The prefix in lower case (the atom path's folder).
    lower_prefix: String,
    /// The task id's letters and digits, in upper case.
    stem: String,
    /// The paper cited.
    paper_id: String,
    /// The code cited, when the request names a repository.
    code_link: Option<String>,
    /// Assets the answer may refer to.
    existing: Vec<String>,
    /// The creation date, from the invocation id.
    date: String,
    /// The atoms' category (`Math_Ops`).
    category: String,
}

impl<'r> AtomPlan<'r> {
    /// Reads the plan from `req` (drawing the code link's line numbers from `rng`).
    fn of(
        sentences: &'r [&'static str],
        req: &'r AgentRequest,
        fault: Fault,
        rng: &mut fastrand::Rng,
    ) -> AtomPlan<'r> {
        let reqs = &req.user_prompt.output_requirements;
        let atom_type = reqs.atom_type.clone().unwrap_or_else(|| "Atom".to_string());
        let prefix = prefix_of(&atom_type);
        let stem: String = req
            .task_id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let context = &req.user_prompt.context;
        let paper_id = context
            .paper_info
            .as_ref()
            .and_then(|p| p.paper_id.clone())
            .unwrap_or_else(|| "ArXiv:2406.01234".to_string());
        let code_link = context
            .code_info
            .as_ref()
            .and_then(|c| c.repo_url.clone())
            .map(|u| {
                let file = c_first_file(req).unwrap_or_else(|| "models/diffusion.py".into());
                format!(
                    "{}/blob/main/{}#L{}-L{}",
                    u.trim_start_matches("https://"),
                    file,
                    40 + rng.u32(..100),
                    160 + rng.u32(..100)
                )
            });
        let lower_prefix = prefix.to_ascii_lowercase();
        // `Math_Ops` for MATH: the prefix's initial, the rest in lower case.
        let category = cat(&[&prefix[..1], &lower_prefix[1..], "_Ops"]);
        AtomPlan {
            sentences,
            req,
            fault,
            atom_type,
            prefix,
            lower_prefix,
            stem,
            paper_id,
            code_link,
            existing: context.existing_assets.clone().unwrap_or_default(),
            date: invocation_date(&req.invocation_id),
            category,
        }
    }

    /// A sentence of the papers, drawn from `rng`.
    fn sentence(&self, rng: &mut fastrand::Rng) -> &'static str {
        self.sentences[rng.usize(..self.sentences.len())]
    }

    /// Atom `k` (from 0) of the answer: its content, provenance and delta audit, drawn
    /// in that order, then its confidence.
    fn atom(&self, k: u32, rng: &mut fastrand::Rng) -> SimAtom<'_> {
        let content = self.content(rng);
        let number = k + 1;
        let asset_id = cat(&[
            self.prefix,
            "_",
            &self.stem,
            if number < 10 { "_0" } else { "_" },
            itoa::Buffer::new().format(number),
        ]);
        let provenance = self.provenance(&asset_id, rng);
        let (refs, incremental) = self.delta(k, rng);
        SimAtom {
            asset_id,
            atom_type: &self.atom_type,
            category: self.category.clone(),
            data_status: "Verified_Source_Anchored",
            confidence: ((0.6 + rng.f64() * 0.39) * 100.0).round() / 100.0,
            metadata: Metadata {
                created_at: cat(&[&self.date, "T00:00:00Z"]),
                created_by: &self.req.agent,
                version: "1.0",
                tags: [cat(&["#", self.prefix])],
            },
            content,
            provenance,
            delta_audit: DeltaAudit {
                existing_assets: refs,
                incremental_value: incremental,
                contradiction_marked: false,
            },
        }
    }

    /// An atom's content: two sentences for each required `content` field (a field left
    /// out now and then under the missing-required fault), a note when there are none, all
    /// `tbd` under the low-grade fault.
    fn content(&self, rng: &mut fastrand::Rng) -> Map<String, Value> {
        let fault = self.fault;
        let mut content = Map::new();
        for field in &self.req.user_prompt.output_requirements.required_fields {
            let path: Vec<&str> = field.split('.').collect();
            let (root, rest) = match path.first() {
                Some(&"content") => ("content", &path[1..]),
                Some(&"provenance") => ("provenance", &path[1..]),
                _ => ("content", &path[..]),
            };
            if root != "content" || rest.is_empty() {
                continue;
            }
            if fault == Fault::MissingRequired && rng.bool() {
                continue;
            }
            let text = cat(&[self.sentence(rng), " ", self.sentence(rng)]);
            insert_path(&mut content, rest, Value::String(text));
        }
        if content.is_empty() || fault == Fault::LowGrade {
            content.insert(
                "note".into(),
                Value::String(if fault == Fault::LowGrade {
                    "tbd".into()
                } else {
                    self.sentence(rng).to_string()
                }),
            );
        }
        if fault == Fault::LowGrade {
            for v in content.values_mut() {
                *v = Value::String("tbd".into());
            }
        }
        content
    }

    /// Atom `k`'s delta audit: up to two of the existing assets (a fabricated one too on
    /// the first atom under the hallucination fault), and a sentence of incremental value
    /// when it names any.
    fn delta(&self, k: u32, rng: &mut fastrand::Rng) -> (Vec<String>, Option<&'static str>) {
        let mut refs: Vec<String> = self
            .existing
            .iter()
            .filter(|_| rng.bool())
            .take(2)
            .cloned()
            .collect();
        if self.fault == Fault::Hallucination && k == 0 {
            refs.push(format!(
                "{}_FABRICATED_{:04}",
                self.prefix,
                rng.u32(..10000)
            ));
        }
        let incremental = if refs.is_empty() {
            None
        } else {
            Some(self.sentence(rng))
        };
        (refs, incremental)
    }

    /// An atom's provenance: the paper, a page and equation and the code (not under the
    /// low-grade fault), and the atom's path.
    fn provenance(&self, asset_id: &str, rng: &mut fastrand::Rng) -> Map<String, Value> {
        let mut provenance = Map::new();
        provenance.insert("paper_id".into(), Value::String(self.paper_id.clone()));
        if self.fault != Fault::LowGrade {
            let (page, eq) = (2 + rng.u32(..9), 1 + rng.u32(..12));
            provenance.insert(
                "paper_location".into(),
                Value::String(cat(&[
                    "Page ",
                    itoa::Buffer::new().format(page),
                    ", Eq. ",
                    itoa::Buffer::new().format(eq),
                ])),
            );
            if let Some(l) = &self.code_link {
                provenance.insert("code_link".into(), Value::String(l.clone()));
            }
        }
        provenance.insert(
            "atom_path".into(),
            Value::String(cat(&[
                "/atoms/",
                &self.lower_prefix,
                "/",
                asset_id,
                ".json",
            ])),
        );
        provenance
    }
}

/// The asset id prefix of an atom type.
fn prefix_of(atom_type: &str) -> &'static str {
    match atom_type {
        "Math_Atom" => "MATH",
        "Code_Atom" => "CODE",
        "Scenario_Atom" => "SCENARIO",
        "Strategic_Decision" => "DECISION",
        "Asset_Index" => "VAULT",
        _ => "ATOM",
    }
}

/// The answer's text: the `n` atoms under `atoms` (under `result`, the invalid shape)
/// with a summary, now and then fenced in words, cut off under the malformed-JSON fault.
fn render(plan: &AtomPlan<'_>, atoms: &[SimAtom<'_>], n: u32, rng: &mut fastrand::Rng) -> String {
    let summary = cat(&[
        "Produced ",
        itoa::Buffer::new().format(n),
        " ",
        &plan.atom_type,
        " for ",
        &plan.req.task_id,
        ".",
    ]);
    let (valid, invalid) = if plan.fault == Fault::InvalidShape {
        (None, Some(atoms))
    } else {
        (Some(atoms), None)
    };
    let body = Answer {
        output: Output {
            atoms: valid,
            result: invalid,
            summary: &summary,
        },
    };
    // Room for a typical answer up front (the buffer would otherwise grow four times).
    let mut buf = Vec::with_capacity(4096);
    let text = match serde_json::to_writer_pretty(&mut buf, &body) {
        Ok(()) => String::from_utf8(buf).unwrap_or_default(),
        Err(_) => String::new(),
    };
    let mut text = if rng.u8(..4) == 0 {
        format!("Here is the analysis.\n```json\n{text}\n```\n")
    } else {
        text
    };
    if plan.fault == Fault::MalformedJson {
        let cut = text.len() * 2 / 3;
        let cut = (0..=cut)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(cut);
    }
    text
}

/// The strings `parts` one after another, in a string of exactly their length.
fn cat(parts: &[&str]) -> String {
    let mut s = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    parts.iter().for_each(|p| s.push_str(p));
    s
}

/// The first focus file of the request's code, if it names any.
fn c_first_file(req: &AgentRequest) -> Option<String> {
    req.user_prompt
        .context
        .code_info
        .as_ref()?
        .focus_files
        .as_ref()?
        .first()
        .cloned()
}

/// `YYYY-MM-DD` from an invocation id `INV_YYYYMMDD_…` (deterministic timestamps).
fn invocation_date(id: &str) -> String {
    let d = id.split('_').nth(1).unwrap_or("20260101");
    if d.len() == 8 && d.is_ascii() {
        cat(&[&d[..4], "-", &d[4..6], "-", &d[6..]])
    } else {
        "2026-01-01".into()
    }
}

/// Sets `value` at `path` (`a.b.c`) in `obj`, making (or replacing with) objects on
/// the way.
fn insert_path(obj: &mut Map<String, Value>, path: &[&str], value: Value) {
    match path {
        [] => {}
        [last] => {
            obj.insert((*last).to_string(), value);
        }
        [first, rest @ ..] => {
            let child = obj
                .entry((*first).to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !child.is_object() {
                *child = Value::Object(Map::new());
            }
            if let Value::Object(m) = child {
                insert_path(m, rest, value);
            }
        }
    }
}
