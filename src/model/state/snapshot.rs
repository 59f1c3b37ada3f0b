//! Stored snapshots of a folded [`RunState`]: a compact, versioned binary form that a
//! run's process writes as it goes and at its end, so a run opens at any point by
//! reading one row and folding the few events after it instead of its whole log.
//!
//! A snapshot holds the state in its *normal form*: no streamed text (it stays in the
//! log and is loaded back for the task looked at) and the indexes left out (rebuilt on
//! reading). [`normal_form`] turns any folded state into it, so a test can check that
//! a snapshot and a fold of the log agree.
//!
//! Layout: the magic `PLXSNAP`, the format number, the plexus version that wrote it, a
//! CRC-32 of the body, and the body (MessagePack of the state). A snapshot of another
//! format or version, or damaged, is refused ([`SnapshotError`]) and the state is
//! rebuilt from the log.

use std::io::Write as _;
use std::sync::Arc;

use super::output::OutputBuffer;
use super::view::{RunState, DEFAULT_OUTPUT_BUDGET};

/// Format of the body; bumped whenever a field of the state changes (a test pins it).
pub const FORMAT: u32 = 3;

const MAGIC: &[u8; 7] = b"PLXSNAP";

/// Why a stored snapshot was not used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SnapshotError {
    /// Not a snapshot, or cut short.
    #[error("not a plexus snapshot (bad header)")]
    BadHeader,
    /// Written by another format or plexus version.
    #[error("written by format {format} of plexus {version}; this is format {FORMAT} of plexus {}", env!("CARGO_PKG_VERSION"))]
    OtherVersion {
        /// Its format.
        format: u32,
        /// The plexus version that wrote it.
        version: String,
    },
    /// The body does not match its checksum.
    #[error("damaged: its checksum does not match")]
    Damaged,
    /// The body does not decode.
    #[error("does not decode: {0}")]
    Decode(String),
    /// The state could not be encoded.
    #[error("cannot encode the state: {0}")]
    Encode(String),
}

/// A state measured for storing: the length and checksum of its encoding, found by a
/// first pass that keeps nothing, so the bytes can then be written straight into their
/// place ([`Measured::write_to`]) without a buffer of the whole snapshot.
pub struct Measured<'a> {
    st: &'a RunState,
    body_len: usize,
    crc: u32,
}

/// Measures `st`'s encoding (its text, if any, is left out).
pub fn measure(st: &RunState) -> Result<Measured<'_>, SnapshotError> {
    let mut body = Hashing::default();
    rmp_serde::encode::write(&mut body, st).map_err(|e| SnapshotError::Encode(e.to_string()))?;
    Ok(Measured {
        st,
        body_len: body.len,
        crc: body.hasher.finalize(),
    })
}

impl Measured<'_> {
    /// The encoding's length in bytes, header included.
    pub fn len(&self) -> usize {
        header_len() + self.body_len
    }

    /// Whether the encoding is empty (it never is: the header is always there).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Writes the encoding to `out`. The body is checked against the measured length
    /// and checksum as it goes: a mismatch is an error, so a caller writing into a
    /// place of the measured size never stores bytes its header does not vouch for.
    pub fn write_to(&self, out: impl std::io::Write) -> Result<(), SnapshotError> {
        let err = |e: std::io::Error| SnapshotError::Encode(e.to_string());
        let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
        let version = env!("CARGO_PKG_VERSION").as_bytes();
        out.write_all(MAGIC).map_err(err)?;
        out.write_all(&FORMAT.to_le_bytes()).map_err(err)?;
        out.write_all(&[version.len() as u8]).map_err(err)?;
        out.write_all(version).map_err(err)?;
        out.write_all(&self.crc.to_le_bytes()).map_err(err)?;
        let mut body = Hashing {
            out: Some(&mut out),
            ..Hashing::default()
        };
        rmp_serde::encode::write(&mut body, self.st)
            .map_err(|e| SnapshotError::Encode(e.to_string()))?;
        if body.len != self.body_len || body.hasher.finalize() != self.crc {
            return Err(SnapshotError::Encode(
                "the state changed between measuring and writing it".into(),
            ));
        }
        std::io::Write::flush(&mut out).map_err(err)
    }
}

/// Length of the header: magic, format, version and checksum.
fn header_len() -> usize {
    MAGIC.len() + 4 + 1 + env!("CARGO_PKG_VERSION").len() + 4
}

/// Encodes `st` (whose text, if any, is left out) into a buffer of exactly its size.
pub fn encode(st: &RunState) -> Result<Vec<u8>, SnapshotError> {
    let m = measure(st)?;
    let mut out = Vec::with_capacity(m.len());
    m.write_to(&mut out)?;
    Ok(out)
}

/// Decodes a snapshot into a state in normal form, its indexes rebuilt.
pub fn decode(bytes: &[u8]) -> Result<RunState, SnapshotError> {
    let rest = bytes.strip_prefix(MAGIC).ok_or(SnapshotError::BadHeader)?;
    let (format, rest) = take_u32(rest)?;
    let (&vlen, rest) = rest.split_first().ok_or(SnapshotError::BadHeader)?;
    let (version, rest) = rest
        .split_at_checked(vlen as usize)
        .ok_or(SnapshotError::BadHeader)?;
    let version = String::from_utf8_lossy(version).into_owned();
    if format != FORMAT || version != env!("CARGO_PKG_VERSION") {
        return Err(SnapshotError::OtherVersion { format, version });
    }
    let (crc, body) = take_u32(rest)?;
    if crc32fast::hash(body) != crc {
        return Err(SnapshotError::Damaged);
    }
    let mut st: RunState =
        rmp_serde::from_slice(body).map_err(|e| SnapshotError::Decode(e.to_string()))?;
    rebuild_indexes(&mut st)?;
    // What `normal_form` would do to a state read without text: the text budget set
    // and the tasks that ran marked as having their text in the log.
    for t in &mut st.tasks {
        if !t.invocations.is_empty() || !t.notes.is_empty() {
            Arc::make_mut(t).spilled = true;
        }
    }
    st.output_bytes = 0;
    st.output_budget = DEFAULT_OUTPUT_BUDGET;
    Ok(st)
}

