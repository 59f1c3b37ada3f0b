//! `plexus bench ui`: the TUI benchmark — the Run screen of a 1,000-task DAG
//! with a 100,000-line output buffer rendered at 200x60 while 10,000 events a second are
//! folded through the reducer; the reducer's own throughput; memory under a long stream.

use std::sync::Arc;
use std::time::Instant;

use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::engine::{peak_rss_mib, rss_mib};
use crate::base::protocol::{Constraints, Grade, GradeCounts, InvocationStatus};
use crate::cli::args::UiBenchOpts;
use crate::model::event::{
    AgentInfo, AtomGrade, AtomsGraded, Chunk, Empty, EngineEvent, Envelope, InvocationFinished,
    InvocationStarted, RunStarted, TaskFinished, TaskInfo, TaskStatus,
};
use crate::model::state::{reduce, RunState};
use crate::tui::app::keymap::Keymap;
use crate::tui::app::UiState;
use crate::tui::ui::theme::Theme;

/// Figures of the UI benchmark.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UiBenchReport {
    /// Tasks in the DAG.
    pub tasks: usize,
    /// Lines in the selected output buffer.
    pub lines: usize,
    /// Terminal size.
    pub size: String,
    /// Frames rendered.
    pub frames: usize,
    /// Median frame time, ms.
    pub frame_median_ms: f64,
    /// 99th percentile frame time, ms.
    pub frame_p99_ms: f64,
    /// Median time of a bare ratatui frame of the same visible content (paragraphs of
    /// the visible rows in four bordered blocks), ms: the machine's yardstick.
    pub bare_frame_median_ms: f64,
    /// Events folded between frames.
    pub events_per_frame: usize,
    /// Median time folding one frame's events, ms.
    pub fold_median_ms: f64,
    /// Reducer throughput, events/s.
    pub reducer_events_per_s: f64,
    /// Events in the throughput run.
    pub reducer_events: usize,
    /// Streamed text held after the long stream, MiB.
    pub text_held_mib: f64,
    /// Streamed text fed in the long stream, MiB.
    pub text_fed_mib: f64,
    /// Resident memory before the long stream, MiB.
    pub rss_before_mib: f64,
    /// Resident memory after the long stream, MiB.
    pub rss_mib: f64,
    /// Peak resident memory, MiB.
    pub peak_rss_mib: f64,
}

const AGENTS: [&str; 5] = [
    "Knowledge_Vault",
    "Scholar_Internalizer",
    "Code_Architect",
    "Scenario_Validator",
    "Strategic_Critic",
];

fn env(seq: u64, task: Option<&Arc<str>>, agent: usize, ev: EngineEvent) -> Envelope {
    Envelope {
        run_id: Arc::from("R-bench-ui"),
        seq,
        ts: 1_700_000_000_000 + seq as i64 / 10,
        task_id: task.cloned(),
        invocation_id: None,
        agent: Some(Arc::from(AGENTS[agent % AGENTS.len()])),
        event: ev,
    }
}

/// A run of `tasks` tasks in layers of 50, each depending on two tasks of the layer above.
fn started(tasks: usize) -> (RunState, Vec<Arc<str>>) {
    let ids: Vec<Arc<str>> = (0..tasks)
        .map(|i| Arc::from(format!("T{:04}_{}", i, &AGENTS[i % 5][..5]).as_str()))
        .collect();
    let width = 50;
    let infos = (0..tasks)
        .map(|i| {
            let layer = i / width;
            let depends_on = if layer == 0 {
                vec![]
            } else {
                let up = (layer - 1) * width;
                vec![
                    ids[up + i % width].to_string(),
                    ids[up + (i * 7 + 3) % width].to_string(),
                ]
            };
            TaskInfo {
                task_id: ids[i].to_string(),
                agent: AGENTS[i % 5].into(),
                depends_on,
            }
        })
        .collect();
    let mut st = RunState::new();
    reduce(
        &mut st,
        &env(
            1,
            None,
            0,
            EngineEvent::RunStarted(RunStarted {
                plan_id: "bench-ui".into(),
                execution_mode: "Deep_Internalization".into(),
                provider: "simulated".into(),
                seed: 1,
                concurrency: 64,
                agents: AGENTS
                    .iter()
                    .map(|a| AgentInfo {
                        name: (*a).into(),
                        max_input_tokens: 100_000,
                        data_area_tokens: 80_000,
                    })
                    .collect(),
                tasks: infos,
            }),
        ),
    );
    (st, ids)
}

