//! A review wait at 80x24, end to end: the demo stops with one task waiting for a
//! person, and the screen says so and says what to do — the status bar names the state,
//! the first hint is `4 v review`, the Failures title counts it, `q` asks before leaving it undecided, and `Y` inside
//! the evidence asks for a confirmation before it accepts. And a second terminal that
//! browses the run once it has stopped for review keeps following it while the first
//! one, still open, accepts the review and runs what it unblocked.

#![cfg(unix)]

use crate::common;

use common::pty::Session;

/// The demo on the terminal at 80x24 in a fresh database, once it has stopped for its
/// review: (its folder, the database's path, the session).
fn demo_awaiting_review_at_80x24() -> (tempfile::TempDir, String, Session) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db_s = dir.path().join("p.db").to_string_lossy().to_string();
    let s = Session::start_sized(
        &["--db", &db_s, "demo", "--chunk-ms", "2"],
        dir.path(),
        80,
        24,
    );
    s.wait_for("awaiting review │", 60);
    (dir, db_s, s)
}

/// The bottom line of the screen (the status bar with the hints).
fn last_line(screen: &str) -> String {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_string()
}

/// The demo's review accepted from the screen: the Failures screen's queue, the
/// evidence, and Y from inside it (asked, then accepted); its dependent runs and the
/// demo ends succeeded.
fn accept_the_review(s: &mut Session) {
    s.send("4");
    // The Failures title counts what waits for a decision.
    s.wait_for("1 to review (v)", 10);
    s.send("v");
    s.wait_for("Review queue · 1 waiting", 10);
    s.send("\r");
    s.wait_for("references to assets that do not exist", 5);
    s.send("Y");
    let confirm = s.wait_for("Accept the atoms of", 5);
    assert!(confirm.contains("TASK_VALIDATOR_DIFF_01"), "{confirm}");
    s.send("y");
    s.wait_for("accepted by", 15);
    s.send("1");
    s.wait_for("succeeded", 60);
}

#[test]
fn a_review_wait_reads_as_one_at_80x24_and_says_how_to_go_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    let mut s = Session::start_sized(
        &["--db", &db_s, "demo", "--chunk-ms", "2"],
        dir.path(),
        80,
        24,
    );
    // (At 80 columns the run id is in the title bar; the state leads the status bar.)
    let screen = s.wait_for("awaiting review │", 60);
    assert!(!screen.contains(" failed │"), "{screen}");
    let hints = last_line(&s.wait_for(" 4 v review", 10));
    // The keys follow the facts on the bar; the next step leads them.
    assert!(
        hints.contains("4 v review · ? help · q quit"),
        "the next step comes first among the hints: {hints:?}"
    );
    // Leaving asks first, and says where the review is.
    s.send("q");
    let asked = s.wait_for("Quit?", 5);
    assert!(
        asked.contains("1 task waits") && asked.contains("review"),
        "{asked}"
    );
    s.send("n");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!s.screen().contains("Quit?"), "n keeps the session open");
    accept_the_review(&mut s);
    // Nothing waits any more: q leaves without a question.
    let st = s.quit();
    assert!(st.success(), "{st:?}:\n{}", s.screen());
    s.assert_restored();
}

