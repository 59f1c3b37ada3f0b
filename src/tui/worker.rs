//! A reader thread for a screen: it takes queries in order, answers each off the UI
//! loop, and sends the answers back as messages the driver hands to the screen. Every
//! read a screen needs (the database, the files of a tree) goes through one.

use std::sync::mpsc as std_mpsc;

use tokio::sync::mpsc::UnboundedSender;

/// Handle to a reader thread taking queries `Q`.
pub struct Worker<Q> {
    tx: std_mpsc::Sender<Q>,
}

impl<Q: Send + 'static> Worker<Q> {
    /// Starts thread `name`: `init` makes its resources on the thread (a database
    /// connection), then `serve` answers each query (`None`: no answer); answers go to
    /// `out`. The thread ends when the handle is dropped or `out` closes.
    pub fn spawn<R, A>(
        name: &str,
        out: UnboundedSender<A>,
        init: impl FnOnce() -> R + Send + 'static,
        mut serve: impl FnMut(&mut R, Q) -> Option<A> + Send + 'static,
    ) -> Worker<Q>
    where
        A: Send + 'static,
    {
        let (tx, rx) = std_mpsc::channel::<Q>();
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut resources = init();
                while let Ok(q) = rx.recv() {
                    let Some(answer) = serve(&mut resources, q) else {
                        continue;
                    };
                    if out.send(answer).is_err() {
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the {name} thread: {e}");
        }
        Worker { tx }
    }

    /// Queues a query; whether the thread is there to take it.
    pub fn ask(&self, q: Q) -> bool {
        self.tx.send(q).is_ok()
    }
}