/// A repeating mix of events like a busy run's: mostly chunks, with invocations starting
/// and finishing, atoms graded and tasks finishing.
fn event_mix(ids: &[Arc<str>], n: usize, first_seq: u64) -> Vec<Envelope> {
    let text =
        "the reverse process removes a little noise at each step, conditioned on the scene;\n";
    let mut out = Vec::with_capacity(n);
    let mut seq = first_seq;
    let mut k = 0usize;
    while out.len() < n {
        let t = k % ids.len();
        let task = Some(&ids[t]);
        let ev = match k % 40 {
            0 => EngineEvent::InvocationStarted(InvocationStarted {
                attempt: 1,
                prompt_tokens: 1_000 + (k % 5_000) as u64,
                constraints: Constraints::default(),
                quality_threshold: "B".into(),
            }),
            37 => EngineEvent::AtomsGraded(AtomsGraded {
                atoms: vec![AtomGrade {
                    asset_id: format!("ATOM_{k}"),
                    atom_type: "Math_Atom".into(),
                    grade: Grade::B,
                    score: 0.8,
                    confidence: Some(0.7),
                    issues: 0,
                }],
            }),
            38 => EngineEvent::InvocationFinished(InvocationFinished {
                status: Some(InvocationStatus::Success),
                execution_time_ms: 900,
                output_tokens: 700,
                chunks: 36,
                atoms: 1,
                avg_score: 0.8,
                grades: GradeCounts {
                    a: 0,
                    b: 1,
                    c: 0,
                    d: 0,
                },
                issues: 0,
                errors: vec![],
                error_message: None,
                provider_usage: None,
                cost_usd: None,
                loop_prompt_tokens: None,
            }),
            39 => EngineEvent::TaskReady(Empty {}),
            _ => EngineEvent::Chunk(Chunk {
                text: text[..20 + k % 60].to_string() + if k.is_multiple_of(3) { "\n" } else { "" },
            }),
        };
        out.push(env(seq, task, t, ev));
        seq += 1;
        k += 1;
    }
    out
}

/// A bare ratatui frame of the Run screen's visible content: the DAG rows as styled
/// spans, the output's last rows, and the two tables as lines, each in a bordered block.
fn bare_frame(f: &mut ratatui::Frame, st: &RunState, selected: usize, tick: usize) {
    use ratatui::layout::{Constraint, Direction, Layout};
    use ratatui::style::{Color, Style};
    use ratatui::text::{Line, Span};
    use ratatui::widgets::{Block, Borders, Paragraph};
    let area = f.area();
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(9),
            Constraint::Length(1),
        ])
        .split(area);
    let top = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(42), Constraint::Percentage(58)])
        .split(rows[1]);
    let bottom = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(58), Constraint::Percentage(42)])
        .split(rows[2]);
    let h = top[0].height.saturating_sub(2) as usize;
    let per_line = (top[0].width.saturating_sub(6) / 16).max(1) as usize;
    let dag: Vec<Line> = st
        .tasks
        .chunks(per_line)
        .take(h)
        .map(|row| {
            Line::from(
                row.iter()
                    .map(|t| {
                        Span::styled(
                            format!(" ○ {:<12} ", t.id),
                            Style::default().fg(Color::Cyan),
                        )
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    f.render_widget(
        Paragraph::new(dag).block(Block::default().borders(Borders::ALL).title(" Plan DAG ")),
        top[0],
    );
    let out = &st.tasks[selected].output;
    let oh = top[1].height.saturating_sub(2) as usize;
    let lines: Vec<Line> = (out.len().saturating_sub(oh)..out.len())
        .map(|i| Line::raw(out.line(i)))
        .collect();
    f.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" Output ")),
        top[1],
    );
    let table = |title: &'static str| {
        let lines: Vec<Line> = st
            .agents
            .iter()
            .map(|a| {
                Line::raw(format!(
                    "{:<22} {:>8} {:>8} {:>6} {tick}",
                    a.name, a.tokens_in, a.tokens_out, a.invocations
                ))
            })
            .collect();
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(title))
    };
    f.render_widget(table(" Token budget "), bottom[0]);
    f.render_widget(table(" Quality "), bottom[1]);
    f.render_widget(Paragraph::new(format!(" plexus {tick}")), rows[0]);
    f.render_widget(Paragraph::new(format!(" status {tick}")), rows[3]);
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Runs the UI benchmark.
pub fn run_ui_bench(o: &UiBenchOpts) -> color_eyre::eyre::Result<UiBenchReport> {
    // 1. The reducer alone.
    let reducer_events_per_s = reducer_throughput(o.tasks, o.reducer_events);

    // 2. Rendering while folding 10,000 events/s.
    let (mut st, ids) = started(o.tasks);
    let selected = o.tasks / 2;
    let seq = fill_output(&mut st, &ids[selected], selected, o.lines);
    let drawn = draw_under_load(o, &mut st, &ids, selected, seq)?;

    // 3. Memory: a long stream into every task, tasks finishing as they go.
    let rss_before = rss_mib();
    let fed = long_stream(&mut st, &ids, selected);
    Ok(UiBenchReport {
        tasks: o.tasks,
        lines: o.lines,
        size: format!("{}x{}", o.width, o.height),
        frames: drawn.frames.len(),
        frame_median_ms: percentile(&drawn.frames, 0.5),
        frame_p99_ms: percentile(&drawn.frames, 0.99),
        bare_frame_median_ms: percentile(&drawn.bare, 0.5),
        events_per_frame: drawn.per_frame,
        fold_median_ms: percentile(&drawn.folds, 0.5),
        reducer_events_per_s,
        reducer_events: o.reducer_events,
        text_held_mib: st.output_bytes as f64 / (1 << 20) as f64,
        text_fed_mib: fed as f64 / (1 << 20) as f64,
        rss_before_mib: rss_before,
        rss_mib: rss_mib(),
        peak_rss_mib: peak_rss_mib(),
    })
}