/// The total of the status bar's `event N/M`, if the bar shows one.
fn event_total(screen: &str) -> Option<u64> {
    let bar = last_line(screen);
    let at = bar.find("event ")? + "event ".len();
    let rest = &bar[at..];
    let (_, total) = rest.split_once('/')?;
    let digits: String = total.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The event total once the status bar shows it (a message may stand there a moment).
fn total_shown(s: &Session, secs: u64) -> u64 {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        let screen = s.screen();
        if let Some(t) = event_total(&screen) {
            return t;
        }
        assert!(std::time::Instant::now() < end, "no `event N/M`:\n{screen}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn a_second_terminal_follows_a_run_held_open_after_it_first_ends() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("p.db");
    let db_s = db.to_string_lossy().to_string();
    let mut live = Session::start(&["--db", &db_s, "demo", "--chunk-ms", "2"], dir.path());
    live.wait_for("awaiting review │", 60);
    // The run has stopped for review; the live terminal still holds it open.
    let mut browse = Session::start(&["--db", &db_s, "browse", "latest"], dir.path());
    browse.wait_for("awaiting review", 20);
    let before = total_shown(&browse, 10);
    // The live terminal accepts the review: the run goes on and ends succeeded.
    accept_the_review(&mut live);
    // The browser follows it there: the new events and the new status.
    let after = browse.wait_for("succeeded", 20);
    let total = total_shown(&browse, 10);
    assert!(total > before, "{before} events, then {total}:\n{after}");
    assert!(browse.quit().success());
    browse.assert_restored();
    assert!(live.quit().success());
}

/// Inside the evidence popup the bar shows the popup's own keys (not the screen's
/// `4 v review`), and `q` there quits as from the screen: it asks (the review still
/// waits), and `y` ends the program instead of the next keys landing on the screen.
#[test]
fn a_popup_shows_its_own_keys_and_q_inside_it_quits_at_80x24() {
    let (_dir, _db, mut s) = demo_awaiting_review_at_80x24();
    s.send("4");
    s.wait_for("1 to review (v)", 10);
    s.send("v");
    s.wait_for("Review queue · 1 waiting", 10);
    s.send("\r");
    let screen = s.wait_for("references to assets that do not exist", 5);
    let bar = last_line(&screen);
    assert!(bar.contains("Y accept · X reject"), "{bar:?}");
    assert!(
        !bar.contains("4 v review") && !bar.contains("? help"),
        "{bar:?}"
    );
    s.send("q");
    let asked = s.wait_for("Quit?", 5);
    assert!(asked.contains("1 task waits"), "{asked}");
    assert!(
        !asked.contains("references to assets that do not exist"),
        "the popup is closed behind the question:\n{asked}"
    );
    // `y`: the program ends, saying a review still waits (its exit code).
    let st = s.quit();
    assert_eq!(
        st.exit_code(),
        u32::from(plexus::data::exit::REVIEW_WAITING),
        "{st:?}:\n{}",
        s.screen()
    );
    s.assert_restored();
}

/// A flagged task retried from the screen (`:retry`) keeps its flagged answer in the
/// review trail: the queue lists it as retried (it said nothing waits and showed no row),
/// and `plexus review` prints it too.
#[test]
fn a_retried_flagged_answer_stays_in_the_review_trail_at_80x24() {
    let (dir, db_s, mut s) = demo_awaiting_review_at_80x24();
    s.send(":retry TASK_VALIDATOR_DIFF_01\r");
    s.wait_for("retrying TASK_VALIDATOR_DIFF_01", 10);
    // The retry has run once the run ends again (it is no longer running).
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let bar = last_line(&s.screen());
        if !bar.starts_with(" running") && !bar.contains("retrying") {
            break;
        }
        assert!(
            std::time::Instant::now() < end,
            "still running:\n{}",
            s.screen()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    s.send("4");
    s.send("v");
    let queue = s.wait_for("retried after try 1", 15);
    assert!(queue.contains("1 retried · this run"), "{queue}");
    assert!(!queue.contains("nothing waits for review"), "{queue}");
    let row = queue
        .lines()
        .find(|l| l.contains("retried after try 1"))
        .unwrap_or_default();
    assert!(row.contains("TASK_VALIDATOR_DIFF_01"), "{queue}");
    // The CLI's queue prints the same trail.
    let out = common::bin::plexus(dir.path())
        .args(["--db", &db_s, "review", "latest"])
        .output()
        .expect("plexus review");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("retried (a later attempt stands)") && text.contains("1 retried"),
        "{text}"
    );
    s.quit();
    s.assert_restored();
}
