//! A pseudo-terminal session: the real binary, real keys, the screen parsed by a VT
//! emulator.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::termios::LocalFlags;
use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};

pub const ROWS: u16 = 30;
pub const COLS: u16 = 110;

/// The program running in a pseudo-terminal.
pub struct Session {
    pub master: Box<dyn MasterPty + Send>,
    pub writer: Box<dyn Write + Send>,
    pub child: Box<dyn Child + Send + Sync>,
    pub parser: Arc<Mutex<vt100::Parser>>,
}

impl Session {
    /// Starts plexus with `args` in `dir`.
    pub fn start(args: &[&str], dir: &Path) -> Session {
        Session::start_sized(args, dir, COLS, ROWS)
    }

    /// Starts plexus with `args` in `dir`, in a terminal of `cols` x `rows`.
    pub fn start_sized(args: &[&str], dir: &Path, cols: u16, rows: u16) -> Session {
        Session::start_with_env(args, dir, cols, rows, &[])
    }

    /// Like [`Session::start_sized`], with `env` set for the program.
    pub fn start_with_env(
        args: &[&str],
        dir: &Path,
        cols: u16,
        rows: u16,
        env: &[(&str, &str)],
    ) -> Session {
        let pty = native_pty_system();
        let pair = pty
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_plexus"));
        cmd.args(args);
        cmd.cwd(dir);
        cmd.env("TERM", "xterm-256color");
        cmd.env("PLEXUS_CONFIG", dir.join("none.toml"));
        cmd.env_remove("PLEXUS_DB");
        cmd.env_remove("PLEXUS_THEME");
        for (k, v) in env {
            cmd.env(k, v);
        }
        std::fs::write(dir.join("none.toml"), "").expect("config");
        let child = pair.slave.spawn_command(cmd).expect("spawn");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let writer = pair.master.take_writer().expect("writer");
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
        let p = parser.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if let Ok(mut parser) = p.lock() {
                            parser.process(&buf[..n]);
                        }
                    }
                }
            }
        });
        Session {
            master: pair.master,
            writer,
            child,
            parser,
        }
    }

    /// The screen as text.
    pub fn screen(&self) -> String {
        self.parser.lock().expect("parser").screen().contents()
    }

    /// Waits until the screen contains `text`; fails with the screen on timeout.
    pub fn wait_for(&self, text: &str, secs: u64) -> String {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            if Instant::now() > end {
                panic!("timed out waiting for {text:?}; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    /// Types `keys`.
    pub fn send(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).expect("write");
        self.writer.flush().expect("flush");
        std::thread::sleep(Duration::from_millis(150));
    }

    /// Quits: `q`, then `y` if asked. Returns the exit status.
    pub fn quit(&mut self) -> portable_pty::ExitStatus {
        self.send("q");
        let end = Instant::now() + Duration::from_secs(20);
        let mut answered = false;
        loop {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                return st;
            }
            if !answered && self.screen().contains("Quit?") {
                self.send("y");
                answered = true;
            }
            if Instant::now() > end {
                let _ = self.child.kill();
                panic!("the program did not quit; screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    /// Asserts every terminal mode is back.
    pub fn assert_restored(&self) {
        let p = self.parser.lock().expect("parser");
        let s = p.screen();
        assert!(!s.alternate_screen(), "still on the alternate screen");
        assert!(!s.hide_cursor(), "cursor still hidden");
        assert_eq!(
            s.mouse_protocol_mode(),
            vt100::MouseProtocolMode::None,
            "mouse capture still on"
        );
        if let Some(t) = self.master.get_termios() {
            assert!(
                t.local_flags.contains(LocalFlags::ICANON)
                    && t.local_flags.contains(LocalFlags::ECHO),
                "the terminal was left in raw mode"
            );
        }
    }
}
