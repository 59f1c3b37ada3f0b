//! The Eval screen's asks and answers: what a key's [`Request`] asks the reader (or
//! what the screen says instead, with nothing to read), and the reader's answers applied
//! to the screen. No reading happens here.

use super::detail::Detail;
use super::marks::{marks_file, marks_line};
use super::reader::{EvalAnswer, EvalQuery};
use super::state::{EvalScreen, Request};

impl EvalScreen {
    /// The query for the last key's request, if it needs the reader (else what it
    /// asked is said on the status line).
    pub fn take_query(&mut self) -> Option<EvalQuery> {
        let req = self.request.take()?;
        match req {
            Request::Open(i) => {
                let id = self.model.samples.get(i)?.id.clone();
                Some(EvalQuery::Open {
                    id,
                    row: self.model.row.clone(),
                    scoring: self.model.scoring.clone(),
                    // A running eval's log grows: its tool calls are read again.
                    fresh_tools: self.model.running() || self.followed(),
                })
            }
            Request::Meta(key, value) => Some(EvalQuery::Meta {
                eval_id: self.model.row.eval_id.clone(),
                key,
                value,
            }),
            Request::Handoff => self.handoff_query(),
            Request::SaveMarks => {
                let path = marks_file(&self.model);
                let text: String = self.marked.iter().map(|id| marks_line(id)).collect();
                let done = format!(
                    "{} marked · plexus eval rerun {} --samples {}",
                    self.marked.len(),
                    self.model.row.eval_id,
                    path.display()
                );
                Some(EvalQuery::SaveMarks { path, text, done })
            }
        }
    }

    /// The handoff's query, or why there is none.
    fn handoff_query(&mut self) -> Option<EvalQuery> {
        if self.model.running() || self.followed() {
            self.say(
                "the eval is running: it writes its handoff when it ends (or stops)",
                true,
            );
            return None;
        }
        let Some(out) = self.model.row.out_dir.clone() else {
            self.say(
                "this eval has no failure tree to write the handoff into",
                true,
            );
            return None;
        };
        Some(EvalQuery::Handoff {
            row: self.model.row.clone(),
            out,
        })
    }

    /// Applies the reader's answer; `seconds` is the time between the last two readings
    /// (for the rate).
    pub fn apply(&mut self, a: EvalAnswer, seconds: f64) {
        match a {
            EvalAnswer::Reread(Ok(m), _) => self.replace(*m, seconds),
            EvalAnswer::Reread(Err(e), _) => {
                self.say(format!("cannot read the eval again: {e}"), true)
            }
            EvalAnswer::Opened(_, Ok(d)) => {
                let tab = self.detail.as_ref().map_or(0, |o| o.tab);
                self.detail = Some(Detail { tab, ..d });
            }
            EvalAnswer::Opened(id, Err(e)) => self.say(format!("cannot open {id}: {e}"), true),
            EvalAnswer::Meta(k, v, Ok(by_id)) => {
                let values = self.model.in_sample_order(by_id);
                let found = values
                    .iter()
                    .filter(|x| x.as_deref() == Some(v.as_str()))
                    .count();
                self.meta_values = Some((k.clone(), values));
                self.refresh();
                if found == 0 {
                    self.say(format!("no sample has meta.{k}={v}"), true);
                }
            }
            EvalAnswer::Meta(_, _, Err(e)) => {
                self.say(format!("cannot read the metadata: {e}"), true)
            }
            EvalAnswer::Say(text, warn) => self.say(text, warn),
        }
    }
}
