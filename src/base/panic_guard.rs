//! Running untrusted third-party parsers (PDF) whose panics must not take the program
//! down: `guarded` catches the panic, and panic hooks ask `in_guarded` to stay quiet (the
//! terminal hook must not restore the terminal for a panic that was caught).

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`; a panic inside becomes `Err` with its message.
pub fn guarded<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    GUARDED.with(|g| g.set(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(false));
    r.map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into())
    })
}

/// Whether the current thread is inside `guarded` (panic hooks stay quiet then).
pub fn in_guarded() -> bool {
    GUARDED.with(|g| g.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_errors_and_the_flag_resets() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !in_guarded() {
                prev(info);
            }
        }));
        assert_eq!(guarded(|| 2 + 2), Ok(4));
        let e = guarded(|| -> u8 { panic!("bad pdf") });
        assert_eq!(e, Err("bad pdf".to_string()));
        assert!(!in_guarded());
        let _ = std::panic::take_hook();
    }
}
