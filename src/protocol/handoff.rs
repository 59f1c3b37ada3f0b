//! Placeholder, filled by the protocol transcription.