/// The reducer's throughput, events/s, folding `events` events into a run of `tasks`
/// tasks. Events are made in blocks (not timed) so that memory stays small.
fn reducer_throughput(tasks: usize, events: usize) -> f64 {
    let (mut st, ids) = started(tasks);
    let mut folded = 0usize;
    let mut busy = 0.0f64;
    while folded < events {
        let n = (events - folded).min(100_000);
        let block = event_mix(&ids, n, 2 + folded as u64);
        let t0 = Instant::now();
        for e in &block {
            reduce(&mut st, e);
        }
        busy += t0.elapsed().as_secs_f64();
        folded += n;
    }
    folded as f64 / busy.max(1e-9)
}

/// Starts a call of the selected task and streams `lines` lines of output into it;
/// returns the last event's number.
fn fill_output(st: &mut RunState, sel_id: &Arc<str>, selected: usize, lines: usize) -> u64 {
    let line = "x_{t-1} = 1/sqrt(alpha_t) (x_t - beta_t/sqrt(1-alpha_bar_t) eps_theta(x_t, t)) + sigma_t z  去噪\n";
    let mut seq = 2u64;
    let call = EngineEvent::InvocationStarted(InvocationStarted {
        attempt: 1,
        prompt_tokens: 42_000,
        constraints: Constraints::default(),
        quality_threshold: "B".into(),
    });
    reduce(st, &env(seq, Some(sel_id), selected, call));
    for _ in 0..lines {
        seq += 1;
        let chunk = EngineEvent::Chunk(Chunk { text: line.into() });
        reduce(st, &env(seq, Some(sel_id), selected, chunk));
    }
    seq
}

/// Times of the frames drawn under load, sorted, in ms.
struct Drawn {
    /// The Run screen's frames.
    frames: Vec<f64>,
    /// The yardstick's frames of the same visible content.
    bare: Vec<f64>,
    /// Folding one frame's events.
    folds: Vec<f64>,
    /// Events folded between two frames.
    per_frame: usize,
}

