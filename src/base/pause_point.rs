//! Named moments where a test stops a debug build so that a `kill -9` lands exactly
//! there (between a call's end and its task's end, between the files of an eval's end):
//! `PLEXUS_TEST_PAUSE=NAME` makes the process say `plexus: paused at NAME` on standard
//! error and wait for ever at that moment. Release builds never pause.

/// The line written to standard error when a pause is reached.
pub const PAUSED: &str = "plexus: paused at ";

/// Whether the environment asks for a pause at `point` (always false in release builds).
pub fn wanted(point: &str) -> bool {
    cfg!(debug_assertions) && std::env::var("PLEXUS_TEST_PAUSE").is_ok_and(|p| p == point)
}

/// Says so and waits for ever when the environment asks for a pause at `point`;
/// returns at once otherwise. For threads that may block.
pub fn here(point: &str) {
    if wanted(point) {
        announce(point);
        loop {
            std::thread::park();
        }
    }
}

/// Writes the pause's line to standard error.
pub fn announce(point: &str) {
    eprintln!("{PAUSED}{point}");
}