/// A writer that counts and checksums the bytes written to it, passing them on to
/// `out` if there is one.
#[derive(Default)]
struct Hashing<'w> {
    len: usize,
    hasher: crc32fast::Hasher,
    out: Option<&'w mut dyn std::io::Write>,
}

impl std::io::Write for Hashing<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(out) = self.out.as_mut() {
            out.write_all(buf)?;
        }
        self.len += buf.len();
        self.hasher.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn take_u32(b: &[u8]) -> Result<(u32, &[u8]), SnapshotError> {
    let (head, rest) = b.split_at_checked(4).ok_or(SnapshotError::BadHeader)?;
    let mut n = [0u8; 4];
    n.copy_from_slice(head);
    Ok((u32::from_le_bytes(n), rest))
}

/// The task and agent indexes, from the lists (a snapshot whose references point
/// outside them is refused).
fn rebuild_indexes(st: &mut RunState) -> Result<(), SnapshotError> {
    let bad = |what: &str| SnapshotError::Decode(format!("{what} out of range"));
    let tasks = st.tasks.len();
    for t in &st.tasks {
        if t.agent >= st.agents.len()
            || t.deps
                .iter()
                .chain(&*t.dependents)
                .any(|&d| d as usize >= tasks)
        {
            return Err(bad("a task's agent or dependency"));
        }
    }
    if st.layers.iter().flatten().any(|&i| i >= tasks)
        || st
            .atoms
            .iter()
            .any(|a| a.task >= tasks || a.agent >= st.agents.len())
        || st.last_failure.is_some_and(|i| i >= tasks)
    {
        return Err(bad("a layer, atom or failure"));
    }
    st.task_index = Arc::new(
        st.tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.clone(), i))
            .collect(),
    );
    st.agent_index = st
        .agents
        .iter()
        .enumerate()
        .map(|(i, a)| (a.name.clone(), i))
        .collect();
    Ok(())
}

/// Puts a folded state in the form a snapshot stores: every task's text dropped (a
/// task that ran or has notes is marked as having text in the log, loaded back when
/// looked at), the text budget back to its default.
pub fn normal_form(st: &mut RunState) {
    for t in &mut st.tasks {
        let spilled = !t.invocations.is_empty() || !t.notes.is_empty();
        if t.spilled != spilled || t.output != OutputBuffer::new() {
            let t = Arc::make_mut(t);
            t.output = OutputBuffer::new();
            t.spilled = spilled;
        }
    }
    st.output_bytes = st.tasks.iter().map(|t| t.output.bytes()).sum();
    st.evict_queue.clear();
    st.output_budget = DEFAULT_OUTPUT_BUDGET;
    st.output_only = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RunState {
        let mut st = RunState::new();
        st.run_id = "R1".into();
        st.plan_id = "P".into();
        st
    }

    #[test]
    fn a_state_reads_back_equal_and_damage_is_refused() {
        let st = sample();
        let bytes = encode(&st).expect("encode");
        assert_eq!(
            bytes.capacity(),
            bytes.len(),
            "written into a buffer of its size"
        );
        let mut want = st.clone();
        normal_form(&mut want);
        assert_eq!(decode(&bytes).expect("decode"), want);
        let mut bad = bytes.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0x40;
        assert_eq!(decode(&bad), Err(SnapshotError::Damaged));
        assert_eq!(decode(&bytes[..5]), Err(SnapshotError::BadHeader));
        let mut other = bytes.clone();
        other[MAGIC.len()] = 99;
        assert!(matches!(
            decode(&other),
            Err(SnapshotError::OtherVersion { format: 99, .. })
        ));
    }

    #[test]
    fn a_measured_state_writes_the_bytes_encode_makes_and_its_length() {
        let mut st = sample();
        st.last_seq = 42;
        let m = measure(&st).expect("measure");
        let mut streamed = Vec::new();
        m.write_to(&mut streamed).expect("write");
        assert_eq!(streamed.len(), m.len());
        // The layout built by hand: magic, format, version, checksum of the body, body.
        let body = rmp_serde::to_vec(&st).expect("body");
        let version = env!("CARGO_PKG_VERSION").as_bytes();
        let mut want = MAGIC.to_vec();
        want.extend_from_slice(&FORMAT.to_le_bytes());
        want.push(version.len() as u8);
        want.extend_from_slice(version);
        want.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        want.extend_from_slice(&body);
        assert_eq!(streamed, want);
    }

    #[test]
    fn a_write_that_fails_part_way_is_an_error() {
        struct Full(usize);
        impl std::io::Write for Full {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                if self.0 < buf.len() {
                    return Err(std::io::Error::other("disk full"));
                }
                self.0 -= buf.len();
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let st = sample();
        let m = measure(&st).expect("measure");
        let e = m.write_to(Full(m.len() - 1)).expect_err("too small");
        assert!(e.to_string().contains("disk full"), "{e}");
    }
}