/// Draws `o.frames` frames of the Run screen on the selected task, folding a frame's
/// share of `o.events_per_s` (at 30 frames a second) before each, beside the bare
/// yardstick frame.
fn draw_under_load(
    o: &UiBenchOpts,
    st: &mut RunState,
    ids: &[Arc<str>],
    selected: usize,
    seq: u64,
) -> color_eyre::eyre::Result<Drawn> {
    let per_frame = (o.events_per_s / 30).max(1);
    let feed = event_mix(ids, per_frame * o.frames, seq + 1);
    let mut ui = UiState::new(true);
    ui.task = selected;
    let theme = Theme::dark();
    let keys = Keymap::default_keys();
    let mut term = Terminal::new(TestBackend::new(o.width, o.height))?;
    // The yardstick draws the same visible content as plain ratatui paragraphs into a
    // terminal of its own, frame for frame, so both see the same machine state.
    let mut bare_term = Terminal::new(TestBackend::new(o.width, o.height))?;
    let mut bare = Vec::with_capacity(o.frames);
    let mut frames = Vec::with_capacity(o.frames);
    let mut folds = Vec::with_capacity(o.frames);
    for (f, chunk) in feed.chunks(per_frame).enumerate() {
        let t = Instant::now();
        for e in chunk {
            reduce(st, e);
        }
        folds.push(t.elapsed().as_secs_f64() * 1e3);
        ui.tick = f as u64;
        let t = Instant::now();
        term.draw(|fr| crate::tui::ui::draw(fr, st, &mut ui, &theme, &keys))?;
        frames.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        bare_term.draw(|fr| bare_frame(fr, st, selected, f))?;
        bare.push(t.elapsed().as_secs_f64() * 1e3);
    }
    bare.sort_by(f64::total_cmp);
    drop(feed);
    frames.sort_by(f64::total_cmp);
    folds.sort_by(f64::total_cmp);
    Ok(Drawn {
        frames,
        bare,
        folds,
        per_frame,
    })
}

/// A long stream: 40 rounds of 25 chunks of 256 bytes into every task, every task but
/// the selected one finishing in the first; returns the bytes fed.
fn long_stream(st: &mut RunState, ids: &[Arc<str>], selected: usize) -> usize {
    let mut fed = 0usize;
    let chunk = "y".repeat(255) + "\n";
    let mut seq = st.last_seq + 1;
    for round in 0..40 {
        for (t, id) in ids.iter().enumerate() {
            for _ in 0..25 {
                let text = EngineEvent::Chunk(Chunk {
                    text: chunk.clone(),
                });
                reduce(st, &env(seq, Some(id), t, text));
                fed += chunk.len();
                seq += 1;
            }
            if round == 0 && t != selected {
                reduce(st, &env(seq, Some(id), t, finished_ok()));
                seq += 1;
            }
        }
    }
    fed
}

/// A task's end: succeeded after one attempt with one atom.
fn finished_ok() -> EngineEvent {
    EngineEvent::TaskFinished(TaskFinished {
        status: TaskStatus::Success,
        attempts: 1,
        atoms: 1,
        error_code: None,
        error_message: None,
    })
}

/// Prints the report as a table with the targets beside the figures.
pub fn print_ui_report(r: &UiBenchReport) {
    crate::outln!(
        "Run screen {} · {} tasks · {}-line output buffer",
        r.size,
        r.tasks,
        r.lines
    );
    crate::outln!(
        "frame render median   {:.3} ms   (target ≤ 1.5 ms)",
        r.frame_median_ms
    );
    crate::outln!("frame render p99      {:.3} ms", r.frame_p99_ms);
    crate::outln!(
        "bare ratatui frame    {:.3} ms median (same visible content as plain paragraphs; ratio {:.2})",
        r.bare_frame_median_ms,
        r.frame_median_ms / r.bare_frame_median_ms.max(1e-9)
    );
    crate::outln!(
        "fold per frame        {:.3} ms median for {} events (10,000 events/s at 30 frames/s)",
        r.fold_median_ms,
        r.events_per_frame
    );
    crate::outln!(
        "reducer               {:.0} events/s over {} events   (target ≥ 300,000)",
        r.reducer_events_per_s,
        r.reducer_events
    );
    crate::outln!(
        "streamed text held    {:.1} MiB after {:.1} MiB fed (budget {} MiB)",
        r.text_held_mib,
        r.text_fed_mib,
        crate::model::state::DEFAULT_OUTPUT_BUDGET >> 20
    );
    crate::outln!(
        "resident memory       {:.1} MiB before the long stream, {:.1} MiB after (peak {:.1} MiB)",
        r.rss_before_mib,
        r.rss_mib,
        r.peak_rss_mib
    );
}
