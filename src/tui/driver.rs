//! The one driver loop every screen runs on: a `tokio::select!` over terminal input,
//! the screen's own messages (committed engine events, reader answers), stop signals,
//! a terminal watchdog and the screen's next wake-up. Everything available is taken
//! first, then at most one frame is drawn; frames are capped at ~30/s and none is drawn
//! when nothing changed. Nothing in the loop reads the database or a file: a screen
//! asks its reader thread and gets the answer as a message.

use std::future::Future;
use std::time::Duration;

use crossterm::event::{Event, EventStream};
use futures_util::StreamExt;
use ratatui::Frame;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

use super::terminal::TerminalGuard;

/// Shortest time between two frames.
pub const FRAME_INTERVAL: Duration = Duration::from_millis(33);
/// How often the UI checks that its terminal is still there.
pub const TERMINAL_CHECK: Duration = Duration::from_millis(250);
/// How long the loop sleeps when its screen asks for no wake-up.
const IDLE: Duration = Duration::from_secs(3600);

/// A screen the driver runs: how it takes terminal input and its messages, what the
/// passing of time asks of it, how it is drawn and when it is done.
pub trait Screen {
    /// A message from one of the screen's sources.
    type Msg;

    /// A terminal event (key, mouse, resize); whether anything may have changed.
    fn on_terminal(&mut self, ev: Event) -> bool;

    /// A message from the screen's sources; whether anything may have changed.
    fn on_msg(&mut self, msg: Self::Msg) -> bool;

    /// Called before each wait: whether the screen wants a frame now, and when it next
    /// wants to be woken (`None`: only by input or a message). `last_frame` is when the
    /// last frame was drawn.
    fn on_time(&mut self, now: Instant, last_frame: Instant) -> (bool, Option<Instant>);

    /// Draws one frame.
    fn draw(&mut self, f: &mut Frame);

    /// Whether the loop should end.
    fn done(&self) -> bool;

    /// A stop signal arrived or the terminal is gone: leave as on a confirmed quit.
    fn stop(&mut self);

    /// A second stop signal soon after the first (`signal` names it): the screen may
    /// end the process at once. By default it only stops.
    fn stop_at_once(&mut self, signal: &'static str) {
        let _ = signal;
        self.stop();
    }
}

/// Where a screen's messages come from.
pub trait Inbox {
    /// The message.
    type Msg;

    /// The next message; `None` once every source has closed.
    fn next(&mut self) -> impl Future<Output = Option<Self::Msg>>;
}

impl<T> Inbox for UnboundedReceiver<T> {
    type Msg = T;

    fn next(&mut self) -> impl Future<Output = Option<T>> {
        self.recv()
    }
}

/// Runs `screen` on the terminal until it is done (or the terminal goes away).
pub async fn drive<S, I>(
    guard: &mut TerminalGuard,
    screen: &mut S,
    inbox: &mut I,
) -> std::io::Result<()>
where
    S: Screen,
    I: Inbox<Msg = S::Msg>,
{
    let mut input = EventStream::new();
    let mut dirty = true;
    let mut last_frame = Instant::now() - FRAME_INTERVAL;
    let mut inbox_open = true;
    let mut terminal_lost = false;
    // SIGINT / SIGTERM / SIGHUP: leave like a confirmed quit; a second one within 2 s
    // may exit at once.
    let mut stop_signal = crate::base::signals::stop_signals();
    let mut signal_count = crate::base::signals::SignalCount::default();
    let mut watchdog = tokio::time::interval(TERMINAL_CHECK);
    watchdog.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !screen.done() {
        let now = Instant::now();
        let (wanted, wake) = screen.on_time(now, last_frame);
        dirty |= wanted;
        // Nothing can be drawn on a terminal that is gone.
        dirty &= !terminal_lost;
        let due = last_frame + FRAME_INTERVAL;
        if dirty && now >= due {
            draw(guard, screen)?;
            last_frame = Instant::now();
            dirty = false;
            continue;
        }
        let wake = if dirty {
            due
        } else {
            wake.unwrap_or(now + IDLE)
        };
        tokio::select! {
            ev = input.next(), if !terminal_lost => match ev {
                Some(Ok(ev)) => dirty |= screen.on_terminal(ev),
                // Input that fails or ends means the terminal is gone: like a hang-up.
                other => {
                    match other {
                        Some(Err(e)) => tracing::warn!("terminal input failed: {e}; leaving as on SIGHUP"),
                        _ => tracing::warn!("terminal input ended; leaving as on SIGHUP"),
                    }
                    terminal_lost = true;
                    screen.stop();
                }
            },
            _ = watchdog.tick(), if !terminal_lost => {
                if super::terminal::terminal_gone() {
                    tracing::warn!("the terminal hung up; leaving as on SIGHUP");
                    terminal_lost = true;
                    screen.stop();
                }
            },
            msg = inbox.next(), if inbox_open => match msg {
                Some(m) => dirty |= screen.on_msg(m),
                None => inbox_open = false,
            },
            Some(name) = stop_signal.recv() => {
                match signal_count.arrived(std::time::Instant::now()) {
                    crate::base::signals::Verdict::ExitNow => screen.stop_at_once(name),
                    _ => screen.stop(),
                }
                dirty = true;
            },
            _ = tokio::time::sleep_until(wake) => {},
        }
    }
    Ok(())
}

/// Draws one frame inside a synchronized update (no half-drawn frame is seen).
fn draw<S: Screen>(guard: &mut TerminalGuard, screen: &mut S) -> std::io::Result<()> {
    use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
    let _ = crossterm::execute!(std::io::stdout(), BeginSynchronizedUpdate);
    let res = guard.terminal.draw(|f| screen.draw(f));
    let _ = crossterm::execute!(std::io::stdout(), EndSynchronizedUpdate);
    res.map(|_| ())
}
