//! Terminal hygiene: raw mode, alternate screen, mouse capture and a hidden cursor, all
//! restored on drop, on error and on panic (a chained panic hook restores first).

use std::io::{self, Stdout, Write};

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

/// The terminal in TUI mode; restores every mode when dropped.
pub struct TerminalGuard {
    /// The ratatui terminal.
    pub terminal: Terminal<CrosstermBackend<TermOut>>,
}

/// Standard output for the UI. Once the terminal is gone a write cannot reach anyone,
/// so a failed write is dropped rather than reported (ratatui reports a failure to show
/// the cursor on drop with `eprintln!`, which panics on a hung-up terminal); the loss
/// itself is noticed by [`terminal_gone`].
pub struct TermOut(Stdout);

impl Write for TermOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.write(buf) {
            Ok(n) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(_) => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        let _ = self.0.flush();
        Ok(())
    }
}

impl TerminalGuard {
    /// Enters TUI mode.
    pub fn enter() -> io::Result<TerminalGuard> {
        install_panic_hook();
        enable_raw_mode()?;
        let mut out = io::stdout();
        if let Err(e) = execute!(out, EnterAlternateScreen, EnableMouseCapture, cursor::Hide) {
            restore();
            return Err(e);
        }
        match Terminal::new(CrosstermBackend::new(TermOut(out))) {
            Ok(terminal) => Ok(TerminalGuard { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Puts the terminal back: cooked mode, main screen, no mouse capture, cursor shown.
pub fn restore() {
    let _ = disable_raw_mode();
    let mut out = io::stdout();
    let _ = execute!(
        out,
        crossterm::terminal::EndSynchronizedUpdate,
        DisableMouseCapture,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = out.flush();
}

/// Whether the terminal went away under the UI (its pseudo-terminal was closed, the
/// connection dropped): standard input or output reports a hang-up or an error. A hung-up
/// terminal gives no SIGHUP when a wrapper (`runuser`, `sh -c` ignoring HUP) is its
/// session leader, and its input reads then return nothing forever, so this is asked
/// for rather than waited for.
pub fn terminal_gone() -> bool {
    #[cfg(target_os = "linux")]
    {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        use std::os::fd::AsFd;
        let stdin = io::stdin();
        let stdout = io::stdout();
        let mut fds = [
            PollFd::new(stdin.as_fd(), PollFlags::empty()),
            PollFd::new(stdout.as_fd(), PollFlags::empty()),
        ];
        match poll(&mut fds, PollTimeout::ZERO) {
            Ok(0) => false,
            Ok(_) => fds.iter().any(|f| {
                f.revents().is_some_and(|r| {
                    r.intersects(PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL)
                })
            }),
            Err(_) => false,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // Only a panic on the UI's thread ends the UI; other threads' panics are caught
    // (an engine worker's becomes E008) and must not pull the terminal from under it.
    let ui_thread = std::thread::current().id();
    ONCE.call_once(move || {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() != ui_thread {
                tracing::error!("panic on a background thread: {info}");
                return;
            }
            // A panic caught on purpose (a third-party parser on untrusted bytes) leaves
            // the terminal alone; it is reported where it is caught.
            if crate::base::panic_guard::in_guarded() {
                return;
            }
            restore();
            previous(info);
        }));
    });
}
