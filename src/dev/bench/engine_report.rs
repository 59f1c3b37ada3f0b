//! The engine benchmark's report, printed for a person.

use super::engine::BenchReport;

/// Prints a report as the README shows it.
pub fn print_report(r: &BenchReport) {
    crate::outln!("tasks                 {}", r.tasks);
    crate::outln!("run status            {}", r.status);
    crate::outln!("wall time             {:.3} s", r.seconds);
    crate::outln!("tasks/s               {:.0}", r.tasks_per_s);
    crate::outln!("chunks streamed       {}", r.chunks_streamed);
    crate::outln!(
        "events                {} ({} chunk events, at most {} chunks each)",
        r.events,
        r.chunk_events,
        r.chunk_flush_max
    );
    crate::outln!("events/s              {:.0}", r.events_per_s);
    crate::outln!("bare insert rows/s    {:.0}", r.bare_rows_per_s);
    crate::outln!("events/s vs bare      {:.2}", r.ratio_to_bare);
    crate::outln!("bytes/event (file)    {:.1}", r.bytes_per_event_file);
    if let Some(b) = r.bytes_per_event_log {
        crate::outln!("bytes/event (log)     {b:.1}");
    }
    crate::outln!("commit latency p50    {} ms", r.commit_latency_ms.0);
    crate::outln!("commit latency p99    {} ms", r.commit_latency_ms.1);
    crate::outln!("peak memory (RSS)     {:.1} MiB", r.peak_rss_mib);
    for (label, at) in [
        ("rss at", r.rss_at.as_ref()),
        ("rss at end", Some(&r.rss_end)),
    ] {
        if let Some(a) = at {
            crate::outln!(
                "{:<22}{:.1} MiB at {} tasks (peak until then {:.1} MiB)",
                label,
                a.rss_mib,
                a.tasks,
                a.peak_rss_mib
            );
        }
    }
    if let Some(k) = &r.retained {
        crate::outln!(
            "held for finished    {} output(s) at {} finished tasks",
            k.outputs,
            k.finished
        );
    }
    crate::outln!(
        "largest WAL           {:.1} MiB ({} frames after a commit; {} checkpoints by the writer in {:.0} ms, {} kept short by a reader)",
        r.wal_peak_mib,
        r.wal_peak_frames,
        r.wal_checkpoints.0,
        r.wal_checkpoint_ms,
        r.wal_checkpoints.1
    );
    if let Some(n) = r.followed_events {
        crate::outln!("follower read         {n} events beside the run");
    }
    let Some(p) = &r.paced else {
        crate::outln!("paced run             skipped (--paced-tasks 0)");
        return;
    };
    crate::outln!("paced run events/s    {:.0}", p.events_per_s);
    crate::outln!("paced latency p50     {} ms", p.commit_latency_ms.0);
    crate::outln!("paced latency p99     {} ms", p.commit_latency_ms.1);
    crate::outln!(
        "paced longest write   {:.1} ms (longest commit {:.1} ms)",
        p.longest_write_commit_ms.0,
        p.longest_write_commit_ms.1
    );
}
